// spec_text_test.cpp: the text form of specs and masks: exact output, round trips, parser errors.
#include "attn/spec_text.h"

#include <doctest/doctest.h>

#include <string>

#include "attn/kernel_id.h"
#include "attn/validate.h"
#include "spec_cases.h"
#include "test_support.h"

namespace {

using attn::causal;
using attn::window;

std::string spec_error(const char *text) {
  const attn::ParseResult r = attn::parse_spec(text);
  CHECK_FALSE(r.ok);
  return r.message;
}

std::string mask_error(const char *text) {
  const attn::MaskParseResult r = attn::parse_mask(text);
  CHECK_FALSE(r.ok);
  return r.message;
}

TEST_CASE("to_string prints every key, resolved, in a fixed order") {
  const attn::Spec block = attn::attention()
                               .named("gpt2")
                               .with_d_model(768)
                               .with_heads(12)
                               .block()
                               .fused_qkv()
                               .with_proj_bias()
                               .causal();
  CHECK(attn::to_string(block) ==
        "name=gpt2 d_model=768 heads=12 kv_heads=12 head_dim=64 head_dim_v=64 form=block qkv=fused "
        "proj_bias=true mask=causal mask_block=0 dtype=f32 scale=0.125 softcap=none alibi=false "
        "score_bias=none lse=false");
  const attn::Spec core = attn::attention().with_heads(8).with_head_dim(64).with_kv_heads(2).with_scale(0.1f);
  CHECK(attn::to_string(core) ==
        "d_model=512 heads=8 kv_heads=2 head_dim=64 head_dim_v=64 form=core qkv=separate "
        "proj_bias=false mask=none mask_block=0 dtype=f32 scale=0.100000001 softcap=none alibi=false "
        "score_bias=none lse=false");
  const attn::Spec sparse = attn::attention()
                                .with_heads(8)
                                .with_head_dim(64)
                                .with_mask((window(256, 256) | attn::global_tokens(4)) & attn::padding())
                                .with_mask_block(64)
                                .with_softcap(30.0f)
                                .with_alibi()
                                .with_score_bias()
                                .with_lse();
  CHECK(attn::to_string(sparse) ==
        "d_model=512 heads=8 kv_heads=8 head_dim=64 head_dim_v=64 form=core qkv=separate "
        "proj_bias=false mask=(window(256,256)|global(4))&padding mask_block=64 dtype=f32 scale=0.125 "
        "softcap=30 alibi=true score_bias=tensor lse=true");
}

TEST_CASE("masks print with parentheses only where the tree needs them") {
  const attn::Mask a = window(4, 4);
  const attn::Mask b = window(128, 0);
  struct Case {
    attn::Mask mask;
    const char *text;
  };
  const Case cases[] = {
      {attn::no_mask(), "none"},
      {causal(), "causal"},
      {window(-1, 0), "causal"},
      {b, "window(128,0)"},
      {window(-1, -1), "window(-1,-1)"},
      {(window(256, 256) | causal()) & window(-1, 4), "(window(256,256)|causal)&window(-1,4)"},
      {a | (causal() & b), "window(4,4)|causal&window(128,0)"},
      {(a & b) | causal(), "window(4,4)&window(128,0)|causal"},
      {(a | b) | causal(), "window(4,4)|window(128,0)|causal"},
      {a | (b | causal()), "window(4,4)|(window(128,0)|causal)"},
      {a & (b | causal()), "window(4,4)&(window(128,0)|causal)"},
      {a & (b & causal()), "window(4,4)&(window(128,0)&causal)"},
      {attn::global_tokens(4), "global(4)"},
      {attn::random_blocks(64, 3, 42), "random(64,3,42)"},
      {attn::random_blocks(1, 1, 4294967295u), "random(1,1,4294967295)"},
      {attn::padding(), "padding"},
      {attn::prefix(), "prefix"},
      {attn::document(), "document"},
      {attn::mask_tensor(), "tensor"},
      {(window(256, 256) | attn::global_tokens(4)) & attn::padding(), "(window(256,256)|global(4))&padding"},
      {(attn::document() & causal()) | attn::prefix(), "document&causal|prefix"},
      {attn::mask_tensor() & (attn::random_blocks(16, 2, 0) | attn::global_tokens(1)),
       "tensor&(random(16,2,0)|global(1))"},
  };
  for (const Case &c : cases) {
    CAPTURE(c.text);
    CHECK(attn::to_string(c.mask) == c.text);
    const attn::MaskParseResult back = attn::parse_mask(c.text);
    CHECK(back.ok);
    CHECK(attn_test::same_mask(back.mask, c.mask));
  }
}

TEST_CASE("mask texts that parse to the same mask") {
  CHECK(attn_test::same_mask(attn::parse_mask("window(-1,0)").mask, causal()));
  CHECK(attn_test::same_mask(attn::parse_mask("((causal))").mask, causal()));
  CHECK(attn_test::same_mask(attn::parse_mask("none&causal").mask, causal()));
  CHECK(attn::parse_mask("causal|none").mask.empty());
  CHECK(attn::parse_mask("none").ok);
  CHECK(attn::parse_mask("none").mask.empty());
  CHECK(attn_test::same_mask(attn::parse_mask("causal&window(1,2)|window(3,4)").mask,
                             (causal() & window(1, 2)) | window(3, 4)));
  CHECK(attn_test::same_mask(attn::parse_mask("((padding))&(global(4))").mask,
                             attn::padding() & attn::global_tokens(4)));
}

TEST_CASE("round trip over the table of specs") {
  for (const attn_test::SpecCase &c : attn_test::spec_cases) {
    const std::string text = attn::to_string(c.spec);
    CAPTURE(c.label);
    CAPTURE(text);
    const attn::ParseResult r = attn::parse_spec(text);
    CAPTURE(r.message);
    REQUIRE(r.ok);
    CHECK(attn_test::same_resolved(r.spec, c.spec));
    CHECK(attn::to_string(r.spec) == text);
    const attn::MaskParseResult m = attn::parse_mask(attn::to_string(c.spec.mask));
    CHECK(m.ok);
    CHECK(attn_test::same_mask(m.mask, c.spec.mask));
  }
}

TEST_CASE("parse_spec keeps what the user wrote") {
  const attn::ParseResult r = attn::parse_spec("  heads=12\td_model=768 mask=causal ");
  REQUIRE(r.ok);
  CHECK(r.message == "");
  CHECK(r.spec.heads == 12);
  CHECK(r.spec.d_model == 768);
  CHECK(r.spec.kv_heads == 0);
  CHECK(r.spec.head_dim == 0);
  CHECK_FALSE(r.spec.has_scale);
  CHECK(attn::is_causal(r.spec.mask));
  CHECK(
      attn::parse_spec("name=gpt2-small heads=4 head_dim=16 form=core qkv=separate proj_bias=false dtype=f32")
          .ok);
}

TEST_CASE("parse_spec rejects malformed pairs") {
  CHECK(spec_error("heads=12 head=64") ==
        "unknown key 'head' (valid keys: name, d_model, heads, kv_heads, head_dim, head_dim_v, head_groups, "
        "form, "
        "qkv, proj_bias, mask, align, mask_block, dtype, scale, softcap, alibi, score_bias, lse, kv_cache, "
        "kv_dtype, rope, "
        "rope_theta, rope_dim, layout, probs, runtime_scale, cross, backward, dscore_bias, dropout, inputs, "
        "score_mod, mask_mod, block_mask)");
  CHECK(spec_error("heads=12 softcap=30 softcap=none") == "key 'softcap': given twice ('30', then 'none')");
  CHECK(spec_error("heads=12 d_model=768 heads=16") == "key 'heads': given twice ('12', then '16')");
  CHECK(spec_error("d_model=768 heads12") == "expected key=value, got 'heads12' (no '=')");
}

TEST_CASE("parse_spec rejects bad values, naming key and value") {
  CHECK(spec_error("heads=abc") == "key 'heads': 'abc' is not an integer");
  CHECK(spec_error("heads=12x d_model=768") == "key 'heads': '12x' is not an integer");
  CHECK(spec_error("heads= d_model=768") == "key 'heads': '' is not an integer");
  CHECK(spec_error("heads=1.5") == "key 'heads': '1.5' is not an integer");
  CHECK(spec_error("heads=+12") == "key 'heads': '+12' is not an integer");
  CHECK(spec_error("d_model=99999999999 heads=12") ==
        "key 'd_model': '99999999999' is out of range (must fit int32)");
  CHECK(spec_error("d_model=2147483648") == "key 'd_model': '2147483648' is out of range (must fit int32)");
  CHECK(spec_error("kv_heads=-2147483649") ==
        "key 'kv_heads': '-2147483649' is out of range (must fit int32)");
  CHECK(spec_error("form=fused") == "key 'form': 'fused' is not one of core|block");
  CHECK(spec_error("qkv=joint") == "key 'qkv': 'joint' is not one of separate|fused");
  CHECK(spec_error("proj_bias=yes") == "key 'proj_bias': 'yes' is not one of true|false");
  CHECK(spec_error("dtype=f64") == "key 'dtype': 'f64' is not one of f32|f16|bf16");
  CHECK(spec_error("dtype=BF16") == "key 'dtype': 'BF16' is not one of f32|f16|bf16");
  CHECK(spec_error("scale=abc") == "key 'scale': 'abc' is not a number");
  CHECK(spec_error("scale=0.5x") == "key 'scale': '0.5x' is not a number");
  CHECK(spec_error("scale=1e99") == "key 'scale': '1e99' is out of range for a float");
  CHECK(spec_error("name=") == "key 'name': '' is not a valid name (1 to 31 of letters, digits, '_' or '-')");
  const std::string name32(32, 'n');
  CHECK(spec_error(("name=" + name32).c_str()) ==
        "key 'name': '" + name32 + "' is not a valid name (1 to 31 of letters, digits, '_' or '-')");
  CHECK(attn::parse_spec("d_model=768 heads=12 name=" + name32.substr(1)).ok);
  CHECK(spec_error("heads=12 d_model=768 mask=pad") ==
        "key 'mask': unknown term 'pad' (supported: none, causal, window(L,R), global(G), random(BS,N,SEED), "
        "padding, prefix, document, tensor)");
  CHECK(spec_error("mask=window(1,x)") == "key 'mask': window bound 'x' is not an integer");
  CHECK(spec_error("mask=global(1,2)") == "key 'mask': global(...) needs one integer G, got 'global(1,2)'");
  CHECK(spec_error("mask_block=abc") == "key 'mask_block': 'abc' is not an integer");
  CHECK(spec_error("mask_block=-64") ==
        "key 'mask_block': '-64' must be 0 (per element) or a block size > 0");
  CHECK(spec_error("mask_block=4294967296") ==
        "key 'mask_block': '4294967296' is out of range (must fit int32)");
  CHECK(spec_error("softcap=abc") == "key 'softcap': 'abc' is not a number");
  CHECK(spec_error("softcap=") == "key 'softcap': '' is not a number");
  CHECK(spec_error("softcap=None") == "key 'softcap': 'None' is not a number");
  CHECK(spec_error("softcap=1e99") == "key 'softcap': '1e99' is out of range for a float");
  CHECK(spec_error("alibi=1") == "key 'alibi': '1' is not one of true|false");
  CHECK(spec_error("score_bias=true") == "key 'score_bias': 'true' is not one of none|tensor");
  CHECK(spec_error("lse=yes") == "key 'lse': 'yes' is not one of true|false");
  CHECK(spec_error("probs=1") == "key 'probs': '1' is not one of true|false");
  CHECK(spec_error("align=top") == "key 'align': 'top' is not one of bottom_right|top_left");
}

TEST_CASE("paged(P) says what is wrong with P, and rope_theta states its limit (issue 32)") {
  CHECK(
      spec_error("heads=2 head_dim=16 kv_cache=paged(99999999999)") ==
      "key 'kv_cache': 'paged(99999999999)' has a page size P that is too large: P must be at most 16777216 "
      "tokens, e.g. paged(16)");
  CHECK(spec_error("heads=2 head_dim=16 kv_cache=paged(0x10)") ==
        "key 'kv_cache': 'paged(0x10)' has a page size P ('0x10') that is not a decimal integer: give P in "
        "tokens, e.g. paged(16)");
  CHECK(spec_error("kv_cache=paged()") ==
        "key 'kv_cache': 'paged()' has a page size P ('') that is not a decimal integer: give P in tokens, "
        "e.g. paged(16)");
  CHECK(spec_error("kv_cache=paged(+16)").find("('+16') that is not a decimal integer") != std::string::npos);
  CHECK(spec_error("kv_cache=paged(0)") ==
        "key 'kv_cache': 'paged(0)' has a page size P of 0: P must be > 0 and at most 16777216, e.g. "
        "paged(16)");
  CHECK(spec_error("kv_cache=paged(-4)").find("P of -4: P must be > 0") != std::string::npos);
  CHECK(spec_error("heads=2 head_dim=16 kv_cache=paged(16777217)") ==
        "spec '<unnamed>': kv_cache=paged(P): the page size P (16777217) must be > 0 and at most 16777216");
  CHECK(attn::parse_spec("heads=2 head_dim=16 kv_cache=paged(16777216)").ok);
  // 3e38 rounds to the f32 3.00000001e+38, at the limit: the message says where the limit is.
  CHECK(spec_error("name=x heads=2 head_dim=16 rope=neox rope_theta=3e38") ==
        "spec 'x': rope_theta must be a finite number > 0 and below 3e+38 (got 3.00000001e+38)");
  CHECK(attn::parse_spec("heads=2 head_dim=16 rope=neox rope_theta=2.9e38").ok);
}

TEST_CASE("align: printed only when top_left, parsed both ways") {
  const attn::Spec top_left =
      attn::attention().with_heads(2).with_head_dim(16).causal().with_align(attn::Align::top_left);
  const std::string text = attn::to_string(top_left);
  CHECK(text.find(" mask=causal align=top_left mask_block=0 ") != std::string::npos);
  CHECK(attn::to_string(top_left.with_align(attn::Align::bottom_right)).find("align") == std::string::npos);
  const attn::ParseResult parsed = attn::parse_spec("heads=2 head_dim=16 mask=causal align=top_left");
  REQUIRE(parsed.ok);
  CHECK(attn_test::same_resolved(parsed.spec, top_left));
  const attn::ParseResult bottom = attn::parse_spec("heads=2 head_dim=16 mask=causal align=bottom_right");
  REQUIRE(bottom.ok);
  CHECK(bottom.spec.align == attn::Align::bottom_right);
}

TEST_CASE("runtime_scale and cross: printed only when set, parsed both ways, refused where invalid") {
  const attn::Spec base = attn::attention().with_d_model(64).with_heads(2).block();
  const attn::Spec both = base.with_runtime_scale().with_cross_attention().with_scale(0.25f);
  const std::string text = attn::to_string(both);
  CHECK(text.find(" scale=0.25 ") != std::string::npos);
  CHECK(text.find(" runtime_scale=true cross=true") != std::string::npos);
  CHECK(attn::to_string(base).find("runtime_scale") == std::string::npos);
  CHECK(attn::to_string(base).find("cross") == std::string::npos);
  const attn::ParseResult parsed = attn::parse_spec(text);
  REQUIRE(parsed.ok);
  CHECK(attn_test::same_resolved(parsed.spec, both));
  const attn::ParseResult off =
      attn::parse_spec("d_model=64 heads=2 form=block runtime_scale=false cross=false");
  REQUIRE(off.ok);
  CHECK(attn_test::same_resolved(off.spec, base));
  CHECK(spec_error("heads=2 head_dim=16 runtime_scale=yes") ==
        "key 'runtime_scale': 'yes' is not one of true|false");
  // k and v of a core spec are inputs already: cross-attention is a block-form option.
  const attn::ParseResult core = attn::parse_spec("heads=2 head_dim=16 cross=true");
  CHECK_FALSE(core.ok);
  CHECK(core.message.find("cross=true (with_cross_attention) needs the block form") != std::string::npos);
  CHECK_FALSE(attn::validate(attn::attention().with_heads(2).with_head_dim(16).with_cross_attention()).ok);
}

TEST_CASE("unset keys of the newer fields") {
  const attn::ParseResult r = attn::parse_spec(
      "heads=12 d_model=768 mask_block=0 softcap=none alibi=false score_bias=none lse=false");
  REQUIRE(r.ok);
  CHECK(r.spec.mask_block == 0);
  CHECK_FALSE(r.spec.has_softcap);
  CHECK(attn_test::same_resolved(r.spec, attn::attention().with_d_model(768).with_heads(12)));
  const attn::ParseResult set = attn::parse_spec(
      "heads=12 d_model=768 mask_block=16 softcap=2.5 alibi=true score_bias=tensor lse=true");
  REQUIRE(set.ok);
  CHECK(attn_test::same_resolved(set.spec, attn::attention()
                                               .with_d_model(768)
                                               .with_heads(12)
                                               .with_mask_block(16)
                                               .with_softcap(2.5f)
                                               .with_alibi()
                                               .with_score_bias()
                                               .with_lse()));
}

TEST_CASE("probs: printed only when on, parsed both ways") {
  const attn::Spec plain = attn::attention().with_heads(2).with_head_dim(16).causal();
  CHECK(attn::to_string(plain).find("probs") == std::string::npos);
  const std::string text = attn::to_string(plain.with_probs());
  CHECK(text.ends_with(" lse=false probs=true"));
  const attn::ParseResult parsed = attn::parse_spec(text);
  REQUIRE(parsed.ok);
  CHECK(parsed.spec.probs);
  CHECK(attn_test::same_resolved(parsed.spec, plain.with_probs()));
  const attn::ParseResult off = attn::parse_spec("heads=2 head_dim=16 probs=false");
  REQUIRE(off.ok);
  CHECK_FALSE(off.spec.probs);
}

TEST_CASE("backward: printed only when on, parsed both ways, its own kernel id") {
  const attn::Spec plain = attn::attention().with_heads(2).with_head_dim(16).causal();
  CHECK(attn::to_string(plain).find("backward") == std::string::npos);
  const std::string text = attn::to_string(plain.backward());
  CHECK(text.ends_with(" lse=false backward=true"));
  const attn::ParseResult parsed = attn::parse_spec(text);
  REQUIRE(parsed.ok);
  CHECK(parsed.spec.backward_pass);
  CHECK(attn_test::same_resolved(parsed.spec, plain.backward()));
  CHECK(attn::kernel_id(plain.backward()) == attn::kernel_id(plain) + "_bwd");
  const attn::ParseResult off = attn::parse_spec("heads=2 head_dim=16 backward=false");
  REQUIRE(off.ok);
  CHECK_FALSE(off.spec.backward_pass);
  CHECK(spec_error("heads=2 head_dim=16 backward=yes") == "key 'backward': 'yes' is not one of true|false");
}

TEST_CASE("kv_dtype: printed only when not same, parsed both ways, its own kernel id (issue 37)") {
  const attn::Spec cache = attn::attention().with_heads(4).with_kv_heads(2).with_head_dim(16).with_kv_cache(
      attn::KvCache::paged, 16);
  CHECK(attn::to_string(cache).find("kv_dtype") == std::string::npos);
  for (attn::KvDType t : {attn::KvDType::int8, attn::KvDType::fp8_e4m3}) {
    const std::string text = attn::to_string(cache.with_kv_dtype(t));
    CHECK(text.ends_with(std::string(" kv_cache=paged(16) kv_dtype=") + attn::kv_dtype_name(t)));
    const attn::ParseResult parsed = attn::parse_spec(text);
    REQUIRE(parsed.ok);
    CHECK(parsed.spec.kv_dtype == t);
    CHECK(attn_test::same_resolved(parsed.spec, cache.with_kv_dtype(t)));
  }
  CHECK(attn::kernel_id(cache.with_kv_dtype(attn::KvDType::int8)) == attn::kernel_id(cache) + "_kvi8");
  CHECK(attn::kernel_id(cache.with_kv_dtype(attn::KvDType::fp8_e4m3)) == attn::kernel_id(cache) + "_kvfp8");
  const attn::ParseResult same = attn::parse_spec("heads=2 head_dim=16 kv_cache=contiguous kv_dtype=same");
  REQUIRE(same.ok);
  CHECK(same.spec.kv_dtype == attn::KvDType::same);
  CHECK(spec_error("heads=2 head_dim=16 kv_cache=contiguous kv_dtype=fp8") ==
        "key 'kv_dtype': 'fp8' is not one of same|int8|fp8_e4m3");
  // Only a cache holds codes and scales: refused without one, by name.
  CHECK(spec_error("heads=2 head_dim=16 kv_dtype=int8") ==
        "spec '<unnamed>': kv_dtype=int8 needs kv_cache=contiguous or kv_cache=paged(P): only a cache holds "
        "codes and scales (kv_cache is none)");
  CHECK(spec_error("heads=2 head_dim=16 layout=varlen kv_dtype=fp8_e4m3")
            .find("(layout=varlen takes k and v") != std::string::npos);
  static_assert(
      attn::check_spec(attn::attention().with_heads(2).with_head_dim(16).with_kv_dtype(attn::KvDType::int8))
          .problem == attn::SpecProblem::kv_dtype_needs_kv_cache);
  static_assert(attn::check_spec(attn::attention()
                                     .with_heads(2)
                                     .with_head_dim(16)
                                     .with_kv_cache(attn::KvCache::contiguous)
                                     .with_kv_dtype(attn::KvDType::fp8_e4m3))
                    .ok());
}

TEST_CASE("parse_spec rejects invalid specs with describe()'s message") {
  CHECK(spec_error("heads=12 d_model=770") == "spec '<unnamed>': heads (12) must divide d_model (770)");
  CHECK(spec_error("name=gpt2 heads=12 d_model=770") == "spec 'gpt2': heads (12) must divide d_model (770)");
  CHECK(spec_error("d_model=768 heads=12 kv_heads=5") ==
        "spec '<unnamed>': kv_heads (5) must divide heads (12)");
  CHECK(spec_error("name=x d_model=768 heads=12 head_dim=0") == "spec 'x': head_dim must be > 0 (got 0)");
  CHECK(spec_error("name=x d_model=768 heads=-3") == "spec 'x': heads must be > 0 (got -3)");
  CHECK(spec_error("name=x d_model=768 heads=12 scale=-1") ==
        "spec 'x': scale must be a finite number > 0 and below 3e+38 (got -1)");
  CHECK(spec_error("name=x d_model=768 heads=12 scale=inf") ==
        "spec 'x': scale must be a finite number > 0 and below 3e+38 (got inf)");
  CHECK(spec_error("name=x d_model=768 heads=12 mask=window(-2,0)") ==
        "spec 'x': window bound (-2) must be >= -1 (-1 means unbounded)");
  CHECK(spec_error("name=a.b d_model=768 heads=12") ==
        "spec 'a.b': name character '.' at position 1 is not allowed (use letters, digits, '_' or '-')");
  CHECK(spec_error("heads=12 head_dim=64 form=block") ==
        "spec '<unnamed>': d_model must be set for the block form (got 0); head_dim alone is enough only for "
        "the core form");
  CHECK(spec_error("") == "spec '<unnamed>': heads must be set to a value > 0 (got 0, which means unset)");
  CHECK(spec_error("name=x d_model=768 heads=12 softcap=0") ==
        "spec 'x': softcap must be a finite number > 0 and below 3e+38 (got 0)");
  CHECK(spec_error("name=x d_model=768 heads=12 softcap=-inf") ==
        "spec 'x': softcap must be a finite number > 0 and below 3e+38 (got -inf)");
  CHECK(spec_error("name=x d_model=768 heads=12 mask=global(0)|causal") ==
        "spec 'x': global(G) needs G >= 1 (got 0)");
  CHECK(spec_error("name=x d_model=768 heads=12 mask=random(0,2,1)") ==
        "spec 'x': random(BS,N,SEED) needs a block size BS >= 1 (got 0)");
  CHECK(spec_error("name=x d_model=768 heads=12 mask=random(64,0,1)") ==
        "spec 'x': random(BS,N,SEED) needs N >= 1 blocks (got 0)");
}

TEST_CASE("parse_mask errors") {
  const std::string supported =
      " (supported: none, causal, window(L,R), global(G), random(BS,N,SEED), padding, prefix, document, "
      "tensor)";
  CHECK(mask_error("sliding(4)") == "mask: unknown term 'sliding'" + supported);
  CHECK(mask_error("causal&Padding") == "mask: unknown term 'Padding'" + supported);
  CHECK(mask_error("") == "mask: empty mask (write 'none' for no mask)");
  CHECK(mask_error("window(1,2") == "mask: expected ')' at offset 10 in 'window(1,2'");
  CHECK(mask_error("window(1)|causal") == "mask: window(...) needs two integers L,R, got 'window(1)'");
  CHECK(mask_error("window(1,2,3)") == "mask: window(...) needs two integers L,R, got 'window(1,2,3)'");
  CHECK(mask_error("window 1,2") == "mask: expected '(' after 'window' at offset 6 in 'window 1,2'");
  CHECK(mask_error("window(a,0)") == "mask: window bound 'a' is not an integer");
  CHECK(mask_error("window(,0)") == "mask: window bound '' is not an integer");
  CHECK(mask_error("window(99999999999,0)") ==
        "mask: window bound '99999999999' is out of range (must fit int32)");
  CHECK(mask_error("causal)") == "mask: unexpected ')' at offset 6 in 'causal)'");
  CHECK(mask_error("(causal") == "mask: expected ')' at offset 7 in '(causal'");
  CHECK(mask_error("causal&") == "mask: expected a term at offset 7 in 'causal&'");
  CHECK(mask_error("causal&&causal") == "mask: expected a term, got '&' at offset 7 in 'causal&&causal'");
  CHECK(mask_error("causal & causal") == "mask: unexpected ' ' at offset 6 in 'causal & causal'");
  CHECK(mask_error("window(-2,0)") == "mask: window bound (-2) must be >= -1 (-1 means unbounded)");
  std::string big = "causal";
  for (int i = 0; i < 8; ++i) big += "&causal";
  CHECK(mask_error(big.c_str()) == "mask: too many terms (17 nodes; at most 16)");
}

TEST_CASE("parse_mask errors for the newer terms") {
  CHECK(mask_error("global") == "mask: expected '(' after 'global' at offset 6 in 'global'");
  CHECK(mask_error("global()") == "mask: global token count '' is not an integer");
  CHECK(mask_error("global(1,2)") == "mask: global(...) needs one integer G, got 'global(1,2)'");
  CHECK(mask_error("global(x)") == "mask: global token count 'x' is not an integer");
  CHECK(mask_error("global(4") == "mask: expected ')' at offset 8 in 'global(4'");
  CHECK(mask_error("global(2147483648)") ==
        "mask: global token count '2147483648' is out of range (must fit int32)");
  CHECK(mask_error("global(0)") == "mask: global(G) needs G >= 1 (got 0)");
  CHECK(mask_error("global(-1)&causal") == "mask: global(G) needs G >= 1 (got -1)");
  CHECK(mask_error("random(64,3)") == "mask: random(...) needs three integers BS,N,SEED, got 'random(64,3)'");
  CHECK(mask_error("random") == "mask: expected '(' after 'random' at offset 6 in 'random'");
  CHECK(mask_error("random(a,3,1)") == "mask: random block size 'a' is not an integer");
  CHECK(mask_error("random(64,3.5,1)") == "mask: random block count '3.5' is not an integer");
  CHECK(mask_error("random(64,3,seed)") == "mask: random seed 'seed' is not an integer");
  CHECK(mask_error("random(64,3,4294967296)") ==
        "mask: random seed '4294967296' is out of range (must fit uint32)");
  CHECK(mask_error("random(64,3,-1)") == "mask: random seed '-1' is out of range (must fit uint32)");
  CHECK(mask_error("random(64,3,99999999999999999999)") ==
        "mask: random seed '99999999999999999999' is out of range (must fit uint32)");
  CHECK(mask_error("random(0,2,1)") == "mask: random(BS,N,SEED) needs a block size BS >= 1 (got 0)");
  CHECK(mask_error("random(64,0,1)") == "mask: random(BS,N,SEED) needs N >= 1 blocks (got 0)");
  CHECK(mask_error("padding()") == "mask: unexpected '(' at offset 7 in 'padding()'");
  CHECK(mask_error("padding&") == "mask: expected a term at offset 8 in 'padding&'");
}

}  // namespace

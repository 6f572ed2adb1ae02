// spec_text_test.cpp: the text form of specs and masks: exact output, round trips, parser errors.
#include "attn/spec_text.h"

#include <doctest/doctest.h>

#include <string>

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
        "proj_bias=true mask=causal dtype=f32 scale=0.125");
  const attn::Spec core = attn::attention().with_heads(8).with_head_dim(64).with_kv_heads(2).with_scale(0.1f);
  CHECK(attn::to_string(core) ==
        "d_model=512 heads=8 kv_heads=2 head_dim=64 head_dim_v=64 form=core qkv=separate "
        "proj_bias=false mask=none dtype=f32 scale=0.100000001");
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
        "unknown key 'head' (valid keys: name, d_model, heads, kv_heads, head_dim, head_dim_v, form, qkv, "
        "proj_bias, mask, dtype, scale)");
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
  CHECK(spec_error("dtype=f16") == "key 'dtype': 'f16' is not one of f32");
  CHECK(spec_error("scale=abc") == "key 'scale': 'abc' is not a number");
  CHECK(spec_error("scale=0.5x") == "key 'scale': '0.5x' is not a number");
  CHECK(spec_error("scale=1e99") == "key 'scale': '1e99' is out of range for a float");
  CHECK(spec_error("name=") == "key 'name': '' is not a valid name (1 to 31 of letters, digits, '_' or '-')");
  const std::string name32(32, 'n');
  CHECK(spec_error(("name=" + name32).c_str()) ==
        "key 'name': '" + name32 + "' is not a valid name (1 to 31 of letters, digits, '_' or '-')");
  CHECK(attn::parse_spec("d_model=768 heads=12 name=" + name32.substr(1)).ok);
  CHECK(spec_error("heads=12 d_model=768 mask=padding") ==
        "key 'mask': unknown term 'padding' (supported: none, causal, window(L,R))");
  CHECK(spec_error("mask=window(1,x)") == "key 'mask': window bound 'x' is not an integer");
}

TEST_CASE("parse_spec rejects invalid specs with describe()'s message") {
  CHECK(spec_error("heads=12 d_model=770") == "spec '<unnamed>': heads (12) must divide d_model (770)");
  CHECK(spec_error("name=gpt2 heads=12 d_model=770") == "spec 'gpt2': heads (12) must divide d_model (770)");
  CHECK(spec_error("d_model=768 heads=12 kv_heads=5") ==
        "spec '<unnamed>': kv_heads (5) must divide heads (12)");
  CHECK(spec_error("name=x d_model=768 heads=12 head_dim=0") == "spec 'x': head_dim must be > 0 (got 0)");
  CHECK(spec_error("name=x d_model=768 heads=-3") == "spec 'x': heads must be > 0 (got -3)");
  CHECK(spec_error("name=x d_model=768 heads=12 scale=-1") ==
        "spec 'x': scale must be a finite number > 0 (got -1)");
  CHECK(spec_error("name=x d_model=768 heads=12 scale=inf") ==
        "spec 'x': scale must be a finite number > 0 (got inf)");
  CHECK(spec_error("name=x d_model=768 heads=12 mask=window(-2,0)") ==
        "spec 'x': window bound (-2) must be >= -1 (-1 means unbounded)");
  CHECK(spec_error("name=a.b d_model=768 heads=12") ==
        "spec 'a.b': name character '.' at position 1 is not allowed (use letters, digits, '_' or '-')");
  CHECK(spec_error("heads=12 head_dim=64 form=block") ==
        "spec '<unnamed>': d_model must be set for the block form (got 0); head_dim alone is enough only for "
        "the core form");
  CHECK(spec_error("") == "spec '<unnamed>': heads must be set to a value > 0 (got 0, which means unset)");
}

TEST_CASE("parse_mask errors") {
  CHECK(mask_error("padding") == "mask: unknown term 'padding' (supported: none, causal, window(L,R))");
  CHECK(mask_error("causal&global(4)") ==
        "mask: unknown term 'global' (supported: none, causal, window(L,R))");
  CHECK(mask_error("") == "mask: empty mask (write 'none' for no mask)");
  CHECK(mask_error("window(1,2") == "mask: expected ')' at offset 10 in 'window(1,2'");
  CHECK(mask_error("window(1)|causal") == "mask: expected ',' at offset 8 in 'window(1)|causal'");
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

}  // namespace

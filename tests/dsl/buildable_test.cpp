// buildable_test.cpp: specs that `attnc check` accepted but `attnc gen` could not build (issue 32,
// defect 5) are refused by the one validation both use, with the rule and its values; the specs
// just inside those rules stay valid. The numbers are written out here, not read from limits.h.
#include <doctest/doctest.h>

#include <string>

#include "attn/check.h"
#include "attn/kernel_id.h"
#include "attn/spec_text.h"
#include "attn/validate.h"

namespace {

// The text form's error, or "ok" when it parses and validates.
std::string text_error(const std::string &text) {
  const attn::ParseResult r = attn::parse_spec(text);
  return r.ok ? "ok" : r.message;
}

TEST_CASE("probs does not combine with a kv cache, varlen or head groups") {
  CHECK(text_error("name=x heads=1 head_dim=16 kv_cache=paged(4) probs=true") ==
        "spec 'x': probs=true does not combine with kv_cache: probs [B, H, Sq, Sk] is one matrix per batch "
        "element of one head size, with no Sk per sequence");
  CHECK(text_error("name=x heads=2 head_dim=16 kv_cache=contiguous probs=true")
            .find("probs=true does not combine with kv_cache") != std::string::npos);
  CHECK(text_error("name=x heads=2 head_dim=16 layout=varlen probs=true")
            .find("probs=true does not combine with layout=varlen") != std::string::npos);
  CHECK(text_error("name=x d_model=192 head_groups=1x128+1x64 form=block probs=true")
            .find("probs=true does not combine with head_groups") != std::string::npos);
  // Each feature without probs, and probs without them, stays valid.
  CHECK(text_error("heads=1 head_dim=16 kv_cache=paged(4)") == "ok");
  CHECK(text_error("heads=2 head_dim=16 layout=varlen") == "ok");
  CHECK(text_error("d_model=192 head_groups=1x128+1x64 form=block") == "ok");
  CHECK(text_error("heads=2 head_dim=16 mask=causal probs=true") == "ok");
  constexpr attn::Spec cached =
      attn::attention().with_heads(2).with_head_dim(16).with_kv_cache(attn::KvCache::contiguous);
  static_assert(attn::check_spec(cached).ok());
  static_assert(attn::check_spec(cached.with_probs(true)).problem == attn::SpecProblem::probs_with_sequence);
}

TEST_CASE("backward takes the core form without a cache, probs or lse, and says so; varlen too") {
  CHECK(text_error("name=x d_model=32 heads=2 form=block backward=true") ==
        "spec 'x': backward=true does not take form=block: the backward kernel is the core form's (q, k, v "
        "given)");
  CHECK(text_error("heads=2 head_dim=16 kv_cache=contiguous backward=true")
            .find("backward=true does not take kv_cache") != std::string::npos);
  CHECK(text_error("heads=2 head_dim=16 layout=varlen backward=true") == "ok");
  CHECK(
      text_error("heads=2 head_dim=16 probs=true backward=true").find("backward=true does not take probs") !=
      std::string::npos);
  CHECK(text_error("heads=2 head_dim=16 lse=true backward=true")
            .find("lse=true: lse is an input of the backward kernel") != std::string::npos);
  CHECK(text_error("heads=2 head_dim=16 rope=neox rope_dim=8 backward=true") == "ok");
  CHECK(text_error("heads=4 kv_heads=2 head_dim=16 head_dim_v=8 mask=causal&padding softcap=2 alibi=true "
                   "score_bias=tensor runtime_scale=true dtype=bf16 backward=true") == "ok");
  CHECK(text_error("heads=2 head_dim=16 score_bias=tensor dscore_bias=true") ==
        "spec '<unnamed>': dscore_bias=true needs backward=true: it is an output of the backward kernel");
  CHECK(text_error("heads=2 head_dim=16 backward=true dscore_bias=true").find("needs score_bias=tensor") !=
        std::string::npos);
  CHECK(text_error("heads=2 head_dim=16 score_bias=tensor backward=true dscore_bias=true") == "ok");
  constexpr attn::Spec core = attn::attention().with_heads(2).with_head_dim(16);
  static_assert(attn::check_spec(core.backward()).ok());
  static_assert(attn::check_spec(core.backward().with_lse()).problem ==
                attn::SpecProblem::backward_unsupported);
}

TEST_CASE("dropout: a probability in [0, 1), not with a cache or varlen; its text, id and printing") {
  CHECK(text_error("heads=2 head_dim=16 mask=causal dropout=0.1") == "ok");
  CHECK(text_error("heads=2 head_dim=16 dropout=0 backward=true") == "ok");
  CHECK(text_error("form=block d_model=32 heads=2 dropout=0.5") == "ok");
  CHECK(text_error("name=x heads=2 head_dim=16 dropout=1") ==
        "spec 'x': dropout (1) must be a probability in [0, 1)");
  CHECK(text_error("heads=2 head_dim=16 dropout=-0.25").find("dropout (-0.25) must be") != std::string::npos);
  CHECK(text_error("heads=2 head_dim=16 dropout=nan").find("must be a probability") != std::string::npos);
  CHECK(text_error("heads=2 head_dim=16 kv_cache=contiguous dropout=0.1")
            .find("dropout does not take kv_cache") != std::string::npos);
  CHECK(text_error("heads=2 head_dim=16 layout=varlen dropout=0.1")
            .find("dropout does not take layout=varlen") != std::string::npos);
  constexpr attn::Spec core = attn::attention().with_heads(2).with_head_dim(16);
  static_assert(attn::check_spec(core.with_dropout(0.1f)).ok());
  static_assert(attn::check_spec(core.with_dropout(1.0f)).problem == attn::SpecProblem::dropout_invalid);
  static_assert(attn::check_spec(core.with_dropout(0.1f).with_kv_cache(attn::KvCache::contiguous)).problem ==
                attn::SpecProblem::dropout_unsupported);
  // The same kernel from the text and the C++ DSL; the probability's bits in the id; dropout=none is off.
  const attn::ParseResult parsed = attn::parse_spec("heads=2 head_dim=16 dropout=0.1");
  REQUIRE(parsed.ok);
  CHECK(attn::kernel_id(attn::resolve(parsed.spec)) ==
        attn::kernel_id(attn::resolve(core.with_dropout(0.1f))));
  CHECK(attn::kernel_id(attn::resolve(core.with_dropout(0.1f))) == "attn_core_h2_kv2_d16_f32_drop3dcccccd");
  CHECK(attn::to_string(attn::resolve(parsed.spec)).find(" dropout=0.100000001") != std::string::npos);
  const attn::ParseResult off = attn::parse_spec("heads=2 head_dim=16 dropout=none");
  REQUIRE(off.ok);
  CHECK(!off.spec.has_dropout);
}

TEST_CASE("a cache page must fit the 2^31 - 1 elements of one tensor") {
  SUBCASE("the value from the issue") {
    CHECK(text_error("name=x heads=1 head_dim=1024 kv_cache=paged(16777216)") ==
          "spec 'x': kv_cache=paged(16777216): a page holds P * kv_heads * max(head_dim, head_dim_v) = "
          "16777216 * 1024 = 17179869184 elements, more than the 2147483647 a cache tensor may hold; use "
          "P <= 2097151");
  }
  SUBCASE("just inside and just outside: P * kv_heads * max(D, Dv) <= 2147483647") {
    CHECK(text_error("heads=1 head_dim=1024 kv_cache=paged(2097151)") == "ok");
    CHECK(text_error("name=x heads=1 head_dim=1024 kv_cache=paged(2097152)")
              .find("2097152 * 1024 = 2147483648 elements") != std::string::npos);
    // kv_heads multiplies the page; head_dim_v counts where it is the wider.
    CHECK(text_error("heads=8 kv_heads=8 head_dim=16 kv_cache=paged(16777216)").find("16777216 * 128") !=
          std::string::npos);
    CHECK(text_error("heads=8 kv_heads=4 head_dim=16 kv_cache=paged(16777216)") == "ok");  // kv heads count
    CHECK(text_error("heads=1 head_dim=127 kv_cache=paged(16777216)") == "ok");  // 2130706432 elements
    CHECK(text_error("heads=1 head_dim=16 head_dim_v=128 kv_cache=paged(16777216)").find("16777216 * 128") !=
          std::string::npos);
    CHECK(text_error("heads=1 head_dim=128 head_dim_v=16 kv_cache=paged(16777216)").find("16777216 * 128") !=
          std::string::npos);
  }
  SUBCASE("contiguous caches take their size at run time") {
    CHECK(text_error("heads=64 kv_heads=64 head_dim=1024 kv_cache=contiguous") == "ok");
  }
}

}  // namespace

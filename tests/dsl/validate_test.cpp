// validate_test.cpp: the wording of every validation problem, and validate() on good specs.
#include "attn/validate.h"

#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "spec_cases.h"

namespace {

constexpr attn::Spec x = attn::attention().named("x");
constexpr attn::Spec x768 = x.with_d_model(768).with_heads(12);

std::string message(const attn::Spec &s) {
  return attn::validate(s).message;
}

TEST_CASE("every spec in the table is valid") {
  for (const attn_test::SpecCase &c : attn_test::spec_cases) {
    CAPTURE(c.label);
    const attn::Validation v = attn::validate(c.spec);
    CHECK(v.ok);
    CHECK(v.message == "");
    CHECK(attn::describe(c.spec, attn::check_spec(c.spec)) == "");
  }
}

TEST_CASE("messages name the spec, the field and the value") {
  CHECK(message(attn::attention().named("gpt2").with_d_model(770).with_heads(12)) ==
        "spec 'gpt2': heads (12) must divide d_model (770)");
  CHECK(message(x768.with_kv_heads(5)) == "spec 'x': kv_heads (5) must divide heads (12)");
  CHECK(message(x768.with_head_dim(0)) == "spec 'x': head_dim must be > 0 (got 0)");
  CHECK(message(x768.with_head_dim_v(-4)) == "spec 'x': head_dim_v must be > 0 (got -4)");
  CHECK(message(x768.with_kv_heads(0)) == "spec 'x': kv_heads must be > 0 (got 0)");
  CHECK(message(x.with_d_model(-5).with_heads(12)) == "spec 'x': d_model must be > 0 (got -5)");
  CHECK(message(x.with_d_model(768).with_heads(-1)) == "spec 'x': heads must be > 0 (got -1)");
  CHECK(message(x768.with_scale(-0.5f)) == "spec 'x': scale must be a finite number > 0 and below 3e+38 (got -0.5)");
  CHECK(message(x768.with_scale(0.0f)) == "spec 'x': scale must be a finite number > 0 and below 3e+38 (got 0)");
  CHECK(message(x768.with_mask(attn::causal() & attn::window(-2, 0))) ==
        "spec 'x': window bound (-2) must be >= -1 (-1 means unbounded)");
}

TEST_CASE("messages for mask terms, mask_block and softcap") {
  CHECK(message(x768.with_mask(attn::global_tokens(-1))) == "spec 'x': global(G) needs G >= 1 (got -1)");
  CHECK(message(x768.with_mask(attn::causal() | attn::global_tokens(0))) ==
        "spec 'x': global(G) needs G >= 1 (got 0)");
  CHECK(message(x768.with_mask(attn::random_blocks(0, 2, 1))) ==
        "spec 'x': random(BS,N,SEED) needs a block size BS >= 1 (got 0)");
  CHECK(message(x768.with_mask(attn::random_blocks(64, 0, 1))) ==
        "spec 'x': random(BS,N,SEED) needs N >= 1 blocks (got 0)");
  CHECK(message(x768.with_mask(attn::padding() & attn::random_blocks(64, -2, 1))) ==
        "spec 'x': random(BS,N,SEED) needs N >= 1 blocks (got -2)");
  CHECK(message(x768.with_softcap(0.0f)) == "spec 'x': softcap must be a finite number > 0 and below 3e+38 (got 0)");
  CHECK(message(x768.with_softcap(-30.0f)) == "spec 'x': softcap must be a finite number > 0 and below 3e+38 (got -30)");
  CHECK(message(x768.with_softcap(__builtin_nanf(""))) ==
        "spec 'x': softcap must be a finite number > 0 and below 3e+38 (got nan)");
  CHECK(message(x768.with_softcap(__builtin_inff())) ==
        "spec 'x': softcap must be a finite number > 0 and below 3e+38 (got inf)");
  CHECK(message(x768.with_mask_block(0)) == "spec 'x': mask_block must be > 0 (got 0)");
  CHECK(message(x768.with_mask_block(-64)) == "spec 'x': mask_block must be > 0 (got -64)");
  CHECK(attn::validate(x768.with_mask_block(1).with_softcap(1e-30f).with_mask(attn::random_blocks(1, 1, 0)))
            .ok);
}

TEST_CASE("an unnamed spec is written <unnamed>") {
  CHECK(message(attn::attention().with_d_model(770).with_heads(12)) ==
        "spec '<unnamed>': heads (12) must divide d_model (770)");
}

TEST_CASE("missing fields") {
  CHECK(message(x.with_d_model(768)) ==
        "spec 'x': heads must be set to a value > 0 (got 0, which means unset)");
  CHECK(message(x.with_heads(12)) == "spec 'x': d_model or head_dim must be set (both are 0)");
  CHECK(
      message(x.with_heads(12).with_head_dim(64).block()) ==
      "spec 'x': d_model must be set for the block form (got 0); head_dim alone is enough only for the core "
      "form");
}

TEST_CASE("fields written directly, not through setters, are checked too") {
  attn::Spec s = x768;
  s.d_model = -768;
  CHECK(message(s) == "spec 'x': d_model must be > 0 (got -768)");
  s = x768;
  s.kv_heads = -2;
  CHECK(message(s) == "spec 'x': kv_heads must be > 0 (got -2)");
  s = x768;
  s.mask_block = -1;
  CHECK(message(s) == "spec 'x': mask_block must be > 0 (got -1)");
  s = x768;
  s.has_softcap = true;  // softcap left at 0
  CHECK(message(s) == "spec 'x': softcap must be a finite number > 0 and below 3e+38 (got 0)");
}

TEST_CASE("scales that are not finite") {
  CHECK(message(x768.with_scale(__builtin_nanf(""))) ==
        "spec 'x': scale must be a finite number > 0 and below 3e+38 (got nan)");
  CHECK(message(x768.with_scale(__builtin_inff())) ==
        "spec 'x': scale must be a finite number > 0 and below 3e+38 (got inf)");
}

TEST_CASE("mask too large") {
  attn::Mask m = attn::causal();
  for (int i = 0; i < 8; ++i) m = m & attn::window(i, i);
  CHECK(message(x768.with_mask(m)) == "spec 'x': mask has too many terms (17 nodes; at most 16)");
}

TEST_CASE("names") {
  CHECK(message(x768.named("a b")) ==
        "spec 'a b': name character ' ' at position 1 is not allowed (use letters, digits, '_' or '-')");
  CHECK(
      message(x768.named("ab\x01")) ==
      "spec 'ab\x01': name character '\\x01' at position 2 is not allowed (use letters, digits, '_' or '-')");
  CHECK(attn::validate(x768.named("gpt2-small_v2")).ok);
}

TEST_CASE("one distinct message per SpecProblem") {
  using P = attn::SpecProblem;
  std::set<std::string> seen;
  std::vector<int> codes;
  for (int code = 1; code <= static_cast<int>(P::softcap_not_positive); ++code) codes.push_back(code);
  codes.push_back(static_cast<int>(P::mask_block_not_positive));
  for (const int code : codes) {
    CAPTURE(code);
    CHECK(attn::describe(x, {static_cast<P>(code), 1, 2}).find("unknown problem code") == std::string::npos);
    const std::string m = attn::describe(x, {static_cast<attn::SpecProblem>(code), 1, 2});
    CHECK(m.rfind("spec 'x': ", 0) == 0);
    CHECK(m.size() > std::string("spec 'x': ").size());
    CHECK(seen.insert(m).second);
  }
  CHECK(attn::describe(x, {}) == "");
}

}  // namespace

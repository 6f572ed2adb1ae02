// head_groups_test.cpp: mixed head groups in the DSL: the setter, validation, the text form, the id.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "attn/check.h"
#include "attn/kernel_id.h"
#include "attn/spec_text.h"
#include "attn/validate.h"

namespace {

constexpr attn::Spec mixed =
    attn::attention().named("mixed").block().with_d_model(96).with_head_groups({{4, 128}, {8, 64}});
constexpr attn::Spec mixed_gqa = mixed.with_head_groups({{4, 128, 2}, {8, 64, 4}});
// Compile-time checked, and usable as a template argument (a structural literal type).
ATTN_CHECK_SPEC(mixed);
static_assert(attn::checked<mixed_gqa>());

std::string message(const attn::Spec &s) {
  return attn::validate(s).message;
}

attn::Spec parsed(const std::string &text) {
  const attn::ParseResult r = attn::parse_spec(text);
  INFO(r.message);
  REQUIRE(r.ok);
  return r.spec;
}

TEST_CASE("the groups give heads, kv heads and the widths") {
  constexpr attn::Spec r = attn::resolve(mixed_gqa);
  static_assert(r.heads == 12 && r.kv_heads == 6 && r.head_dim == 128 && r.head_dim_v == 128);
  static_assert(attn::query_width(r) == 4 * 128 + 8 * 64);
  static_assert(attn::key_width(r) == 2 * 128 + 4 * 64);
  static_assert(attn::value_width(r) == attn::key_width(r));
  static_assert(attn::attended_width(r) == attn::query_width(r));
  static_assert(attn::group_first_head(r, 1) == 4 && attn::group_first_kv_head(r, 1) == 2);
  constexpr attn::Spec g1 = attn::group_spec(r, 1);
  static_assert(g1.heads == 8 && g1.kv_heads == 4 && g1.head_dim == 64 && g1.group_count == 0);
  CHECK(g1.scale == doctest::Approx(0.125));
  CHECK(attn::group_spec(r, 0).scale == doctest::Approx(1.0 / std::sqrt(128.0)));
  // An explicit scale serves every group.
  CHECK(attn::group_spec(attn::resolve(mixed.with_scale(0.5f)), 1).scale == 0.5f);
  // d_model need not be a multiple of anything.
  CHECK(attn::validate(mixed.with_d_model(97)).ok);
}

TEST_CASE("head group problems are named") {
  CHECK(message(mixed.with_head_groups({{4, 128}, {8, 64, 3}})) ==
        "spec 'mixed': head group 1 (8x64/3): kv heads (3) must divide its heads (8)");
  CHECK(message(mixed.with_head_groups({{0, 128}})) ==
        "spec 'mixed': head group 0 (0x128): heads must be > 0 (got 0)");
  CHECK(message(mixed.with_head_groups({{2, 64}, {2, -8}})) ==
        "spec 'mixed': head group 1 (2x-8): head_dim must be > 0 (got -8)");
  CHECK(message(mixed.with_head_groups({{1, 8}, {1, 8}, {1, 8}, {1, 8}, {1, 8}})) ==
        "spec 'mixed': head_groups must hold 1 to 4 groups (got 5)");
  CHECK(message(mixed.with_head_groups({})) == "spec 'mixed': head_groups must hold 1 to 4 groups (got 0)");
  CHECK(message(mixed.core()) ==
        "spec 'mixed': head_groups needs the block form (form=block); the core form takes q, k and v of one "
        "head size");
  CHECK(message(mixed.with_heads(8)) ==
        "spec 'mixed': heads (8) must be left unset beside head_groups, or be their sum (12)");
  CHECK(message(mixed.with_head_dim(64)) ==
        "spec 'mixed': head_dim (64) must be left unset beside head_groups, or be the widest group's (128)");
  CHECK(message(mixed.with_kv_heads(4)) ==
        "spec 'mixed': kv_heads (4) must be left unset beside head_groups, or be their sum (12)");
  CHECK(message(mixed.with_head_groups({{2, 2048}})) == "spec 'mixed': head_dim (2048) must be at most 1024");
  // Consistent values beside the groups are accepted (the resolved spec validates).
  CHECK(attn::validate(attn::resolve(mixed_gqa)).ok);
  CHECK(attn::check_spec(mixed.with_head_groups({{4, 128}, {8, 64, 3}})).problem ==
        attn::SpecProblem::head_group_kv_heads_not_dividing_heads);
}

TEST_CASE("the text form parses groups and round-trips them") {
  const attn::Spec a = parsed("form=block d_model=96 head_groups=4x128/2+8x64/4 mask=causal lse=true");
  CHECK(attn::resolve(a).heads == 12);
  CHECK(a.head_groups[0].kv_heads == 2);
  CHECK(a.head_groups[1].head_dim == 64);
  const std::string text = attn::to_string(a);
  CHECK(text.find("head_groups=4x128/2+8x64/4") != std::string::npos);
  CHECK(text.find(" heads=") == std::string::npos);
  CHECK(text.find("scale=") == std::string::npos);  // per group
  const attn::Spec b = parsed(text);
  CHECK(attn::to_string(b) == text);
  CHECK(attn::kernel_id(b) == attn::kernel_id(a));
  // An explicit scale is kept.
  const std::string scaled =
      attn::to_string(parsed("form=block d_model=96 head_groups=4x128+8x64 scale=0.25"));
  CHECK(scaled.find("scale=0.25") != std::string::npos);
  CHECK(attn::kernel_id(parsed(scaled)) ==
        attn::kernel_id(parsed("form=block d_model=96 head_groups=4x128+8x64 scale=0.25")));
  // The DSL and the text give the same kernel.
  CHECK(attn::kernel_id(mixed_gqa) == attn::kernel_id(parsed(attn::to_string(mixed_gqa))));
}

TEST_CASE("the kernel id names every group") {
  CHECK(attn::kernel_id(mixed) == "attn_block_m96_g4x128_g8x64_f32_sep");
  CHECK(attn::kernel_id(mixed_gqa) == "attn_block_m96_g4x128kv2_g8x64kv4_f32_sep");
  CHECK(attn::kernel_id(mixed.with_head_groups({{8, 64}, {4, 128}})) ==
        "attn_block_m96_g8x64_g4x128_f32_sep");
}

TEST_CASE("bad head_groups text is refused with the reason") {
  auto error = [](const char *text) {
    const attn::ParseResult r = attn::parse_spec(text);
    CHECK_FALSE(r.ok);
    return r.message;
  };
  CHECK(error("form=block d_model=96 head_groups=4x128+8") ==
        "key 'head_groups': '4x128+8' has a group '8' that is not HEADSxHEAD_DIM or HEADSxHEAD_DIM/KV_HEADS "
        "(e.g. "
        "4x128+8x64/2)");
  CHECK(error("form=block d_model=96 head_groups=4xa") == "key 'head_groups': 'a' is not an integer");
  CHECK(error("form=block d_model=96 head_groups=4x8/0") ==
        "key 'head_groups': '4x8/0' has a group '4x8/0' with 0 kv heads (must be > 0)");
  CHECK(error("form=block d_model=96 head_groups=1x8+1x8+1x8+1x8+1x8") ==
        "key 'head_groups': '1x8+1x8+1x8+1x8+1x8' has more than 4 groups");
  CHECK(error("d_model=96 head_groups=4x128+8x64") ==
        "spec '<unnamed>': head_groups needs the block form (form=block); the core form takes q, k and v of "
        "one "
        "head size");
  CHECK(error("form=block d_model=96 heads=12 head_groups=4x128+8x64/3") ==
        "spec '<unnamed>': head group 1 (8x64/3): kv heads (3) must divide its heads (8)");
}

}  // namespace

// test_flops.cpp: the work attn-run divides by when it reports GFLOP/s (tools/attn_run/flops.h).
#include <doctest/doctest.h>

#include "flops.h"

using attn::run_tool::call_flops;
using attn::run_tool::kept_pairs;
using attn::run_tool::parse_spec_numbers;

TEST_CASE("spec numbers and their defaults") {
  std::string why;
  const auto spec =
      parse_spec_numbers("name=gpt2 d_model=768 heads=12 form=block qkv=fused mask=causal dtype=f32", &why);
  REQUIRE(spec);
  CHECK(spec->block);
  CHECK(spec->causal);
  CHECK(spec->head_dim == 64);
  CHECK(spec->head_dim_v == 64);
  CHECK(spec->kv_heads == 12);

  CHECK(parse_spec_numbers("form=core mask=window(-1,0) heads=2 head_dim=8", &why)->causal);
  CHECK_FALSE(parse_spec_numbers("form=core mask=window(4,0) heads=2 head_dim=8", &why)->causal);
  CHECK_FALSE(parse_spec_numbers("form=core head_dim=8", &why));
  CHECK(why.find("heads") != std::string::npos);
  CHECK_FALSE(parse_spec_numbers("heads=two head_dim=8", &why));
  CHECK(why.find("'two'") != std::string::npos);
}

TEST_CASE("causal pairs are counted exactly, bottom-right aligned") {
  attn::run_tool::SpecNumbers causal;
  causal.causal = true;
  CHECK(kept_pairs(causal, 4, 4) == 10);  // 1 + 2 + 3 + 4
  CHECK(kept_pairs(causal, 2, 5) == 9);   // decode-like: 4 + 5
  CHECK(kept_pairs(causal, 5, 2) == 3);   // more queries than keys: 0 + 0 + 0 + 1 + 2
  attn::run_tool::SpecNumbers full;
  CHECK(kept_pairs(full, 2, 5) == 10);
}

TEST_CASE("core and block flops") {
  std::string why;
  const auto core =
      parse_spec_numbers("form=core heads=4 kv_heads=2 head_dim=16 head_dim_v=8 mask=none", &why);
  REQUIRE(core);
  CHECK(call_flops(*core, {2, 8, 6}) == 2.0 * 2 * 4 * 8 * 6 * (16 + 8));

  const auto block =
      parse_spec_numbers("form=block d_model=64 heads=4 kv_heads=2 head_dim=16 mask=none", &why);
  REQUIRE(block);
  const double b = 3, s = 10, dm = 64, h = 4, kvh = 2, d = 16, dv = 16;
  const double expected = 2 * b * h * s * s * (d + dv) + 2 * b * s * dm * (h * d + kvh * d + kvh * dv) +
                          2 * b * s * (h * dv) * dm;
  CHECK(call_flops(*block, {3, 10, 10}) == expected);
}

TEST_CASE("head groups: each group's work, summed") {
  std::string why;
  const auto mixed = parse_spec_numbers("d_model=96 head_groups=4x128/2+8x64 form=block mask=none", &why);
  REQUIRE(mixed);
  CHECK(mixed->heads == 12);
  CHECK(mixed->kv_heads == 10);
  REQUIRE(mixed->groups.size() == 2);
  const double b = 2, s = 5, dm = 96;
  auto group = [&](double h, double kvh, double d) {
    return 2 * b * h * s * s * (d + d) + 2 * b * s * dm * (h * d + 2 * kvh * d) + 2 * b * s * (h * d) * dm;
  };
  CHECK(call_flops(*mixed, {2, 5, 5}) == group(4, 2, 128) + group(8, 8, 64));
  CHECK_FALSE(parse_spec_numbers("d_model=96 head_groups=4x128+8 form=block", &why));
  CHECK(why.find("head_groups") != std::string::npos);
}

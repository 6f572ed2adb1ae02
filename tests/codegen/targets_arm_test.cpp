// The AArch64 side of the tile choice and of the target sets: NEON gets its own tiles, sized for
// 32 registers, never an x86 unit's; arm64 / arm64-osx expand to their two variants.
#include <doctest/doctest.h>

#include <string>

#include "attn/spec_text.h"
#include "attn/validate.h"
#include "attnc/targets.h"
#include "attnc/targets_arm.h"
#include "attnc/tile_config.h"

namespace {

attn::Spec spec_of(const std::string &text) {
  const attn::ParseResult parsed = attn::parse_spec(text);
  REQUIRE_MESSAGE(parsed.ok, parsed.message);
  return attn::resolve(parsed.spec);
}

const char *const specs[] = {
    "heads=2 head_dim=16",  "heads=12 head_dim=64", "heads=3 head_dim=80",
    "heads=32 head_dim=128", "heads=4 kv_heads=1 head_dim=24 head_dim_v=40 mask=window(3,3)|global(2)",
    "heads=2 head_dim=8 head_dim_v=4 mask=causal", "d_model=768 heads=12 form=block qkv=fused",
    "d_model=64 heads=4 kv_heads=1 head_dim_v=8 form=block mask=window(8,0)",
};

TEST_CASE("arm64 and arm64-osx expand to the Armv8.2 variant ahead of baseline NEON") {
  for (const char *set : {"arm64", "arm64-osx"}) {
    CAPTURE(set);
    const attnc::TargetList list = attnc::expand_targets(set);
    REQUIRE(list.ok);
    REQUIRE(list.targets.size() == 2);
    CHECK(list.targets[0].find("arm_dot_prod") != std::string::npos);
    CHECK(list.targets[0].find("arm_fp16") != std::string::npos);
    CHECK(list.targets[1].find("arm_dot_prod") == std::string::npos);
    CHECK(list.targets[1].find(std::string(set) == "arm64" ? "linux" : "osx") != std::string::npos);
  }
  // The runtime's names: HWCAP bits of the Armv8.2 variant, nothing for baseline NEON.
  const attnc::TargetList arm = attnc::expand_targets("arm64");
  CHECK(attnc::required_cpu_features(arm.targets[0]) == "asimddp,fphp,asimdhp");
  CHECK(attnc::required_cpu_features(arm.targets[1]).empty());
  // With features for each ("arm64-tsan"), and explicit Halide strings still accepted.
  const attnc::TargetList tsan = attnc::expand_targets("arm64-tsan");
  REQUIRE(tsan.ok);
  CHECK(tsan.targets.size() == 2);
  CHECK(attnc::expand_targets("arm-64-linux-arm_dot_prod").ok);
}

TEST_CASE("AArch64 targets get the NEON unit: 4 lanes and 32 registers") {
  const attnc::VectorUnit arm = attnc::target_vector_unit("arm-64-linux");
  CHECK(arm.lanes == 4);
  CHECK(arm.registers == 32);
  const attnc::VectorUnit sse = attnc::target_vector_unit("x86-64-linux-sse41");
  CHECK(sse.lanes == 4);
  CHECK(sse.registers == 16);
  CHECK(attnc::target_vector_unit("x86-64-linux-avx-avx2-fma").registers == 16);
  CHECK(attnc::target_vector_unit("x86-64-linux-avx-avx2-fma-avx512-avx512_skylake").registers == 32);
}

TEST_CASE("NEON tiles fill the 32-register budget and are not the x86 tiles of the same width") {
  for (const char *text : specs) {
    const attn::Spec s = spec_of(text);
    CAPTURE(text);
    for (const attnc::CpuTiles &t :
         {attnc::cpu_tiles(s, attnc::neon_vectors), attnc::cpu_tiles_short(s, attnc::neon_vectors),
          attnc::cpu_tiles_blocks(s, attnc::neon_vectors), attnc::cpu_tiles_packed(s, attnc::neon_vectors)}) {
      CAPTURE(attnc::core_tiles_text(t));
      CHECK(t.vector_width == 4);
      CHECK(t.vector_registers == 32);
      CHECK(attnc::tile_problem(s, t).empty());
      CHECK(s.head_dim_v % t.pv_vector == 0);
      CHECK(t.proj_cols % t.vector_width == 0);
      // More than 16 registers: blocks sized for SSE's 16 would leave half the file idle.
      CHECK(t.score_vectors * t.score_rows + t.score_vectors + 1 > 16);
    }
    const attnc::CpuTiles neon = attnc::cpu_tiles(s, attnc::neon_vectors);
    const attnc::CpuTiles sse = attnc::cpu_tiles(s, 4);
    CHECK(attnc::core_tiles_text(neon) != attnc::core_tiles_text(sse));
    // A QK^T block of 24 accumulators does not fit SSE's 16 registers: tile_problem knows the unit.
    attnc::CpuTiles on_sse = neon;
    on_sse.vector_registers = 16;
    CHECK_FALSE(attnc::tile_problem(s, on_sse).empty());
  }
}

TEST_CASE("NEON tune candidates all fit, the defaults first") {
  const attn::Spec s = spec_of("heads=12 head_dim=64 mask=causal");
  const std::vector<attnc::CpuTiles> candidates = attnc::tile_candidates(s, attnc::neon_vectors);
  REQUIRE(candidates.size() > 1);
  CHECK(attnc::core_tiles_text(candidates.front()) ==
        attnc::core_tiles_text(attnc::cpu_tiles(s, attnc::neon_vectors)));
  for (const attnc::CpuTiles &t : candidates) CHECK(attnc::tile_problem(s, t).empty());
}

}  // namespace

// cpu_tiles(): every tile size fits its register budget and divides what it must, for every
// vector width and a range of head dims; the function is pure.
#include "attnc/tile_config.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "attn/spec_text.h"
#include "attn/validate.h"

namespace {

attn::Spec spec_of(const std::string &text) {
  const attn::ParseResult parsed = attn::parse_spec(text);
  REQUIRE_MESSAGE(parsed.ok, parsed.message);
  return attn::resolve(parsed.spec);
}

// Vector registers of the target class: 32 with AVX-512 (16 lanes), else 16.
int registers(int lanes) {
  return lanes >= 16 ? 32 : 16;
}

void check_tiles(const attn::Spec &s, int lanes) {
  const attnc::CpuTiles t = attnc::cpu_tiles(s, lanes);
  CAPTURE(attn::to_string(s));
  CAPTURE(lanes);
  CHECK(t.vector_width == lanes);
  // QK^T: accumulators, the query vectors and one broadcast in registers.
  CHECK(t.score_vectors * t.score_rows + t.score_vectors + 1 <= registers(lanes));
  CHECK(t.query_tile % (t.vector_width * t.score_vectors) == 0);
  CHECK(t.key_block % t.score_rows == 0);
  // PV: accumulators, one row of V values and one broadcast.
  CHECK(t.pv_rows * t.pv_vectors + t.pv_vectors + 1 <= registers(lanes));
  CHECK(t.query_tile % t.pv_rows == 0);
  CHECK(s.head_dim_v % t.pv_vector == 0);
  CHECK(t.pv_vector <= lanes);
  CHECK((s.head_dim_v / t.pv_vector) % t.pv_vectors == 0);
  CHECK(s.head_dim % t.head_vector == 0);
  CHECK(t.head_vector <= lanes);
  // Decode switch: below one query tile, and chunks that are whole dot blocks.
  CHECK(t.split_keys_max_queries >= 1);
  CHECK(t.split_keys_max_queries < t.query_tile);
  CHECK(t.split_keys_chunk % t.split_keys_dots == 0);
  CHECK(s.head_dim % t.split_keys_lanes == 0);
  CHECK(t.split_keys_lanes <= std::min(lanes, 8));
  CHECK(t.split_keys_dots + 2 <= registers(lanes));
  CHECK((s.head_dim_v / t.pv_vector) % t.split_keys_pv_vectors == 0);
  CHECK(t.split_keys_pv_vectors + 2 <= registers(lanes));
  // Projections.
  CHECK(t.proj_token_task % t.proj_rows == 0);
  CHECK(t.proj_cols % lanes == 0);
  CHECK(t.proj_rows * (t.proj_cols / lanes) + t.proj_cols / lanes + 1 <= registers(lanes));
}

TEST_CASE("tile sizes fit the registers and divide their loops") {
  for (const char *text :
       {"heads=2 head_dim=16", "heads=12 head_dim=64", "heads=3 head_dim=80", "heads=32 head_dim=128",
        "heads=2 head_dim=64 head_dim_v=32", "heads=2 head_dim=32 head_dim_v=80",
        "heads=2 head_dim=24 head_dim_v=12", "heads=1 head_dim=1", "heads=2 head_dim=7 head_dim_v=9"})
    for (int lanes : {1, 4, 8, 16}) check_tiles(spec_of(text), lanes);
}

TEST_CASE("head dims that are not a multiple of the lanes get narrower vectors") {
  const attnc::CpuTiles t = attnc::cpu_tiles(spec_of("heads=3 head_dim=80 head_dim_v=20"), 16);
  CHECK(t.head_vector == 16);
  CHECK(t.pv_vector == 4);
  CHECK(attnc::lanes_dividing(80, 16) == 16);
  CHECK(attnc::lanes_dividing(20, 16) == 4);
  CHECK(attnc::lanes_dividing(7, 8) == 1);
}

TEST_CASE("cpu_tiles is a pure function of the spec and the width") {
  const attn::Spec s = spec_of("heads=12 head_dim=64 mask=causal");
  const attnc::CpuTiles a = attnc::cpu_tiles(s, 8), b = attnc::cpu_tiles(s, 8);
  CHECK(a.query_tile == b.query_tile);
  CHECK(a.key_block == b.key_block);
  CHECK(a.pv_rows == b.pv_rows);
  CHECK(a.pv_vectors == b.pv_vectors);
  CHECK(a.split_keys_chunk == b.split_keys_chunk);
  // The AVX-512 class uses its 32 registers: more accumulators than AVX2.
  const attnc::CpuTiles wide = attnc::cpu_tiles(s, 16);
  CHECK(wide.score_vectors * wide.score_rows > a.score_vectors * a.score_rows);
}

TEST_CASE("masks that skip blocks by position get smaller key blocks") {
  // Their diagonal blocks are partly masked; a larger block wastes more of them. (The block
  // core's tiles: core specs whose masks read most keys run the whole-row core, which has none.)
  const std::string core = "heads=12 head_dim=64";
  for (int lanes : {4, 8, 16}) {
    CAPTURE(lanes);
    const attnc::CpuTiles dense = attnc::cpu_tiles_blocks(spec_of(core), lanes);
    const attnc::CpuTiles padded = attnc::cpu_tiles_blocks(spec_of(core + " mask=padding"), lanes);
    CHECK(padded.key_block == dense.key_block);
    for (const char *mask : {"causal", "window(128,0)", "causal|global(4)"}) {
      CAPTURE(mask);
      const attnc::CpuTiles skipping = attnc::cpu_tiles_blocks(spec_of(core + " mask=" + mask), lanes);
      CHECK(skipping.key_block <= dense.key_block);
      if (lanes == 8) CHECK(skipping.key_block < dense.key_block);
    }
  }
  // AVX-512 measured otherwise: open-left windows (causal) keep the dense block; rows that
  // keep a narrow band or scattered blocks get the smaller one.
  const attnc::CpuTiles dense = attnc::cpu_tiles(spec_of("heads=12 head_dim=64"), 16);
  CHECK(attnc::cpu_tiles(spec_of("heads=12 head_dim=64 mask=causal"), 16).key_block == dense.key_block);
  for (const char *mask : {"window(128,0)", "window(64,64)", "causal|global(4)"}) {
    CAPTURE(mask);
    CHECK(attnc::cpu_tiles(spec_of(std::string("heads=12 head_dim=64 mask=") + mask), 16).key_block <
          dense.key_block);
  }
}

TEST_CASE("AVX2 tiles for the whole-row core: 32-query tiles, QK^T 2 x 6, PV 4 x 2") {
  for (const char *text : {"heads=12 head_dim=64", "heads=12 head_dim=64 mask=causal&padding"}) {
    CAPTURE(text);
    const attn::Spec s = spec_of(text);
    REQUIRE(attnc::whole_row_core(s));
    const attnc::CpuTiles t = attnc::cpu_tiles(s, 8);
    CHECK(t.query_tile == 32);
    CHECK(t.score_vectors * t.score_rows == 12);
    CHECK(t.pv_rows * t.pv_vectors == 8);
    CHECK(attnc::tile_problem(s, t).empty());
  }
  // The block core (block form, windows, and whole-row specs past whole_row_max_keys) keeps
  // 48-query tiles on AVX2; AVX-512 is the same for both.
  CHECK(attnc::cpu_tiles_blocks(spec_of("heads=12 head_dim=64"), 8).query_tile == 48);
  CHECK(attnc::core_tiles_text(attnc::cpu_tiles_blocks(spec_of("heads=12 head_dim=64"), 16)) ==
        attnc::core_tiles_text(attnc::cpu_tiles(spec_of("heads=12 head_dim=64"), 16)));
  CHECK_FALSE(attnc::whole_row_core(spec_of("heads=12 head_dim=64 mask=window(128,0)")));
  CHECK(attnc::cpu_tiles(spec_of("heads=12 head_dim=64 mask=window(128,0)"), 8).query_tile == 48);
  CHECK(attnc::cpu_tiles(spec_of("d_model=768 heads=12 form=block"), 8).query_tile == 48);
  CHECK(attnc::cpu_tiles(spec_of("heads=12 head_dim=64"), 16).query_tile ==
        attnc::cpu_tiles(spec_of("heads=12 head_dim=64 mask=window(128,0)"), 16).query_tile);
}

}  // namespace

TEST_CASE("AMX tiles for the whole-row core: head dims in whole tiles, P.V groups of 16 x 16") {
  CHECK(attnc::amx_row_core(spec_of("heads=12 head_dim=64 dtype=bf16")));
  CHECK(attnc::amx_row_core(spec_of("heads=3 head_dim=32 head_dim_v=48 dtype=bf16")));
  CHECK_FALSE(attnc::amx_row_core(spec_of("heads=2 head_dim=48 dtype=bf16")));               // 48 % 32
  CHECK_FALSE(attnc::amx_row_core(spec_of("heads=4 head_dim=32 head_dim_v=8 dtype=bf16")));  // 8 % 16
  for (const char *text :
       {"heads=12 head_dim=64 dtype=bf16", "heads=4 head_dim=128 mask=causal dtype=bf16"}) {
    CAPTURE(text);
    const attn::Spec s = spec_of(text);
    const attnc::CpuTiles t = attnc::amx_core_tiles(attnc::cpu_tiles(s, 16));
    CHECK(t.pv_rows == attnc::amx_tile_rows);
    CHECK(t.pv_vector * t.pv_vectors == attnc::amx_tile_rows);
    CHECK(t.query_tile % attnc::amx_tile_rows == 0);
    CHECK(attnc::tile_problem(s, t).empty());
  }
}

// GPU tile sizes: a pure function of the spec, one thread per query row.
#include "attnc/tile_config_gpu.h"

#include <doctest/doctest.h>

#include "attn/spec_text.h"
#include "attn/validate.h"
#include "attnc/schedule_gpu.h"

namespace {

attn::Spec spec(const char *text) {
  const attn::ParseResult parsed = attn::parse_spec(text);
  REQUIRE(parsed.ok);
  return attn::resolve(parsed.spec);
}

TEST_CASE("gpu_tiles: a thread per query row, the block's shared memory within a CUDA block's 48 KiB") {
  struct Case {
    const char *text;
    int query_tile, key_block;
  };
  // D = Dv = 64: 3 x 32 x 64 state floats and 32 x 128 K/V floats, 40 KiB (64 rows: 48 KiB of state alone).
  for (const Case c :
       {Case{"heads=2 head_dim=16 mask=none", 128, 32}, Case{"heads=16 head_dim=64 mask=causal", 32, 32},
        Case{"heads=16 head_dim=128 mask=none", 16, 16},
        Case{"heads=2 head_dim=32 head_dim_v=80 mask=causal", 32, 32},
        Case{"d_model=96 heads=3 head_dim_v=16 form=block", 128, 32},
        Case{"heads=1 head_dim=512 mask=none", 1, 8}}) {
    CAPTURE(c.text);
    const attn::Spec s = spec(c.text);
    const attnc::GpuTiles t = attnc::gpu_tiles(s);
    CHECK(t.pv_rows == 1);  // each thread trims P.V to its own row's keys
    CHECK(t.query_tile == c.query_tile);
    CHECK(t.key_block == c.key_block);
    CHECK(attnc::gpu_shared_floats(s, t.query_tile, t.key_block) * 4 <= attnc::gpu_shared_bytes);
    CHECK(attnc::gpu_shared_floats(s, 2 * t.query_tile, 16) * 4 > attnc::gpu_shared_bytes);  // the most rows
    CHECK(t.proj_rows * t.proj_tokens <= 1024);  // threads per block of a projection
    CHECK(t.split_keys_chunk % t.split_keys_group == 0);  // define_split_keys' rule
    CHECK(t.split_keys_chunk <= 1024);                     // a thread per key of a chunk
    const attnc::GpuTiles again = attnc::gpu_tiles(s);
    CHECK(again.query_tile == t.query_tile);
    CHECK(again.key_block == t.key_block);
  }
}

TEST_CASE("runs_on_gpu names the CUDA and OpenCL targets only") {
  CHECK(attnc::runs_on_gpu(Halide::Target("x86-64-linux-cuda-cuda_capability_86")));
  CHECK(attnc::runs_on_gpu(Halide::Target("x86-64-linux-opencl")));
  CHECK_FALSE(attnc::runs_on_gpu(Halide::Target("x86-64-linux-avx2-fma")));
}

}  // namespace

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

TEST_CASE("gpu_tiles: a thread per query row, fewer threads for wide heads") {
  for (const char *text : {"heads=2 head_dim=16 mask=none", "heads=16 head_dim=64 mask=causal",
                           "heads=16 head_dim=128 mask=none", "heads=2 head_dim=32 head_dim_v=80 mask=causal",
                           "d_model=96 heads=3 head_dim_v=16 form=block"}) {
    CAPTURE(text);
    const attnc::GpuTiles t = attnc::gpu_tiles(spec(text));
    const attn::Spec s = spec(text);
    CHECK(t.pv_rows == 1);  // each thread trims P.V to its own row's keys
    CHECK(t.query_tile % t.pv_rows == 0);
    CHECK(t.query_tile == (s.head_dim > 64 || s.head_dim_v > 64 ? 64 : 128));
    CHECK(t.key_block == 32);
    CHECK(t.proj_rows * t.proj_tokens <= 1024);  // threads per block of a projection
    const attnc::GpuTiles again = attnc::gpu_tiles(spec(text));
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

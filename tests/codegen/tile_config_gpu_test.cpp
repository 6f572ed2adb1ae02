// GPU tile sizes: a pure function of the spec, a thread per query row and group of value columns.
#include "attnc/tile_config_gpu.h"

#include <doctest/doctest.h>

#include <algorithm>

#include "attn/spec_text.h"
#include "attn/validate.h"
#include "attnc/schedule_backward_gpu.h"
#include "attnc/schedule_gpu.h"

namespace {

attn::Spec spec(const char *text) {
  const attn::ParseResult parsed = attn::parse_spec(text);
  REQUIRE(parsed.ok);
  return attn::resolve(parsed.spec);
}

TEST_CASE("gpu_tiles: threads over rows and value columns, the block's shared memory within 48 KiB") {
  struct Case {
    const char *text;
    int value_columns, query_tile, key_block;
  };
  // D = Dv = 64: 8 column groups of 8 value columns, 32 rows (256 threads); 256 x 10 state floats,
  // 32 x 64 q floats, 32 x 32 score floats and 32 x 128 K/V floats: 38 KiB. D = 512: 4 rows, and
  // 4 keys (8 would need 50.1 KiB).
  for (const Case c : {Case{"heads=2 head_dim=16 mask=none", 8, 128, 32},
                       Case{"heads=16 head_dim=64 mask=causal", 8, 32, 32},
                       Case{"heads=16 head_dim=128 mask=none", 8, 16, 16},
                       Case{"heads=2 head_dim=32 head_dim_v=80 mask=causal", 8, 16, 32},
                       Case{"heads=2 head_dim=20 mask=causal", 4, 32, 32},
                       Case{"d_model=96 heads=3 head_dim_v=16 form=block", 8, 128, 32},
                       Case{"heads=1 head_dim=512 mask=none", 8, 4, 4}}) {
    CAPTURE(c.text);
    const attn::Spec s = spec(c.text);
    const attnc::GpuTiles t = attnc::gpu_tiles(s);
    CHECK(t.pv_rows == 1);  // each thread trims P.V to its own row's keys
    CHECK(t.value_columns == c.value_columns);
    CHECK(s.head_dim_v % t.value_columns == 0);  // define_core's rule
    CHECK(t.query_tile == c.query_tile);
    CHECK(t.threads == t.query_tile * (s.head_dim_v / t.value_columns));
    CHECK(t.threads <= attnc::gpu_core_threads);
    CHECK(2 * t.threads > attnc::gpu_core_threads);  // the most rows
    CHECK(t.key_block == c.key_block);
    CHECK(attnc::gpu_shared_floats(s, t.query_tile, t.threads, t.value_columns, t.key_block) * 4 <=
          attnc::gpu_shared_bytes);
    if (t.key_block < 32)  // the most keys
      CHECK(attnc::gpu_shared_floats(s, t.query_tile, t.threads, t.value_columns, 2 * t.key_block) * 4 >
            attnc::gpu_shared_bytes);
    CHECK(t.proj_rows % t.proj_thread_rows == 0);  // whole register tiles per block
    CHECK(t.proj_tokens % t.proj_thread_tokens == 0);
    CHECK((t.proj_rows / t.proj_thread_rows) * (t.proj_tokens / t.proj_thread_tokens) <= 1024);
    CHECK(attnc::gpu_projection_shared_floats(t) * 4 <= attnc::gpu_shared_bytes);
    CHECK(t.split_keys_chunk % t.split_keys_group == 0);  // define_split_keys' rule
    CHECK(t.split_keys_chunk <= 1024);                    // a thread per key of a chunk
    const attnc::GpuTiles again = attnc::gpu_tiles(s);
    CHECK(again.query_tile == t.query_tile);
    CHECK(again.key_block == t.key_block);
    CHECK(again.value_columns == t.value_columns);
  }
}

TEST_CASE("gpu_tiles: a split-keys block takes up to 8 query heads of one KV head, dividing the group") {
  struct Case {
    const char *text;
    int heads;
  };
  // H32 KVH8 D128: 4 heads (128 x 4 threads). MQA at 32 heads: 8 (44 KiB of shared memory). Group
  // 3: 3. Dv 256: 4 (1024 threads); Dv 512: 2. No GQA: 1.
  for (const Case c :
       {Case{"heads=32 kv_heads=8 head_dim=128 mask=none", 4},
        Case{"heads=32 kv_heads=1 head_dim=64 mask=causal", 8},
        Case{"heads=3 kv_heads=1 head_dim=32 mask=causal", 3},
        Case{"heads=12 kv_heads=1 head_dim=256 mask=none", 4},
        Case{"heads=8 kv_heads=1 head_dim=512 mask=none", 2}, Case{"heads=16 head_dim=64 mask=causal", 1}}) {
    CAPTURE(c.text);
    const attn::Spec s = spec(c.text);
    const attnc::GpuTiles t = attnc::gpu_tiles(s);
    CHECK(t.split_keys_heads == c.heads);
    CHECK((s.heads / s.kv_heads) % t.split_keys_heads == 0);
    CHECK(t.split_keys_heads * std::max(s.head_dim_v, t.split_keys_chunk) <= 1024);
    CHECK(attnc::gpu_split_keys_shared_floats(s, t.split_keys_chunk, t.split_keys_lanes, t.split_keys_heads) *
              4 <=
          attnc::gpu_shared_bytes);
    CHECK(s.head_dim % t.split_keys_lanes == 0);  // define_split_keys' rule
  }
  // Lanes along head_dim: 8 where 8 divides it, else the largest power of two that does.
  CHECK(attnc::gpu_tiles(spec("heads=2 head_dim=80 mask=none")).split_keys_lanes == 8);
  CHECK(attnc::gpu_tiles(spec("heads=2 head_dim=20 mask=none")).split_keys_lanes == 4);
  CHECK(attnc::gpu_tiles(spec("heads=2 head_dim=18 mask=none")).split_keys_lanes == 2);
}

TEST_CASE("backward_tiles_gpu: whole columns per thread, a row block's pairs within the shared budget") {
  struct Case {
    const char *text;
    int column_vectors, dim_vectors, key_tile, row_block;
  };
  // Columns per thread: the fewest dividing max(D, Dv) in at most 8 threads (20: 4, 17: 17). The row
  // block halves while 2 x 32 keys x rows x group floats exceed 32 KiB (group 32: 4 rows), then the
  // key tile (group 256: 16 keys of 1 row).
  for (const Case c : {Case{"heads=4 kv_heads=2 head_dim=24 mask=causal", 3, 3, 32, 16},
                       Case{"heads=2 head_dim=16 head_dim_v=24 mask=none", 3, 2, 32, 16},
                       Case{"heads=2 head_dim=20 head_dim_v=17 mask=none", 4, 4, 32, 16},
                       Case{"heads=2 head_dim=17 mask=none", 17, 17, 32, 16},
                       Case{"heads=32 kv_heads=1 head_dim=128 mask=causal", 16, 16, 32, 4},
                       Case{"heads=256 kv_heads=1 head_dim=64 mask=none", 8, 8, 16, 1}}) {
    CAPTURE(c.text);
    const attn::Spec s = spec(c.text);
    const attnc::BackwardTiles t = attnc::backward_tiles_gpu(s);
    CHECK(t.column_vectors == c.column_vectors);
    CHECK(t.dim_vectors == c.dim_vectors);
    CHECK(t.key_tile == c.key_tile);
    CHECK(t.row_block == c.row_block);
    const int columns = std::max(s.head_dim, s.head_dim_v);
    CHECK(columns % t.column_vectors == 0);  // no thread reads past a row
    CHECK(s.head_dim % t.dim_vectors == 0);
    CHECK(t.key_tile * (columns / t.column_vectors) <= attnc::gpu_core_threads);
    CHECK(t.query_tile * (s.head_dim / t.dim_vectors) <= attnc::gpu_core_threads);
    CHECK(attnc::gpu_backward_shared_floats(s, t) * 4 <= attnc::gpu_backward_shared_bytes);
    CHECK(t.key_tile % t.key_block == 0);  // define_backward's rules
    CHECK(t.query_tile % t.query_block == 0);
  }
}

TEST_CASE("runs_on_gpu names the CUDA and OpenCL targets only") {
  CHECK(attnc::runs_on_gpu(Halide::Target("x86-64-linux-cuda-cuda_capability_86")));
  CHECK(attnc::runs_on_gpu(Halide::Target("x86-64-linux-opencl")));
  CHECK_FALSE(attnc::runs_on_gpu(Halide::Target("x86-64-linux-avx2-fma")));
}

}  // namespace

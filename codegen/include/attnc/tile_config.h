// attnc/tile_config.h: CPU tile sizes for a spec and a vector width, as one pure function.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/spec.h"

namespace attnc {

// The vector unit tiles are sized for: f32 lanes per vector and architectural vector registers.
struct VectorUnit {
  int lanes;
  int registers;
};
// x86 by its f32 lanes: AVX-512 has 32 zmm registers, AVX2 and SSE 16 ymm / xmm.
constexpr VectorUnit x86_vectors(int lanes) {
  return {lanes, lanes >= 16 ? 32 : 16};
}
// AArch64 Advanced SIMD (NEON): 128-bit vectors (4 f32 lanes) and 32 registers, v0-v31.
constexpr VectorUnit neon_vectors{4, 32};

struct CpuTiles {
  int key_block;               // keys per block: one running-max/sum update per block (block cores)
  int query_tile;              // queries per parallel task; their q rows and state stay in L1
  int vector_width;            // f32 lanes of the target's vectors
  int vector_registers;        // the target's vector registers (the budget of the register blocks)
  int score_rows;              // keys of the QK^T register block (one broadcast each)
  int score_vectors;           // query vectors of the QK^T register block (score_vectors x score_rows
                               // accumulators; query_tile / vector_width is a multiple of it)
  int pv_rows;                 // query rows of the PV register block
  int pv_vectors;              // head_dim_v vectors of the PV register block (divides head_dim_v / pv_vector)
  int pv_vector;               // lanes used along head_dim_v (divides head_dim_v, <= vector_width)
  int head_vector;             // lanes used along head_dim where a loop runs over it
  int split_keys_chunk;        // split-keys core: keys per chunk (one parallel task per chunk)
  int split_keys_lanes;        // split-keys core: lanes of the q . k partial sums along head_dim
                               // and of its per-key loops (divides head_dim, <= 8)
  int split_keys_dots;         // split-keys core: keys per q . k register block and per P.V key group
  int split_keys_heads;        // split-keys core: query heads of one KV head in each register block
  int split_keys_pv_vectors;   // split-keys core: head_dim_v vectors of the P.V register block
  int split_keys_max_queries;  // the split-keys core runs when Sq is at most this
  int split_keys_prefetch = 0;         // split-keys core: keys ahead whose K and V rows are prefetched
  bool split_keys_stage_rows = false;  // split-keys core: f32 K and V rows copied like 16-bit ones
  bool split_keys_stage_chunk = false;  // split-keys core: a task's decoded or copied rows staged at once
  int proj_rows;                // rows (tokens) of a projection register block
  int proj_cols;                // output features of a projection register block (a multiple of lanes)
  int proj_token_task;          // tokens per parallel projection task (a multiple of proj_rows)
  bool pack_head_rows = false;  // core: each task copies its head's K and V rows contiguous first
};

// native_lanes: f32 lanes of an x86 target (16 for AVX-512, 8 for AVX2, 4 for SSE); each
// function also takes a VectorUnit, which is how AArch64 (neon_vectors) gets its own tiles
// (tile_config_neon.cpp) rather than those of an x86 unit of the same width.
// The tiles of the spec's main pipeline: cpu_tiles_blocks()', with the whole-row core's own
// register blocks on AVX2 where that core runs it (whole_row_core).
CpuTiles cpu_tiles(const attn::Spec &resolved, VectorUnit unit);
CpuTiles cpu_tiles(const attn::Spec &resolved, int native_lanes);

// The block core's tiles, for every spec: what cpu_tiles() gives where the block core is the main
// pipeline, and the tiles of a whole-row spec's <id>_blocks_v<i> pipeline (long keys).
CpuTiles cpu_tiles_blocks(const attn::Spec &resolved, VectorUnit unit);
CpuTiles cpu_tiles_blocks(const attn::Spec &resolved, int native_lanes);

// Tiles for short sequences, compiled beside cpu_tiles()' as a second pipeline that the entry
// picks per call (short_tiles_win); fewer padded scores for lengths that leave a block mostly
// empty. (A query_tile of 0 stands for no short pipeline: short_tiles_win is then false.)
CpuTiles cpu_tiles_short(const attn::Spec &resolved, VectorUnit unit);
CpuTiles cpu_tiles_short(const attn::Spec &resolved, int native_lanes);

// How much faster the default tiles run per padded score than the short ones, measured (AVX2,
// W1 none, one thread: 107.6 ms for 1056 x 1024 padded scores against 112.4 ms for 1024 x 1024;
// AVX-512, 1024 x 1024 both: 1.065).
constexpr double default_tiles_speedup = 1.077;

// The packed pipeline: each (head, batch) task first copies its head's K and V rows into
// contiguous buffers (in [B, S, H, D] they sit H * D floats apart, which past L2 costs the
// hardware prefetchers). AVX2, 2 threads, interleaved medians: B1 H8 S4096 D64 causal 405 ->
// 327 ms, B1 H12 S4096 none 1207 -> 1007 ms, W1 (S = 1024) 60.7 -> 60.0 ms, but B8 H8 S512
// 80.7 -> 85.5 ms (the copy and its page faults against a short task; with the page faults
// gone, attn/workspace_cache.h, still 80.6 -> 80.8 ms: the copy saves no more than it costs
// at S = 512). Zen 4 (2 threads, interleaved): at S = 512 the AVX2 variant gains on B8 H8
// (40.9 -> 35.2 ms) but both variants lose on B1 H12 (AVX-512 8.5 -> 9.5 ms, AVX2 12.2 -> 13.4:
// 12 tasks of 16 tiles each carry their copies less well than 64). So the entry runs it
// from packed_min_keys keys (fewer with many tasks, below), and only for specs whose tiles
// read most of the keys. Up to packed_max_keys: a task's copies take Sk * (D + Dv) * 4 bytes,
// and with the query tiles in a nested parallel loop a waiting thread can open more tasks (2
// threads, S = 32768, D = 64: 65 MiB of copies live, against the 64 MiB bound on extra
// memory); at 16384 keys they stay under 32 MiB.
constexpr int packed_min_keys = 1024;
constexpr int packed_max_keys = 16384;
// And with at least this many (head, batch) tasks. With few, the copies cost the balance of the
// nested parallel tiles: B1 H3 S1024, 2 threads, interleaved: 19.5 ms packed against 14.2 ms
// (the makespan of 3 whole tasks on 2 threads), while B1 H8 ran 39.6 against 42.6 ms.
constexpr int packed_min_tasks = 8;
// With many tasks the copies pay from fewer keys. Zen 4, 2 threads, 11 interleaved rounds,
// S = 512 D64, main -> packed: AVX2 variant B8 H8 46.5 -> 38.3 ms, B4 H8 29.1 -> 26.0, B2 H8
// (16 tasks) 14.0 -> 13.2 with per-call minima 9.2 -> 9.8; AVX-512 B8 H8 30.2 -> 28.8, B4 H8
// 20.0 -> 19.9, B2 H8 10.1 -> 11.8; B8 H8 causal AVX2 30.3 -> 28.4, AVX-512 30.7 -> 28.8. Zen 1
// (AVX2) ran B8 H8 even (80.6 -> 80.8 ms, above).
constexpr int packed_many_tasks = 32;
constexpr int packed_min_keys_many_tasks = 512;

// Whether a call of seq_k keys over `tasks` (batch * heads) tasks runs the packed pipeline
// (where the kernel has one). The generated entry does the same arithmetic in C.
bool runs_packed(int64_t seq_k, int64_t tasks);

// Core form, and a mask with no finite window, global tokens or random blocks: those read a few
// blocks per tile, and copying the whole head would cost more than the strided reads.
bool packs_head_rows(const attn::Spec &resolved);

// Whether the spec's prefill calls run the whole-row core (core_rows.h) rather than the block
// core: the specs packs_head_rows() takes (core form, masks that read most keys). Their calls
// need no short pipeline: the whole-row core pads no keys.
bool whole_row_core(const attn::Spec &resolved);

// AMX tiles (tdpbf16ps): 16 x 16 fp32 sums, each over 32 bf16 products per instruction.
constexpr int amx_tile_rows = 16;
constexpr int amx_reduction = 32;

// Whether the whole-row core's products fit AMX tiles: head_dim whole steps of 32, head_dim_v
// whole tiles of 16 (else the core keeps its vdpbf16ps pairs).
bool amx_row_core(const attn::Spec &resolved);

// The whole-row core's tiles on AMX: P.V groups of 16 rows, each over one 16-wide slice of
// head_dim_v (one tile of sums); the keys left to vector FMAs take the same 16 x 1 register block.
CpuTiles amx_core_tiles(CpuTiles tiles);

// Past this many keys a whole-row spec's calls run the block core on its head's K and V rows
// copied per task (<id>_blocks_v<i>): the whole-row core's P.V register blocks each sweep the
// head's V rows over all keys, and its rows of scores and probabilities are 256 bytes a key, so
// past L2 (2 MiB here) it streams them from L3 once per register block. Intel Xeon (Sapphire
// Rapids class, AVX-512 variant, 2 shared vCPUs), one thread, CPU ms a call, interleaved
// (2026-12-05): H32 KVH8 D128 causal Sq512 onto a cache, whole-row / blocks: Lk 2048 149 / 147,
// Lk 4096 532 / 328, Lk 8704 1662 / 724; H12 D64 causal Sq = Sk 2048 60.4 / 61.3, 4096 265 / 238.
// The block core's memory does not grow with Sk beyond the packed copies (Sk * (D + Dv) * 4
// bytes per task): W2 (H8 D64 causal) at 32768 keys peaks 48 MiB higher than the unpacked block
// core did, and runs 2.06x faster.
constexpr int whole_row_max_keys = 2048;
// Whole-row cores that multiply bf16 (vdpbf16ps pairs, AMX tiles) keep their calls up to 16384
// keys, as before: past 2048 keys their long calls would convert to fp32 in the block core,
// which was not measured against them.
constexpr int whole_row_max_keys_bf16 = 16384;

// The packed pipeline's tiles: cpu_tiles()' with pack_head_rows. That pipeline runs the
// whole-row core (core_rows.h), which has no key blocks: key_block only pads the other cores.
// (The block core it replaced took 192-key blocks on AVX2 for causal-like masks: fewer rescales.)
CpuTiles cpu_tiles_packed(const attn::Spec &resolved, VectorUnit unit);
CpuTiles cpu_tiles_packed(const attn::Spec &resolved, int native_lanes);

// Whether a call of seq_q x seq_k runs faster on the short tiles: fewer padded scores (whole
// query tiles times whole key blocks) after the defaults' speedup. The generated entry does the
// same arithmetic in C.
bool short_tiles_win(int64_t seq_q, int64_t seq_k, const CpuTiles &defaults, const CpuTiles &short_tiles);

// The core's tunable fields as text: "query_tile=48,key_block=128,score_vectors=3,score_rows=4,
// pv_rows=6,pv_vectors=2" (the form tuning files and the generator's "tiles" parameter use).
std::string core_tiles_text(const CpuTiles &tiles);

// Sets the fields text names (any of those above, comma separated). On an unknown name or a
// value that is not a positive integer returns false with *error; tiles is then unspecified.
bool apply_tiles_text(const std::string &text, CpuTiles *tiles, std::string *error);

// "" when every size fits its register budget (tiles.vector_registers) and
// divides what it must; otherwise the first problem, in words.
std::string tile_problem(const attn::Spec &resolved, const CpuTiles &tiles);

// Core tiles worth timing on a machine (attnc tune): the defaults first, then query tiles of
// 32/48/64, three QK^T register blocks and key blocks of 64/96/128, each with the largest PV
// block that fits; only those without a tile_problem, no duplicates.
std::vector<CpuTiles> tile_candidates(const attn::Spec &resolved, VectorUnit unit);
std::vector<CpuTiles> tile_candidates(const attn::Spec &resolved, int native_lanes);

// The AArch64 NEON entry of the tile choice (tile_config_neon.cpp): cpu_tiles_blocks' for
// neon_vectors, and the short pipeline's. Called through the VectorUnit functions above.
CpuTiles neon_tiles_blocks(const attn::Spec &resolved);
CpuTiles neon_tiles_short(const attn::Spec &resolved);

// The largest of {native, native/2, ..., 1} lanes that divides n.
int lanes_dividing(int n, int native_lanes);

}  // namespace attnc

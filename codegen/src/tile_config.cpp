// CPU tile sizes. Register budget: 32 zmm (AVX-512) or 16 ymm (AVX2); AArch64's entry is
// tile_config_neon.cpp.
//
// AVX2 numbers below: Zen 1 (2 cores, FMA peak 39.4 GFLOP/s per core measured by
// bench/fma_peak.cpp), B1 H12 S1024 D64 no mask, one thread, medians of 5 (attn-run --bench).
// AVX-512 numbers: Zen 4 (EPYC, 2 cores, 114 GFLOP/s per core by the same benchmark).
#include "attnc/tile_config.h"

#include <algorithm>
#include <charconv>
#include <sstream>

namespace attnc {
namespace {

// The AArch64 unit: its tiles come from tile_config_neon.cpp, never from an x86 unit's.
bool is_neon(VectorUnit unit) {
  return unit.lanes == neon_vectors.lanes && unit.registers == neon_vectors.registers;
}

// The tunable fields, by name.
struct Field {
  const char *name;
  int CpuTiles::*member;
};
constexpr Field core_fields[] = {
    {"query_tile", &CpuTiles::query_tile},
    {"key_block", &CpuTiles::key_block},
    {"score_vectors", &CpuTiles::score_vectors},
    {"score_rows", &CpuTiles::score_rows},
    {"pv_rows", &CpuTiles::pv_rows},
    {"pv_vectors", &CpuTiles::pv_vectors},
};

// The most PV rows that fit the registers next to pv_vectors and divide the tile.
int largest_pv_rows(const CpuTiles &t) {
  int rows = (t.vector_registers - 4) / t.pv_vectors;
  while (rows > 1 && t.query_tile % rows != 0) --rows;
  return std::max(rows, 1);
}

// Masks whose rows keep a band of keys with a left edge, or scattered blocks (global tokens,
// random blocks), rather than most keys up to the diagonal: a window with left >= 0 or a sparse
// term anywhere in the mask.
bool keeps_narrow_rows(const attn::Spec &s) {
  for (int n = 0; n < s.mask.count; ++n) {
    const attn::MaskNode &node = s.mask.nodes[n];
    if (node.op == attn::MaskOp::global_tokens || node.op == attn::MaskOp::random_blocks) return true;
    if (node.op == attn::MaskOp::window && node.left >= 0) return true;
  }
  return false;
}

}  // namespace

int lanes_dividing(int n, int native_lanes) {
  int lanes = native_lanes;
  while (lanes > 1 && n % lanes != 0) lanes /= 2;
  return lanes;
}

CpuTiles cpu_tiles_blocks(const attn::Spec &s, int native_lanes) {
  return cpu_tiles_blocks(s, x86_vectors(native_lanes));
}

CpuTiles cpu_tiles_blocks(const attn::Spec &s, VectorUnit unit) {
  if (is_neon(unit)) return neon_tiles_blocks(s);
  const int native_lanes = unit.lanes;
  CpuTiles t{};
  t.vector_width = native_lanes;
  t.vector_registers = unit.registers;
  const bool wide = native_lanes >= 16;  // 32 vector registers (AVX-512) rather than 16
  // A task's query rows. K and V rows of a key block are read once per task, so a larger tile
  // reads them less often; QK^T and PV sweep the tile in register-block groups. AVX2, one
  // thread, W1 none (B1 H12 S1024 D64), interleaved medians of 4-5 (2026-12-03; base = tile 32,
  // QK^T 2 x 6, PV 4 x 2, key block 96: 110.9 ms): tile 48 with PV 6 x 2 108.7 ms; with QK^T
  // 3 x 4 and key block 128 as well 103.0 ms; the same with tile 96 109.3 ms, PV 4 x 2
  // 106.7 ms. AVX-512 keeps tile 32 (Zen 4, attnc tune as for key_block below: 48 and 64
  // with their 3 x 6 / 2 x 8 / 4 x 4 blocks were within 4% either way, none ahead everywhere; the
  // whole-row core, one thread, 64 / 48 against 32: W1 none 32.9 / 33.8 vs 32.4 ms, W1 causal
  // 18.3 / 18.9 vs 18.3, W3 49.4 / 49.0 vs 46.0).
  t.query_tile = wide ? 32 : 48;
  // QK^T accumulators = score_vectors query vectors x score_rows keys, leaving registers for
  // the query vectors and one broadcast: 2 x 8 = 16 zmm; 3 x 4 = 12 ymm (16 spilled on AVX2).
  // AVX2 with tile 32 (older schedule, 1 thread): 2 x 6 143 ms, 3 x 4 (tile 48) 148 ms, 1 x 12
  // 157 ms, 2 x 4 164 ms; 3 x 4 lets the key block be 128 (a power of two: no partial last
  // block for power-of-two lengths), which is what made the combination above win.
  t.score_vectors = wide ? 2 : 3;
  t.score_rows = wide ? 8 : 4;
  // A multiple of score_rows. Larger blocks amortize the per-block rescale of the running
  // state; scores and probs of a block stay in L1 (2 x 24 KiB for 48 queries x 128 keys).
  // AVX2, W1 none with the blocks above: 64 keys 108.0 ms, 128 keys 103.8 ms, 192 keys 114.3
  // ms; W3 (B8 H8 S512) 64 keys 140.3 ms, 128 keys 136.1 ms, old schedule 147.7 ms. Masks that
  // skip blocks by position (causal, windows) keep 96: their diagonal blocks are partly
  // masked, and bigger ones waste more (W1 causal: 96 keys 58.2 ms, 128 keys 61.0 ms, old
  // 58.5 ms; W5 B1 H16 S2048 D128 causal: 96 keys 657 ms, 128 keys 691 ms, old 688 ms).
  // AVX-512 (Zen 4, 2 threads, attnc tune medians of 9 interleaved rounds, 2026-12-03): 128
  // keys against 96 W1 none 18.4 vs 19.9 ms, W3 27.9 vs 31.2 (512 keys: 96 leaves a partial
  // block), W2 112.9 vs 116.1, W5 109.2 vs 111.7, W1 causal 12.1 vs 12.0; only narrow rows
  // lose: H8 S4096 window(128,128)|global(16) 28.5 vs 26.8 ms (64 keys 24.3), window(256,0)
  // even.
  bool skips_blocks = false;
  for (int n = 0; n < s.mask.count; ++n)
    skips_blocks = skips_blocks || attn::is_structural(s.mask.nodes[n].op);
  t.key_block = (wide ? keeps_narrow_rows(s) : skips_blocks) ? 96 : 128;
  const int accumulators = wide ? 16 : 12;
  t.pv_vector = lanes_dividing(s.head_dim_v, native_lanes);
  t.head_vector = lanes_dividing(s.head_dim, native_lanes);
  // PV register block: pv_rows x pv_vectors accumulators over a slice of head_dim_v, so the
  // slice of V stays in L1 while every row group reads it. AVX2 (tile 32, older schedule):
  // 1 row x 8 vectors 190 ms, 2 x 4 168 ms, 4 x 2 153 ms, 8 x 1 166 ms; with tile 48, 6 x 2
  // (12 accumulators) beats 4 x 2 by 3% (above).
  const int dv_vectors = s.head_dim_v / t.pv_vector;
  t.pv_vectors = wide ? 4 : 2;
  while (dv_vectors % t.pv_vectors != 0) t.pv_vectors /= 2;
  // Rows: as many as the accumulators allow that divide the tile.
  t.pv_rows = accumulators / t.pv_vectors;
  while (t.query_tile % t.pv_rows != 0) --t.pv_rows;
  // Decode: few queries, many keys; memory bound. A task takes a chunk of keys for every head and
  // query, so it reads K and V in address order; Sk = 4096 makes 16 tasks per batch. AVX2, B1
  // H32 Sq1 Sk4096 D128, 2 threads: one task per (chunk, head) 29 ms (4.6 GB/s of K and V),
  // per chunk with the heads inside 7.3 ms (18.5 GB/s; bench/read_bandwidth.cpp read 13-21
  // GB/s on this VM the same hour). The tiled core took 103 ms.
  t.split_keys_chunk = 256;
  // Eight keys per q . k block, each summed in 8 lanes: the lane sums cost a transpose per block,
  // which grows with the lanes while the memory-bound block gains nothing from wider ones.
  // AVX-512 (Zen 4, W4, 2 threads, 25 interleaved rounds, median / median of per-call minima):
  // 16 keys x 16 lanes (the earlier AVX-512 choice) 7.48 / 6.76 ms, 8 x 16 6.49 / 5.37, 8 x 8
  // 5.75 / 4.86, the AVX2 variant on the same machine 5.70 / 4.60.
  t.split_keys_dots = 8;
  t.split_keys_lanes = lanes_dividing(s.head_dim, std::min(native_lanes, 8));
  // P.V per key group in registers: up to 8 vectors of head_dim_v (8 accumulators, a broadcast
  // and a row of V); 4 of 16 lanes on AVX-512 (W4 as above, 7 rounds, 8 keys x 16 lanes: 8
  // vectors 7.62 / 5.93 ms, 4 vectors 5.95 / 5.44).
  t.split_keys_pv_vectors = wide ? 4 : 8;
  while (dv_vectors % t.split_keys_pv_vectors != 0) t.split_keys_pv_vectors /= 2;
  // GQA on AVX-512: up to 4 query heads of one KV head share each K and V vector from a register,
  // 4 keys x 4 heads of q . k sums and 4 heads x 4 vectors of P.V sums (16 zmm each). Intel Xeon
  // (Sapphire Rapids class), B1 H32 KVH8 D128 Lk8192 causal through a contiguous cache, 2
  // threads, 3 interleaved rounds of 30 calls (2026-12-06, quiet): f32 3.09 -> 2.73 ms, bf16
  // 3.22 -> 2.72, int8 2.76 -> 2.42 (8 keys x 4 heads spilled; 16 lanes needed a transpose per
  // 4 keys that cost more than it saved). AVX2 (16 registers) and NEON keep one head.
  const int kv_heads = s.kv_heads > 0 ? s.kv_heads : s.heads;
  const int group = s.heads / kv_heads;
  t.split_keys_heads = !wide ? 1 : group % 4 == 0 ? 4 : group % 2 == 0 ? 2 : 1;
  if (t.split_keys_heads == 4) t.split_keys_dots = 4;
  t.split_keys_max_queries = 8;
  // 8-bit caches: each decoded K and V row prefetches the stored row 8 keys on, in the decode's
  // loop (a key group's rows are a 4 KiB page at KVH8 D128; the hardware's stream prefetchers
  // start over on each page). AMD EPYC (Zen 5), 2 threads, 3 interleaved rounds of 20 calls
  // (2026-12-06), H32 KVH8 D128 causal through a contiguous cache, against the earlier prefetch of
  // a whole key group's rows two groups ahead at the group's start: B1 Lk32768 int8 0.73-0.76,
  // fp8 0.78-0.79; B8 Lk8192 int8 0.71, fp8 0.77 (4 keys on 0.77, 12 keys 0.75-0.81). That group
  // prefetch had been 0.76-0.86 of no prefetch. bf16 (1.06-1.21) and f32 (1.25-1.31) lose with
  // it: they stay without.
  const bool byte_cache = s.kv_dtype == attn::KvDType::int8 || s.kv_dtype == attn::KvDType::fp8_e4m3;
  t.split_keys_prefetch = byte_cache ? 8 : 0;
  // f32 rows copied per key group as the 8- and 16-bit ones are decoded (in address order, for
  // every query head of the group to read) when 4 heads share them: read in place, the 4 heads'
  // dot products walked 4 keys' rows a page apart, and the loads stalled. AMD EPYC (Zen 5), 2
  // threads, 3-5 interleaved rounds (2026-12-06), copied / in place: H32 KVH8 D128 B1 Lk32768
  // 0.82, B8 Lk8192 0.84, B1 Lk8192 0.85; with a prefetch as well 0.84-0.94. Not with fewer heads
  // per register block: H16 KVH8 1.06, MHA H32 D128 1.20, H12 D64 1.19 (in place they read at
  // 70-94% of the bandwidth already).
  t.split_keys_stage_rows = t.split_keys_heads == 4;
  // 16-bit rows (and f32 rows copied as above) decoded for the task's whole chunk in one loop
  // before its q . k, and V's before its P.V, when a chunk's f32 rows fit in 1 MiB: the long
  // loop streams from memory, where one key group's rows at a time (8 KiB of bf16) came in a
  // burst of misses between stretches of arithmetic. AMD EPYC (Zen 5), 2 threads, 3-5
  // interleaved rounds (2026-12-06), H32 KVH8 D128 causal through a contiguous cache, chunk /
  // per group: bf16 B1 Lk32768 0.74-0.82, B8 Lk8192 0.76, B1 Lk8192 0.87; f32 0.90-0.99; H12 D64
  // bf16 0.95; paged(16) bf16 0.84, but paged(16) f32 1.04 (it stays per group). Chunks of 64
  // or 128 keys, or groups of 64 keys, gained less. 8-bit caches keep their groups: staged per
  // chunk they took 1.01-1.17x the time, per group with the row prefetch above 0.71-0.76x.
  const int row_values = std::max(s.head_dim, s.head_dim_v) * kv_heads;
  const bool copied_paged_rows = s.dtype == attn::DType::f32 && s.kv_cache == attn::KvCache::paged;
  t.split_keys_stage_chunk =
      wide && !byte_cache && !copied_paged_rows && int64_t{t.split_keys_chunk} * row_values * 4 <= (1 << 20);
  // Projection accumulators: 4 tokens x 4 vectors = 16 zmm; 4 x 3 = 12 ymm.
  t.proj_rows = 4;
  t.proj_cols = native_lanes * (wide ? 4 : 3);
  t.proj_token_task = 64;
  return t;
}

CpuTiles cpu_tiles(const attn::Spec &s, int native_lanes) {
  return cpu_tiles(s, x86_vectors(native_lanes));
}

CpuTiles cpu_tiles(const attn::Spec &s, VectorUnit unit) {
  CpuTiles t = cpu_tiles_blocks(s, unit);
  // The whole-row core (core_rows.h) reads each K row once per query tile whatever its size, and
  // its P.V register blocks run over all keys: on AVX2 it keeps the 32-query tile with QK^T 2 x 6
  // and PV 4 x 2 (key_block only has to be a multiple of score_rows there). The AVX2 variant on
  // Zen 4, one thread, attnc-tune-style interleaved medians of 5, against tile 48 (3 x 4, 6 x 2):
  // W1 none 36.0 vs 36.3 ms, W1 causal 19.0 vs 19.4, B1 H12 S256 causal 1.48 vs 1.64, none even,
  // B2 H12 Sq100 Sk300 causal 2.49 vs 2.61, none even.
  if (!is_neon(unit) && unit.lanes < 16 && whole_row_core(s)) {
    t.query_tile = 32;
    t.score_vectors = 2;
    t.score_rows = 6;
    t.key_block = 96;
    t.pv_rows = largest_pv_rows(t);
  }
  return t;
}

CpuTiles cpu_tiles_short(const attn::Spec &s, int native_lanes) {
  return cpu_tiles_short(s, x86_vectors(native_lanes));
}

CpuTiles cpu_tiles_short(const attn::Spec &s, VectorUnit unit) {
  if (is_neon(unit)) return neon_tiles_short(s);
  const int native_lanes = unit.lanes;
  CpuTiles t = cpu_tiles_blocks(s, unit);
  // AVX2 (Zen 1), one thread, interleaved medians against the defaults: B1 H12 S256 D64 none
  // 6.68 against 7.15 ms, causal 4.07 against 5.23 ms; B2 H12 Sq100 Sk300 none 7.94 against
  // 10.13 ms. Short calls waste less of a 32-query tile and a 64-key block than of 48 x 128
  // (or 96). AVX-512 keeps its 32-query tile and its register blocks and halves the key block
  // (Zen 4, one thread, 9 interleaved rounds): B2 H12 Sq100 Sk300 none 3.54 against 4.07 ms
  // (320 keys padded against 384); where both pad alike the defaults stay (the entry's choice):
  // S256 none 2.94 against 2.87 ms, causal 1.85 against 1.90; and W1 none (S1024) 41.8 against
  // 39.2 ms, a 1.065 speedup of the defaults per padded score.
  t.query_tile = 32;
  t.key_block = 64;
  if (native_lanes < 16) {
    t.score_vectors = 2;
    t.score_rows = 4;
  }
  t.pv_rows = largest_pv_rows(t);
  return t;
}

CpuTiles cpu_tiles_packed(const attn::Spec &s, int native_lanes) {
  return cpu_tiles_packed(s, x86_vectors(native_lanes));
}

CpuTiles cpu_tiles_packed(const attn::Spec &s, VectorUnit unit) {
  CpuTiles t = cpu_tiles(s, unit);
  t.pack_head_rows = true;
  return t;
}

bool packs_head_rows(const attn::Spec &s) {
  // A block mask (issue 34) is read by the block core only: its (query tile, key block) loop is
  // where an empty block is skipped and a full one runs without the mask_mod.
  return s.form == attn::Form::core && !keeps_narrow_rows(s) && s.block_mask == attn::BlockMask::none;
}

bool amx_row_core(const attn::Spec &s) {
  return s.head_dim % amx_reduction == 0 && s.head_dim_v % amx_tile_rows == 0;
}

CpuTiles amx_core_tiles(CpuTiles t) {
  t.pv_rows = amx_tile_rows;
  t.pv_vectors = 1;
  t.pv_vector = amx_tile_rows;
  return t;
}

bool whole_row_core(const attn::Spec &s) {
  return packs_head_rows(s);
}

bool runs_packed(int64_t seq_k, int64_t tasks) {
  if (seq_k > packed_max_keys) return false;
  return (seq_k >= packed_min_keys && tasks >= packed_min_tasks) ||
         (seq_k >= packed_min_keys_many_tasks && tasks >= packed_many_tasks);
}

bool short_tiles_win(int64_t seq_q, int64_t seq_k, const CpuTiles &d, const CpuTiles &s) {
  if (s.query_tile <= 0) return false;
  auto padded = [](int64_t n, int64_t tile) { return static_cast<double>((n + tile - 1) / tile * tile); };
  return padded(seq_q, s.query_tile) * padded(seq_k, s.key_block) * default_tiles_speedup <
         padded(seq_q, d.query_tile) * padded(seq_k, d.key_block);
}

std::string core_tiles_text(const CpuTiles &tiles) {
  std::string text;
  for (const Field &f : core_fields)
    text += (text.empty() ? "" : ",") + std::string(f.name) + "=" + std::to_string(tiles.*f.member);
  return text;
}

bool apply_tiles_text(const std::string &text, CpuTiles *tiles, std::string *error) {
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string name = item.substr(0, eq);
    const Field *field = nullptr;
    for (const Field &f : core_fields)
      if (name == f.name) field = &f;
    if (field == nullptr || eq == std::string::npos) {
      *error = "'" + item + "' is not a tile setting (use name=value with query_tile, key_block, " +
               "score_vectors, score_rows, pv_rows or pv_vectors)";
      return false;
    }
    int value = 0;
    const char *begin = item.data() + eq + 1, *end = item.data() + item.size();
    const auto [ptr, ec] = std::from_chars(begin, end, value);
    if (ec != std::errc() || ptr != end || value < 1) {
      *error = "'" + item + "': the value must be a positive integer";
      return false;
    }
    tiles->*field->member = value;
  }
  return true;
}

std::string tile_problem(const attn::Spec &s, const CpuTiles &t) {
  const int registers = t.vector_registers;
  auto text = [](const char *name, int value) { return std::string(name) + " " + std::to_string(value); };
  for (const Field &f : core_fields)
    if (t.*f.member < 1) return text(f.name, t.*f.member) + " is not positive";
  // Bounds that keep a task's blocks in cache and its allocations small.
  if (t.query_tile > 256) return text("query_tile", t.query_tile) + " is above 256";
  if (t.key_block > 1024) return text("key_block", t.key_block) + " is above 1024";
  // Each register-block factor alone within the register file, before any product of two (two
  // absurd values, 2^20 x 2^20, would overflow int and pass).
  for (const Field &f : core_fields) {
    const bool register_factor = f.member == &CpuTiles::score_vectors || f.member == &CpuTiles::score_rows ||
                                 f.member == &CpuTiles::pv_rows || f.member == &CpuTiles::pv_vectors;
    if (register_factor && t.*f.member > registers)
      return text(f.name, t.*f.member) + " is above the " + std::to_string(registers) + " vector registers";
  }
  if (t.score_vectors * t.score_rows + t.score_vectors + 1 > registers)
    return "QK^T block " + std::to_string(t.score_vectors) + " x " + std::to_string(t.score_rows) +
           " needs more than " + std::to_string(registers) + " vector registers";
  if (t.query_tile % (t.vector_width * t.score_vectors) != 0)
    return text("query_tile", t.query_tile) + " is not a multiple of score_vectors x lanes (" +
           std::to_string(t.vector_width * t.score_vectors) + ")";
  if (t.key_block % t.score_rows != 0)
    return text("key_block", t.key_block) + " is not a multiple of " + text("score_rows", t.score_rows);
  if (t.pv_rows * t.pv_vectors + t.pv_vectors + 1 > registers)
    return "PV block " + std::to_string(t.pv_rows) + " x " + std::to_string(t.pv_vectors) +
           " needs more than " + std::to_string(registers) + " vector registers";
  if (t.query_tile % t.pv_rows != 0)
    return text("query_tile", t.query_tile) + " is not a multiple of " + text("pv_rows", t.pv_rows);
  if (t.pv_vector < 1 || s.head_dim_v % t.pv_vector != 0 || (s.head_dim_v / t.pv_vector) % t.pv_vectors != 0)
    return text("pv_vectors", t.pv_vectors) + " does not divide head_dim_v's " +
           std::to_string(t.pv_vector < 1 ? 0 : s.head_dim_v / t.pv_vector) + " vectors";
  if (t.split_keys_max_queries >= t.query_tile)
    return text("query_tile", t.query_tile) + " is not above the decode threshold " +
           std::to_string(t.split_keys_max_queries);
  return "";
}

std::vector<CpuTiles> tile_candidates(const attn::Spec &s, int native_lanes) {
  return tile_candidates(s, x86_vectors(native_lanes));
}

std::vector<CpuTiles> tile_candidates(const attn::Spec &s, VectorUnit unit) {
  const CpuTiles defaults = cpu_tiles(s, unit);
  std::vector<CpuTiles> out = {defaults};
  const bool wide = unit.lanes >= 16;
  // NEON: four QK^T blocks of 24, 24 and 16 accumulators in its 32 registers.
  const std::pair<int, int> blocks[] = {
      is_neon(unit) ? std::pair{4, 6} : wide ? std::pair{2, 8} : std::pair{2, 6},
      is_neon(unit) ? std::pair{3, 8} : wide ? std::pair{3, 6} : std::pair{3, 4},
      is_neon(unit) ? std::pair{4, 4} : wide ? std::pair{4, 4} : std::pair{2, 4}};
  // The whole-row core has no key blocks: one key_block per register block, the defaults'
  // rounded up to a multiple of its keys (tile_problem asks for a multiple).
  const bool whole_rows = whole_row_core(s);
  for (int query_tile : {32, 48, 64})
    for (const auto &[vectors, rows] : blocks)
      for (int key_block : {64, 96, 128}) {
        if (whole_rows && key_block != 64) continue;  // one candidate per register block
        CpuTiles t = defaults;
        t.query_tile = query_tile;
        t.score_vectors = vectors;
        t.score_rows = rows;
        t.key_block = whole_rows ? (defaults.key_block + rows - 1) / rows * rows : key_block;
        t.pv_rows = largest_pv_rows(t);
        if (!tile_problem(s, t).empty()) continue;
        const std::string text = core_tiles_text(t);
        const bool seen = std::any_of(out.begin(), out.end(),
                                      [&](const CpuTiles &o) { return core_tiles_text(o) == text; });
        if (!seen) out.push_back(t);
      }
  return out;
}

}  // namespace attnc

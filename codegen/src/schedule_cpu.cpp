// CPU schedules (x86 AVX2/AVX-512, ARM NEON): one family, sized by cpu_tiles().
//
// Measured 2026-12-03 10:59, 11:29 and 12:20, Zen 1 (AVX2 variant), 2 threads, `make bench`
// (docs/PERFORMANCE.md): W1 B1 H12 S1024 D64 none 57.2-60.5 ms (ONNX Runtime's
// MultiHeadAttention 0.94-1.00x that time, oneDNN 1.12x, the unfused NumPy/OpenBLAS peer
// 2.3-2.5x), 68-71% of an FMA peak read beside it; causal 1.74-1.94x faster than ONNX Runtime;
// W2 2.0-2.2x; W6 GPT-2 block 1.28-1.31x; decode W4 (split keys) 6.5-8.0 ms, 78-83% of the read
// bandwidth read beside it, 2.0-2.3x oneDNN (before its P.V key groups, below: -8%). It beat: a task index
// fusing (batch, tile, head), which made bounds inference allocate state for every head (302 ms causal,
// profiled), 16-accumulator AVX2 register blocks, which spilled, a PV block of 1 row x all of Dv (1 thread:
// 190 ms against 153 ms for 4 rows x 2 vectors), Halide prefetches of K and V (1 thread: +6-8%),
// and packing each key block's K and V rows contiguous (1 thread: 108 -> 114 ms); packing once per
// (head, batch) task is what wins for long keys (the packed pipeline, tile_config.h: H8 S4096
// causal 405 -> 327 ms).
// Mask sweeps (H=8 D=64, bench/mask_skipping.sh, 11:41): causal/none 0.535 at S=4096, padding at
// S/4 0.257 of full, window(256,0) 4.08x from S=4096 to 16384, window|global 0.034 of dense.
// Zen 4 (AVX-512 variant), 2 threads, `make bench` 2026-12-03 19:32 / 20:29: W1 none 19.9 /
// 22.0 ms (ONNX Runtime 1.02 / 0.88x that time, oneDNN 1.17 / 1.06x), W1 causal 2.02 / 2.30x
// the fastest peer, W2 2.46 / 2.76x, W3 0.98 / 0.87x ONNX Runtime, W4 decode 5.09 ms at 20:29
// (oneDNN 2.07x), W6 1.67 / 1.51x the fastest peer; the AVX2 variant on the same machine
// 1.15-1.57x the AVX-512 time on prefill. 22:55 (session 11, this file's register-block
// scores, the packed pipeline from 512 keys with 32 tasks): W1 none 19.2 ms (ONNX Runtime
// 0.94x, oneDNN 1.23x), paired 75.1% of the FMA peak; W1 causal 4.2x the fastest peer, W2
// 2.9x, W5 2.6x; W3 0.97x ONNX Runtime. 2026-12-04 01:25 (session 12, the exp unrolled per key):
// W1 none 18.5 ms, 78.6% of the FMA peak (ONNX Runtime 1.04x, oneDNN 1.28x), W3 1.12x ONNX
// Runtime, W2 2.66x the fastest peer, W5 2.21x, W6 1.59x; W1 causal 2.18x at 01:30.
// 04:37 (session 13, the key clamp in the packed copies): W1 none 17.45 ms, 81.4% of the FMA
// peak (ONNX Runtime 1.15x, oneDNN 1.28x), W3 1.11x ONNX Runtime, W5 81.1% (2.35x), W6 80.1%
// (1.53x), W1 causal 2.10x the fastest peer.
// Since session 14 the block core runs windows, global tokens, random blocks, the block form and
// keys past whole_row_max_keys (2048 since issue 37; tile_config.h); the rest of prefill runs the
// whole-row core (core_rows.cpp).
#include "attnc/schedule_cpu.h"

#include <algorithm>

#include "attnc/rope.h"

namespace attnc {

using Halide::RVar;
using Halide::TailStrategy;
using Halide::Var;

namespace {

// Dropout in a key block: its words (one Philox per row and 8 keys, vectors across the tile's
// rows), then the kept probabilities where the exp's are, in storage of one block. With the
// whole-row core's same layout, W1 fp32 with dropout=0.1 runs 1.145x (causal 1.187x) the forward
// without (bench/dropout_paired.py, aa70bfc, 2 threads); words stored group-innermost, 2.2x.
void schedule_dropout_cpu(Halide::Func pv_probs, DropoutWords d, CoreFuncs &f, const RVar &over_blocks,
                          const CpuTiles &t) {
  // Rows innermost in storage: the probabilities' row vectors read them whole (group innermost,
  // each lane was a load of its own).
  d.words.compute_at(f.state, over_blocks)
      .reorder_storage(d.i, d.group, d.h, d.b)
      .bound_storage(d.i, t.query_tile)
      .bound_storage(d.group, t.key_block / 8 + 1)
      .bound_storage(d.h, 1)
      .bound_storage(d.b, 1)
      .vectorize(d.i, t.vector_width);
  pv_probs.compute_at(f.state, over_blocks)
      .bound(f.row, 0, t.query_tile)  // bounds through P.V's predicate overran the tile
      .bound_storage(f.row, t.query_tile)
      .bound_extent(f.tile, 1)
      .bound_storage(f.h, 1)
      .bound_storage(f.b, 1)
      .bound_storage(f.kb, 1);
  if (t.key_block % 8 != 0) {
    pv_probs.bound_storage(f.key, t.key_block).vectorize(f.row, t.vector_width).unroll(f.row);
    return;
  }
  // Blocks of whole groups of 8 keys: the keys in aligned groups, unrolled, so that each key's
  // word and half are constants (no per-key select).
  Var key_group("key_group"), key_in("key_in");
  pv_probs.align_bounds(f.key, 8)
      .bound_storage(f.key, t.key_block)
      .split(f.key, key_group, key_in, 8, TailStrategy::RoundUp)
      .reorder(f.row, key_in, key_group)
      .vectorize(f.row, t.vector_width)
      .unroll(f.row)
      .unroll(key_in);
}

// Everything for one key block is computed inside the block loop of state update `stage`.
void schedule_sweep_cpu(CoreFuncs &f, BlockSweep &w, int stage, const CpuTiles &t) {
  const int lanes = t.vector_width;
  const RVar state_dv = w.over_blocks.x, over_blocks = w.over_blocks.y;
  // dv lanes read the max and sum at the last dv before any lane stores (see define_core).
  f.state.update(stage)
      .reorder(state_dv, f.row, over_blocks)
      .allow_race_conditions()
      .vectorize(state_dv, t.pv_vector)
      .unroll(state_dv);

  // QK^T: score_vectors query vectors x score_rows keys of accumulators, one key element
  // broadcast per FMA; the query tile is swept in groups of score_vectors vectors, so the
  // keys of a register block are reused from L1 by every group.
  const RVar over_head_dim = f.over_head_dim.x, over_block = f.over_block.x;
  // The QK^T register blocks start from the mask (or 0) in registers and store once into the
  // block's buffer that the block max and the exp read: scores is computed per register block
  // inside that buffer's wrapper, as PV's sums are. Before, the whole block was initialized by
  // a pass of its own and every register block loaded those values back. AVX-512, paired
  // interleaved rounds (ratio of medians, new / old), outputs bit-identical: W1 causal one
  // thread 0.975 (faster in 17 of 25 rounds), W1 none 1.005 (12 of 25), W3 one thread 0.968,
  // W2 2 threads 0.979; the AVX2 variant W1 causal 0.995 and 1.016 in two runs, even (outputs
  // within 3e-8: FMA contraction).
  // Without modifiers the logits are the stored register blocks: the mask's select (and the
  // past-seq_k one) runs once per score as a block is stored, not in both readers.
  Halide::Func score_block = f.has_modifiers ? w.scores.in() : w.logits;
  // Bounded storage: a mask's hull clamp gives the blocks' regions extents Halide cannot prove
  // constant, which put scores and probs on the heap, allocated and freed per block. Constant,
  // they go on the stack where small enough (Halide's choice; 16 KiB blocks do). W1 causal,
  // AVX-512, one thread, profiled: 5,016 -> 1,560 heap allocations a call, malloc and free 2.6
  // -> 1.0% of the time; 11 interleaved rounds 23.2 -> 22.2 ms, outputs bit-identical.
  for (Halide::Func block : {score_block, w.probs, w.logits})
    block.bound_storage(f.row, t.query_tile)
        .bound_storage(f.key, t.key_block)
        .bound_extent(f.tile, 1)
        .bound_storage(f.h, 1)
        .bound_storage(f.b, 1)
        .bound_storage(f.kb, 1);
  score_block.compute_at(f.state, over_blocks);
  schedule_score_register_blocks(score_block, w.scores, f.row, f.key, over_head_dim, t);

  // The block's penalties for keys past seq_k (whole blocks; trimmed ones compute them in
  // place, define_core): one vector select per 16 keys, read by a broadcast per key where the
  // register blocks start. With the key clamp moved into the packed copies (define_core; when
  // the packed pipeline still ran this core, session 13), a QK^T register block's set-up went
  // from 125 instructions (eight clamped row addresses, a mask compare and eight masked moves
  // per block) to 43: perf, W1 none one thread, AVX-512: 3.0 -> 1.6% of the samples. Paired
  // rounds, outputs bit-identical: W1 none one thread 0.978 (9 of 11 faster), two threads 1.010
  // (5 of 11, a noisy hour), W1 causal one thread 0.984 (7 of 11; with the penalty vector, since
  // computed in place), W3 two threads 0.969 (8 of 11).
  if (w.key_penalty.defined())
    w.key_penalty.compute_at(f.state, over_blocks)
        .bound_storage(f.key, t.key_block)
        .bound_storage(f.kb, 1)
        .vectorize(f.key, lanes);

  // Modifiers (softcap's tanh, alibi, bias) and then the mask run once per score, not in both
  // readers (the block max and the exp); without modifiers the scores start from the mask.
  if (f.has_modifiers) w.logits.compute_at(f.state, over_blocks).vectorize(f.row, lanes);

  // Block statistics: vertical max and sum over keys, lanes across queries. Every vector of
  // the query tile is unrolled inside the key loop: independent chains for the out-of-order
  // core instead of one chain of adds (or exps) per vector.
  w.block_max.compute_at(f.state, over_blocks).vectorize(f.row, lanes);
  w.block_max.update().reorder(f.row, over_block).vectorize(f.row, lanes).unroll(f.row);
  // The exp too: its vectors unrolled, the loop over keys alone. AVX-512, paired rounds against
  // one vector per iteration (11 rounds, outputs bit-identical): W1 none one thread 0.971 (8 of
  // 11 faster), two threads 0.938 (9 of 11); W1 causal one thread 0.981; W3 two threads 0.987;
  // the AVX2 variant W1 none one thread 1.026 and 0.976 in two runs, even.
  w.probs.compute_at(f.state, over_blocks).vectorize(f.row, lanes).unroll(f.row);
  w.block_sum.compute_at(f.state, over_blocks).vectorize(f.row, lanes);
  w.block_sum.update().reorder(f.row, over_block).vectorize(f.row, lanes).unroll(f.row);
  if (w.dropout.words.defined()) schedule_dropout_cpu(w.pv_probs, w.dropout, f, over_blocks, t);

  // PV: pv_rows queries x pv_vectors vectors of head_dim_v in accumulators, one probability
  // broadcast per FMA. One slice of head_dim_v at a time, so its rows of the V block stay in L1
  // while every group of query rows goes over them.
  // The algorithm splits the rows into groups of pv_rows (each group's key range is trimmed).
  // The sums are computed per register block (zeroed in registers, not by a memset of the
  // whole block, then loaded) and stored into the block's buffer that the state update reads.
  // 2 threads, 8 interleaved rounds, outputs bit-identical: W1 none 63.6 -> 60.5 ms, W3 93.9 ->
  // 88.7 ms, W1 causal 36.3 -> 35.8 ms; W1 one thread 125.7 -> 122.8 ms.
  Halide::Func pv_block = w.block_pv.in(f.state);
  pv_block.compute_at(f.state, over_blocks);
  std::vector<PvKeyLoop> over_group_block;
  for (const Halide::RDom &keys : w.over_group_block) over_group_block.push_back({keys.x, std::nullopt});
  schedule_pv_register_blocks(pv_block, w.block_pv, f.dv, f.group_row, f.pv_group, over_group_block, t);
}

// A decoded K or V row's loop prefetches the stored row `keys_ahead` keys on (one prefetch per
// cache line, spread over the decode rather than issued a key group's worth at once).
void prefetch_rows_ahead(Halide::Func decoded, const Halide::Parameter &stored, int keys_ahead) {
  if (keys_ahead <= 0 || !stored.defined()) return;
  const Var row = decoded.args()[2];
  decoded.prefetch(stored, row, row, keys_ahead, Halide::PrefetchBoundStrategy::NonFaulting);
}

}  // namespace

void schedule_score_register_blocks(Halide::Func score_block, Halide::Func scores, const Var &row,
                                    const Var &key, const RVar &over_head_dim, const CpuTiles &t,
                                    std::optional<RVar> pair) {
  const int lanes = t.vector_width;
  Var key_outer("key_outer"), key_inner("key_inner"), query_group("query_group"), query_rest("query_rest");
  Var query_vec("query_vec"), query_lane("query_lane");
  score_block.split(key, key_outer, key_inner, t.score_rows, TailStrategy::RoundUp)
      .split(row, query_group, query_rest, lanes * t.score_vectors)
      .split(query_rest, query_vec, query_lane, lanes)
      .reorder(query_lane, query_vec, key_inner, query_group, key_outer)
      .vectorize(query_lane)
      .unroll(query_vec)
      .unroll(key_inner);
  scores.compute_at(score_block, query_group)
      .split(row, query_vec, query_lane, lanes)
      .reorder(query_lane, query_vec, key)
      .vectorize(query_lane)
      .unroll(query_vec)
      .unroll(key);
  Halide::Stage update = scores.update();
  update.split(row, query_vec, query_lane, lanes);
  if (pair) {
    update.reorder(*pair, query_lane, query_vec, key, over_head_dim).atomic().vectorize(*pair);
  } else {
    update.reorder(query_lane, query_vec, key, over_head_dim);
  }
  update.vectorize(query_lane).unroll(query_vec).unroll(key);
}

void schedule_pv_register_blocks(Halide::Func pv_block, Halide::Func pv, const Var &dv, const Var &group_row,
                                 const Var &pv_group, const std::vector<PvKeyLoop> &over_keys,
                                 const CpuTiles &t) {
  Var dv_slice("dv_slice"), dv_rest("dv_rest"), dv_vec("dv_vec"), dv_lane("dv_lane");
  pv_block.split(dv, dv_slice, dv_rest, t.pv_vector * t.pv_vectors)
      .split(dv_rest, dv_vec, dv_lane, t.pv_vector)
      .reorder(dv_lane, dv_vec, group_row, pv_group, dv_slice)
      .vectorize(dv_lane)
      .unroll(dv_vec)
      .unroll(group_row);
  pv.compute_at(pv_block, pv_group)
      .split(dv, dv_vec, dv_lane, t.pv_vector)
      .vectorize(dv_lane)
      .unroll(dv_vec)
      .unroll(group_row);
  for (size_t stage = 0; stage < over_keys.size(); ++stage) {
    Halide::Stage update = pv.update(static_cast<int>(stage));
    update.split(dv, dv_vec, dv_lane, t.pv_vector);
    const PvKeyLoop &loop = over_keys[stage];
    if (loop.pair) {
      update.reorder(*loop.pair, dv_lane, dv_vec, group_row, loop.keys).atomic().vectorize(*loop.pair);
    } else {
      update.reorder(dv_lane, dv_vec, group_row, loop.keys);
    }
    update.vectorize(dv_lane).unroll(dv_vec).unroll(group_row);
  }
}

// The task loops are never partitioned: a parallel loop's prologue, steady state and epilogue are
// three copies of the whole body behind an if in every iteration, and with them (and a tile loop
// of extent "1 if this tile has rows") Halide's loop trimming analysed the whole body per task
// loop for nothing. Generation of one variant, AVX2: window(8,8)|global(4) 10.0 -> 3.1 s, a
// mask_mod block core 11.3 -> 2.8 s. B1 H8 D64 f32 on 2 threads (Intel Xeon, 3 interleaved
// rounds, ms): causal S4096 72.0-78.2 old / 72.8-78.1 new, window(255,0) 14.7-15.5 / 14.2-15.2,
// window(8,8)|global(4) S4000 13.3-14.4 / 13.3-14.4, none S3000 38.3-41.4 / 38.5-39.9, GQA 8:2
// D128 causal&padding B2 S2500 102-106 / 102-106; outputs bit-identical.
void schedule_core_tasks(Halide::Func out, const Var &i, const Var &dv, const Var &h, const Var &b,
                         const Var &query_block, const Var &query_in_tile, const Var &task,
                         const CpuTiles &t) {
  out.compute_root()
      .split(i, query_block, query_in_tile, t.query_tile, TailStrategy::GuardWithIf)
      .reorder(dv, query_in_tile, query_block, h, b)
      .fuse(h, b, task)
      .parallel(task)
      .parallel(query_block)
      .never_partition(query_block, task)
      .vectorize(dv, t.pv_vector);
}

void schedule_core_cpu(CoreFuncs &f, const CpuTiles &t) {
  const int lanes = t.vector_width;
  Var query_block("query_block"), query_in_tile("query_in_tile"), task("task");

  // One task per (batch, head, query tile): (head, batch) pairs in parallel, and the query tiles
  // of each in a nested parallel loop, so a thread's consecutive tiles read the same head's K and
  // V (512 KiB at S = 1024) from L2 instead of cycling all heads' (6 MiB at H = 12) through L3.
  // 2 threads, interleaved, against tiles outside heads: W1 60.3 vs 61.6 ms, W3 83.1 vs 87.0,
  // B1 H8 S4096 causal 376 vs 382, B1 H12 S4096 1143 vs 1155, W5 399 vs 404, H = 3 14.5 vs 14.7.
  // (Fusing head and tile into one loop hides the head from bounds inference, which then
  // allocates state for every head.)
  schedule_core_tasks(f.out, f.i, f.dv, f.h, f.b, query_block, query_in_tile, task, t);

  // Checked once, before any output is written.
  for (Halide::Func &check : f.value_checks) check.compute_root();

  // The blocks read K and V in place (head_keys and head_values inline), except in a whole-row
  // spec's long-key pipeline (<id>_blocks), which copies them per task as the packed whole-row
  // core does: in [B, S, KVH, D] a head's rows lie a page apart (4 KiB at KVH8 D128), so every
  // key block's rows missed the TLB and the prefetchers, once per query tile. Intel Xeon
  // (Sapphire Rapids class), one thread, CPU ms a call, H32 KVH8 D128 causal Sq512 onto 8192
  // cached keys: in place 1061-1252 (query tile 128: 889-937), copied per task 686-726 (query
  // tiles 32, 64, 128 alike; register blocks 3 x 8, 4 x 6, PV 8 x 2 and 6 x 4 no better),
  // copied per key block 935 (tile 64: 797); the whole-row core 1614-1685.
  if (t.pack_head_rows) {
    vectorize_rotated(f.head_keys.compute_at(f.out, task), f.d, f.keys_rope_half, t.head_vector);
    f.head_values.compute_at(f.out, task).vectorize(f.dv, t.pv_vector);
  }

  // Per task: one whole query tile of one head (the algorithm tiles queries: constant extents).
  // One tile always (bound_extent): the loop over it is then unconditional, where a realization
  // bounded by the output's rows made it "if this tile has rows", which the trimming pass above
  // could not see through. Bounded to one tile, the state and the query tile are constant-size
  // stack arrays; unbounded (a partial last tile), each tile took four heap allocations: 1,536 a
  // W1 call, each free scanning the workspace cache under its lock (0.84% of W1 causal; paired one
  // thread 0.982).
  f.state.compute_at(f.out, query_block)
      .bound_extent(f.tile, 1)
      .bound_storage(f.h, 1)
      .bound_storage(f.b, 1)
      .vectorize(f.dv, t.pv_vector);
  // RoPE: q rotated per tile along head_dim, then transposed, as in the whole-row core.
  if (f.rope_query.defined())
    vectorize_rotated(f.rope_query.compute_at(f.out, query_block)
                          .bound_extent(f.tile, 1)
                          .bound_storage(f.h, 1)
                          .bound_storage(f.b, 1),
                      f.d, f.rope_half, t.head_vector);
  f.query_tile.compute_at(f.out, query_block)
      .bound_extent(f.tile, 1)
      .bound_storage(f.h, 1)
      .bound_storage(f.b, 1)
      .vectorize(f.row, lanes);
  for (size_t n = 0; n < f.sweeps.size(); ++n) schedule_sweep_cpu(f, f.sweeps[n], static_cast<int>(n), t);
}

void schedule_split_keys_cpu(SplitKeysFuncs &f, const CpuTiles &t) {
  const int lanes = t.split_keys_lanes;
  Var task("task"), key_outer("key_outer"), key_inner("key_inner"), dv_vec("dv_vec"), dv_lane("dv_lane");
  Var dv_rest("dv_rest");
  Var rows("rows");
  for (Halide::Func &check : f.value_checks) check.compute_root();

  // One task per (key chunk, batch) with every query and head inside it: [B, S, H, D] keeps the
  // heads of one key together, so going over the heads for each few keys reads memory in order
  // (one head's rows alone are a page apart: no prefetch, a TLB miss per row).
  f.partial.compute_root()
      .reorder(f.dv, f.h, f.i, f.c, f.b)
      .fuse(f.c, f.b, task)
      .parallel(task)
      .vectorize(f.dv, t.pv_vector);
  f.query.compute_root().vectorize(f.query.args()[0], lanes);

  // q . k: split_keys_dots keys at a time for split_keys_heads query heads of one KV head, one
  // accumulator vector each along head_dim, for every query before the next keys; the heads of a
  // group read each K vector once (from a register) for all of them. P.V below likewise.
  const int heads = t.split_keys_heads, dots = t.split_keys_dots;
  Var kv_head("kv_head"), group_head("group_head");
  f.scores.compute_at(f.partial, task).vectorize(f.key, std::min(lanes, dots), TailStrategy::GuardWithIf);
  f.scores.update()
      .split(f.key, key_outer, key_inner, dots, TailStrategy::GuardWithIf)
      .split(f.h, kv_head, group_head, heads)
      .reorder(f.over_lanes.x, key_inner, group_head, f.i, kv_head, key_outer)
      .vectorize(key_inner, std::min(lanes, dots))
      .unroll(group_head)
      .unroll(f.over_lanes.x);
  // 8- and 16-bit caches: each key group's rows (16-bit ones: the chunk's, split_keys_stage_chunk)
  // decoded once for all query heads (decoding them inside each head's dot products did it once
  // per query head: 4x with GQA's groups of 4).
  // Intel Xeon (Sapphire Rapids class), B1 H32 KVH8 D128 Lk8192, one thread, CPU ms a call:
  // fp8_e4m3 18.4 -> 8.0, int8 6.5 -> 6.4, bf16 7.4 -> 7.1 (f32 8.4; no peer's 8-bit cache was
  // timed beside them).
  if (f.keys.defined()) {
    const Var kd = f.keys.args()[0], kj = f.keys.args()[2], kb = f.keys.args()[3];
    const bool chunk = t.split_keys_stage_chunk;
    f.keys.compute_at(chunk ? Halide::LoopLevel(f.partial, task) : Halide::LoopLevel(f.scores, key_outer))
        .bound_storage(kj, chunk ? t.split_keys_chunk : dots)
        .bound_storage(kb, 1)
        .vectorize(kd, t.pv_vector);
    prefetch_rows_ahead(f.keys, f.key_source, t.split_keys_prefetch);
  }
  f.dot_lanes.compute_at(f.scores, f.i).vectorize(f.lane);
  f.dot_lanes.update()
      .reorder(f.lane, f.key, f.h, f.over_head_vectors.x)
      .vectorize(f.lane)
      .unroll(f.key)
      .unroll(f.h);
  if (f.has_modifiers)
    f.logits.compute_at(f.partial, task).vectorize(f.key, lanes, TailStrategy::GuardWithIf);
  // The chunk's max and sum per lane (vectorized over the lanes), then over the lanes: a
  // scalar loop over every key per head and query took 8-11% of a decode's time.
  f.chunk_max.compute_at(f.partial, task);
  f.probs.compute_at(f.partial, task).vectorize(f.key, lanes, TailStrategy::GuardWithIf);
  f.chunk_sum.compute_at(f.partial, task);
  for (Halide::Func per_lane : {f.lane_max, f.lane_sum}) {
    if (!per_lane.defined()) continue;
    per_lane.compute_at(f.partial, task).vectorize(f.lane);
    per_lane.update().vectorize(f.lane);
  }
  if (f.dropout.words.defined()) {
    // Dropout: the chunk's words (one Philox per query and 8 keys), then its kept probabilities.
    f.dropout.words.compute_at(f.partial, task).vectorize(f.dropout.group, lanes, TailStrategy::GuardWithIf);
    f.pv_probs.compute_at(f.partial, task).vectorize(f.key, lanes, TailStrategy::GuardWithIf);
  }

  // P.V: per key group (split_keys_dots keys, as for q . k), split_keys_heads query heads of one
  // KV head sum the group's rows of V into split_keys_pv_vectors registers each (a V vector
  // loaded once for all of them), then add them to the chunk's (it
  // was read, FMA'd and written back per key: two loads and a store per FMA). The lane sums of
  // q . k are unrolled (a constant shuffle instead of a strided read of dot_lanes). W4, 2 threads,
  // 10 interleaved rounds (2026-12-03): 7.52 -> 7.38 ms (PV groups) -> 6.90 ms (both), 19.4 GB/s
  // of K and V against 22.2 GB/s read by bench/read_bandwidth beside it.
  Var dv_slice("dv_slice");
  f.chunk_pv.compute_at(f.partial, task).vectorize(f.dv, t.pv_vector);
  f.chunk_pv.update()
      .split(f.dv, dv_slice, dv_rest, t.pv_vector * t.split_keys_pv_vectors)
      .split(dv_rest, dv_vec, dv_lane, t.pv_vector)
      .split(f.h, kv_head, group_head, heads)
      .reorder(dv_lane, dv_vec, group_head, dv_slice, f.i, kv_head, f.over_groups.x)
      .vectorize(dv_lane)
      .unroll(dv_vec)
      .unroll(group_head);
  if (f.values.defined()) {
    const Var vd = f.values.args()[0], vj = f.values.args()[2], vb = f.values.args()[3];
    const bool chunk = t.split_keys_stage_chunk;
    f.values
        .compute_at(chunk ? Halide::LoopLevel(f.partial, task)
                          : Halide::LoopLevel(f.chunk_pv, f.over_groups.x))
        .bound_storage(vj, chunk ? t.split_keys_chunk : dots)
        .bound_storage(vb, 1)
        .vectorize(vd, t.pv_vector);
    prefetch_rows_ahead(f.values, f.value_source, t.split_keys_prefetch);
  }
  f.group_pv.compute_at(f.chunk_pv, dv_slice)
      .split(f.dv, dv_vec, dv_lane, t.pv_vector)
      .vectorize(dv_lane)
      .unroll(dv_vec)
      .unroll(f.h);
  f.group_pv.update()
      .split(f.dv, dv_vec, dv_lane, t.pv_vector)
      .reorder(dv_lane, dv_vec, f.h, f.over_group.x)
      .vectorize(dv_lane)
      .unroll(dv_vec)
      .unroll(f.h);

  // The combine: per (query, batch), every head and chunk.
  f.out.compute_root()
      .reorder(f.dv, f.h, f.i, f.b)
      .fuse(f.i, f.b, rows)
      .parallel(rows)
      .vectorize(f.dv, t.pv_vector);
  f.total_max.compute_at(f.out, f.h);
  f.combined.compute_at(f.out, f.h).vectorize(f.dv, t.pv_vector);
  f.combined.update().vectorize(f.dv, t.pv_vector);
}

int linear_panel_rows(const CpuTiles &t, int rows) {
  return rows % t.proj_cols == 0 ? t.proj_cols : lanes_dividing(rows, t.vector_width);
}

void schedule_linear_cpu(LinearFuncs &f, const CpuTiles &t, int rows) {
  const int lanes = lanes_dividing(rows, t.vector_width);
  // Register block: proj_rows tokens x one panel of output features.
  const int cols = f.panel_rows;
  Var row_block("row_block"), row_in("row_in"), row_vec("row_vec"), row_lane("row_lane");
  Var token_task("token_task"), token_rest("token_rest"), token_group("token_group"), token_in("token_in");
  Var task("task");  // (token task, batch)

  // Repacked once per call into contiguous panels (bf16 pairs: both features of a pair read as
  // rows and stored interleaved, the pair unrolled).
  if (f.bf16_pairs) {
    f.weights_t.compute_root()
        .reorder(f.pair, f.lane, f.col, f.panel)
        .parallel(f.panel)
        .vectorize(f.lane, lanes)
        .unroll(f.pair);
  } else {
    f.weights_t.compute_root().parallel(f.panel).vectorize(f.lane, lanes);
  }

  // Each task owns token_task tokens; for one column panel at a time (in_features x cols, in
  // L2) it sweeps every register block of tokens, so a panel is read from memory once per task.
  if (f.bf16_pairs) {
    // The pair element innermost, vectorized with an atomic update: vdpbf16ps. Halide gives up
    // that vectorization when the atomic update has a parallel loop, so the tasks are the loop
    // of a copy (y.in()) and each task computes its tokens' sums inside it.
    Halide::Func tasks = f.y.in();
    tasks.compute_root()
        .split(f.token, token_task, token_rest, t.proj_token_task, TailStrategy::GuardWithIf)
        .fuse(token_task, f.b, task)
        .parallel(task)
        .vectorize(f.row, lanes);
    // Every feature, from 0: with a symbolic first row the panel index (row % cols) of each
    // vector is not known to be a whole vector, and the weights were gathered lane by lane.
    f.y.compute_at(tasks, task).bound(f.row, 0, rows).vectorize(f.row, lanes);
    // Register blocks of proj_rows tokens x two vectors: the loads of a third and fourth vector
    // of a panel came out as lane-by-lane gathers (Halide shares one wide load between the
    // unrolled vectors, and LLVM splits a 96- or 128-lane bf16 load badly).
    Var row_slice("row_slice"), row_rest("row_rest");
    f.y.update()
        .split(f.token, token_group, token_in, t.proj_rows, TailStrategy::GuardWithIf)
        .split(f.row, row_block, row_in, cols)
        .split(row_in, row_slice, row_rest, std::min(cols, 2 * lanes))
        .split(row_rest, row_vec, row_lane, lanes)
        .reorder(f.over_inputs.x, row_lane, token_in, row_vec, f.over_inputs.y, row_slice, token_group,
                 row_block, f.b)
        .atomic()
        .vectorize(f.over_inputs.x)
        .vectorize(row_lane)
        .unroll(row_vec)
        .unroll(token_in);
    return;
  }
  f.y.compute_root()
      .split(f.token, token_task, token_rest, t.proj_token_task, TailStrategy::GuardWithIf)
      .fuse(token_task, f.b, task)
      .parallel(task)
      .vectorize(f.row, lanes);
  f.y.update()
      .split(f.token, token_task, token_rest, t.proj_token_task, TailStrategy::GuardWithIf)
      .split(token_rest, token_group, token_in, t.proj_rows, TailStrategy::GuardWithIf)
      .split(f.row, row_block, row_in, cols)
      .split(row_in, row_vec, row_lane, lanes)
      .reorder(row_lane, row_vec, token_in, f.over_inputs.x, token_group, row_block, token_task, f.b)
      .fuse(token_task, f.b, task)
      .parallel(task)
      .vectorize(row_lane)
      .unroll(row_vec)
      .unroll(token_in);
}

}  // namespace attnc

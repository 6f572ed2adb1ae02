// The whole-row core: a tile's scores for all its keys, one max, one exp pass, P.V over all keys.
//
// Measured (Zen 4, AVX-512 variant, 2 threads, `make bench` 2026-12-04 10:53, docs/PERFORMANCE.md):
// W1 B1 H12 S1024 D64 none 16.89 ms, 83.4% of the FMA peak read at the run's start (ONNX Runtime's
// MultiHeadAttention 1.03x that time, oneDNN 1.23x); W1 causal 8.87 ms, 79.6% (ONNX Runtime
// 3.31x, oneDNN 2.42x); W3 B8 H8 S512 23.16 ms, 81.1% (1.08x, 1.42x); W2 B1 H8 S4096 causal
// 79.1% (2.46x the fastest peer); W5 B1 H16 S2048 D128 causal 80.2% (2.27x). Paired rounds against
// the block core it replaced for these specs, one thread: W1 none 0.939, causal 0.937.
// NaN-safe masking (session 15, paired against d0daf7e, 2 threads): W1 none 0.990, causal 1.075;
// the causal cost is the P.V edge intervals' per-key predicates (docs/PERFORMANCE.md).
// bf16 pairs (vdpbf16ps; session 16, `BENCH_ONLY=lowp make bench` 2026-12-04 19:17, 2 threads):
// W1 none 10.29 ms, 1.65x the fp32 kernel in the same run (paired 1.68x), 71% of the bf16
// dot-product peak, oneDNN's bf16 primitives 1.28x that time; W1 causal 5.73 ms (1.61x, oneDNN
// 2.53x); W3 14.3 ms (1.70x, oneDNN 1.60x).
// AMX tiles (issue 36; Intel Xeon of the Sapphire Rapids class, 2 shared vCPUs, one thread,
// smallest of 6 interleaved rounds, 2026-12-05, docs/AMX_NOTES.md): W1 none 19.4 ms against the
// fp32 kernel's 25.6 (1.32x) and the vdpbf16ps pairs' 40.6 (2.09x); W1 causal 12.2 ms against
// 14.4 and 19.8. It beat QK^T alone on tiles (P.V on the pairs): 32.4 ms, causal 18.0. The
// logits computed per tile from the staged sums (not from a whole copy of the tile's scores):
// paired rounds, W1 none 17.6 -> 16.8 ms, causal 11.2 -> 10.9 (fp32 kernel 22.9 and 13.2 in the
// same rounds).
#include "attnc/core_rows.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include "attnc/mask_lowering.h"
#include "attnc/rope.h"
#include "attnc/schedule_cpu.h"
#include "attnc/score_terms.h"

namespace attnc {

using Halide::Expr;
using Halide::Func;
using Halide::RDom;
using Halide::RVar;
using Halide::TailStrategy;
using Halide::Var;

RowsFuncs define_core_rows(const CoreInputs &unchecked, const attn::Spec &s, int query_tile, int pv_rows) {
  RowsFuncs f;
  const CoreInputs in = with_checked_lengths(unchecked, &f.value_checks);
  auto [dv, d, key, i, row, tile, h, b] = std::tie(f.dv, f.d, f.key, f.i, f.row, f.tile, f.h, f.b);
  const int group = s.heads / s.kv_heads;
  const Expr seq_q = in.seq_q, seq_k = in.seq_k;
  f.seq_k = seq_k;
  f.has_modifiers = s.has_softcap || s.alibi || s.score_bias || !s.score_mod.empty();
  f.with_lse = s.lse;

  // Positions as in define_core: query row q sits at key position q + Lk - Sq (or q, top-left).
  const bool padded = s.mask.uses(attn::MaskOp::padding);
  auto key_length = [&](const Expr &batch) { return padded ? in.masks.key_lengths(batch) : seq_k; };
  auto query_offset = [&](const Expr &batch) {
    return first_query_position(s.align, key_length(batch), seq_q);
  };
  const Expr query = tile * query_tile + row;
  const Expr query_row = Halide::min(query, seq_q - 1);

  f.query_tile = Func("query_tile");
  f.head_keys = Func("head_keys");
  f.head_values = Func("head_values");
  f.scores = Func("scores");
  f.logits = Func("logits");
  f.row_max = Func("row_max");
  f.probs = Func("probs");
  f.row_sum = Func("row_sum");
  f.row_pv = Func("row_pv");
  f.out = Func("attention");

  // Rows past seq_q (a partial last tile) read the last row; their results are dropped. Keys
  // past seq_k read the last key: the QK^T register blocks round the tile's keys up to whole
  // blocks, and those scores are never read.
  f.bf16_dot = in.q_bf16.defined() && s.head_dim % 2 == 0;
  f.amx_scores = f.bf16_dot && in.amx_tiles && amx_row_core(s) && query_tile % amx_tile_rows == 0;
  f.amx_values = f.amx_scores && pv_rows == amx_tile_rows;
  if (f.bf16_dot) {
    f.query_pairs = Func("query_pairs");
    f.value_pairs = Func("value_pairs");
    f.prob_pairs = Func("prob_pairs");
    f.query_pairs(f.pair, row, f.dim_pair, tile, h, b) = in.q_bf16(2 * f.dim_pair + f.pair, h, query_row, b);
    f.head_keys(d, key, h, b) = in.k_bf16(d, h / group, Halide::min(key, seq_k - 1), b);
    f.value_pairs(f.pair, dv, f.key_pair, h, b) =
        in.v_bf16(dv, h / group, Halide::min(2 * f.key_pair + f.pair, seq_k - 1), b);
  } else {
    Expr query_element = in.q(d, h, query_row, b);
    if (s.rope != attn::Rope::none) {
      f.rope_query = Func("rope_query");
      f.rope_half = rope_half_block(s);
      f.rope_query(d, row, tile, h, b) = query_element;
      query_element = f.rope_query(d, row, tile, h, b);
    }
    f.query_tile(row, d, tile, h, b) = query_element * score_scale(s, in);
    f.head_keys(d, key, h, b) = in.k(d, h / group, Halide::min(key, seq_k - 1), b);
    f.keys_rope_half = in.keys_rope_half;
  }
  // With pairs, the keys P.V multiplies in fp32 read the pairs' copy of v.
  f.head_values(dv, key, h, b) = f.bf16_dot ? Halide::cast<float>(f.value_pairs(key % 2, dv, key / 2, h, b))
                                            : in.v(dv, h / group, Halide::min(key, seq_k - 1), b);

  // The keys the tile may keep: [first, last] (empty at run time when first > last, say a
  // batch of key length 0), every key when the mask gives no bound. Reads of the per-tile rows
  // promise their key lies in [lo, hi] (true wherever the loops' predicates let them run), so
  // bounds inference computes scores, logits and probs over the hull only: a causal tile's
  // rows stop at its last query.
  const Expr first_pos =
      tile * query_tile +
      first_query_position(s.align, padded ? unchecked.masks.key_lengths(b) : seq_k, seq_q);
  const KeySpans spans =
      key_spans(s.mask, s.mask_block, first_pos, first_pos + query_tile - 1, b, seq_k, unchecked.masks);
  Expr first = 0, last = seq_k - 1, lo = 0, hi = seq_k - 1;
  if (spans.bounded) {
    const KeySpan hull = span_hull(spans.spans);
    first = hull.first;
    last = Halide::min(hull.last, seq_k - 1);
    lo = Halide::clamp(hull.first, 0, seq_k - 1);
    hi = Halide::max(Halide::clamp(hull.last, 0, seq_k - 1), lo);
  }
  auto in_hull = [lo, hi](const Expr &k) { return Halide::unsafe_promise_clamped(k, lo, hi); };

  f.over_head_dim = RDom(0, s.head_dim, "over_head_dim");
  f.over_keys = RDom(0, seq_k, "over_keys");
  const Expr rd = f.over_head_dim.x, rk = f.over_keys.x;
  if (spans.bounded) f.over_keys.where(rk >= first && rk <= last);

  // Masked keys get masked_score (below no_key_score): their exp is exactly 0, and a row with no
  // kept key keeps its max at no_key_score and its sum at 0. The select replaces the score (a
  // masked key's k may hold NaN: added to a penalty, it would reach the row's max).
  auto keep_at = [&](const Expr &query_in_tile, const Expr &k) {
    const Expr query_at = tile * query_tile + query_in_tile;
    const MaskPoint point{query_at + query_offset(b),
                          Halide::min(k, seq_k - 1),
                          Halide::min(query_at, seq_q - 1),
                          h,
                          b,
                          key_length(b)};
    return lower_mask(s.mask, s.mask_block, point, in.masks);
  };
  auto masked = [&](const Expr &k, const Expr &logit) { return masked_logit(keep_at(row, k), logit); };
  f.scores(row, key, tile, h, b) = 0.0f;
  Expr score = f.scores(row, key, tile, h, b);
  if (f.amx_scores) {
    // A 16 x 16 tile of scores (16 queries x 16 keys) per tile instruction: k's rows as the tile
    // rows, q in pairs as the second operand, 32 products per sum (Halide's AMX idiom). The scale
    // applies to the sum, as with pairs.
    f.scores(row, key, tile, h, b) += Halide::cast<float>(f.head_keys(rd, key, h, b)) *
                                      Halide::cast<float>(f.query_pairs(rd % 2, row, rd / 2, tile, h, b));
    score = score * score_scale(s, in);
  } else if (f.bf16_dot) {
    // Pairs of bf16 products summed into fp32 (the idiom Halide turns into vdpbf16ps: the pair
    // element vectorized with an atomic update); q stays as given, the scale applies to the sum.
    f.over_dim_pairs = RDom({{0, 2}, {0, s.head_dim / 2}}, "over_dim_pairs");
    const Expr element = f.over_dim_pairs.x, dim_pair = f.over_dim_pairs.y;
    f.scores(row, key, tile, h, b) += Halide::cast<float>(f.query_pairs(element, row, dim_pair, tile, h, b)) *
                                      Halide::cast<float>(f.head_keys(2 * dim_pair + element, key, h, b));
    score = score * score_scale(s, in);
  } else {
    f.scores(row, key, tile, h, b) += f.query_tile(row, rd, tile, h, b) * f.head_keys(rd, key, h, b);
  }
  const ScorePoint point{query + query_offset(b), key, Halide::min(key, seq_k - 1), query_row, h, b};
  f.logits(row, key, tile, h, b) = masked(key, modified_logit(s, in, score, point));

  f.row_max(row, tile, h, b) = Expr(no_key_score);
  f.row_max(row, tile, h, b) = sticky_max(f.row_max(row, tile, h, b), f.logits(row, in_hull(rk), tile, h, b));
  // logit - max first (exact for nearby floats), as in define_core.
  f.probs(row, key, tile, h, b) = softmax_exp(f.logits(row, key, tile, h, b) - f.row_max(row, tile, h, b));
  f.row_sum(row, tile, h, b) = 0.0f;
  f.row_sum(row, tile, h, b) += f.probs(row, in_hull(rk), tile, h, b);
  // Dropout scales what P.V multiplies, not the row's sum: kept probabilities grow by 1 / (1 - p).
  // Its schedule computes whole groups of 8 keys, past the hull: those read a clamped key.
  f.pv_probs = f.probs;
  if (in.dropout.on()) {
    f.dropout = define_dropout_words("dropout_words", in.dropout);
    f.pv_probs = Func("pv_probs");
    f.pv_probs(row, key, tile, h, b) = f.probs(row, Halide::clamp(key, lo, hi), tile, h, b) *
                                       dropout_factor(in.dropout, f.dropout, key, query, h, b);
  }

  // P.V per group of pv_rows rows (the register block), over the keys the group may keep: none
  // for a group past seq_q, the hull of its own rows' spans under a mask (a causal tile's
  // diagonal: not the keys above the group's last row). That hull lies inside the tile's, and
  // every skipped key has probability 0 for the group's rows.
  const Expr group_in = tile * query_tile + f.pv_group * pv_rows < seq_q;
  Expr group_lo = 0, group_hi = seq_k - 1;
  if (spans.bounded) {
    const KeySpan group_hull =
        pv_group_hull(s, first_pos + f.pv_group * pv_rows, pv_rows, b, seq_k, unchecked.masks);
    group_lo = Halide::max(group_hull.first, first);
    group_hi = Halide::min(group_hull.last, last);
  }
  // Inside that hull, the keys some row of the group does not keep take a select (a
  // probability of 0 times a masked key's NaN v would be NaN); the keys all keep do not.
  std::vector<PvKeyInterval> pv_intervals = pv_key_intervals(s, first_pos + f.pv_group * pv_rows, pv_rows,
                                                             group_lo, group_hi, b, seq_k, unchecked.masks);
  const Expr group_row = f.pv_group * pv_rows + f.group_row;
  if (!f.amx_values) f.row_pv(dv, f.group_row, f.pv_group, tile, h, b) = 0.0f;
  if (f.bf16_dot) {
    // The tile's probabilities in bf16 pairs (pair element innermost: one 32-bit broadcast per
    // pair of keys), over the pairs of the tile's hull (so probs also over its keys' pair mates,
    // at most one key past either end of the hull). No clamp on the key: through a clamp Halide
    // gathers the 32 lanes one by one.
    f.prob_pairs(f.pair, row, f.key_pair, tile, h, b) =
        Halide::cast(Halide::BFloat(16), f.pv_probs(row, 2 * f.key_pair + f.pair, tile, h, b));
  }
  if (f.amx_values) {
    // The whole blocks of 32 keys inside the group's plain interval (the keys all its rows keep)
    // go to the tiles; the interval's keys before and after them stay plain keys, in pairs.
    f.values_t = Func("values_t");
    f.pv_tile = Func("pv_tile");
    // Clamped both ways: with no whole block (Sk < 32) the region is empty, and its vectors,
    // shifted inwards, start below key 0.
    f.values_t(key, dv, h, b) = in.v_bf16(dv, h / group, Halide::clamp(key, 0, seq_k - 1), b);
    std::vector<PvKeyInterval> rest;
    Expr block_first = 0, block_end = 0;
    for (const PvKeyInterval &interval : pv_intervals) {
      if (interval.select) {
        rest.push_back(interval);
        continue;
      }
      // Blocks [block_first, block_end): keys [32 block_first, 32 block_end).
      block_first = (interval.first + amx_reduction - 1) / amx_reduction;
      block_end = Halide::max((interval.last + 1) / amx_reduction, block_first);
      const Expr tiled_first = block_first * amx_reduction, tiled_end = block_end * amx_reduction;
      rest.push_back({interval.first, Halide::min(interval.last, tiled_first - 1)});
      rest.push_back({Halide::max(tiled_end, interval.first), interval.last});
    }
    pv_intervals = rest;
    f.over_key_blocks = RDom({{0, amx_reduction}, {0, seq_k / amx_reduction}}, "over_key_blocks");
    RDom &blocks = f.over_key_blocks;
    blocks.where(group_in && blocks.y >= block_first && blocks.y < block_end);
    const Expr tile_key = blocks.y * amx_reduction + blocks.x;
    const Expr key_pair = blocks.y * (amx_reduction / 2) + blocks.x / 2;
    f.pv_tile(f.group_row, dv, f.pv_group, tile, h, b) = 0.0f;
    f.pv_tile(f.group_row, dv, f.pv_group, tile, h, b) +=
        Halide::cast<float>(f.values_t(tile_key, dv, h, b)) *
        Halide::cast<float>(f.prob_pairs(blocks.x % 2, group_row, key_pair, tile, h, b));
    f.row_pv(dv, f.group_row, f.pv_group, tile, h, b) = f.pv_tile(f.group_row, dv, f.pv_group, tile, h, b);
  }
  if (f.bf16_dot) pv_intervals = pair_intervals(pv_intervals);
  for (size_t n = 0; n < pv_intervals.size(); ++n) {
    if (pv_intervals[n].pairs) {
      RDom pairs({{0, 2}, {0, (seq_k + 1) / 2}}, "over_group_pairs_" + std::to_string(n));
      pairs.where(group_in && pairs.y >= pv_intervals[n].first && pairs.y <= pv_intervals[n].last);
      f.over_group_keys.push_back(pairs);
      f.group_keys_in_pairs.push_back(true);
      const Expr key_pair = Halide::unsafe_promise_clamped(pairs.y, lo / 2, hi / 2);
      f.row_pv(dv, f.group_row, f.pv_group, tile, h, b) +=
          Halide::cast<float>(f.prob_pairs(pairs.x, group_row, key_pair, tile, h, b)) *
          Halide::cast<float>(f.value_pairs(pairs.x, dv, pairs.y, h, b));
      continue;
    }
    f.group_keys_in_pairs.push_back(false);
    RDom keys(0, seq_k, "over_group_keys_" + std::to_string(n));
    keys.where(group_in && keys.x >= pv_intervals[n].first && keys.x <= pv_intervals[n].last);
    f.over_group_keys.push_back(keys);
    const Expr p = f.pv_probs(group_row, in_hull(keys.x), tile, h, b);
    const Expr value = f.head_values(dv, keys.x, h, b);
    f.row_pv(dv, f.group_row, f.pv_group, tile, h, b) +=
        pv_intervals[n].select ? masked_product(keep_at(group_row, keys.x), p, value) : p * value;
  }

  const Expr r = i % query_tile, t = i / query_tile;
  define_core_output(f.out, {dv, h, i, b}, f.row_max(r, t, h, b), f.row_sum(r, t, h, b),
                     f.row_pv(dv, r % pv_rows, r / pv_rows, t, h, b), s.lse, in.to_out);
  return f;
}

namespace {

// scores (an AMX Func: one 16 x 16 accumulator) computed per 16 x 16 tile of the stored blocks
// (the logits, or with modifiers a copy of the scores), its sum over head_dim in steps of 32.
// Halide stores a tile only where the store's index is a plain strided ramp: under a mask the
// block's rows start at the tile's hull (a let in the index), and contiguous rows of 16 floats
// collapse into one ramp; so each tile goes through a buffer of its own, rows 32 floats apart.
void schedule_amx_scores(Func block, Func staged, Func scores, const Var &row, const Var &key,
                         const RVar &over_head_dim) {
  Var row_in("row_in"), key_in("key_in");
  RVar dim_step("dim_step"), dim_in("dim_in");
  block.tile(row, key, row_in, key_in, amx_tile_rows, amx_tile_rows).vectorize(row_in).vectorize(key_in);
  staged.compute_at(block, row).bound_storage(row, 2 * amx_tile_rows).vectorize(row).vectorize(key);
  scores.compute_at(block, row).store_in(Halide::MemoryType::AMXTile).vectorize(row).vectorize(key);
  scores.update()
      .tile(row, key, row_in, key_in, amx_tile_rows, amx_tile_rows, TailStrategy::GuardWithIf)
      .split(over_head_dim, dim_step, dim_in, amx_reduction)
      .reorder(dim_in, row_in, key_in, dim_step, row, key)
      .atomic()
      .vectorize(dim_in)
      .vectorize(row_in)
      .vectorize(key_in);
}

// pv_tile (an AMX Func) per P.V register block, with its staged copy (rows 32 floats apart, as
// schedule_amx_scores's), which row_pv's sums start from; over the key blocks 32 keys a step.
void schedule_amx_values(Func pv_block, Func pv_tile, const Var &group_row, const Var &dv,
                         const Var &pv_group, const RDom &over_key_blocks) {
  Var row_in("row_in"), dv_in("dv_in");
  Func staged = pv_tile.in();
  staged.compute_at(pv_block, pv_group)
      .bound_storage(group_row, 2 * amx_tile_rows)
      .vectorize(group_row)
      .vectorize(dv);
  pv_tile.compute_at(pv_block, pv_group)
      .store_in(Halide::MemoryType::AMXTile)
      .vectorize(group_row)
      .vectorize(dv);
  pv_tile.update()
      .tile(group_row, dv, row_in, dv_in, amx_tile_rows, amx_tile_rows, TailStrategy::GuardWithIf)
      .reorder(over_key_blocks.x, row_in, dv_in, over_key_blocks.y, group_row, dv)
      .atomic()
      .vectorize(over_key_blocks.x)
      .vectorize(row_in)
      .vectorize(dv_in);
}

}  // namespace

void schedule_core_rows_cpu(RowsFuncs &f, const CpuTiles &t) {
  const int lanes = t.vector_width;
  Var query_block("query_block"), query_in_tile("query_in_tile"), task("task");
  // Tasks as schedule_core_cpu's; packed, each first copies its head's K and V rows contiguous
  // (otherwise head_keys and head_values are inline: the tiles read K and V in place).
  schedule_core_tasks(f.out, f.i, f.dv, f.h, f.b, query_block, query_in_tile, task, t);
  for (Func &check : f.value_checks) check.compute_root();
  // A tile load reads 16 whole K rows: the task's copy of them (no clamp in the index), always.
  if (t.pack_head_rows || f.amx_scores)
    vectorize_rotated(f.head_keys.compute_at(f.out, task), f.d, f.keys_rope_half, t.head_vector);
  if (f.bf16_dot) {
    // v in key pairs, per task (Sk x Dv x 2 bytes): every tile's P.V reads it.
    // Both rows of a pair loaded whole and stored interleaved (the pair unrolled: Halide merges
    // the two strided stores into one; vectorized, the pair became a gather).
    f.value_pairs.compute_at(f.out, task)
        .reorder(f.pair, f.dv, f.key_pair)
        .vectorize(f.dv, t.pv_vector)
        .unroll(f.pair);
  } else if (t.pack_head_rows) {
    f.head_values.compute_at(f.out, task).vectorize(f.dv, t.pv_vector);
  }
  // v transposed per task, the tiles' rows (keys contiguous), as value_pairs.
  if (f.amx_values) f.values_t.compute_at(f.out, task).vectorize(f.key, amx_tile_rows);

  // Everything else per query tile, in storage of one size for every tile of a call (constant
  // where it can be: on the stack; the rows over keys are Sk long, and the workspace cache hands
  // the same blocks back from tile to tile instead of one size per causal tile).
  auto per_tile = [&](Func fn) {
    fn.compute_at(f.out, query_block).bound_storage(f.tile, 1).bound_storage(f.h, 1).bound_storage(f.b, 1);
    return fn;
  };
  if (f.bf16_dot) {
    per_tile(f.query_pairs).reorder(f.pair, f.row, f.dim_pair).vectorize(f.pair).vectorize(f.row, lanes);
  } else {
    per_tile(f.query_tile).vectorize(f.row, lanes);
    // RoPE: q rotated along head_dim first (vectors across rows gathered the angles and the
    // partners lane by lane), then transposed. W1 (B1 H12 S1024 D64), one thread, CPU time, rope
    // / none, medians of 5 interleaved rounds on a loaded machine (load 7-9, rounds spread
    // 0.88-1.43): none 1.158 -> 1.101, causal 1.289 -> 1.220. The rest: the keys' rotation pass
    // (4% of the samples) and the angle tables' scalar sincosf (2%). Rotating the keys inside the
    // packed copies was slower then (1.24-1.43: partners and angles gathered lane by lane); with
    // vectorize_rotated's dense halves it is what the packed pipelines do (pipeline_sequence.cpp).
    if (f.rope_query.defined()) vectorize_rotated(per_tile(f.rope_query), f.d, f.rope_half, t.head_vector);
  }

  // QK^T register blocks, as schedule_core_cpu's: score_vectors query vectors x score_rows keys,
  // one broadcast key element per FMA; the whole query tile is one or a few groups, so each K
  // row is read once per tile.
  // Without modifiers the logits themselves are the stored register blocks: the mask's select
  // runs once per score, as each block is stored, not in both readers (the max and the exp).
  // On AMX tiles each tile's sums are staged (schedule_amx_scores), and the stored blocks
  // are computed per tile from them.
  const bool stored_scores = f.has_modifiers;
  Func staged = f.amx_scores ? f.scores.in() : Func();
  Func score_block = f.has_modifiers ? (f.amx_scores ? staged.in() : f.scores.in()) : f.logits;
  per_tile(score_block);
  if (f.amx_scores) {
    schedule_amx_scores(score_block, staged, f.scores, f.row, f.key, f.over_head_dim.x);
  } else if (f.bf16_dot) {
    schedule_score_register_blocks(score_block, f.scores, f.row, f.key, f.over_dim_pairs.y, t,
                                   f.over_dim_pairs.x);
  } else {
    schedule_score_register_blocks(score_block, f.scores, f.row, f.key, f.over_head_dim.x, t);
  }
  if (stored_scores) per_tile(f.logits).vectorize(f.row, lanes);
  std::vector<Func> rows = {score_block, f.probs};
  if (stored_scores) rows.push_back(f.logits);

  // Past Sk by a register block's keys at most (a tile's 16 on AMX: Sk = 9 computes 16).
  const int keys_past = f.amx_scores ? std::max(t.score_rows, amx_tile_rows) : t.score_rows;
  for (Func per_key : rows)
    per_key.bound_storage(f.row, t.query_tile).bound_storage(f.key, f.seq_k + keys_past);

  // Row max, exp and row sum: vectors across the tile's queries, every vector unrolled inside
  // the key loop (independent chains), as the block core's.
  const RVar over_keys = f.over_keys.x;
  per_tile(f.row_max).vectorize(f.row, lanes);
  f.row_max.update().reorder(f.row, over_keys).vectorize(f.row, lanes).unroll(f.row);
  per_tile(f.probs).vectorize(f.row, lanes).unroll(f.row);
  per_tile(f.row_sum).vectorize(f.row, lanes);
  f.row_sum.update().reorder(f.row, over_keys).vectorize(f.row, lanes).unroll(f.row);
  if (f.dropout.words.defined()) {
    // Dropout: the tile's words (one Philox per row and 8 keys, vectors across rows), then the
    // kept probabilities, as the exp's vectors.
    f.dropout.words.compute_at(f.out, query_block)
        .reorder_storage(f.dropout.i, f.dropout.group, f.dropout.h, f.dropout.b)  // rows contiguous
        .bound_storage(f.dropout.h, 1)
        .bound_storage(f.dropout.b, 1)
        .bound_storage(f.dropout.i, t.query_tile)
        .vectorize(f.dropout.i, lanes);
    // All of the tile's rows, as prob_pairs: through the P.V RDom's predicate bounds inference
    // asked for rows past the tile (Sq = 37: 40 of a 32-row tile).
    // Keys in aligned groups of 8, unrolled: each key's word and half of the group's words are
    // constants (no per-key select), one Philox call's words per group.
    Var key_group("key_group"), key_in("key_in");
    per_tile(f.pv_probs)
        .bound(f.row, 0, t.query_tile)
        .align_bounds(f.key, 8)
        .bound_storage(f.row, t.query_tile)
        .bound_storage(f.key, f.seq_k + 8)
        .split(f.key, key_group, key_in, 8, TailStrategy::RoundUp)
        .reorder(f.row, key_in, key_group)
        .vectorize(f.row, lanes)
        .unroll(f.row)
        .unroll(key_in);
  }

  // P.V: pv_rows queries x pv_vectors vectors of head_dim_v in accumulators, one probability
  // broadcast per FMA, over every key the group keeps; stored once into the tile's sums.
  Func pv_block = f.row_pv.in();
  per_tile(pv_block);
  if (f.bf16_dot) {
    per_tile(f.prob_pairs)
        .reorder(f.pair, f.row, f.key_pair)
        // All of the tile's rows: the region bounds inference derived through the P.V RDom's
        // predicate on the group started past row 0 and overran the tile (Sq = 37: 40 rows).
        .bound(f.row, 0, t.query_tile)
        .vectorize(f.row, lanes)
        .unroll(f.pair)
        .bound_storage(f.key_pair, f.seq_k / 2 + 1);
  }
  std::vector<PvKeyLoop> over_group_keys;
  for (size_t n = 0; n < f.over_group_keys.size(); ++n) {
    const RDom &keys = f.over_group_keys[n];
    if (f.group_keys_in_pairs[n]) {
      over_group_keys.push_back({keys.y, keys.x});
    } else {
      over_group_keys.push_back({keys.x, std::nullopt});
    }
  }
  schedule_pv_register_blocks(pv_block, f.row_pv, f.dv, f.group_row, f.pv_group, over_group_keys, t);
  if (f.amx_values)
    schedule_amx_values(pv_block, f.pv_tile, f.group_row, f.dv, f.pv_group, f.over_key_blocks);
}

}  // namespace attnc

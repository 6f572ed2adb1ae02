// The attention core: scores per key block, block softmax statistics, and a running combine.
#include "attnc/core_algorithm.h"

#include <functional>
#include <limits>
#include <tuple>

#include "attnc/block_mask_lookup.h"
#include "attnc/mask_lowering.h"
#include "attnc/rope.h"
#include "attnc/score_terms.h"

namespace attnc {

using Halide::Expr;
using Halide::Func;
using Halide::RDom;

Expr softmax_exp2(const Expr &t) {
  // 2^t = 2^n 2^f with n = round(t), |f| <= 1/2: 2^f by a degree-5 minimax polynomial
  // (1.1e-7 relative on [-1/2, 1/2]; 1.6e-7 measured in float by tests/codegen/softmax_exp_test),
  // 2^n by adding n to the float's exponent field.
  // t is clamped so n stays an int and every intermediate finite (Halide lets LLVM assume no
  // infinities); below -125.5 the result would leave the normal range and is 0 instead.
  const Expr clamped = Halide::max(t, -127.0f);
  // Rounding by the 1.5 * 2^23 shifter: m's low mantissa bits hold n (round to nearest even,
  // as round() does), and m's bits shifted by 23 are n << 23, since the shifter's own bits end
  // in 9 zeros. One add and one subtract, where round() costs four instructions on AVX-512
  // (vroundps has no 512-bit form) and the float-to-int conversion a fifth. strict_float keeps
  // (t + c) - c from being folded to t.
  const Expr shifter = Halide::Expr(12582912.0f);
  const Expr m = Halide::strict_float(clamped + shifter);
  const Expr n = Halide::strict_float(m - shifter);
  const Expr f = clamped - n;
  const Expr p =
      1.0f + f * (0.693147004f +
                  f * (0.240222424f + f * (0.0555073358f + f * (0.00967151299f + f * 0.00132647273f))));
  const Expr bits = Halide::reinterpret(Halide::Int(32), p) + (Halide::reinterpret(Halide::Int(32), m) << 23);
  return Halide::select(t < -125.5f, 0.0f, Halide::reinterpret(Halide::Float(32), bits));
}

Expr softmax_exp(const Expr &x) {
  return softmax_exp2(x * log2_e);
}

KeySpan pv_group_hull(const attn::Spec &s, const Expr &group_first, int pv_rows, const Expr &batch,
                      const Expr &seq_k, const MaskInputs &masks) {
  return span_hull(
      key_spans(s.mask, s.mask_block, group_first, group_first + pv_rows - 1, batch, seq_k, masks).spans);
}

Expr sticky_max(const Expr &running, const Expr &x) {
  // strict_float keeps LLVM from assuming that neither is NaN (and folding the is_nan away).
  return Halide::strict_float(Halide::select(x > running || Halide::is_nan(x), x, running));
}

Expr masked_logit(const Expr &keep, const Expr &logit) {
  if (Halide::Internal::is_const_one(keep)) return logit;
  const Expr keep_bits = -Halide::cast<int32_t>(keep);  // all ones where kept
  const Expr masked_bits = Halide::reinterpret(Halide::Int(32), Expr(masked_score));
  const Expr bits = (Halide::reinterpret(Halide::Int(32), logit) & keep_bits) | (masked_bits & ~keep_bits);
  return Halide::reinterpret(Halide::Float(32), bits);
}

Expr masked_product(const Expr &keep, const Expr &probability, const Expr &value) {
  if (Halide::Internal::is_const_one(keep)) return probability * value;
  return Halide::select(keep, probability * value, 0.0f);
}

std::vector<PvKeyInterval> pv_key_intervals(const attn::Spec &s, const Expr &group_first, int pv_rows,
                                            const Expr &lo, const Expr &hi, const Expr &batch, const Expr &seq_k,
                                            const MaskInputs &masks) {
  if (s.mask.empty() && !masks.mask_mod) return {{lo, hi, false}};
  const KeySpan all = kept_by_all(s.mask, group_first, group_first + pv_rows - 1, batch, seq_k, masks);
  // Keys before the span, in it, after it: a partition of [lo, hi] even when the span is empty
  // (last < first: the third interval then starts at first).
  const Expr after = Halide::max(all.last, all.first - 1) + 1;
  return {{Halide::max(lo, all.first), Halide::min(hi, all.last), false},
          {lo, Halide::min(hi, all.first - 1), true},
          {Halide::max(lo, after), hi, true}};
}

bool bf16_dot_products(const Halide::Target &target) {
  // Zen 4 and 5 run vdpbf16ps at the FMA's rate (32 bf16 products per instruction, twice an fp32
  // FMA's work). Intel's cores run it at half the FMA's instruction rate (116 GFLOP/s per core
  // against 227 for fp32 FMAs on a Sapphire Rapids, issue 36), so no gain there: their bf16
  // kernels convert to fp32, or multiply on AMX tiles.
  return target.arch == Halide::Target::X86 && target.has_feature(Halide::Target::AVX512_Zen4) &&
         !target.has_feature(Halide::Target::AVX512_SapphireRapids);
}

bool amx_tiles(const Halide::Target &target) {
  return target.arch == Halide::Target::X86 && target.has_feature(Halide::Target::AVX512_SapphireRapids);
}

bool whole_rows_in_bf16(const attn::Spec &resolved, const Halide::Target &target) {
  return resolved.dtype == attn::DType::bf16 && (bf16_dot_products(target) || amx_tiles(target));
}

std::vector<PvKeyInterval> pair_intervals(const std::vector<PvKeyInterval> &intervals) {
  std::vector<PvKeyInterval> out;
  for (const PvKeyInterval &in : intervals) {
    if (in.select) {
      out.push_back(in);
      continue;
    }
    // Pairs [pair_first, pair_last]: the first even key at or after first, the last pair that
    // ends at or before last (Halide's division rounds down). The odd keys at the ends: before
    // 2 pair_first, and from the larger of 2 pair_last + 2 and 2 pair_first (no pairs: the rest).
    const Expr pair_first = (in.first + 1) / 2, pair_last = (in.last - 1) / 2;
    out.push_back({in.first, Halide::min(in.last, 2 * pair_first - 1), true});
    out.push_back({pair_first, pair_last, false, true});
    out.push_back({Halide::max(2 * pair_last + 2, 2 * pair_first), in.last, true});
  }
  return out;
}

void define_core_output(Func out, const std::vector<Halide::Var> &args, const Expr &max, const Expr &sum,
                        const Expr &total, bool lse,
                        const std::function<Halide::Expr(const Halide::Expr &)> &to_out) {
  // A non-finite max: max - max is NaN (strict, or LLVM folds it to 0), as exp(logit - max) is
  // for every key in the reference. A NaN or inf that a kept value carries is in total already.
  const Expr finite = Halide::is_finite(max);
  const Expr nan = Halide::strict_float(max - max);
  const Expr value = Halide::select(finite, Halide::select(sum > 0.0f, total / sum, 0.0f), nan);
  const Expr normalized = to_out ? to_out(value) : value;
  if (!lse) {
    out(args) = normalized;
    return;
  }
  // strict_float: the -inf constant must survive LLVM's no-infinities assumption.
  const Expr row_lse = Halide::strict_float(
      Halide::select(!finite, nan,
                     Halide::select(sum > 0.0f, max + Halide::log(Halide::max(sum, 1e-30f)),
                                    -std::numeric_limits<float>::infinity())));
  out(args) = Halide::Tuple(normalized, row_lse);
}

namespace {

// A key-block predicate as the block loop tests it, its value unchanged, wrapped where Halide's
// loop trimming (trim_no_ops) cannot solve it for the block index: when it can, it re-simplifies
// the whole block body once per enclosing loop with that loop's new bounds, which was most of the
// generator's time for a mask of several spans (mask=(window(5,1)|global(3))&tensor mask_block=4:
// 46 s of CPU for one variant; 26 s wrapped). The loop then visits every block index and skips
// those the predicate rejects, a handful of integer instructions per skipped block: W1-shaped
// causal, none, window(255,0) and (window(128,0)|global(16))&padding at S 1024, 4096 and 20000,
// 5 interleaved rounds, wrapped / unwrapped 0.96-1.03 (noise on a loaded machine). Bounds
// inference reads through the wrapper (memoize_expr: an identity that every backend prints as its
// argument).
Expr untrimmed(const Expr &predicate) { return Halide::memoize_tag(predicate); }

// The running combine's factors for a row whose max so far is running_max meeting a key block
// whose max is block_max: {new max, factor of what was accumulated, factor of the block's sums}.
// One exp serves both: whichever max is larger gets factor 1. While every key so far is masked,
// the gap is 0, both factors are 1 and everything stays 0.
std::tuple<Expr, Expr, Expr> combine_factors(const Expr &running_max, const Expr &block_max) {
  const Expr new_max = sticky_max(running_max, block_max);
  const Expr gap = running_max - block_max;
  const Expr shrink = softmax_exp(-Halide::abs(gap));
  const Expr keep_old = Halide::select(gap >= 0.0f, 1.0f, shrink);
  const Expr take_new = Halide::select(gap >= 0.0f, shrink, 1.0f);
  return {new_max, keep_old, take_new};
}

// The GPU's state (CoreFuncs::state with value_columns): no key yet, nothing accumulated.
void define_column_state(CoreFuncs &f, const Expr &no_key) {
  std::vector<Expr> initial{no_key, 0.0f};
  for (int j = 0; j < f.value_columns; ++j) initial.push_back(0.0f);
  f.state(f.column_group, f.row, f.tile, f.h, f.b) = Halide::Tuple(initial);
}

// The GPU state's update for sweep w: pure in column_group and row, the row's max and sum
// computed in each column group's element alike, and each group's value_columns accumulators.
void update_column_state(CoreFuncs &f, const BlockSweep &w, const Expr &block_max, const Expr &block_sum,
                         int pv_rows) {
  const Halide::Var &c = f.column_group, &row = f.row, &tile = f.tile, &h = f.h, &b = f.b;
  const Expr rkb = w.over_blocks.x;
  const Halide::FuncRef old = f.state(c, row, tile, h, b);
  const auto [new_max, keep_old, take_new] = combine_factors(old[0], block_max);
  std::vector<Expr> updated{new_max, old[1] * keep_old + block_sum * take_new};
  for (int j = 0; j < f.value_columns; ++j) {
    const Expr pv = w.block_pv(c * f.value_columns + j, row % pv_rows, row / pv_rows, tile, h, b, rkb);
    updated.push_back(old[2 + j] * keep_old + pv * take_new);
  }
  f.state(c, row, tile, h, b) = Halide::Tuple(updated);
}

}  // namespace

CoreFuncs define_core(const CoreInputs &unchecked, const attn::Spec &s, int key_block, int query_tile,
                      int pv_rows, int value_columns) {
  CoreFuncs f;
  f.value_columns = value_columns;
  const CoreInputs in = with_checked_lengths(unchecked, &f.value_checks);
  auto [dv, d, key, i, row, tile, h, b, kb] = std::tie(f.dv, f.d, f.key, f.i, f.row, f.tile, f.h, f.b, f.kb);
  const int group = s.heads / s.kv_heads;
  const Expr seq_q = in.seq_q, seq_k = in.seq_k;
  // "No key yet": a finite stand-in for -inf, far below any score, with room to subtract.
  // Halide compiles without IEEE infinities, so -inf itself cannot be compared reliably.
  const Expr no_key = Halide::Expr(no_key_score);

  f.over_head_dim = RDom(0, s.head_dim, "over_head_dim");
  f.over_block = RDom(0, key_block, "over_block");
  const Expr rd = f.over_head_dim.x, rk = f.over_block.x;
  const Expr blocks = (seq_k + key_block - 1) / key_block;

  // Positions: query row q sits at key position q + Lk - Sq, with Lk the batch's key length
  // when padding is part of the mask (bottom-right aligned), or at q (top-left, s.align).
  const bool padded = s.mask.uses(attn::MaskOp::padding);
  auto key_length = [&](const Expr &batch) { return padded ? in.masks.key_lengths(batch) : seq_k; };
  auto query_offset = [&](const Expr &batch) {
    return first_query_position(s.align, key_length(batch), seq_q);
  };
  const Expr query = tile * query_tile + row;

  f.query_tile = Func(in.name_prefix + "query_tile");
  f.head_keys = Func(in.name_prefix + "head_keys");
  f.head_values = Func(in.name_prefix + "head_values");
  f.state = Func(in.name_prefix + "state");
  f.out = Func(in.name_prefix + "attention");

  // Rows past seq_q (a partial last query tile) read the last row; their results are dropped.
  const Expr query_row = Halide::min(query, seq_q - 1);
  Expr query_element = in.q(d, h, query_row, b);
  if (s.rope != attn::Rope::none) {
    f.rope_query = Func(in.name_prefix + "rope_query");
    f.rope_half = rope_half_block(s);
    f.keys_rope_half = in.keys_rope_half;
    f.rope_query(d, row, tile, h, b) = query_element;
    query_element = f.rope_query(d, row, tile, h, b);
  }
  f.query_tile(row, d, tile, h, b) = query_element * score_scale(s, in);
  // Keys past seq_k (a partial last key block) read the last key and are masked out. The
  // clamp is in the head's rows themselves, so a schedule that copies them (as the whole-row
  // core's packed copies do) takes it once per copy and pads the rows to whole blocks.
  f.head_keys(d, key, h, b) = in.k(d, h / group, Halide::min(key, seq_k - 1), b);
  f.head_values(dv, key, h, b) = in.v(dv, h / group, Halide::min(key, seq_k - 1), b);
  auto key_row = [&](const Expr &block, const Expr &k) {
    return Halide::min(block * key_block + k, seq_k - 1);
  };
  // A masked key's logit is replaced by masked_score: keys past seq_k (read from the block's
  // key_penalty where there is one: 0 for a key in range) and keys the mask removes. Replaced
  // (masked_logit's bitwise blend), not offset by a penalty: a masked key's k may hold NaN
  // (garbage in a cache slot), and NaN + penalty would reach the row's max.
  // `masks`: in.masks, or without the mask_mod in blocks where it keeps every pair.
  auto keep_at = [&](const MaskInputs &masks, const Expr &query_in_tile, const Expr &k) {
    const Expr query_at = tile * query_tile + query_in_tile;
    const MaskPoint point{
        query_at + query_offset(b), key_row(kb, k), Halide::min(query_at, seq_q - 1), h, b, key_length(b)};
    return lower_mask(s.mask, s.mask_block, point, masks);
  };
  auto masked = [&](const MaskInputs &masks, const Halide::Func &key_penalty, const Expr &k,
                    const Expr &logit) {
    const Expr in_range = key_penalty.defined() ? key_penalty(k, kb) == 0.0f : kb * key_block + k < seq_k;
    return masked_logit(in_range && keep_at(masks, row, k), logit);
  };
  f.has_modifiers = s.has_softcap || s.alibi || s.score_bias || !s.score_mod.empty();
  f.with_lse = s.lse;

  // The key spans a whole query tile may keep; blocks outside them are never visited.
  const Expr first_pos =
      tile * query_tile +
      first_query_position(s.align, padded ? unchecked.masks.key_lengths(b) : seq_k, seq_q);
  // The spans read the length inputs directly: Halide lifts a predicate into the loop bounds
  // only when its loads come from input buffers, not from a realized Func such as the checked
  // lengths. It is safe, as the checks run before any tile does.
  const KeySpans spans =
      key_spans(s.mask, s.mask_block, first_pos, first_pos + query_tile - 1, b, seq_k, unchecked.masks);

  // Inside a visited block only the keys of the spans' hull are computed: a causal tile's
  // diagonal block stops at the tile's last query, a window's first block starts at its first
  // key. The RDom predicate trims the loops of block_max, block_sum and PV; bounds inference
  // ignores it, so block_max and probs read the logits through in_hull (a clamp into the hull),
  // which trims the region of the QK^T scores; probs past the hull hold unread values. The clamp
  // stays out of the PV loop (there it cost more than the trim saved). 1 thread, interleaved
  // medians: W1 causal 71.0 -> 68.5 ms; B1 H8 S4096 D64 window(256,0) 120.7 -> 102.3 ms.
  std::function<Expr(Expr)> in_hull = [](Expr key) { return key; };
  Expr hull_lo = 0, hull_hi = key_block - 1;  // the hull in the block, for dropout's clamp
  if (spans.bounded) {
    const KeySpan hull = span_hull(spans.spans);
    const Expr lo = Halide::clamp(hull.first - kb * key_block, 0, key_block - 1);
    const Expr hi = Halide::clamp(hull.last - kb * key_block, 0, key_block - 1);
    hull_lo = lo;
    hull_hi = hi;
    f.over_block.where(rk >= hull.first - kb * key_block && rk <= hull.last - kb * key_block);
    in_hull = [lo, hi](Expr key) { return Halide::unsafe_promise_clamped(key, lo, hi); };
  }

  // PV goes further, per group of pv_rows query rows (its register block): a group whose rows
  // all lie past seq_q (the partial last tile) reads no key, the others only the hull of their
  // own rows' spans (a causal tile's diagonal block: not the triangle above the group's last
  // row). key_spans narrows with the query range, so that hull lies inside the tile's, where
  // every probability is computed, and each skipped key has probability 0 for the group's rows
  // (outputs bit-identical). 2 threads, 7 interleaved rounds: W1 causal 35.5 -> 33.6 ms, W1 none
  // 63.4 -> 59.5 (its last tile has 16 of 48 rows), W3 81.1 -> 79.9, H8 S4096 window(256,0)
  // 52.5 -> 49.7.
  const Expr group_in = tile * query_tile + f.pv_group * pv_rows < seq_q;
  Expr group_lo = 0, group_hi = seq_k - 1;
  if (spans.bounded) {
    const KeySpan hull =
        pv_group_hull(s, first_pos + f.pv_group * pv_rows, pv_rows, b, seq_k, unchecked.masks);
    group_lo = hull.first;
    group_hi = Halide::min(hull.last, seq_k - 1);
  }
  // Keys past seq_k are never read by P.V (they hold the last key's v, which may be masked);
  // inside the hull, the keys some row of the group does not keep take a select.
  auto group_keys = [&](const MaskInputs &masks, const std::string &suffix) {
    std::pair<std::vector<PvKeyInterval>, std::vector<RDom>> r;
    r.first =
        pv_key_intervals(s, first_pos + f.pv_group * pv_rows, pv_rows, group_lo, group_hi, b, seq_k, masks);
    for (size_t n = 0; n < r.first.size(); ++n) {
      RDom keys(0, key_block, "over_group_block" + suffix + "_" + std::to_string(n));
      const Expr key_pos = kb * key_block + keys.x;
      keys.where(group_in && key_pos >= r.first[n].first && key_pos <= r.first[n].last);
      r.second.push_back(keys);
    }
    return r;
  };
  // A block the mask_mod keeps whole (by the run-time block mask, or provably by its interval
  // bounds) runs in a sweep of its own whose logits and P.V never evaluate the mask_mod.
  const MaskInputs whole_blocks_masks = without_mask_mod(in.masks);
  const MaskInputs whole_blocks_unchecked = without_mask_mod(unchecked.masks);

  if (value_columns > 0) {
    define_column_state(f, no_key);
  } else {
    f.state(dv, row, tile, h, b) = Halide::Tuple(no_key, 0.0f, 0.0f);
  }
  // Whether interval arithmetic can prove the mask_mod true on some block (expr_bounds.h): on a
  // block of unknown rows and keys its `always` does not fold to false (it does for a mask_mod of
  // captured tensors, which the run-time block mask classifies instead).
  bool provably_true_somewhere = false;
  if (in.masks.mask_mod_block) {
    const Halide::Var q_lo("any_q_lo"), i_lo("any_i_lo"), k_lo("any_k_lo");
    const PairBlock any{q_lo, q_lo + query_tile - 1,
                        i_lo, i_lo + query_tile - 1,
                        k_lo, k_lo + key_block - 1,
                        h,    h / group,
                        b,    seq_q,
                        seq_k};
    provably_true_somewhere =
        !Halide::Internal::is_const_zero(Halide::Internal::simplify(in.masks.mask_mod_block(any).always));
  }
  const bool split_whole = in.masks.block_mask.defined() || provably_true_somewhere;
  for (size_t sweep = 0; sweep < spans.spans.size() * (split_whole ? 2 : 1); ++sweep) {
    const size_t n = split_whole ? sweep / 2 : sweep;
    const bool whole = split_whole && sweep % 2 == 1;
    const std::string suffix =
        (spans.spans.size() > 1 ? "_" + std::to_string(n) : std::string()) + (whole ? "_whole" : "");
    const MaskInputs &masks = whole ? whole_blocks_masks : in.masks;
    BlockSweep w;
    std::vector<PvKeyInterval> pv_intervals;
    std::tie(pv_intervals, w.over_group_block) =
        group_keys(whole ? whole_blocks_unchecked : unchecked.masks, suffix);
    if (value_columns > 0) {
      w.over_blocks = RDom({{0, blocks}}, "over_blocks" + suffix);
    } else {
      w.over_blocks = RDom({{0, s.head_dim_v}, {0, blocks}}, "over_blocks" + suffix);
    }
    const Expr rkb = value_columns > 0 ? w.over_blocks.x : w.over_blocks.y;
    auto in_span = [&](const KeySpan &span) {
      return rkb * key_block <= span.last && rkb * key_block + key_block - 1 >= span.first;
    };
    if (spans.bounded) {
      // This span's blocks, less those an earlier sweep already took.
      Expr visit = in_span(spans.spans[n]);
      for (size_t earlier = 0; earlier < n; ++earlier) visit = visit && !in_span(spans.spans[earlier]);
      w.over_blocks.where(untrimmed(visit));
    }
    Expr always = Halide::Internal::const_false();
    if (in.masks.mask_mod_block) {
      // A block where the mask_mod is provably false for every pair (interval arithmetic on this
      // tile's rows, this head and batch, the block's keys: expr_bounds.h) is never computed.
      const Expr k_lo = rkb * key_block, i_lo = tile * query_tile;
      const PairBlock pairs{first_pos, first_pos + query_tile - 1,
                            i_lo,      i_lo + query_tile - 1,
                            k_lo,      Halide::min(k_lo + key_block - 1, seq_k - 1),
                            h,         h / group,
                            b,         seq_q,
                            seq_k};
      const BlockTruth truth = in.masks.mask_mod_block(pairs);
      w.over_blocks.where(untrimmed(!truth.never));
      if (provably_true_somewhere) always = truth.always;
    }
    if (split_whole) {
      // Blocks the mask_mod provably keeps whole, and those the run-time block mask calls full, go
      // to the whole sweep; the block mask's empty blocks to neither.
      Expr full = always, empty = Halide::Internal::const_false();
      if (in.masks.block_mask.defined()) {
        const BlockClass c = kernel_block_class(in.masks.block_mask, tile * query_tile, query_tile,
                                                rkb * key_block, key_block, seq_q, seq_k, h, b);
        full = full || c.full;
        empty = c.empty;
      }
      w.over_blocks.where(untrimmed(whole ? full : !empty && !full));
    }
    w.scores = Func(in.name_prefix + "scores" + suffix);
    w.logits = Func(in.name_prefix + "logits" + suffix);
    w.block_max = Func(in.name_prefix + "block_max" + suffix);
    w.probs = Func(in.name_prefix + "probs" + suffix);
    w.block_sum = Func(in.name_prefix + "block_sum" + suffix);
    w.block_pv = Func(in.name_prefix + "block_pv" + suffix);
    // Whole blocks (no trimming) read their past-end penalties from a vector per block. Blocks
    // trimmed to a mask's hull compute them where the scores start instead: their register
    // blocks' key ranges vary with the block, and so would the vector's size (a heap allocation
    // per block; with storage bounded to the block, a tuned 16-key block under window(4,4) asked
    // for 20).
    if (!spans.bounded) {
      w.key_penalty = Func(in.name_prefix + "key_penalty" + suffix);
      w.key_penalty(key, kb) = Halide::select(kb * key_block + key < seq_k, 0.0f, masked_score);
    }

    // Masked keys get masked_score, below no_key: a block with no kept key keeps the max at
    // no_key and every exp underflows to exactly 0.
    w.scores(row, key, tile, h, b, kb) = 0.0f;
    w.scores(row, key, tile, h, b, kb) +=
        f.query_tile(row, rd, tile, h, b) * f.head_keys(rd, kb * key_block + key, h, b);

    const ScorePoint point{query + query_offset(b), kb * key_block + key, key_row(kb, key), query_row, h, b};
    const Expr logit = modified_logit(s, in, w.scores(row, key, tile, h, b, kb), point);
    w.logits(row, key, tile, h, b, kb) = masked(masks, w.key_penalty, key, logit);

    w.block_max(row, tile, h, b, kb) = no_key;
    w.block_max(row, tile, h, b, kb) =
        sticky_max(w.block_max(row, tile, h, b, kb), w.logits(row, in_hull(rk), tile, h, b, kb));

    // logit - max first (exact for nearby floats): log2(e) (logit - max) would lose |logit|'s ulp.
    w.probs(row, key, tile, h, b, kb) =
        softmax_exp(w.logits(row, in_hull(key), tile, h, b, kb) - w.block_max(row, tile, h, b, kb));

    w.block_sum(row, tile, h, b, kb) = 0.0f;
    w.block_sum(row, tile, h, b, kb) += w.probs(row, in_hull(rk), tile, h, b, kb);

    // Dropout scales what P.V multiplies, not the sum: the kept probabilities grow by 1 / (1 - p).
    // Its schedule computes whole groups of 8 keys, past the hull: those read a clamped key.
    w.pv_probs = w.probs;
    if (in.dropout.on()) {
      w.dropout = define_dropout_words(in.name_prefix + "dropout_words" + suffix, in.dropout);
      w.pv_probs = Func(in.name_prefix + "pv_probs" + suffix);
      w.pv_probs(row, key, tile, h, b, kb) =
          w.probs(row, Halide::clamp(key, hull_lo, hull_hi), tile, h, b, kb) *
          dropout_factor(in.dropout, w.dropout, kb * key_block + key, tile * query_tile + row, h, b);
    }

    const Expr group_row = f.pv_group * pv_rows + f.group_row;
    w.block_pv(dv, f.group_row, f.pv_group, tile, h, b, kb) = 0.0f;
    for (size_t n = 0; n < pv_intervals.size(); ++n) {
      const Expr rgk = w.over_group_block[n].x;
      const Expr p = w.pv_probs(group_row, in_hull(rgk), tile, h, b, kb);
      const Expr value = f.head_values(dv, kb * key_block + rgk, h, b);
      w.block_pv(dv, f.group_row, f.pv_group, tile, h, b, kb) +=
          pv_intervals[n].select ? masked_product(keep_at(masks, group_row, rgk), p, value) : p * value;
    }

    // Running combine over key blocks: rescale what was accumulated by exp(old max - new max).
    const Expr block_max = w.block_max(row, tile, h, b, rkb);
    if (value_columns > 0) {
      update_column_state(f, w, block_max, w.block_sum(row, tile, h, b, rkb), pv_rows);
      f.sweeps.push_back(w);
      continue;
    }
    // The max and sum are the same for every dv; all lanes read them at the last dv, which
    // the ascending dv loop updates last (reads come before the store of a vector), so the factors are per
    // row (uniform across the dv vector) and one exp serves both: whichever max is larger gets factor 1.
    const Expr rdv = w.over_blocks.x;
    const Expr last_dv = s.head_dim_v - 1;
    const Expr running_max = f.state(last_dv, row, tile, h, b)[0];
    const Expr running_sum = f.state(last_dv, row, tile, h, b)[1];
    const Expr acc = f.state(rdv, row, tile, h, b)[2];
    const auto [new_max, keep_old, take_new] = combine_factors(running_max, block_max);
    f.state(rdv, row, tile, h, b) = Halide::Tuple(
        new_max, running_sum * keep_old + w.block_sum(row, tile, h, b, rkb) * take_new,
        acc * keep_old + w.block_pv(rdv, row % pv_rows, row / pv_rows, tile, h, b, rkb) * take_new);
    f.sweeps.push_back(w);
  }

  if (value_columns > 0) {
    const Halide::FuncRef row_state = f.state(dv / value_columns, i % query_tile, i / query_tile, h, b);
    std::vector<Expr> columns;
    for (int j = 0; j < value_columns; ++j) columns.push_back(row_state[2 + j]);
    define_core_output(f.out, {dv, h, i, b}, row_state[0], row_state[1],
                       Halide::mux(dv % value_columns, columns), s.lse, in.to_out);
    return f;
  }
  const Halide::FuncRef row_state = f.state(dv, i % query_tile, i / query_tile, h, b);
  define_core_output(f.out, {dv, h, i, b}, row_state[0], row_state[1], row_state[2], s.lse, in.to_out);
  return f;
}

}  // namespace attnc

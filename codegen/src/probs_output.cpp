// The probs output: logits recomputed per (query, key) and normalized by the core's lse.
#include "attnc/probs_output.h"

#include "attnc/mask_lowering.h"
#include "attnc/score_terms.h"

namespace attnc {
namespace {
// Query rows whose scores one task computes together.
constexpr int probs_rows = 4;
}  // namespace

using Halide::Expr;
using Halide::Func;

ProbsFuncs define_probs(const CoreInputs &in, const attn::Spec &s, const Func &row_lse) {
  ProbsFuncs f;
  const Halide::Var &key = f.key, &i = f.i, &h = f.h, &b = f.b;
  Halide::Var d("d"), g("g");
  const int group = s.heads / s.kv_heads;
  // Keys outside [0, Sk) (a vector's tail, shifted inwards when Sk is below a vector) read the
  // nearest key; the output's own loop never stores them.
  f.keys = Func("probs_keys");
  f.keys(key, d, g, b) = in.k(d, g, Halide::clamp(key, 0, in.seq_k - 1), b);
  f.over_head_dim = Halide::RDom(0, s.head_dim, "probs_over_head_dim");
  const Halide::RDom &over_head_dim = f.over_head_dim;
  f.scores = Func("probs_scores");
  f.scores(key, i, h, b) = 0.0f;
  // Scaled q first, as every core does.
  // Rows past Sq (the last group of probs_rows rows) read the last row; they are never stored.
  f.scores(key, i, h, b) += (in.q(over_head_dim, h, Halide::min(i, in.seq_q - 1), b) * s.scale) *
                            f.keys(key, over_head_dim, h / group, b);

  const bool padded = s.mask.uses(attn::MaskOp::padding);
  const Expr key_length = padded ? in.masks.key_lengths(b) : in.seq_k;
  const Expr query_pos = i + first_query_position(s.align, key_length, in.seq_q);
  const Expr logit = modified_logit(s, in, f.scores(key, i, h, b), ScorePoint{query_pos, key, key, i, h, b});
  const Expr keep = lower_mask(s.mask, s.mask_block, MaskPoint{query_pos, key, i, h, b, key_length}, in.masks);
  // logit <= lse for every kept key; the min only absorbs rounding (softmax_exp takes x <= 0).
  const Expr lse = row_lse(h, i, b);
  const Expr p = softmax_exp(Halide::min(logit - lse, 0.0f));
  // A row with a NaN lse is NaN throughout (as the reference's); strict, or LLVM folds lse - lse to 0.
  const Expr nan = Halide::strict_float(lse - lse);
  f.probs = Func("probs_rows");
  f.probs(key, i, h, b) = Halide::select(keep, Halide::select(Halide::is_finite(lse), p, nan), 0.0f);
  return f;
}

void schedule_probs_cpu(ProbsFuncs &f, int lanes) {
  Halide::Var head_rows("head_rows"), tasks("tasks"), heads("heads"), row_group("row_group"), row("row");
  Halide::Var key_block("key_block"), key_vector("key_vector"), key_lane("key_lane");
  const Halide::Var g = f.keys.args()[2], batch = f.keys.args()[3];
  const int block = 2 * lanes;
  f.keys.compute_root().fuse(g, batch, heads).parallel(heads).vectorize(f.key, lanes);
  // A task per group of probs_rows rows, in blocks of two key vectors; stored under GuardWithIf:
  // Sq and Sk may be below a group or a block.
  f.probs.compute_root()
      .split(f.i, row_group, row, probs_rows, Halide::TailStrategy::GuardWithIf)
      .split(f.key, key_block, key_vector, block, Halide::TailStrategy::GuardWithIf)
      .split(key_vector, key_vector, key_lane, lanes)
      .reorder(key_lane, key_vector, row, key_block, row_group, f.h, f.b)
      .fuse(row_group, f.h, head_rows)
      .fuse(head_rows, f.b, tasks)
      .parallel(tasks)
      .vectorize(key_lane)
      .unroll(key_vector)
      .unroll(row);
  // One block's scores for the group's rows, whole (rows past Sq read the last q row, keys past Sk
  // the last key), so that its probs_rows x 2 accumulators live in registers across the d loop:
  // each key vector loaded per d feeds every row of the group.
  f.scores.compute_at(f.probs, key_block)
      .bound_extent(f.i, probs_rows)
      .bound_extent(f.key, block)
      .vectorize(f.key, lanes)
      .unroll(f.i);
  f.scores.update()
      .split(f.key, key_vector, key_lane, lanes)
      .reorder(key_lane, key_vector, f.i, f.over_head_dim.x)
      .vectorize(key_lane)
      .unroll(key_vector)
      .unroll(f.i);
}

}  // namespace attnc

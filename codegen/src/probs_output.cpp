// The probs output: logits recomputed per (query, key) and normalized by the core's lse.
#include "attnc/probs_output.h"

#include "attnc/mask_lowering.h"
#include "attnc/score_terms.h"

namespace attnc {

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
  f.scores(key, i, h, b) += (in.q(over_head_dim, h, i, b) * s.scale) * f.keys(key, over_head_dim, h / group, b);

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
  Halide::Var head_rows("head_rows"), rows("rows"), heads("heads");
  const Halide::Var g = f.keys.args()[2], batch = f.keys.args()[3];
  f.keys.compute_root().fuse(g, batch, heads).parallel(heads).vectorize(f.key, lanes);
  // Stored under GuardWithIf: Sk may be below one vector.
  f.probs.compute_root()
      .fuse(f.i, f.h, head_rows)
      .fuse(head_rows, f.b, rows)
      .parallel(rows)
      .vectorize(f.key, lanes, Halide::TailStrategy::GuardWithIf);
  f.scores.compute_at(f.probs, rows).vectorize(f.key, lanes);
  f.scores.update().reorder(f.key, f.over_head_dim.x).vectorize(f.key, lanes);
}

}  // namespace attnc

// The attention backward's algorithm: P and dS recomputed per pair, dk/dv and dq summed in two passes.
#include "attnc/backward_algorithm.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "attnc/mask_lowering.h"
#include "attnc/score_terms.h"
#include "attnc/tile_config.h"

namespace attnc {

using Halide::Expr;
using Halide::Func;
using Halide::RDom;

BackwardFuncs define_backward(const CoreInputs &unchecked, const Func &out, const Func &dout, const Func &lse,
                              const attn::Spec &s, int native_lanes) {
  BackwardFuncs f;
  const CoreInputs in = with_checked_lengths(unchecked, &f.value_checks);
  const Halide::Var &c = f.c, &d = f.d, &key = f.key, &i = f.i, &h = f.h, &g = f.g, &b = f.b;
  const int group = s.heads / s.kv_heads;
  const int head_dim = s.head_dim, value_dim = s.head_dim_v, columns = std::max(head_dim, value_dim);
  const Expr seq_q = in.seq_q, seq_k = in.seq_k;
  const Expr scale = score_scale(s, in);
  f.column_lanes = lanes_dividing(std::gcd(head_dim, value_dim), native_lanes);
  f.head_dim = head_dim;
  f.value_dim = value_dim;

  // Rows past Sq and keys past Sk (tiles that overhang them) read the last row or key; a key past
  // Sk is masked, and no row past Sq is stored or summed.
  // q and k are read with their non-finite elements as 0 where they multiply dS (dk's q, dq's k):
  // a NaN or infinity in a masked pair's q or k would turn its dS of 0 into NaN, and one in a kept
  // pair already made the forward's lse NaN, which makes the row's P and dS NaN here (see p
  // below): it still propagates.
  auto finite_or_zero = [](const Expr &x) {
    const Expr exponent = Halide::cast<uint32_t>(Expr(0x7f800000));
    return Halide::select((Halide::reinterpret(Halide::UInt(32), x) & exponent) != exponent, x, 0.0f);
  };
  const Expr row = Halide::min(i, seq_q - 1), key_at = Halide::clamp(key, 0, seq_k - 1);
  f.q_scaled = Func("q_scaled");
  f.q_scaled(d, h, i, b) = finite_or_zero(in.q(d, h, row, b)) * scale;
  f.keys_t = Func("keys_t");
  f.keys_t(key, d, g, b) = in.k(d, g, key_at, b);
  f.keys = Func("keys_finite");
  f.keys(d, g, key, b) = finite_or_zero(in.k(d, g, key_at, b));
  f.values_t = Func("values_t");
  f.values_t(key, c, g, b) = in.v(c, g, key_at, b);
  const RDom over_delta(0, value_dim, "over_delta");
  f.delta = Func("delta");
  f.delta(h, i, b) = 0.0f;
  f.delta(h, i, b) += dout(over_delta, h, row, b) * out(over_delta, h, row, b);

  const bool padded = s.mask.uses(attn::MaskOp::padding);
  const Expr key_length = padded ? in.masks.key_lengths(b) : seq_k;
  const Expr query_pos = row + first_query_position(s.align, key_length, seq_q);

  // One pass's pairs at (key, i, h, b) from its scores and dP sums: P, and dS's other factor
  // X = (dP - delta) * softcap's 1 - tanh^2(s / c), so that dS (the gradient by the scaled score s)
  // = P * X; both 0 where the pair is masked (a masked key's garbage may make its X NaN).
  struct PairValues {
    Expr p, x;
  };
  auto define_pairs = [&](Func &scores, Func &dp, RDom &over_d, RDom &over_v, const std::string &pass) {
    over_d = RDom(0, head_dim, "over_head_dim_" + pass);
    over_v = RDom(0, value_dim, "over_value_dim_" + pass);
    scores = Func("scores_" + pass);
    scores(key, i, h, b) = 0.0f;
    scores(key, i, h, b) += f.q_scaled(over_d, h, i, b) * f.keys_t(key, over_d, h / group, b);
    dp = Func("dp_" + pass);
    dp(key, i, h, b) = 0.0f;
    dp(key, i, h, b) += dout(over_v, h, row, b) * f.values_t(key, over_v, h / group, b);
    const Expr score = scores(key, i, h, b);
    const Expr logit = modified_logit(s, in, score, ScorePoint{query_pos, key, key_at, row, h, b});
    const Expr keep =
        key < seq_k && lower_mask(s.mask, s.mask_block, MaskPoint{query_pos, key_at, row, h, b, key_length}, in.masks);
    // logit <= lse for a kept key up to rounding (the min absorbs it). A NaN lse (a kept NaN score
    // in the forward) makes the row's P NaN by adding lse - lse (0 for a finite lse; strict, or
    // LLVM folds it to 0): min(NaN, 0) is 0 on x86, and Halide compiles without IEEE NaNs, so a
    // test of the lse could be folded away.
    const Expr row_lse = lse(h, row, b);
    const Expr p = softmax_exp(Halide::min(logit - row_lse, 0.0f)) + Halide::strict_float(row_lse - row_lse);
    Expr x = dp(key, i, h, b) - f.delta(h, row, b);
    if (s.has_softcap) {
      // logit = c tanh(s / c): dlogit/ds = 1 - tanh^2(s / c). alibi and score_bias add: 1.
      const Expr t = Halide::tanh(score * (1.0f / s.softcap));
      x = x * (1.0f - t * t);
    }
    return PairValues{Halide::select(keep, p, 0.0f), Halide::select(keep, x, 0.0f)};
  };
  const PairValues kv_pair = define_pairs(f.scores_kv, f.dp_kv, f.over_head_dim, f.over_value_dim, "kv");
  f.pairs_kv = Func("pairs_kv");
  f.pairs_kv(key, i, h, b) = Halide::Tuple(kv_pair.p, kv_pair.x);
  const PairValues q_pair = define_pairs(f.scores_q, f.dp_q, f.over_head_dim_q, f.over_value_dim_q, "q");
  f.ds_q = Func("ds_q");
  f.ds_q(key, i, h, b) = q_pair.p * q_pair.x;

  // dk and dv of a key: over every row of every query head that shares its KV head (rows inner).
  f.over_rows = RDom(0, seq_q, 0, group, "over_rows");
  const Expr row_r = f.over_rows.x, head_r = g * group + f.over_rows.y;
  const Expr c_d = columns == head_dim ? Expr(c) : Halide::min(c, head_dim - 1);
  const Expr c_v = columns == value_dim ? Expr(c) : Halide::min(c, value_dim - 1);
  f.dk_block = Func("dk_block");
  f.dk_block(c, g, key, b) = 0.0f;
  const Halide::FuncRef pair = f.pairs_kv(key, row_r, head_r, b);
  f.dk_block(c, g, key, b) += (pair[0] * pair[1]) * f.q_scaled(c_d, head_r, row_r, b);
  f.dv_block = Func("dv_block");
  f.dv_block(c, g, key, b) = 0.0f;
  f.dv_block(c, g, key, b) += pair[0] * dout(c_v, head_r, row_r, b);
  f.kv_sums = Func("kv_sums");
  f.kv_sums(c, g, key, b) = Halide::Tuple(f.dk_block(c, g, key, b), f.dv_block(c, g, key, b));

  // dq of a row: over every key (a masked pair's dS is 0, and its k is read finite).
  f.over_keys = RDom(0, seq_k, "over_keys");
  f.dq_block = Func("dq_block");
  f.dq_block(d, h, i, b) = 0.0f;
  f.dq_block(d, h, i, b) += f.ds_q(f.over_keys, i, h, b) * f.keys(d, h / group, f.over_keys, b);
  f.dq_sums = Func("dq_sums");
  f.dq_sums(d, h, i, b) = f.dq_block(d, h, i, b);

  f.dq = Func("dq_stored");
  f.dq(d, h, i, b) = in.to_out(f.dq_sums(d, h, i, b) * scale);
  f.dk = Func("dk_stored");
  f.dk(d, g, key, b) = in.to_out(f.kv_sums(d, g, key, b)[0]);
  f.dv = Func("dv_stored");
  f.dv(c, g, key, b) = in.to_out(f.kv_sums(c, g, key, b)[1]);
  return f;
}

}  // namespace attnc

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
                              const attn::Spec &s, const BackwardTiles &tiles,
                              const RotatedBack &rotated_back) {
  BackwardFuncs f;
  const CoreInputs in = with_checked_lengths(unchecked, &f.value_checks);
  const Halide::Var &c = f.c, &d = f.d, &key = f.key, &i = f.i, &h = f.h, &g = f.g, &b = f.b;
  const int group = s.heads / s.kv_heads;
  const int head_dim = s.head_dim, value_dim = s.head_dim_v, columns = std::max(head_dim, value_dim);
  const Expr seq_q = in.seq_q, seq_k = in.seq_k;
  const Expr scale = score_scale(s, in);
  f.column_lanes = tiles.column_lanes;
  f.head_dim = head_dim;
  f.tiles = tiles;
  f.group = group;
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
    Expr x_logit;  // dP - delta: dS's other factor by the logit (before softcap's derivative)
    Expr pz;       // P Z, dv's weight (dropout's keep factor Z; P without dropout)
  };
  auto define_pairs = [&](Func &scores, Func &dp, RDom &over_d, RDom &over_v, DropoutWords &words,
                          const std::string &pass) {
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
        key < seq_k &&
        lower_mask(s.mask, s.mask_block, MaskPoint{query_pos, key_at, row, h, b, key_length}, in.masks);
    // logit <= lse for a kept key up to rounding (the min absorbs it). A NaN lse (a kept NaN score
    // in the forward) makes the row's P NaN by adding lse - lse (0 for a finite lse; strict, or
    // LLVM folds it to 0): min(NaN, 0) is 0 on x86, and Halide compiles without IEEE NaNs, so a
    // test of the lse could be folded away.
    const Expr row_lse = lse(h, row, b);
    const Expr p = softmax_exp(Halide::min(logit - row_lse, 0.0f)) + Halide::strict_float(row_lse - row_lse);
    Expr dp_kept = dp(key, i, h, b), z;
    if (in.dropout.on()) {
      words = define_dropout_words("dropout_words_" + pass, in.dropout);
      z = dropout_factor(in.dropout, words, key, i, h, b);
      dp_kept = dp_kept * z;
    }
    Expr x = dp_kept - f.delta(h, row, b);
    const Expr x_logit = x;
    if (s.has_softcap) {
      // logit = c tanh(s / c): dlogit/ds = 1 - tanh^2(s / c). alibi and score_bias add: 1.
      const Expr t = Halide::tanh(score * (1.0f / s.softcap));
      x = x * (1.0f - t * t);
    }
    return PairValues{Halide::select(keep, p, 0.0f), Halide::select(keep, x, 0.0f),
                      Halide::select(keep, x_logit, 0.0f),
                      Halide::select(keep, z.defined() ? p * z : p, 0.0f)};
  };
  const PairValues kv_pair =
      define_pairs(f.scores_kv, f.dp_kv, f.over_head_dim, f.over_value_dim, f.dropout_kv, "kv");
  f.pairs_kv = Func("pairs_kv");
  if (in.dropout.on()) {
    f.pairs_kv(key, i, h, b) = Halide::Tuple(kv_pair.p, kv_pair.x, kv_pair.pz);
  } else {
    f.pairs_kv(key, i, h, b) = Halide::Tuple(kv_pair.p, kv_pair.x);
  }
  const PairValues q_pair =
      define_pairs(f.scores_q, f.dp_q, f.over_head_dim_q, f.over_value_dim_q, f.dropout_q, "q");
  f.ds_q = Func("ds_q");
  f.ds_q(key, i, h, b) = q_pair.p * q_pair.x;
  if (s.score_bias_grad) {
    // dscore_bias: the gradient by the logit, P (dP - delta), at every pair (0 where masked), from
    // pairs of its own (a full [B, H, Sq, Sk] output, like probs).
    const PairValues bias_pair = define_pairs(f.scores_bias, f.dp_bias, f.over_head_dim_bias,
                                              f.over_value_dim_bias, f.dropout_bias, "bias");
    f.dscore_bias = Func("dscore_bias_stored");
    f.dscore_bias(key, i, h, b) = bias_pair.p * bias_pair.x_logit;
  }

  // Masked blocks are skipped: a block of query rows and a block of keys are visited only where the
  // keys the mask may keep for those rows (key_spans' hull, bottom-right positions as the forward)
  // meet the key block. query_lo: the first row; rows: how many.
  auto meets = [&](const Expr &query_lo, int rows, const Expr &key_lo, int keys) {
    const Expr first_pos =
        query_lo + first_query_position(s.align, padded ? unchecked.masks.key_lengths(b) : seq_k, seq_q);
    const KeySpans spans =
        key_spans(s.mask, s.mask_block, first_pos, first_pos + rows - 1, b, seq_k, unchecked.masks);
    if (!spans.bounded) return Halide::Internal::const_true();
    const KeySpan hull = span_hull(spans.spans);
    return hull.first <= key_lo + keys - 1 && hull.last >= key_lo && hull.first <= hull.last;
  };

  // dk and dv of a key tile kt (keys kt * key_tile + kr): summed over blocks of row_block query
  // rows of every query head that shares the KV head, the blocks that meet the tile only; each
  // block's sums (dk_part, dv_part) in registers, then added to the tile's.
  const int key_tile = tiles.key_tile, row_block = tiles.row_block;
  const Halide::Var &kr = f.kr, &kt = f.kt, &rb = f.rb;
  const Expr tile_key = kt * key_tile + kr;
  f.over_block_rows = RDom(0, row_block, 0, group, "over_block_rows");
  const Expr row_r = rb * row_block + f.over_block_rows.x, head_r = g * group + f.over_block_rows.y;
  f.over_block_rows.where(row_r < seq_q);
  const Expr c_d = columns == head_dim ? Expr(c) : Halide::min(c, head_dim - 1);
  const Expr c_v = columns == value_dim ? Expr(c) : Halide::min(c, value_dim - 1);
  const Halide::FuncRef pair = f.pairs_kv(tile_key, row_r, head_r, b);
  f.dk_part = Func("dk_part");
  f.dk_part(c, kr, kt, rb, g, b) = 0.0f;
  f.dk_part(c, kr, kt, rb, g, b) += (pair[0] * pair[1]) * f.q_scaled(c_d, head_r, row_r, b);
  f.dv_part = Func("dv_part");
  f.dv_part(c, kr, kt, rb, g, b) = 0.0f;
  // The block's rows past Sq are skipped (the where above), but bounds do not know it: dout, an
  // input, is read at a clamped row.
  f.dv_part(c, kr, kt, rb, g, b) +=
      pair[in.dropout.on() ? 2 : 0] * dout(c_v, head_r, Halide::min(row_r, seq_q - 1), b);
  f.over_row_blocks = RDom(0, (seq_q + row_block - 1) / row_block, "over_row_blocks");
  const Expr rb_r = f.over_row_blocks.x;
  f.over_row_blocks.where(meets(rb_r * row_block, row_block, kt * key_tile, key_tile));
  f.kv_sums = Func("kv_sums");
  f.kv_sums(c, kr, kt, g, b) = Halide::Tuple(0.0f, 0.0f);
  f.kv_sums(c, kr, kt, g, b) =
      Halide::Tuple(f.kv_sums(c, kr, kt, g, b)[0] + f.dk_part(c, kr, kt, rb_r, g, b),
                    f.kv_sums(c, kr, kt, g, b)[1] + f.dv_part(c, kr, kt, rb_r, g, b));

  // dq of a query tile t (rows t * query_tile + r): summed over chunks of key_chunk keys, the
  // chunks that meet the tile's keys only; each chunk's sums (dq_part) in registers. A masked
  // pair's dS is 0, and its k is read finite.
  const int query_tile = tiles.query_tile, key_chunk = tiles.key_chunk;
  const Halide::Var &r = f.r, &t = f.t, &kc = f.kc;
  f.over_chunk_keys = RDom(0, key_chunk, "over_chunk_keys");
  const Expr key_r = kc * key_chunk + f.over_chunk_keys.x;
  f.over_chunk_keys.where(key_r < seq_k);
  f.dq_part = Func("dq_part");
  f.dq_part(d, r, t, kc, h, b) = 0.0f;
  f.dq_part(d, r, t, kc, h, b) += f.ds_q(key_r, t * query_tile + r, h, b) * f.keys(d, h / group, key_r, b);
  f.over_key_chunks = RDom(0, (seq_k + key_chunk - 1) / key_chunk, "over_key_chunks");
  const Expr kc_r = f.over_key_chunks.x;
  f.over_key_chunks.where(meets(t * query_tile, query_tile, kc_r * key_chunk, key_chunk));
  f.dq_sums = Func("dq_sums");
  f.dq_sums(d, r, t, h, b) = 0.0f;
  f.dq_sums(d, r, t, h, b) += f.dq_part(d, r, t, kc_r, h, b);

  // With rope, q and k were rotated before the core: their gradients turn back (rotated_back).
  Func dq_f32("dq_f32"), dk_f32("dk_f32");
  dq_f32(d, h, i, b) = f.dq_sums(d, i % query_tile, i / query_tile, h, b) * scale;
  dk_f32(d, g, key, b) = f.kv_sums(d, key % key_tile, key / key_tile, g, b)[0];
  const Func dq_back = rotated_back.q ? rotated_back.q(dq_f32) : dq_f32;
  const Func dk_back = rotated_back.k ? rotated_back.k(dk_f32) : dk_f32;
  f.dq = Func("dq_stored");
  f.dq(d, h, i, b) = in.to_out(dq_back(d, h, i, b));
  f.dk = Func("dk_stored");
  f.dk(d, g, key, b) = in.to_out(dk_back(d, g, key, b));
  f.dv = Func("dv_stored");
  f.dv(c, g, key, b) = in.to_out(f.kv_sums(c, key % key_tile, key / key_tile, g, b)[1]);
  return f;
}

}  // namespace attnc

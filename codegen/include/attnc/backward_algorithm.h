// attnc/backward_algorithm.h: the attention backward (dq, dk, dv) the FlashAttention-2 way, as Halide stages.
#pragma once

#include <Halide.h>

#include <functional>
#include <vector>

#include "attn/spec.h"
#include "attnc/core_algorithm.h"

namespace attnc {

// The gradients of L through out = softmax(mask(mod(scale q.k))) v, from dout = dL/dout, the
// forward's out and its row lse, with P recomputed rather than stored:
//   delta = rowsum(dout * out); P = exp(logit - lse) where kept, else 0; dP = dout . v^T;
//   dS = P * (dP - delta) where kept, else 0, times softcap's derivative 1 - tanh^2(s / c);
//   dv = sum over a KV head's query heads and rows of P * dout;
//   dk = scale * sum over the same of dS * q;  dq = scale * sum over keys of dS * k.
// With dropout the forward multiplied P by Z (0 or 1 / (1 - p), dropout.h) before P.V: dv sums
// P Z dout, and dS = P (Z dP - delta); Z is regenerated from the seed and offset, never stored.
// A masked pair's dS and P are exactly 0 and the products that meet a masked key's k or v are
// selected away, so garbage in masked keys (NaN, infinities) reaches no gradient; a NaN at a kept
// pair propagates. Two passes recompute P and dS: one per key tile for dk and dv (summing over
// every query row of the KV head's query heads), one per query tile for dq (summing over keys).
// The tile sizes the algorithm is written over (the schedule's: schedule_backward_cpu.h).
struct BackwardTiles {
  int key_tile;      // dk/dv: keys per task, a multiple of key_block
  int key_block;     // dk/dv: keys per register block
  int row_block;     // dk/dv: query rows per pairs tile (the unit a mask skips)
  int query_tile;    // dq: query rows per task (the unit a mask skips), a multiple of query_block
  int query_block;   // dq: rows per register block
  int key_chunk;     // dq: keys per pairs tile (the unit a mask skips)
  int column_lanes;  // lanes along c that divide both D and Dv
  int column_vectors, dim_vectors;  // vectors per register block along c (dk/dv) and d (dq)
};

struct BackwardFuncs {
  Halide::Var c{"c"}, d{"d"}, key{"key"}, i{"i"}, h{"h"}, g{"g"}, b{"b"};
  // Tile coordinates: kv pass key kt * key_tile + kr and query row block rb; dq pass row
  // t * query_tile + r and key chunk kc.
  Halide::Var kr{"kr"}, kt{"kt"}, rb{"rb"}, r{"r"}, t{"t"}, kc{"kc"};
  // Inputs as the stages read them (f32), for the schedule.
  Halide::Func q_scaled;  // q_scaled(d, h, i, b) = q * scale
  Halide::Func keys_t;    // keys_t(key, d, g, b): k with keys innermost (a key tile's vectors)
  Halide::Func keys;      // keys(d, g, key, b): k as given (dq's products)
  Halide::Func values_t;  // values_t(key, c, g, b): v likewise
  Halide::Func delta;     // delta(h, i, b) = sum over c of dout * out
  // Per pass: the scores s (scaled q . k) and dP over (key, i, h, b); "kv" feeds dk and dv
  // through pairs_kv, Tuple (P, X) with dS = P * X (with dropout (P, X, P Z): Z the keep factor,
  // dv's weight P Z), and "q" feeds dq through ds_q (dS).
  Halide::Func scores_kv, dp_kv, pairs_kv;
  Halide::Func scores_q, dp_q, ds_q;
  // With dscore_bias: dscore_bias(key, i, h, b) = P (dP - delta), from its own scores and dP.
  Halide::Func scores_bias, dp_bias, dscore_bias;
  Halide::RDom over_head_dim_bias, over_value_dim_bias;
  // With dropout, each pass's words (computed where its pairs are); undefined words: no dropout.
  DropoutWords dropout_kv, dropout_q, dropout_bias;
  Halide::RDom over_head_dim, over_value_dim;  // for the kv pass
  Halide::RDom over_head_dim_q, over_value_dim_q;
  // kv_sums(c, kr, kt, g, b): Tuple (sum dS * q, sum P * dout) over c in [0, max(D, Dv)), summed
  // over the row blocks that meet the key tile (over_row_blocks) of dk_part / dv_part(c, kr, kt,
  // rb, g, b), a row block's sums (x: row in the block, y: query head in the KV head's group).
  Halide::Func dk_part, dv_part, kv_sums;
  Halide::RDom over_row_blocks, over_block_rows;
  // dq_sums(d, r, t, h, b): sum over the key chunks that meet the query tile (over_key_chunks) of
  // dq_part(d, r, t, kc, h, b), a chunk's sums of dS * k.
  Halide::Func dq_part, dq_sums;
  Halide::RDom over_key_chunks, over_chunk_keys;
  Halide::Func dq, dk, dv;                 // as stored
  std::vector<Halide::Func> value_checks;  // computed before any output (with_checked_lengths)
  int column_lanes = 1;                    // lanes along c that divide both D and Dv
  int head_dim = 0, value_dim = 0;
  int group = 1;  // query heads per KV head
  BackwardTiles tiles{};
};

// With rope, the gradients of the rotated q and k turned back to q's and k's (the transposed
// rotation: rope_rotated at the negated positions); unset: no rope.
struct RotatedBack {
  std::function<Halide::Func(const Halide::Func &)> q, k;
};

// in: q, k, v and the masks as in the forward (q and k rotated where the spec has rope); out, dout (dv, h, i,
// b) and lse (h, i, b) the backward's own inputs; to_out rounds a gradient to the storage type.
BackwardFuncs define_backward(const CoreInputs &in, const Halide::Func &out, const Halide::Func &dout,
                              const Halide::Func &lse, const attn::Spec &resolved, const BackwardTiles &tiles,
                              const RotatedBack &rotated_back = {});

}  // namespace attnc

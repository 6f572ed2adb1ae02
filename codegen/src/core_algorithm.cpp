// The attention core: scores per key block, block softmax statistics, and a running combine.
#include "attnc/core_algorithm.h"

#include <tuple>

#include "attnc/mask_lowering.h"

namespace attnc {

using Halide::Expr;
using Halide::Func;
using Halide::RDom;

Expr softmax_exp(const Expr &x) {
  // 2^t with t = x log2(e) = n + f, |f| <= 1/2: 2^f by its degree-6 Taylor polynomial
  // (relative error below 1.3e-7), 2^n by building the float's exponent field. The input is
  // clamped first so every intermediate stays finite and in range (Halide lets LLVM assume
  // no infinities, so nothing here may rely on inf arithmetic).
  Expr t = Halide::max(x, -88.0f) * 1.44269504f;
  Expr n = Halide::floor(t + 0.5f);
  Expr f = t - n;
  Expr p = 1.0f + f * (0.693147181f +
                       f * (0.240226507f +
                            f * (0.0555041087f +
                                 f * (0.00961812911f + f * (0.00133335581f + f * 0.000154035304f)))));
  Expr bits = Halide::reinterpret(Halide::Int(32), p) + (Halide::cast<int32_t>(n) << 23);
  return Halide::select(x < -87.0f, 0.0f, Halide::reinterpret(Halide::Float(32), bits));
}

CoreFuncs define_core(const CoreInputs &in, const attn::Spec &s, int key_block, int query_tile) {
  CoreFuncs f;
  auto [dv, d, key, i, row, tile, h, b, kb] = std::tie(f.dv, f.d, f.key, f.i, f.row, f.tile, f.h, f.b, f.kb);
  const int group = s.heads / s.kv_heads;
  const Expr seq_q = in.seq_q, seq_k = in.seq_k;
  // "No key yet": a finite stand-in for -inf, far below any score, with room to subtract.
  // Halide compiles without IEEE infinities, so -inf itself cannot be compared reliably.
  const Expr no_key = Halide::Expr(no_key_score);

  f.over_head_dim = RDom(0, s.head_dim, "over_head_dim");
  f.over_block = RDom(0, key_block, "over_block");
  f.over_blocks = RDom(0, (seq_k + key_block - 1) / key_block, "over_blocks");
  const Expr rd = f.over_head_dim.x, rk = f.over_block.x, rkb = f.over_blocks.x;
  // Key blocks that the mask removes for a whole query tile are never visited: for windows
  // (causal among them) the block loop of each tile is trimmed to the blocks it can keep.
  {
    const Expr first_query = tile * query_tile + seq_k - seq_q;
    const KeyRange keys = key_range(s.mask, first_query, first_query + query_tile - 1);
    Expr visit = Halide::Internal::const_true();
    if (keys.last.defined()) visit = visit && rkb * key_block <= keys.last;
    if (keys.first.defined()) visit = visit && rkb * key_block + key_block - 1 >= keys.first;
    if (keys.first.defined() || keys.last.defined()) f.over_blocks.where(visit);
  }

  f.query_tile = Func("query_tile");
  f.scores = Func("scores");
  f.block_max = Func("block_max");
  f.probs = Func("probs");
  f.block_sum = Func("block_sum");
  f.block_pv = Func("block_pv");
  f.state = Func("state");
  f.out = Func("attention");

  // Rows past seq_q (a partial last query tile) read the last row; their results are dropped.
  const Expr query = tile * query_tile + row;
  f.query_tile(row, d, tile, h, b) = in.q(d, h, Halide::min(query, seq_q - 1), b) * s.scale;

  // Keys past seq_k (a partial last key block) read the last key and are masked out.
  auto key_row = [&](const Expr &block, const Expr &k) { return Halide::min(block * key_block + k, seq_k - 1); };
  // Bottom-right alignment: query row q sits at key position q + Sk - Sq.
  auto kept = [&](const Expr &block, const Expr &k) {
    const Expr key_pos = block * key_block + k;
    return key_pos < seq_k && lower_mask(s.mask, query + seq_k - seq_q, key_pos);
  };

  f.scores(row, key, tile, h, b, kb) = 0.0f;
  f.scores(row, key, tile, h, b, kb) += f.query_tile(row, rd, tile, h, b) * in.k(rd, h / group, key_row(kb, key), b);

  f.block_max(row, tile, h, b, kb) = no_key;
  f.block_max(row, tile, h, b, kb) = Halide::max(
      f.block_max(row, tile, h, b, kb), Halide::select(kept(kb, rk), f.scores(row, rk, tile, h, b, kb), no_key));

  f.probs(row, key, tile, h, b, kb) = Halide::select(
      kept(kb, key), softmax_exp(f.scores(row, key, tile, h, b, kb) - f.block_max(row, tile, h, b, kb)), 0.0f);

  f.block_sum(row, tile, h, b, kb) = 0.0f;
  f.block_sum(row, tile, h, b, kb) += f.probs(row, rk, tile, h, b, kb);

  f.block_pv(dv, row, tile, h, b, kb) = 0.0f;
  f.block_pv(dv, row, tile, h, b, kb) += f.probs(row, rk, tile, h, b, kb) * in.v(dv, h / group, key_row(kb, rk), b);

  // Running combine over key blocks: rescale what was accumulated by exp(old max - new max).
  f.state(dv, row, tile, h, b) = Halide::Tuple(no_key, 0.0f, 0.0f);
  const Expr running_max = f.state(dv, row, tile, h, b)[0];
  const Expr running_sum = f.state(dv, row, tile, h, b)[1];
  const Expr acc = f.state(dv, row, tile, h, b)[2];
  const Expr block_max = f.block_max(row, tile, h, b, rkb);
  const Expr new_max = Halide::max(running_max, block_max);
  // While every key so far is masked, both factors are exp(0) = 1 and everything stays 0.
  const Expr keep_old = softmax_exp(running_max - new_max);
  const Expr take_new = softmax_exp(block_max - new_max);
  f.state(dv, row, tile, h, b) =
      Halide::Tuple(new_max, running_sum * keep_old + f.block_sum(row, tile, h, b, rkb) * take_new,
                    acc * keep_old + f.block_pv(dv, row, tile, h, b, rkb) * take_new);

  // A row with no kept key has running_sum 0 and gives zeros, never NaN.
  const Expr sum = f.state(dv, i % query_tile, i / query_tile, h, b)[1];
  const Expr total = f.state(dv, i % query_tile, i / query_tile, h, b)[2];
  f.out(dv, h, i, b) = Halide::select(sum > 0.0f, total / sum, 0.0f);
  return f;
}

}  // namespace attnc

// The block-mask pass: kept pairs counted per block, vectorized across keys.
#include "attnc/pipeline_block_mask.h"

#include "attnc/mask_lowering.h"

namespace attnc {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

PipelineOutputs build_block_mask_pass(const PipelineContext &ctx) {
  const attn::Spec &s = ctx.spec;
  CoreInputs in;
  in.seq_q = ctx.extent("q", 2);
  in.seq_k = ctx.extent("k", 2);
  ctx.add_captured_inputs(in);
  const Expr seq_q = in.seq_q, seq_k = in.seq_k;
  constexpr int rows = attn::block_mask_rows, keys = attn::block_mask_keys;
  // 16 keys side by side: one AVX-512 vector of counts, two AVX2 ones, four NEON ones.
  constexpr int lanes = 16;
  static_assert(keys % lanes == 0);

  Var lane{"lane"}, kb{"kb"}, qb{"qb"}, h{"h"}, b{"b"};
  Halide::RDom pairs({{0, keys / lanes}, {0, rows}}, "pairs");
  const Expr key = kb * keys + pairs.x * lanes + lane, row = qb * rows + pairs.y;
  // Pairs outside [0, Sq) x [0, Sk) are not counted; their mask_mod reads stay in bounds (the
  // captured tensors clamp every index).
  const Expr valid = key < seq_k && row < seq_q;
  const Expr first = first_query_position(s.align, seq_k, seq_q);
  const MaskPoint point{first + row, key, Halide::min(row, seq_q - 1), h, b, seq_k};
  Func kept("kept_pairs");
  kept(lane, kb, qb, h, b) = 0;
  kept(lane, kb, qb, h, b) += Halide::select(valid && in.masks.mask_mod(point), 1, 0);

  Halide::RDom over_lanes(0, lanes, "over_lanes");
  Func total("kept_in_block");
  total(kb, qb, h, b) = 0;
  total(kb, qb, h, b) += kept(over_lanes, kb, qb, h, b);
  const Expr block_rows = Halide::min(seq_q - qb * rows, rows),
             block_keys = Halide::min(seq_k - kb * keys, keys);
  Func block_mask("block_mask");
  const Expr count = total(kb, qb, h, b);
  block_mask(kb, qb, h, b) = Halide::cast<uint8_t>(Halide::select(
      count == 0, block_mask_empty, count == block_rows * block_keys, block_mask_full, block_mask_partial));

  // One task per row of query blocks; the counts of one block in a vector of keys.
  Var task{"task"};
  block_mask.compute_root().fuse(qb, h, task).fuse(task, b, task).parallel(task);
  total.compute_at(block_mask, kb);
  kept.compute_at(block_mask, kb).vectorize(lane);
  kept.update().reorder(lane, pairs.x, pairs.y).vectorize(lane);
  return {{"block_mask", block_mask}};
}

}  // namespace attnc

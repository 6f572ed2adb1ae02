// The core form's inputs, the same for the whole-row, block and split-keys cores.
#include "attnc/pipeline_core_form.h"

#include "attnc/arguments.h"
#include "attnc/mask_lowering.h"
#include "attnc/pipeline_sequence.h"
#include "attnc/rope.h"

namespace attnc {

using Halide::Expr;
using Halide::Func;

CoreInputs core_form_inputs(const PipelineContext &ctx) {
  const attn::Spec &spec = ctx.spec;
  const bool paged = ctx.role == "paged";
  CoreInputs in{ctx.input_f32("q"), paged ? Func() : cache_values(ctx, "k", "k_scale"),
                paged ? Func() : cache_values(ctx, "v", "v_scale"), ctx.extent("q", 2),
                paged ? Expr() : ctx.extent("k", 2)};
  // Keys read in place, in key order: a cache (rotated as appended) or k without rope.
  const bool in_place = spec.rope == attn::Rope::none || spec.kv_cache != attn::KvCache::none;
  if (!paged && in_place && !ctx.gpu && ctx.parameters.count("k") && ctx.parameters.count("v")) {
    in.k_stored = ctx.parameters.at("k");
    in.v_stored = ctx.parameters.at("v");
  }
  ctx.add_mask_inputs(in);
  in.to_out = [&ctx](const Expr &value) { return ctx.to_storage(value); };
  // One angle table for q and the keys a cache-less kernel rotates (q's positions lie among the
  // keys' where they overlap: bottom-right, the last Sq of them).
  const Func angles = spec.rope != attn::Rope::none ? rope_angles(spec, "rope_angles", ctx.gpu) : Func();
  if (runs_per_sequence(spec) || spec.rope != attn::Rope::none) sequence_keys(ctx, in, angles);
  if (spec.rope != attn::Rope::none) {
    // Query row i sits at the mask's position of the row (bottom-right: Sk - Sq + i, which is
    // cache_seqlens[b] + i with a cache).
    const Expr seq_k = in.seq_k, seq_q = in.seq_q;
    const attn::Align align = spec.align;
    in.q = rope_rotated(
        in.q, spec, [=](Expr row, Expr) { return first_query_position(align, seq_k, seq_q) + row; }, "q_rope",
        ctx.gpu, angles);
  }
  // bf16 pair products read q and k as stored; rotated values exist only in fp32, so rope and
  // paged specs take the fp32 path, as do quantized caches (decoded to fp32).
  if (ctx.uses_bf16_dot_products() && spec.rope == attn::Rope::none && !paged &&
      spec.kv_dtype == attn::KvDType::same && (ctx.pairs_pay() || amx_row_core(ctx.core_spec()))) {
    in.q_bf16 = ctx.input("q");
    in.k_bf16 = ctx.input("k");
    in.v_bf16 = ctx.input("v");
    in.amx_tiles = amx_tiles(ctx.target);
  }
  return in;
}

}  // namespace attnc

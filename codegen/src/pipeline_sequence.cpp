// The per-sequence family's own stages: appending to a KV cache, reading keys through pages or rotated.
#include "attnc/pipeline_sequence.h"

#include "attnc/kv_quant.h"
#include "attnc/rope.h"
#include "attnc/schedule_around_core_gpu.h"

namespace attnc {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

namespace {
// The quantized append: codes, and int8's scales (one per token and head, computed once for the
// call's new tokens before their codes); v_new converted to f32 first, as k_new already is.
PipelineOutputs quantized_append(const PipelineContext &ctx, const Func &k) {
  const attn::KvDType kv_dtype = ctx.spec.kv_dtype;
  const Func v = ctx.input_f32("v_new");
  const QuantizedSlots keys = quantized(k, ctx.spec.head_dim, kv_dtype, ctx.optional_input("k_scale"), "k"),
                       values =
                           quantized(v, ctx.spec.head_dim_v, kv_dtype, ctx.optional_input("v_scale"), "v");
  // max |x| per token and head once, before the codes and the scales (both outputs read it).
  for (Func per_token : {keys.amax_bits, values.amax_bits, keys.scales, values.scales}) {
    if (!per_token.defined()) continue;
    per_token.compute_root();
    if (ctx.gpu) {
      const Var g = per_token.args()[0], p = per_token.args()[1];
      Var go("go"), po("po"), gi("gi"), pi("pi");
      per_token.gpu_tile(g, p, go, po, gi, pi, 8, 8, Halide::TailStrategy::GuardWithIf);
    }
  }
  for (const auto &[codes, width] :
       {std::pair{keys.codes, ctx.spec.head_dim}, std::pair{values.codes, ctx.spec.head_dim_v}}) {
    Func f = codes;
    if (ctx.gpu) {
      schedule_head_rows_gpu(f);
    } else {
      f.vectorize(f.args()[0], lanes_dividing(width, ctx.tiles.vector_width));
    }
  }
  PipelineOutputs out = {{"k_slots", keys.codes}, {"v_slots", values.codes}};
  if (kv_dtype == attn::KvDType::int8) {
    out["k_slot_scales"] = keys.scales;
    out["v_slot_scales"] = values.scales;
  }
  return out;
}
}  // namespace

PipelineOutputs build_cache_append(const PipelineContext &ctx) {
  Var d("d"), g("g"), p("p"), b("b");
  Func k = ctx.input_f32("k_new");
  if (ctx.spec.rope != attn::Rope::none)
    k = rope_rotated(
        k, ctx.spec, [](Expr row, Expr) { return row; }, "k_new_rope", ctx.gpu);
  if (ctx.spec.kv_dtype != attn::KvDType::same) return quantized_append(ctx, k);
  Func k_slots("k_slots"), v_slots("v_slots");
  k_slots(d, g, p, b) = ctx.to_storage(k(d, g, p, b));
  v_slots(d, g, p, b) = ctx.input("v_new")(d, g, p, b);
  if (ctx.gpu) {
    schedule_head_rows_gpu(k_slots);
    schedule_head_rows_gpu(v_slots);
  } else {
    k_slots.vectorize(d, lanes_dividing(ctx.spec.head_dim, ctx.tiles.vector_width));
    v_slots.vectorize(d, lanes_dividing(ctx.spec.head_dim_v, ctx.tiles.vector_width));
  }
  return {{"k_slots", k_slots}, {"v_slots", v_slots}};
}

Func cache_values(const PipelineContext &ctx, const std::string &codes, const std::string &scale) {
  if (ctx.spec.kv_dtype == attn::KvDType::same) return ctx.input_f32(codes);
  const bool f16_conversion =
      !ctx.gpu && (ctx.target.arch == Halide::Target::ARM || ctx.target.has_feature(Halide::Target::F16C));
  return dequantized(ctx.input(codes), ctx.input(scale), ctx.spec.kv_dtype, codes + "_f32", f16_conversion);
}

void sequence_keys(const PipelineContext &ctx, CoreInputs &in, const Func &angles) {
  const attn::Spec &spec = ctx.spec;
  if (ctx.role == "paged") {
    const int page = spec.page_size;
    const Expr pages = ctx.extent("k_cache", 3);
    const Func table = ctx.input("block_table"), k_cache = cache_values(ctx, "k_cache", "k_scale"),
               v_cache = cache_values(ctx, "v_cache", "v_scale");
    Var d("d"), g("g"), j("j"), b("b");
    // The entry checked every entry this sequence reads; the clamp is for bounds inference.
    const Expr page_id = Halide::clamp(table(j / page, b), 0, pages - 1);
    Func k("k_paged"), v("v_paged");
    k(d, g, j, b) = k_cache(d, g, j % page, page_id);
    v(d, g, j, b) = v_cache(d, g, j % page, page_id);
    in.k = k;
    in.v = v;
    // Lk from a buffer's extent: the cores' RDoms over keys may not take their extents from a
    // loaded value (a Func call).
    in.seq_k = ctx.extent("key_count", 0);
    return;
  }
  if (spec.rope == attn::Rope::none || spec.kv_cache != attn::KvCache::none) return;
  Func keys = rope_rotated(
      in.k, spec, [](Expr row, Expr) { return row; }, "k_rope", ctx.gpu, angles);
  if (!ctx.gpu && ctx.tiles.pack_head_rows) {
    // The cores that copy each head's K rows per task rotate them in that copy: no pass of its own
    // over every key (3.4% of W1 causal's samples). AMD EPYC (Zen 5), W1 (B1 H12 S1024 D64), 2
    // threads, 9 interleaved rounds, RoPE / none with the angle table of rope.cpp as well, against
    // neither: 1.18 -> 1.02 (none), 1.24 -> 1.02 (causal).
    in.k = keys;
    in.keys_rope_half = rope_half_block(spec);
    return;
  }
  Func rotated("k_rotated");
  Var d("d"), g("g"), j("j"), b("b"), jb("jb");
  rotated(d, g, j, b) = keys(d, g, j, b);
  in.k = rotated;
  if (ctx.gpu) {
    schedule_head_rows_gpu(rotated);
    return;
  }
  vectorize_rotated(rotated.compute_root().fuse(j, b, jb).parallel(jb, 8, Halide::TailStrategy::GuardWithIf),
                    d, rope_half_block(spec), lanes_dividing(spec.head_dim, ctx.tiles.vector_width));
}

}  // namespace attnc

// The block form's projections: which weight rows feed q, k and v, and how each layer runs on the target.
#include "attnc/block_projections.h"

#include "attn/validate.h"
#include "attnc/projection_amx.h"
#include "attnc/schedule_cpu.h"
#include "attnc/schedule_gpu.h"

namespace attnc {
namespace {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

// One input projection: weight rows [first_row, first_row + rows) and their bias applied to one
// activation input, x or x_kv.
struct Projection {
  std::string source, weight, bias, name;
  int first_row, rows;
};

// Where q, k or v sit in the projections' outputs: layer `layer`, from row `row`.
struct ProjectedAt {
  size_t layer;
  int row;
};

// Rows [first, first + count) of a weight w(c, row) or a bias b(row), as their own Func (the
// whole input when first is 0; undefined stays undefined).
Func rows_from(const Func &f, int first) {
  if (!f.defined() || first == 0) return f;
  Func rows(f.name() + "_from_row_" + std::to_string(first));
  Var c("c"), r("r");
  if (f.dimensions() == 1) {
    rows(r) = f(r + first);  // a bias
  } else {
    rows(c, r) = f(c, r + first);  // a weight: (input feature, row)
  }
  return rows;
}

}  // namespace

Func activations_f32(const PipelineContext &ctx, const std::string &name) {
  Func x = ctx.input_f32(name);
  if (ctx.spec.dtype == attn::DType::f32) return x;
  Func copy(name + "_f32_copy");
  Var c("c"), token("token"), batch("batch"), rows("rows");
  copy(c, token, batch) = x(c, token, batch);
  if (ctx.gpu) {
    schedule_elementwise_gpu(copy, c, token, batch);
    return copy;
  }
  copy.compute_root()
      .fuse(token, batch, rows)
      .parallel(rows)
      .vectorize(c, lanes_dividing(ctx.spec.d_model, ctx.tiles.vector_width));
  return copy;
}

ProjectedRows project_qkv(const PipelineContext &ctx, const std::map<std::string, Func> &sources,
                          const std::string &kv_source, std::vector<LinearFuncs> &layers) {
  const attn::Spec &s = ctx.spec;
  const int qw = static_cast<int>(attn::query_width(s)), kw = static_cast<int>(attn::key_width(s));
  const int vw = static_cast<int>(attn::value_width(s));
  // fused self-attention: one projection of x by all of w_qkv. fused cross-attention: w_qkv's
  // q rows on x, its k and v rows on x_kv (nn.MultiheadAttention's in_proj_weight layout).
  // separate: w_q on x, w_k and w_v on the key/value source.
  const bool fused = s.qkv == attn::Qkv::fused;
  const char *bias_qkv = s.proj_bias ? "b_qkv" : "";
  std::vector<Projection> plan;
  ProjectedAt q_at{0, 0}, k_at{0, 0}, v_at{0, 0};
  if (fused && !s.cross_attention) {
    plan = {{"x", "w_qkv", bias_qkv, "qkv", 0, qw + kw + vw}};
    k_at = {0, qw};
    v_at = {0, qw + kw};
  } else if (fused) {
    plan = {{"x", "w_qkv", bias_qkv, "q_proj", 0, qw},
            {kv_source, "w_qkv", bias_qkv, "kv_proj", qw, kw + vw}};
    k_at = {1, 0};
    v_at = {1, kw};
  } else {
    plan = {{"x", "w_q", s.proj_bias ? "b_q" : "", "q_proj", 0, qw},
            {kv_source, "w_k", s.proj_bias ? "b_k" : "", "k_proj", 0, kw},
            {kv_source, "w_v", s.proj_bias ? "b_v" : "", "v_proj", 0, vw}};
    k_at = {1, 0};
    v_at = {2, 0};
  }
  for (const Projection &p : plan) {
    const Func bias = p.bias.empty() ? Func() : rows_from(ctx.input_f32(p.bias), p.first_row);
    layers.push_back(linear(ctx, sources.at(p.source), rows_from(ctx.input_f32(p.weight), p.first_row), bias,
                            s.d_model, p.rows, ctx.extent(p.source, 1), p.name, ctx.bf16_input(p.source),
                            rows_from(ctx.bf16_input(p.weight), p.first_row)));
    schedule_linear(ctx, layers.back(), p.rows);
  }
  return {layers[q_at.layer].y, layers[k_at.layer].y, layers[v_at.layer].y, q_at.row, k_at.row, v_at.row};
}

LinearFuncs linear(const PipelineContext &ctx, const Func &x, const Func &w, const Func &bias,
                   int in_features, int rows, const Expr &tokens, const std::string &name, const Func &x_bf16,
                   const Func &w_bf16) {
  if (!ctx.gpu && x_bf16.defined() && amx_tiles(ctx.target) && amx_linear_fits(in_features, rows))
    return define_linear_amx(x_bf16, w_bf16, bias, in_features, tokens, name);
  const int panel_rows = ctx.gpu ? 0 : linear_panel_rows(ctx.tiles, rows);
  if (!ctx.gpu && !ctx.pairs_pay()) return define_linear(x, w, bias, in_features, panel_rows, name);
  if (!ctx.gpu) return define_linear(x, w, bias, in_features, panel_rows, name, x_bf16, w_bf16);
  Var c("c"), token("token"), batch("batch"), row("row");
  Func x_edge(name + "_x_edge"), w_edge(name + "_w_edge"), bias_edge;
  const Expr feature = Halide::clamp(c, 0, in_features - 1), clamped_row = Halide::clamp(row, 0, rows - 1);
  x_edge(c, token, batch) = x(feature, Halide::clamp(token, 0, tokens - 1), batch);
  w_edge(c, row) = w(feature, clamped_row);
  if (bias.defined()) {
    bias_edge = Func(name + "_bias_edge");
    bias_edge(row) = bias(clamped_row);
  }
  return define_linear(x_edge, w_edge, bias_edge, in_features, 0, name);
}

void schedule_linear(const PipelineContext &ctx, LinearFuncs &layer, int rows) {
  if (ctx.gpu) {
    schedule_linear_gpu(layer, ctx.gpu_tiles);
  } else if (layer.amx) {
    schedule_linear_amx(layer, ctx.tiles, rows);
  } else {
    schedule_linear_cpu(layer, ctx.tiles, rows);
  }
}

}  // namespace attnc

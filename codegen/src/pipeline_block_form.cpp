// The block form family: the classic layer from x to out, with head groups of different head dims.
#include "attnc/pipeline_block_form.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "attn/spec_text.h"
#include "attn/validate.h"
#include "attnc/block_projections.h"
#include "attnc/pipeline_block_core.h"
#include "attnc/pipeline_outputs.h"
#include "attnc/schedule_gpu.h"

namespace attnc {
namespace {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

// One group of heads of one size in the block form (the whole spec when it has no groups): its
// spec, where its heads start among all heads and its rows in the projections.
struct HeadGroupSlice {
  attn::Spec spec;
  int first_head = 0;
  int q_row = 0, k_row = 0, v_row = 0;  // first row in w_q, w_k, w_v; q_row is also w_o's column
  std::string prefix;                   // of its Funcs' names
};

std::vector<HeadGroupSlice> head_group_slices(const attn::Spec &spec) {
  if (spec.group_count == 0) return {{spec, 0, 0, 0, 0, ""}};
  std::vector<HeadGroupSlice> slices;
  int q_row = 0, k_row = 0;
  for (int g = 0; g < spec.group_count; ++g) {
    const attn::Spec group = attn::group_spec(spec, g);
    slices.push_back(
        {group, attn::group_first_head(spec, g), q_row, k_row, k_row, "group" + std::to_string(g) + "_"});
    q_row += group.heads * group.head_dim;
    k_row += group.kv_heads * group.head_dim;
  }
  return slices;
}

// The core tiles of one head group: its own (the head dims drive them), or the tiles given.
CpuTiles group_tiles(const PipelineContext &ctx, const attn::Spec &group) {
  if (ctx.spec.group_count == 0) return ctx.tiles;
  if (ctx.tiles_text.empty()) return cpu_tiles(group, ctx.unit);
  if (const std::string problem = tile_problem(group, ctx.tiles); !problem.empty())
    throw Halide::CompileError("attnc: tiles '" + ctx.tiles_text + "' for head group " +
                               attn::to_string(group) + ": " + problem);
  return ctx.tiles;
}

// A mask or modifier input indexed by head, read at the group's heads (first_head on).
Func heads_from(const Func &input, int first_head, int head_arg, const std::string &name) {
  if (!input.defined() || first_head == 0) return input;
  std::vector<Var> args(input.dimensions());
  std::vector<Expr> at(args.begin(), args.end());
  at[head_arg] = at[head_arg] + first_head;
  Func shifted(name);
  shifted(args) = input(at);
  return shifted;
}

// The attention core over one head group's slices of the projections.
// used: where to keep the core's inputs (the probs stage reads them), or null.
AttendedRows attend_group(const PipelineContext &ctx, const HeadGroupSlice &slice, const ProjectedRows &rows,
                          const Expr &seq_q, const Expr &seq_k, CoreInputs *used = nullptr) {
  attn::Spec g = slice.spec;
  g.lse = g.lse || ctx.spec.probs;  // probs normalize by the core's lse
  Var d("d"), h("h"), i("i"), b("b");
  Func q(slice.prefix + "q_heads"), k(slice.prefix + "k_heads"), v(slice.prefix + "v_heads");
  q(d, h, i, b) = rows.q(rows.q_first + slice.q_row + h * g.head_dim + d, i, b);
  k(d, h, i, b) = rows.k(rows.k_first + slice.k_row + h * g.head_dim + d, i, b);
  v(d, h, i, b) = rows.v(rows.v_first + slice.v_row + h * g.head_dim_v + d, i, b);
  CoreInputs in{q, k, v, seq_q, seq_k};
  in.name_prefix = slice.prefix;
  ctx.add_mask_inputs(in);
  // mask(k, q, h, b), score_bias(k, q, h, b), alibi_slopes(h): H is the full head count.
  in.masks.mask = heads_from(in.masks.mask, slice.first_head, 2, slice.prefix + "mask");
  in.score_bias = heads_from(in.score_bias, slice.first_head, 2, slice.prefix + "score_bias");
  in.alibi_slopes = heads_from(in.alibi_slopes, slice.first_head, 0, slice.prefix + "alibi_slopes");
  in.dropout.first_head = slice.first_head;  // dropout's counter counts every head of the spec
  if (used != nullptr) *used = in;
  if (ctx.gpu)
    return attend_in_blocks(ctx, in, g, ctx.tiles, ctx.spec.group_count == 0 ? ctx.gpu_tiles : gpu_tiles(g));
  return attend_in_blocks(ctx, in, g, group_tiles(ctx, g), ctx.gpu_tiles);
}

// value(local, g) for the group that holds `index` among [first_g, first_g + count_g): a select
// over the groups, each read at a clamped local index (so bounds stay inside every group).
Expr by_group(const Expr &index, const std::vector<int> &firsts, const std::vector<int> &counts,
              const std::function<Expr(Expr, size_t)> &value) {
  if (firsts.size() == 1) return value(index, 0);  // no groups: no select, no clamp
  Expr result;
  for (size_t g = firsts.size(); g-- > 0;) {
    const Expr local = Halide::clamp(index - firsts[g], 0, counts[g] - 1);
    result = result.defined() ? Halide::select(index < firsts[g] + counts[g], value(local, g), result)
                              : value(local, g);
  }
  return result;
}

}  // namespace

PipelineOutputs build_block_form(const PipelineContext &ctx) {
  const attn::Spec &s = ctx.spec;
  // Queries from x; keys and values from x_kv under cross-attention, else from x too. The one
  // place that chooses the key/value source: the projections, seq_k and the masks follow it.
  const std::string kv_source = s.cross_attention ? "x_kv" : "x";
  std::map<std::string, Func> sources{{"x", activations_f32(ctx, "x")}};
  if (s.cross_attention) sources.emplace("x_kv", activations_f32(ctx, "x_kv"));
  const Expr seq_q = ctx.extent("x", 1), seq_k = ctx.extent(kv_source, 1);
  std::vector<LinearFuncs> layers;
  const ProjectedRows projected = project_qkv(ctx, sources, kv_source, layers);

  // One core per head group (one in all without groups), each with its own tiles and scale.
  const std::vector<HeadGroupSlice> slices = head_group_slices(s);
  std::vector<AttendedRows> cores;
  CoreInputs first_inputs;  // the one core's inputs, for probs (no groups then)
  for (const HeadGroupSlice &slice : slices)
    cores.push_back(
        attend_group(ctx, slice, projected, seq_q, seq_k, cores.empty() ? &first_inputs : nullptr));
  const bool with_lse = cores.front().with_lse;

  // Merge heads group by group: the group's column j of the merged activations is its head
  // j / Dv, channel j % Dv.
  Var i("i"), b("b"), j("j"), h("h");
  std::vector<int> first_columns, widths, first_heads, heads;
  for (const HeadGroupSlice &slice : slices) {
    first_columns.push_back(slice.q_row);
    widths.push_back(slice.spec.heads * slice.spec.head_dim_v);
    first_heads.push_back(slice.first_head);
    heads.push_back(slice.spec.heads);
  }
  Func merged("merged");
  merged(j, i, b) = by_group(j, first_columns, widths, [&](const Expr &column, size_t g) {
    const int dv = slices[g].spec.head_dim_v;
    const Halide::FuncRef attended = cores[g].out(column % dv, column / dv, i, b);
    return with_lse ? Expr(attended[0]) : Expr(attended);
  });
  const int attended = static_cast<int>(attn::attended_width(s));
  auto bias = [&](const char *name) { return s.proj_bias ? ctx.input_f32(name) : Func(); };
  LinearFuncs out_proj =
      linear(ctx, merged, ctx.input_f32("w_o"), bias("b_o"), attended, s.d_model, seq_q, "out_proj");
  schedule_linear(ctx, out_proj, s.d_model);
  // The projection accumulates in a buffer of its own and is then copied out: accumulating
  // straight into the output buffer (run-time strides) kept the sums in memory, not registers
  // (out_proj 76 ms against 102 ms for the 3x larger qkv projection, one thread, S=1024).
  Func result("block_out");
  result(j, i, b) = ctx.to_storage(out_proj.y(j, i, b));
  if (ctx.gpu) {
    schedule_elementwise_gpu(result, j, i, b);
  } else {
    Var tokens("tokens");
    result.compute_root().fuse(i, b, tokens).parallel(tokens).vectorize(j, ctx.tiles.vector_width);
  }
  // probs: one group (the dispatcher refuses probs with head groups).
  if (s.probs) return attention_outputs(ctx, cores.front(), result, first_inputs);
  PipelineOutputs outputs{{"out", result}};
  if (with_lse) {
    Func lse("lse_rows");
    lse(h, i, b) = by_group(h, first_heads, heads,
                            [&](const Expr &head, size_t g) { return Expr(cores[g].out(0, head, i, b)[1]); });
    if (ctx.gpu) schedule_elementwise_gpu(lse, h, i, b);
    outputs["lse"] = lse;
  }
  return outputs;
}

}  // namespace attnc

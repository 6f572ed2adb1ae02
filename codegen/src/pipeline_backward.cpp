// The backward family: the forward's inputs and the loss's gradient by out in, dq, dk and dv out.
#include "attnc/pipeline_backward.h"

#include "attnc/backward_algorithm.h"
#include "attnc/mask_lowering.h"
#include "attnc/pipeline_core_form.h"
#include "attnc/rope.h"
#include "attnc/schedule_backward_cpu.h"
#include "attnc/schedule_backward_gpu.h"

namespace attnc {

PipelineOutputs build_backward(const PipelineContext &ctx) {
  const CoreInputs in = core_form_inputs(ctx);  // q and k rotated where the spec has rope
  const BackwardTiles tiles = ctx.gpu ? backward_tiles_gpu(ctx.spec) : backward_tiles(ctx.spec, ctx.tiles);
  RotatedBack rotated_back;
  if (ctx.spec.rope != attn::Rope::none) {
    // The rotation's transpose is the rotation by the negated angle: rope at the negated position
    // (query row i at first_query_position + i, as core_form_inputs rotates it; key j at j).
    const attn::Spec spec = ctx.spec;
    const Halide::Expr seq_k = in.seq_k, seq_q = in.seq_q;
    const bool gpu = ctx.gpu;
    rotated_back.q = [=](const Halide::Func &dq) {
      return rope_rotated(
          dq, spec,
          [=](Halide::Expr row, Halide::Expr) {
            return -(first_query_position(spec.align, seq_k, seq_q) + row);
          },
          "dq_rope_back", gpu);
    };
    rotated_back.k = [=](const Halide::Func &dk) {
      return rope_rotated(
          dk, spec, [](Halide::Expr row, Halide::Expr) { return -row; }, "dk_rope_back", gpu);
    };
  }
  BackwardFuncs f = define_backward(in, ctx.input_f32("out"), ctx.input_f32("dout"), ctx.input("lse"),
                                    ctx.spec, tiles, rotated_back);
  if (ctx.gpu)
    schedule_backward_gpu(f, ctx.spec);
  else
    schedule_backward_cpu(f, ctx.tiles);
  PipelineOutputs outputs{{"dq", f.dq}, {"dk", f.dk}, {"dv", f.dv}};
  if (f.dscore_bias.defined()) outputs["dscore_bias"] = f.dscore_bias;
  return outputs;
}

}  // namespace attnc

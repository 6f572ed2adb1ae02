// The backward family: the forward's inputs and the loss's gradient by out in, dq, dk and dv out.
#include "attnc/pipeline_backward.h"

#include "attnc/backward_algorithm.h"
#include "attnc/pipeline_core_form.h"
#include "attnc/schedule_backward_cpu.h"

namespace attnc {

PipelineOutputs build_backward(const PipelineContext &ctx) {
  if (ctx.gpu)
    throw Halide::CompileError("attnc: backward=true has no GPU schedule yet; generate it for CPU targets");
  const CoreInputs in = core_form_inputs(ctx);
  BackwardFuncs f = define_backward(in, ctx.input_f32("out"), ctx.input_f32("dout"), ctx.input("lse"),
                                    ctx.spec, backward_tiles(ctx.spec, ctx.tiles));
  schedule_backward_cpu(f, ctx.tiles);
  return {{"dq", f.dq}, {"dk", f.dk}, {"dv", f.dv}};
}

}  // namespace attnc

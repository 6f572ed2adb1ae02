// The backward family: the forward's inputs and the loss's gradient by out in, dq, dk and dv out.
#include "attnc/pipeline_backward.h"

#include "attnc/backward_algorithm.h"
#include "attnc/pipeline_core_form.h"
#include "attnc/schedule_backward_cpu.h"
#include "attnc/schedule_backward_gpu.h"

namespace attnc {

PipelineOutputs build_backward(const PipelineContext &ctx) {
  const CoreInputs in = core_form_inputs(ctx);
  const BackwardTiles tiles = ctx.gpu ? backward_tiles_gpu(ctx.spec) : backward_tiles(ctx.spec, ctx.tiles);
  BackwardFuncs f =
      define_backward(in, ctx.input_f32("out"), ctx.input_f32("dout"), ctx.input("lse"), ctx.spec, tiles);
  if (ctx.gpu)
    schedule_backward_gpu(f, ctx.spec);
  else
    schedule_backward_cpu(f, ctx.tiles);
  return {{"dq", f.dq}, {"dk", f.dk}, {"dv", f.dv}};
}

}  // namespace attnc

// The core's out, lse and probs outputs: taken apart from its Tuple and scheduled where they are made.
#include "attnc/pipeline_outputs.h"

#include "attnc/probs_output.h"
#include "attnc/schedule_around_core_gpu.h"
#include "attnc/schedule_cpu.h"
#include "attnc/schedule_gpu.h"

namespace attnc {

using Halide::Func;
using Halide::Var;

Func attended_values(const PipelineContext &ctx, const AttendedRows &rows) {
  if (!rows.with_lse) return rows.out;
  Var dv("dv"), h("h"), i("i"), b("b");
  Func out("out_values");
  out(dv, h, i, b) = rows.out(dv, h, i, b)[0];
  if (ctx.gpu) {
    // Taken apart on the device, as the outputs may be device tensors (no host copy).
    Var heads_batch("heads_batch");
    out.fuse(h, b, heads_batch);
    schedule_elementwise_gpu(out, dv, i, heads_batch);
  } else {
    out.vectorize(dv, ctx.tiles.pv_vector);
  }
  return out;
}

PipelineOutputs attention_outputs(const PipelineContext &ctx, const AttendedRows &rows, const Func &out_value,
                                  const CoreInputs &in) {
  PipelineOutputs outputs{{"out", out_value}};
  if (!rows.with_lse) return outputs;
  Var h("h"), i("i"), b("b");
  Func lse("lse_rows");
  lse(h, i, b) = rows.out(0, h, i, b)[1];
  // On a GPU, on the device: the caller's lse may be a device tensor (no host copy).
  if (ctx.gpu) schedule_elementwise_gpu(lse, h, i, b);
  if (ctx.spec.lse) outputs["lse"] = lse;
  if (!ctx.spec.probs) return outputs;
  ProbsFuncs probs = define_probs(in, ctx.spec, lse);
  if (ctx.gpu) {
    schedule_probs_gpu(probs);
  } else {
    schedule_probs_cpu(probs, ctx.tiles.vector_width);
  }
  outputs["probs"] = probs.probs;
  return outputs;
}

}  // namespace attnc

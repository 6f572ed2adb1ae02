// Chooses the pipeline family of a generator invocation and runs its builder.
#include "attnc/pipeline_dispatch.h"

#include "attnc/arguments.h"
#include "attnc/pipeline_backward.h"
#include "attnc/pipeline_block_core.h"
#include "attnc/pipeline_block_form.h"
#include "attnc/pipeline_block_mask.h"
#include "attnc/pipeline_core_form.h"
#include "attnc/pipeline_outputs.h"
#include "attnc/pipeline_row_core.h"
#include "attnc/pipeline_sequence.h"
#include "attnc/pipeline_split_keys.h"

namespace attnc {

PipelineFamily pipeline_family(const PipelineContext &ctx) {
  if (ctx.role == "append") return PipelineFamily::cache_append;
  if (ctx.spec.block_mask == attn::BlockMask::pass) return PipelineFamily::block_mask_pass;
  if (ctx.spec.form != attn::Form::core) return PipelineFamily::block_form;
  if (ctx.spec.backward_pass) return PipelineFamily::backward;
  if (ctx.core_path == "split_keys") return PipelineFamily::split_keys;
  if (!ctx.gpu && whole_row_core(ctx.spec) && ctx.core_path != "blocks")
    return PipelineFamily::whole_row_core;
  return PipelineFamily::block_core;
}

std::string to_string(PipelineFamily family) {
  switch (family) {
    case PipelineFamily::cache_append:
      return "cache_append";
    case PipelineFamily::whole_row_core:
      return "whole_row_core";
    case PipelineFamily::block_core:
      return "block_core";
    case PipelineFamily::split_keys:
      return "split_keys";
    case PipelineFamily::block_form:
      return "block_form";
    case PipelineFamily::backward:
      return "backward";
    case PipelineFamily::block_mask_pass:
      return "block_mask_pass";
  }
  return "?";
}

PipelineOutputs build_pipeline(const PipelineContext &ctx) {
  // probs [B, H, Sq, Sk] is one matrix per batch element of one head size: per-sequence kernels
  // (a cache, varlen) and head groups have no such shape yet.
  if (ctx.spec.probs && (runs_per_sequence(ctx.spec) || ctx.spec.group_count != 0))
    throw Halide::CompileError(
        "attnc: probs=true does not combine with kv_cache, layout=varlen or head_groups");
  const PipelineFamily family = pipeline_family(ctx);
  if (family == PipelineFamily::cache_append) return build_cache_append(ctx);
  if (family == PipelineFamily::block_form) return build_block_form(ctx);
  if (family == PipelineFamily::backward) return build_backward(ctx);
  if (family == PipelineFamily::block_mask_pass) return build_block_mask_pass(ctx);
  const CoreInputs in = core_form_inputs(ctx);
  const attn::Spec core = ctx.core_spec();
  AttendedRows rows;
  if (family == PipelineFamily::split_keys) {
    rows = attend_split_keys(ctx, in, core);
  } else if (family == PipelineFamily::whole_row_core) {
    rows = attend_whole_rows(ctx, in, core);
  } else {
    rows = attend_in_blocks(ctx, in, core, ctx.tiles, ctx.gpu_tiles);
  }
  return attention_outputs(ctx, rows, attended_values(ctx, rows), in);
}

}  // namespace attnc

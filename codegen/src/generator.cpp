// The Halide generator behind every attnc kernel: spec text in, its arguments and one pipeline family's Funcs
// out.
#include "attnc/generator.h"

#include <map>
#include <string>
#include <vector>

#include "attn/spec_text.h"
#include "attn/validate.h"
#include "attnc/arguments.h"
#include "attnc/pipeline_context.h"
#include "attnc/pipeline_dispatch.h"
#include "attnc/schedule_gpu.h"
#include "attnc/targets_arm.h"

namespace attnc {
namespace {

using Halide::Buffer;
using Halide::Expr;

class AttentionKernel : public Halide::Generator<AttentionKernel> {
 public:
  GeneratorParam<std::string> spec_text{"spec", ""};
  // Core form only: "tiles" (query tiles x key blocks, for prefill), "packed" (the same, each
  // task reading its head's K and V rows from contiguous copies: long keys) or "split_keys" (key
  // chunks in parallel, for decode: few queries, many keys). Specs with whole_row_core() run the
  // whole-row core for "tiles" and "packed", and the block core on copied head rows for "blocks"
  // (long keys).
  GeneratorParam<std::string> core_path{"core_path", "tiles"};
  // Core tile sizes that replace cpu_tiles()' defaults (core_tiles_text's form; attnc tune).
  GeneratorParam<std::string> tiles_text{"tiles", ""};
  // Kernels with a KV cache or layout=varlen (runs_per_sequence): which per-sequence pipeline,
  // "attend", "paged" or "append" (sequence_pipeline_args); their entry calls them per sequence.
  GeneratorParam<std::string> role{"role", "attend"};

  void configure() {
    const attn::ParseResult parsed = attn::parse_spec(std::string(spec_text));
    if (!parsed.ok) throw Halide::CompileError("attnc: " + parsed.message);
    ctx_.spec = attn::resolve(parsed.spec);
    const std::vector<ArgSpec> args =
        runs_per_sequence(ctx_.spec) ? sequence_pipeline_args(ctx_.spec, role) : kernel_arguments(ctx_.spec);
    // GPU targets take f16 and bf16 tensors as their bits (half_bits.h); the entry passes them so.
    const bool bits = runs_on_gpu(get_target());
    for (const ArgSpec &arg : args) {
      const int rank = static_cast<int>(arg.dims.size());
      const Halide::Type type = halide_type(arg.dtype, bits);
      if (arg.is_output) {
        outputs_[arg.name] = add_output<Buffer<>>(arg.name, type, rank);
      } else {
        inputs_[arg.name] = add_input<Buffer<>>(arg.name, type, rank);
      }
      arg_specs_[arg.name] = arg;
    }
  }

  void generate() {
    // Every input starts at 0 and has its spec-fixed sizes, which the schedule relies on; the
    // append pipeline's token dim starts at the tokens' cache position instead.
    const bool append = std::string(role) == "append";
    for (auto &[name, buffer] : inputs_) constrain(*buffer, arg_specs_.at(name), append);
    // The paged pipeline's key_count is a stride-0 view (only its extent is read).
    if (inputs_.count("key_count")) (*inputs_.at("key_count")).dim(0).set_stride(Expr());
    for (auto &[name, buffer] : inputs_) {
      ctx_.inputs[name] = Halide::Func(*buffer);
      ctx_.parameters[name] = Halide::ImageParam(*buffer).parameter();
      for (int d = 0; d < buffer->dimensions(); ++d) ctx_.extents[name].push_back(buffer->dim(d).extent());
    }
    ctx_.target = get_target();
    ctx_.core_path = core_path;
    ctx_.role = role;
    ctx_.tiles_text = tiles_text;
    ctx_.unit = target_vector_unit(ctx_.target.to_string());
    ctx_.tiles = cpu_tiles(ctx_.spec, ctx_.unit);
    if (!ctx_.tiles_text.empty()) {
      std::string error;
      if (!apply_tiles_text(ctx_.tiles_text, &ctx_.tiles, &error))
        throw Halide::CompileError("attnc: tiles: " + error);
      if (const std::string problem = tile_problem(ctx_.spec, ctx_.tiles); !problem.empty())
        throw Halide::CompileError("attnc: tiles '" + ctx_.tiles_text + "' for " +
                                   std::to_string(ctx_.unit.lanes) + " lanes: " + problem);
    }
    ctx_.tiles.pack_head_rows = ctx_.core_path == "packed" || ctx_.core_path == "blocks";
    ctx_.gpu = runs_on_gpu(ctx_.target);
    ctx_.gpu_tiles = gpu_tiles(ctx_.spec);
    for (auto &[name, func] : attnc::build_pipeline(ctx_)) (*outputs_.at(name)) = func;
    for (auto &[name, buffer] : outputs_) constrain(*buffer, arg_specs_.at(name), append);
  }

 private:
  template <typename Buffer>
  static void constrain(Buffer &buffer, const ArgSpec &arg, bool token_min_free = false) {
    const int rank = static_cast<int>(arg.dims.size());
    for (int halide_dim = 0; halide_dim < rank; ++halide_dim) {
      const ArgDim &dim = arg.dims[rank - 1 - halide_dim];
      // The token dim: [B, n, KVH, D] tensors' dim 2, the slots' scales [B, n, KVH] dim 1.
      if (!(token_min_free && halide_dim == rank - 2)) buffer.dim(halide_dim).set_min(0);
      if (dim.fixed > 0) buffer.dim(halide_dim).set_extent(static_cast<int>(dim.fixed));
    }
  }

  PipelineContext ctx_;
  std::map<std::string, Halide::GeneratorInput<Buffer<>> *> inputs_;
  std::map<std::string, Halide::GeneratorOutput<Buffer<>> *> outputs_;
  std::map<std::string, ArgSpec> arg_specs_;
};

}  // namespace

Halide::Internal::AbstractGeneratorPtr create_attention_generator(const Halide::GeneratorContext &context) {
  return AttentionKernel::create(context, "attn_kernel", "attn_kernel");
}

}  // namespace attnc

// The Halide generator behind every attnc kernel: spec text in, inputs/outputs and pipeline out.
#include "attnc/generator.h"

#include <map>

#include "attn/spec_text.h"
#include "attn/validate.h"
#include "attnc/arguments.h"
#include "attnc/core_algorithm.h"
#include "attnc/core_rows.h"
#include "attnc/projection.h"
#include "attnc/rope.h"
#include "attnc/schedule_cpu.h"
#include "attnc/schedule_gpu.h"
#include "attnc/split_keys_algorithm.h"
#include "attnc/targets_arm.h"
#include "attnc/tile_config.h"
#include "attnc/tile_config_gpu.h"

namespace attnc {
namespace {

using Halide::Buffer;
using Halide::Expr;
using Halide::Func;
using Halide::Var;

class AttentionKernel : public Halide::Generator<AttentionKernel> {
 public:
  GeneratorParam<std::string> spec_text{"spec", ""};
  // Core form only: "tiles" (query tiles x key blocks, for prefill), "packed" (the same, each
  // task reading its head's K and V rows from contiguous copies: long keys) or "split_keys" (key
  // chunks in parallel, for decode: few queries, many keys). Specs with whole_row_core() run the
  // whole-row core for "tiles" and "packed", and the block core for "blocks" (long keys).
  GeneratorParam<std::string> core_path{"core_path", "tiles"};
  // Core tile sizes that replace cpu_tiles()' defaults (core_tiles_text's form; attnc tune).
  GeneratorParam<std::string> tiles_text{"tiles", ""};
  // Kernels with a KV cache or layout=varlen (runs_per_sequence): which per-sequence pipeline,
  // "attend", "paged" or "append" (sequence_pipeline_args); their entry calls them per sequence.
  GeneratorParam<std::string> role{"role", "attend"};

  void configure() {
    const attn::ParseResult parsed = attn::parse_spec(std::string(spec_text));
    if (!parsed.ok) throw Halide::CompileError("attnc: " + parsed.message);
    spec_ = attn::resolve(parsed.spec);
    const std::vector<ArgSpec> args =
        runs_per_sequence(spec_) ? sequence_pipeline_args(spec_, role) : kernel_arguments(spec_);
    for (const ArgSpec &arg : args) {
      const int rank = static_cast<int>(arg.dims.size());
      const Halide::Type type = halide_type(arg.dtype);
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
    const Halide::Target target = get_target();
    const VectorUnit unit = target_vector_unit(target.to_string());
    const int lanes = unit.lanes;
    tiles_ = cpu_tiles(spec_, unit);
    const std::string overrides = tiles_text;
    if (!overrides.empty()) {
      std::string error;
      if (!apply_tiles_text(overrides, &tiles_, &error)) throw Halide::CompileError("attnc: tiles: " + error);
      if (const std::string problem = tile_problem(spec_, tiles_); !problem.empty())
        throw Halide::CompileError("attnc: tiles '" + overrides + "' for " + std::to_string(lanes) +
                                   " lanes: " + problem);
    }
    tiles_.pack_head_rows = std::string(core_path) == "packed";
    gpu_ = runs_on_gpu(target);
    gpu_tiles_ = gpu_tiles(spec_);
    // f16 needs OpenCL's cl_khr_fp16 (PoCL lacks it) and bf16 crashed LLVM's PTX lowering in
    // Halide 21: until the GPU path converts their bits itself, it takes f32 storage only.
    if (gpu_ && spec_.dtype != attn::DType::f32) {
      const Halide::Target named =
          target.without_feature(Halide::Target::NoRuntime).without_feature(Halide::Target::UserContext);
      throw Halide::CompileError(std::string("attnc: dtype=") + attn::dtype_name(spec_.dtype) + " on " +
                                 named.to_string() + ": GPU targets (cuda, opencl) take dtype=f32 only");
    }
    if (gpu_ && (runs_per_sequence(spec_) || spec_.rope != attn::Rope::none))
      throw Halide::CompileError("attnc: kv_cache, rope and layout=varlen run on CPU targets only");
    if (append) {
      generate_append();
    } else if (spec_.form == attn::Form::core) {
      generate_core();
    } else {
      generate_block();
    }
    for (auto &[name, buffer] : outputs_) constrain(*buffer, arg_specs_.at(name), append);
  }

 private:
  static Halide::Type halide_type(const std::string &dtype) {
    if (dtype == "i32") return Halide::Int(32);
    if (dtype == "u8") return Halide::UInt(8);
    if (dtype == "f16") return Halide::Float(16);
    if (dtype == "bf16") return Halide::BFloat(16);
    return Halide::Float(32);
  }
  // The spec's storage type: q/k/v/x, weights, biases and out.
  Halide::Type storage_type() const { return halide_type(attn::dtype_name(spec_.dtype)); }

  // bf16 q, k and v multiplied in pairs (vdpbf16ps) by the whole-row core; every other
  // pipeline and dtype converts to fp32 first.
  bool uses_bf16_dot_products() const {
    return spec_.dtype == attn::DType::bf16 && bf16_dot_products(get_target());
  }

  // The bf16 input itself where the target multiplies bf16 pairs, else undefined.
  Func bf16_input(const std::string &name) { return uses_bf16_dot_products() ? input(name) : Func(); }

  Func input(const std::string &name) { return Func(*inputs_.at(name)); }
  Func optional_input(const std::string &name) { return inputs_.count(name) ? input(name) : Func(); }
  // A float input as f32 (inline: converted where it is read). f16 converts with F16C where
  // the target has it, bf16 by a shift; every computation after that is fp32.
  Func input_f32(const std::string &name) {
    Func in = input(name);
    if (in.type() == Halide::Float(32)) return in;
    Func converted(name + "_f32");
    converted(Halide::_) = Halide::cast<float>(in(Halide::_));
    return converted;
  }

  template <typename Buffer>
  static void constrain(Buffer &buffer, const ArgSpec &arg, bool token_min_free = false) {
    const int rank = static_cast<int>(arg.dims.size());
    for (int halide_dim = 0; halide_dim < rank; ++halide_dim) {
      const ArgDim &dim = arg.dims[rank - 1 - halide_dim];
      if (!(token_min_free && halide_dim == 2)) buffer.dim(halide_dim).set_min(0);
      if (dim.fixed > 0) buffer.dim(halide_dim).set_extent(static_cast<int>(dim.fixed));
    }
  }

  // The mask and modifier inputs, whichever the spec declared.
  void add_mask_inputs(CoreInputs &in) {
    in.masks =
        MaskInputs{optional_input("key_lengths"), optional_input("prefix_lengths"),
                   optional_input("segment_ids_q"), optional_input("segment_ids_k"), optional_input("mask")};
    in.alibi_slopes = optional_input("alibi_slopes");
    in.score_bias = optional_input("score_bias");
  }

  // Hands the core's result to the outputs: out directly, or out and lse from the Tuple.
  void set_core_outputs(bool with_lse, const Func &core_out, const Func &out_value) {
    if (!with_lse) {
      (*outputs_.at("out")) = out_value;
      return;
    }
    Var h("h"), i("i"), b("b");
    Func lse("lse_rows");
    lse(h, i, b) = core_out(0, h, i, b)[1];
    (*outputs_.at("out")) = out_value;
    (*outputs_.at("lse")) = lse;
  }

  // The cache's new slots: k_new rotated at its tokens' positions (the token dim's coordinates,
  // which start at cache_seqlens[b] + the first token), v_new as given, in the cache's dtype.
  void generate_append() {
    Var d("d"), g("g"), p("p"), b("b");
    Func k = input_f32("k_new");
    if (spec_.rope != attn::Rope::none)
      k = rope_rotated(
          k, spec_, [](Expr row, Expr) { return row; }, "k_new_rope");
    Func k_slots("k_slots"), v_slots("v_slots");
    k_slots(d, g, p, b) = Halide::cast(storage_type(), k(d, g, p, b));
    v_slots(d, g, p, b) = input("v_new")(d, g, p, b);
    k_slots.vectorize(d, lanes_dividing(spec_.head_dim, tiles_.vector_width));
    v_slots.vectorize(d, lanes_dividing(spec_.head_dim_v, tiles_.vector_width));
    (*outputs_.at("k_slots")) = k_slots;
    (*outputs_.at("v_slots")) = v_slots;
  }

  // Keys in cache order: this sequence's pages through its block_table row (paged), else k
  // itself; with rope and no cache, every key rotated once per call at its position j.
  void sequence_inputs(CoreInputs &in) {
    if (std::string(role) == "paged") {
      const int page = spec_.page_size;
      const Expr pages = (*inputs_.at("k_cache")).dim(3).extent();
      Func table = input("block_table"), k_cache = input_f32("k_cache"), v_cache = input_f32("v_cache");
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
      in.seq_k = (*inputs_.at("key_count")).dim(0).extent();
      return;
    }
    if (spec_.rope == attn::Rope::none || spec_.kv_cache != attn::KvCache::none) return;
    Func keys = rope_rotated(
        in.k, spec_, [](Expr row, Expr) { return row; }, "k_rope");
    Func rotated("k_rotated");
    Var d("d"), g("g"), j("j"), b("b"), jb("jb");
    rotated(d, g, j, b) = keys(d, g, j, b);
    rotated.compute_root()
        .fuse(j, b, jb)
        .parallel(jb, 8, Halide::TailStrategy::GuardWithIf)
        .vectorize(d, lanes_dividing(spec_.head_dim, tiles_.vector_width));
    in.k = rotated;
  }

  void generate_core() {
    const bool paged = std::string(role) == "paged";
    CoreInputs in{input_f32("q"), paged ? Func() : input_f32("k"), paged ? Func() : input_f32("v"),
                  (*inputs_.at("q")).dim(2).extent(), paged ? Expr() : (*inputs_.at("k")).dim(2).extent()};
    add_mask_inputs(in);
    in.out_type = storage_type();
    if (runs_per_sequence(spec_) || spec_.rope != attn::Rope::none) sequence_inputs(in);
    if (spec_.rope != attn::Rope::none) {
      // Query row i sits at the mask's position of the row (bottom-right: Sk - Sq + i, which is
      // cache_seqlens[b] + i with a cache).
      const Expr seq_k = in.seq_k, seq_q = in.seq_q;
      const attn::Align align = spec_.align;
      in.q = rope_rotated(
          in.q, spec_, [=](Expr row, Expr) { return first_query_position(align, seq_k, seq_q) + row; },
          "q_rope");
    }
    // bf16 pair products read q and k as stored; rotated values exist only in fp32, so rope and
    // paged specs take the fp32 path.
    if (uses_bf16_dot_products() && spec_.rope == attn::Rope::none && !paged) {
      in.q_bf16 = input("q");
      in.k_bf16 = input("k");
      in.v_bf16 = input("v");
    }
    Func result;
    bool with_lse = false;
    if (gpu_) {
      // Every core path is the block core on a GPU (a thread per query row, gpu_tiles()).
      CoreFuncs core = define_core(in, spec_, gpu_tiles_.key_block, gpu_tiles_.query_tile, gpu_tiles_.pv_rows);
      schedule_core_gpu(core, gpu_tiles_);
      result = core.out;
      with_lse = core.with_lse;
    } else if (std::string(core_path) == "split_keys") {
      SplitKeysFuncs split = define_split_keys(in, spec_, tiles_.split_keys_chunk, tiles_.split_keys_dots,
                                               tiles_.split_keys_lanes);
      schedule_split_keys_cpu(split, tiles_);
      result = split.out;
      with_lse = split.with_lse;
    } else if (whole_row_core(spec_) && std::string(core_path) != "blocks") {
      RowsFuncs rows = define_core_rows(in, spec_, tiles_.query_tile, tiles_.pv_rows);
      schedule_core_rows_cpu(rows, tiles_);
      result = rows.out;
      with_lse = rows.with_lse;
    } else {
      CoreFuncs core = define_core(in, spec_, tiles_.key_block, tiles_.query_tile, tiles_.pv_rows);
      schedule_core_cpu(core, tiles_);
      result = core.out;
      with_lse = core.with_lse;
    }
    if (!with_lse) {
      set_core_outputs(false, result, result);
      return;
    }
    Var dv("dv"), h("h"), i("i"), b("b");
    Func out("out_values");
    out(dv, h, i, b) = result(dv, h, i, b)[0];
    // On a GPU target both outputs are taken apart on the host, from the core's copy there.
    if (!gpu_) out.vectorize(dv, tiles_.pv_vector);
    set_core_outputs(true, result, out);
  }

  void generate_block() {
    const attn::Spec &s = spec_;
    const int hd = s.heads * s.head_dim, kvd = s.kv_heads * s.head_dim, kvdv = s.kv_heads * s.head_dim_v;
    Func x = input_f32("x");
    if (spec_.dtype != attn::DType::f32) {
      // Converted once per call: read in place, every projection FMA also converted its x element
      // (f16 W6 ran at 0.64-0.92x of its fp32 kernel, docs/PERFORMANCE.md).
      Func x_copy("x_f32_copy");
      Var c("c"), token("token"), batch("batch"), rows("rows");
      x_copy(c, token, batch) = x(c, token, batch);
      x_copy.compute_root().fuse(token, batch, rows).parallel(rows).vectorize(c, lanes_dividing(s.d_model, tiles_.vector_width));
      x = x_copy;
    }
    const Expr seq = (*inputs_.at("x")).dim(1).extent();
    Var d("d"), h("h"), i("i"), b("b");
    Func q("q_heads"), k("k_heads"), v("v_heads");
    std::vector<LinearFuncs> layers;
    auto bias = [&](const char *name) { return s.proj_bias ? input_f32(name) : Func(); };
    if (s.qkv == attn::Qkv::fused) {
      const int rows = hd + kvd + kvdv;
      layers.push_back(define_linear(x, input_f32("w_qkv"), bias("b_qkv"), s.d_model,
                                     linear_panel_rows(tiles_, rows), "qkv", bf16_input("x"), bf16_input("w_qkv")));
      schedule_linear(layers.back(), rows);
      const Func &qkv = layers.back().y;
      q(d, h, i, b) = qkv(h * s.head_dim + d, i, b);
      k(d, h, i, b) = qkv(hd + h * s.head_dim + d, i, b);
      v(d, h, i, b) = qkv(hd + kvd + h * s.head_dim_v + d, i, b);
    } else {
      const char *names[3][3] = {
          {"w_q", "b_q", "q_proj"}, {"w_k", "b_k", "k_proj"}, {"w_v", "b_v", "v_proj"}};
      const int rows[3] = {hd, kvd, kvdv};
      for (int p = 0; p < 3; ++p) {
        layers.push_back(define_linear(x, input_f32(names[p][0]), bias(names[p][1]), s.d_model,
                                       linear_panel_rows(tiles_, rows[p]), names[p][2], bf16_input("x"),
                                       bf16_input(names[p][0])));
        schedule_linear(layers.back(), rows[p]);
      }
      q(d, h, i, b) = layers[0].y(h * s.head_dim + d, i, b);
      k(d, h, i, b) = layers[1].y(h * s.head_dim + d, i, b);
      v(d, h, i, b) = layers[2].y(h * s.head_dim_v + d, i, b);
    }
    CoreInputs in{q, k, v, seq, seq};
    add_mask_inputs(in);
    CoreFuncs core = gpu_ ? define_core(in, s, gpu_tiles_.key_block, gpu_tiles_.query_tile, gpu_tiles_.pv_rows)
                          : define_core(in, s, tiles_.key_block, tiles_.query_tile, tiles_.pv_rows);
    if (gpu_) {
      schedule_core_gpu(core, gpu_tiles_);
    } else {
      schedule_core_cpu(core, tiles_);
    }

    // Merge heads: row j of the merged activations is head j / Dv, channel j % Dv.
    Func merged("merged");
    Var j("j");
    const Halide::FuncRef attended = core.out(j % s.head_dim_v, j / s.head_dim_v, i, b);
    merged(j, i, b) = core.with_lse ? Expr(attended[0]) : Expr(attended);
    LinearFuncs out_proj = define_linear(merged, input_f32("w_o"), bias("b_o"), s.heads * s.head_dim_v,
                                         linear_panel_rows(tiles_, s.d_model), "out_proj");
    schedule_linear(out_proj, s.d_model);
    // The projection accumulates in a buffer of its own and is then copied out: accumulating
    // straight into the output buffer (run-time strides) kept the sums in memory, not registers
    // (out_proj 76 ms against 102 ms for the 3x larger qkv projection, one thread, S=1024).
    Func result("block_out");
    result(j, i, b) = Halide::cast(storage_type(), out_proj.y(j, i, b));
    if (gpu_) {
      schedule_elementwise_gpu(result, j, i, b);
    } else {
      Var tokens("tokens");
      result.compute_root().fuse(i, b, tokens).parallel(tokens).vectorize(j, tiles_.vector_width);
    }
    set_core_outputs(core.with_lse, core.out, result);
  }

  void schedule_linear(LinearFuncs &layer, int rows) {
    if (gpu_) {
      schedule_linear_gpu(layer, gpu_tiles_);
    } else {
      schedule_linear_cpu(layer, tiles_, rows);
    }
  }

  attn::Spec spec_{};
  CpuTiles tiles_{};
  bool gpu_ = false;  // a CUDA or OpenCL target: GPU schedules, gpu_tiles_
  GpuTiles gpu_tiles_{};
  std::map<std::string, Halide::GeneratorInput<Buffer<>> *> inputs_;
  std::map<std::string, Halide::GeneratorOutput<Buffer<>> *> outputs_;
  std::map<std::string, ArgSpec> arg_specs_;
};

}  // namespace

Halide::Internal::AbstractGeneratorPtr create_attention_generator(const Halide::GeneratorContext &context) {
  return AttentionKernel::create(context, "attn_kernel", "attn_kernel");
}

}  // namespace attnc

// The Halide generator behind every attnc kernel: spec text in, inputs/outputs and pipeline out.
#include "attnc/generator.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "attn/spec_text.h"
#include "attn/validate.h"
#include "attnc/arguments.h"
#include "attnc/core_algorithm.h"
#include "attnc/core_rows.h"
#include "attnc/half_bits.h"
#include "attnc/probs_output.h"
#include "attnc/projection.h"
#include "attnc/projection_amx.h"
#include "attnc/rope.h"
#include "attnc/schedule_around_core_gpu.h"
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
    const Halide::Target target = get_target();
    const VectorUnit unit = target_vector_unit(target.to_string());
    const int lanes = unit.lanes;
    unit_ = unit;
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
    // probs [B, H, Sq, Sk] is one matrix per batch element of one head size: per-sequence
    // kernels (a cache, varlen) and head groups have no such shape yet.
    if (spec_.probs && (runs_per_sequence(spec_) || spec_.group_count != 0))
      throw Halide::CompileError("attnc: probs=true does not combine with kv_cache, layout=varlen or head_groups");
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
  // bits: f16 and bf16 as UInt(16), their bits (GPU targets).
  static Halide::Type halide_type(const std::string &dtype, bool bits) {
    if (dtype == "i32") return Halide::Int(32);
    if (dtype == "u8") return Halide::UInt(8);
    if (dtype == "f16") return bits ? Halide::UInt(16) : Halide::Float(16);
    if (dtype == "bf16") return bits ? Halide::UInt(16) : Halide::BFloat(16);
    return Halide::Float(32);
  }
  // The spec's storage type: q/k/v/x, weights, biases and out.
  Halide::Type storage_type() const { return halide_type(attn::dtype_name(spec_.dtype), gpu_); }
  // An f32 value as stored: rounded to nearest even, by integer operations on GPU targets.
  Halide::Expr to_storage(const Halide::Expr &value) const {
    if (gpu_ && spec_.dtype != attn::DType::f32) return bits_from_f32(value, spec_.dtype);
    return Halide::cast(storage_type(), value);
  }

  // bf16 q, k and v multiplied as stored: in pairs (vdpbf16ps, Zen 4 class) or on AMX tiles
  // (Sapphire Rapids class) by the whole-row core and the q/k/v projections; every other
  // pipeline and dtype converts to fp32 first.
  bool uses_bf16_dot_products() const {
    return spec_.dtype == attn::DType::bf16 && !gpu_ &&
           (bf16_dot_products(get_target()) || amx_tiles(get_target()));
  }
  // On an AMX target the products that cannot take tiles convert to fp32 instead of pairing:
  // Intel cores run vdpbf16ps at half the FMA's rate (bf16_dot_products).
  bool pairs_pay() const { return bf16_dot_products(get_target()); }

  // The bf16 input itself where the target multiplies bf16 pairs, else undefined.
  Func bf16_input(const std::string &name) { return uses_bf16_dot_products() ? input(name) : Func(); }

  Func input(const std::string &name) { return Func(*inputs_.at(name)); }
  Func optional_input(const std::string &name) { return inputs_.count(name) ? input(name) : Func(); }
  // A float input as f32 (inline: converted where it is read). f16 converts with F16C where
  // the target has it, bf16 by a shift, and on GPU targets both from their bits (half_bits.h);
  // every computation after that is fp32.
  Func input_f32(const std::string &name) {
    Func in = input(name);
    if (in.type() == Halide::Float(32)) return in;
    Func converted(name + "_f32");
    if (in.type() == Halide::UInt(16)) {
      converted(Halide::_) = f32_from_bits(in(Halide::_), spec_.dtype);
    } else {
      converted(Halide::_) = Halide::cast<float>(in(Halide::_));
    }
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
    in.scale = optional_input("scale");
  }

  // The spec the core is defined from: with probs, the core also keeps each row's lse, which
  // the probs stage normalizes by (no lse output unless the spec asks for one). Without probs,
  // the spec itself.
  attn::Spec core_spec() const {
    attn::Spec s = spec_;
    s.lse = s.lse || s.probs;
    return s;
  }

  // Hands the core's result to the outputs: out directly, or out and lse from the Tuple; and
  // with probs, the probabilities (in: the core's q, k and masks).
  void set_core_outputs(bool with_lse, const Func &core_out, const Func &out_value, const CoreInputs &in) {
    (*outputs_.at("out")) = out_value;
    if (!with_lse) return;
    Var h("h"), i("i"), b("b");
    Func lse("lse_rows");
    lse(h, i, b) = core_out(0, h, i, b)[1];
    // On a GPU, on the device: the caller's lse may be a device tensor (no host copy).
    if (gpu_) schedule_elementwise_gpu(lse, h, i, b);
    if (spec_.lse) (*outputs_.at("lse")) = lse;
    if (!spec_.probs) return;
    ProbsFuncs probs = define_probs(in, spec_, lse);
    if (gpu_) {
      schedule_probs_gpu(probs);
    } else {
      schedule_probs_cpu(probs, tiles_.vector_width);
    }
    (*outputs_.at("probs")) = probs.probs;
  }

  // The cache's new slots: k_new rotated at its tokens' positions (the token dim's coordinates,
  // which start at cache_seqlens[b] + the first token), v_new as given, in the cache's dtype.
  void generate_append() {
    Var d("d"), g("g"), p("p"), b("b");
    Func k = input_f32("k_new");
    if (spec_.rope != attn::Rope::none)
      k = rope_rotated(
          k, spec_, [](Expr row, Expr) { return row; }, "k_new_rope", gpu_);
    Func k_slots("k_slots"), v_slots("v_slots");
    k_slots(d, g, p, b) = to_storage(k(d, g, p, b));
    v_slots(d, g, p, b) = input("v_new")(d, g, p, b);
    if (gpu_) {
      schedule_head_rows_gpu(k_slots);
      schedule_head_rows_gpu(v_slots);
    } else {
      k_slots.vectorize(d, lanes_dividing(spec_.head_dim, tiles_.vector_width));
      v_slots.vectorize(d, lanes_dividing(spec_.head_dim_v, tiles_.vector_width));
    }
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
        in.k, spec_, [](Expr row, Expr) { return row; }, "k_rope", gpu_);
    Func rotated("k_rotated");
    Var d("d"), g("g"), j("j"), b("b"), jb("jb");
    rotated(d, g, j, b) = keys(d, g, j, b);
    in.k = rotated;
    if (gpu_) {
      schedule_head_rows_gpu(rotated);
      return;
    }
    rotated.compute_root()
        .fuse(j, b, jb)
        .parallel(jb, 8, Halide::TailStrategy::GuardWithIf)
        .vectorize(d, lanes_dividing(spec_.head_dim, tiles_.vector_width));
  }

  void generate_core() {
    const bool paged = std::string(role) == "paged";
    CoreInputs in{input_f32("q"), paged ? Func() : input_f32("k"), paged ? Func() : input_f32("v"),
                  (*inputs_.at("q")).dim(2).extent(), paged ? Expr() : (*inputs_.at("k")).dim(2).extent()};
    add_mask_inputs(in);
    in.to_out = [this](const Expr &value) { return to_storage(value); };
    if (runs_per_sequence(spec_) || spec_.rope != attn::Rope::none) sequence_inputs(in);
    if (spec_.rope != attn::Rope::none) {
      // Query row i sits at the mask's position of the row (bottom-right: Sk - Sq + i, which is
      // cache_seqlens[b] + i with a cache).
      const Expr seq_k = in.seq_k, seq_q = in.seq_q;
      const attn::Align align = spec_.align;
      in.q = rope_rotated(
          in.q, spec_, [=](Expr row, Expr) { return first_query_position(align, seq_k, seq_q) + row; },
          "q_rope", gpu_);
    }
    // bf16 pair products read q and k as stored; rotated values exist only in fp32, so rope and
    // paged specs take the fp32 path.
    if (uses_bf16_dot_products() && spec_.rope == attn::Rope::none && !paged &&
        (pairs_pay() || amx_row_core(core_spec()))) {
      in.q_bf16 = input("q");
      in.k_bf16 = input("k");
      in.v_bf16 = input("v");
      in.amx_tiles = amx_tiles(get_target());
    }
    const attn::Spec core = core_spec();
    Func result;
    bool with_lse = false;
    if (gpu_ && std::string(core_path) == "split_keys") {
      SplitKeysFuncs split = define_split_keys(in, core, gpu_tiles_.split_keys_chunk,
                                               gpu_tiles_.split_keys_group, gpu_tiles_.split_keys_lanes);
      schedule_split_keys_gpu(split, gpu_tiles_);
      result = split.out;
      with_lse = split.with_lse;
    } else if (gpu_) {
      // Every other core path is the block core on a GPU (a thread per query row and value
      // column group, gpu_tiles()).
      CoreFuncs funcs = define_core(in, core, gpu_tiles_.key_block, gpu_tiles_.query_tile, gpu_tiles_.pv_rows,
                                    gpu_tiles_.value_columns);
      schedule_core_gpu(funcs, gpu_tiles_);
      result = funcs.out;
      with_lse = funcs.with_lse;
    } else if (std::string(core_path) == "split_keys") {
      SplitKeysFuncs split = define_split_keys(in, core, tiles_.split_keys_chunk, tiles_.split_keys_dots,
                                               tiles_.split_keys_lanes);
      schedule_split_keys_cpu(split, tiles_);
      result = split.out;
      with_lse = split.with_lse;
    } else if (whole_row_core(spec_) && std::string(core_path) != "blocks") {
      const CpuTiles rows_tiles = in.amx_tiles && amx_row_core(core) ? amx_core_tiles(tiles_) : tiles_;
      RowsFuncs rows = define_core_rows(in, core, rows_tiles.query_tile, rows_tiles.pv_rows);
      schedule_core_rows_cpu(rows, rows_tiles);
      result = rows.out;
      with_lse = rows.with_lse;
    } else {
      CoreFuncs funcs = define_core(in, core, tiles_.key_block, tiles_.query_tile, tiles_.pv_rows);
      schedule_core_cpu(funcs, tiles_);
      result = funcs.out;
      with_lse = funcs.with_lse;
    }
    if (!with_lse) {
      set_core_outputs(false, result, result, in);
      return;
    }
    Var dv("dv"), h("h"), i("i"), b("b");
    Func out("out_values");
    out(dv, h, i, b) = result(dv, h, i, b)[0];
    if (gpu_) {
      // Taken apart on the device, as the outputs may be device tensors (no host copy).
      Var heads_batch("heads_batch");
      out.fuse(h, b, heads_batch);
      schedule_elementwise_gpu(out, dv, i, heads_batch);
    } else {
      out.vectorize(dv, tiles_.pv_vector);
    }
    set_core_outputs(true, result, out, in);
  }

  // The q, k and v projections' outputs, each y(row, i, b), and the first row of each part in
  // its Func (fused: all three are the one w_qkv projection, q rows, then k rows, then v rows).
  struct ProjectedRows {
    Func q, k, v;
    int q_first = 0, k_first = 0, v_first = 0;
  };

  // One group of heads of one size in the block form (the whole spec when it has no groups): its
  // spec, where its heads start among all heads and its rows in the projections.
  struct HeadGroupSlice {
    attn::Spec spec;
    int first_head = 0;
    int q_row = 0, k_row = 0, v_row = 0;  // first row in w_q, w_k, w_v; q_row is also w_o's column
    std::string prefix;                   // of its Funcs' names
  };

  std::vector<HeadGroupSlice> head_group_slices() const {
    if (spec_.group_count == 0) return {{spec_, 0, 0, 0, 0, ""}};
    std::vector<HeadGroupSlice> slices;
    int q_row = 0, k_row = 0;
    for (int g = 0; g < spec_.group_count; ++g) {
      const attn::Spec group = attn::group_spec(spec_, g);
      slices.push_back({group, attn::group_first_head(spec_, g), q_row, k_row, k_row,
                        "group" + std::to_string(g) + "_"});
      q_row += group.heads * group.head_dim;
      k_row += group.kv_heads * group.head_dim;
    }
    return slices;
  }

  // The core tiles of one head group: its own (the head dims drive them), or the tiles given.
  CpuTiles group_tiles(const attn::Spec &group) const {
    if (spec_.group_count == 0) return tiles_;
    const std::string overrides = tiles_text;
    if (overrides.empty()) return cpu_tiles(group, unit_);
    if (const std::string problem = tile_problem(group, tiles_); !problem.empty())
      throw Halide::CompileError("attnc: tiles '" + overrides + "' for head group " + attn::to_string(group) +
                                 ": " + problem);
    return tiles_;
  }

  // A mask or modifier input indexed by head, read at the group's heads (first_head on).
  static Func heads_from(const Func &input, int first_head, int head_arg, const std::string &name) {
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
  CoreFuncs attend_group(const HeadGroupSlice &slice, const ProjectedRows &rows, const Expr &seq_q,
                         const Expr &seq_k, CoreInputs *used = nullptr) {
    attn::Spec g = slice.spec;
    g.lse = g.lse || spec_.probs;  // probs normalize by the core's lse
    Var d("d"), h("h"), i("i"), b("b");
    Func q(slice.prefix + "q_heads"), k(slice.prefix + "k_heads"), v(slice.prefix + "v_heads");
    q(d, h, i, b) = rows.q(rows.q_first + slice.q_row + h * g.head_dim + d, i, b);
    k(d, h, i, b) = rows.k(rows.k_first + slice.k_row + h * g.head_dim + d, i, b);
    v(d, h, i, b) = rows.v(rows.v_first + slice.v_row + h * g.head_dim_v + d, i, b);
    CoreInputs in{q, k, v, seq_q, seq_k};
    in.name_prefix = slice.prefix;
    add_mask_inputs(in);
    // mask(k, q, h, b), score_bias(k, q, h, b), alibi_slopes(h): H is the full head count.
    in.masks.mask = heads_from(in.masks.mask, slice.first_head, 2, slice.prefix + "mask");
    in.score_bias = heads_from(in.score_bias, slice.first_head, 2, slice.prefix + "score_bias");
    in.alibi_slopes = heads_from(in.alibi_slopes, slice.first_head, 0, slice.prefix + "alibi_slopes");
    if (used != nullptr) *used = in;
    if (gpu_) {
      const GpuTiles t = spec_.group_count == 0 ? gpu_tiles_ : gpu_tiles(g);
      CoreFuncs core = define_core(in, g, t.key_block, t.query_tile, t.pv_rows, t.value_columns);
      schedule_core_gpu(core, t);
      return core;
    }
    const CpuTiles t = group_tiles(g);
    CoreFuncs core = define_core(in, g, t.key_block, t.query_tile, t.pv_rows);
    schedule_core_cpu(core, t);
    return core;
  }

  // The input projections: w_q/w_k/w_v, or w_qkv, over all heads (with groups: every group's rows).
  ProjectedRows project_qkv(const std::map<std::string, Func> &sources, const std::string &kv_source,
                            std::vector<LinearFuncs> &layers) {
    const attn::Spec &s = spec_;
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
      plan = {{"x", "w_qkv", bias_qkv, "q_proj", 0, qw}, {kv_source, "w_qkv", bias_qkv, "kv_proj", qw, kw + vw}};
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
      const Func bias = p.bias.empty() ? Func() : rows_from(input_f32(p.bias), p.first_row);
      layers.push_back(linear(sources.at(p.source), rows_from(input_f32(p.weight), p.first_row), bias,
                              s.d_model, p.rows, (*inputs_.at(p.source)).dim(1).extent(), p.name,
                              bf16_input(p.source), rows_from(bf16_input(p.weight), p.first_row)));
      schedule_linear(layers.back(), p.rows);
    }
    return {layers[q_at.layer].y, layers[k_at.layer].y, layers[v_at.layer].y, q_at.row, k_at.row, v_at.row};
  }

  // value(local, g) for the group that holds `index` among [first_g, first_g + count_g): a select
  // over the groups, each read at a clamped local index (so bounds stay inside every group).
  static Expr by_group(const Expr &index, const std::vector<int> &firsts, const std::vector<int> &counts,
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

  // An activation input (x or x_kv [B,S,d_model]) as f32. f16 and bf16 are converted once per
  // call: read in place, every projection FMA also converted its x element (f16 W6 ran at
  // 0.64-0.92x of its fp32 kernel, docs/PERFORMANCE.md).
  Func activations_f32(const std::string &name) {
    Func x = input_f32(name);
    if (spec_.dtype == attn::DType::f32) return x;
    Func copy(name + "_f32_copy");
    Var c("c"), token("token"), batch("batch"), rows("rows");
    copy(c, token, batch) = x(c, token, batch);
    if (gpu_) {
      schedule_elementwise_gpu(copy, c, token, batch);
      return copy;
    }
    copy.compute_root()
        .fuse(token, batch, rows)
        .parallel(rows)
        .vectorize(c, lanes_dividing(spec_.d_model, tiles_.vector_width));
    return copy;
  }

  // Rows [first, first + count) of a weight w(c, row) or a bias b(row), as their own Func (the
  // whole input when first is 0; undefined stays undefined).
  static Func rows_from(const Func &f, int first) {
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

  // One input projection: weight rows [first_row, first_row + rows) and their bias applied to
  // one activation input, x or x_kv.
  struct Projection {
    std::string source, weight, bias, name;
    int first_row, rows;
  };
  // Where q, k or v sit in the projections' outputs: layer `layer`, from row `row`.
  struct ProjectedAt {
    size_t layer;
    int row;
  };

  void generate_block() {
    const attn::Spec &s = spec_;
    // Queries from x; keys and values from x_kv under cross-attention, else from x too. The one
    // place that chooses the key/value source: the projections, seq_k and the masks follow it.
    const std::string kv_source = s.cross_attention ? "x_kv" : "x";
    std::map<std::string, Func> sources{{"x", activations_f32("x")}};
    if (s.cross_attention) sources.emplace("x_kv", activations_f32("x_kv"));
    const Expr seq_q = (*inputs_.at("x")).dim(1).extent(), seq_k = (*inputs_.at(kv_source)).dim(1).extent();
    std::vector<LinearFuncs> layers;
    const ProjectedRows projected = project_qkv(sources, kv_source, layers);

    // One core per head group (one in all without groups), each with its own tiles and scale.
    const std::vector<HeadGroupSlice> slices = head_group_slices();
    std::vector<CoreFuncs> cores;
    CoreInputs first_inputs;  // the one core's inputs, for probs (no groups then)
    for (const HeadGroupSlice &slice : slices)
      cores.push_back(attend_group(slice, projected, seq_q, seq_k, cores.empty() ? &first_inputs : nullptr));
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
    auto bias = [&](const char *name) { return s.proj_bias ? input_f32(name) : Func(); };
    LinearFuncs out_proj =
        linear(merged, input_f32("w_o"), bias("b_o"), attended, s.d_model, seq_q, "out_proj");
    schedule_linear(out_proj, s.d_model);
    // The projection accumulates in a buffer of its own and is then copied out: accumulating
    // straight into the output buffer (run-time strides) kept the sums in memory, not registers
    // (out_proj 76 ms against 102 ms for the 3x larger qkv projection, one thread, S=1024).
    Func result("block_out");
    result(j, i, b) = to_storage(out_proj.y(j, i, b));
    if (gpu_) {
      schedule_elementwise_gpu(result, j, i, b);
    } else {
      Var tokens("tokens");
      result.compute_root().fuse(i, b, tokens).parallel(tokens).vectorize(j, tiles_.vector_width);
    }
    if (spec_.probs) {  // one group (generate() refuses probs with head groups)
      set_core_outputs(with_lse, cores.front().out, result, first_inputs);
      return;
    }
    (*outputs_.at("out")) = result;
    if (with_lse) {
      Func lse("lse_rows");
      lse(h, i, b) = by_group(h, first_heads, heads,
                              [&](const Expr &head, size_t g) { return Expr(cores[g].out(0, head, i, b)[1]); });
      if (gpu_) schedule_elementwise_gpu(lse, h, i, b);
      (*outputs_.at("lse")) = lse;
    }
  }

  // A linear layer of `rows` outputs over `tokens` tokens of x. On GPU targets without weight
  // panels (schedule_linear_gpu stages w's rows itself), x, w and the bias read at coordinates
  // clamped to their edges: a GPU block's tiles and chunks overhang them at odd sizes.
  LinearFuncs linear(const Func &x, const Func &w, const Func &bias, int in_features, int rows,
                     const Expr &tokens, const std::string &name, const Func &x_bf16 = Func(),
                     const Func &w_bf16 = Func()) {
    if (!gpu_ && x_bf16.defined() && amx_tiles(get_target()) && amx_linear_fits(in_features, rows))
      return define_linear_amx(x_bf16, w_bf16, bias, in_features, tokens, name);
    if (!gpu_ && !pairs_pay()) return define_linear(x, w, bias, in_features, linear_panel_rows(tiles_, rows), name);
    if (!gpu_)
      return define_linear(x, w, bias, in_features, linear_panel_rows(tiles_, rows), name, x_bf16, w_bf16);
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

  void schedule_linear(LinearFuncs &layer, int rows) {
    if (gpu_) {
      schedule_linear_gpu(layer, gpu_tiles_);
    } else if (layer.amx) {
      schedule_linear_amx(layer, tiles_, rows);
    } else {
      schedule_linear_cpu(layer, tiles_, rows);
    }
  }

  attn::Spec spec_{};
  CpuTiles tiles_{};
  VectorUnit unit_{};
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

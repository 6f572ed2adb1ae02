// attnc/pipeline_context.h: what every pipeline builder reads: the spec, the target, its tiles, the tensors.
#pragma once

#include <Halide.h>

#include <map>
#include <string>
#include <vector>

#include "attn/spec.h"
#include "attnc/core_algorithm.h"
#include "attnc/tile_config.h"
#include "attnc/tile_config_gpu.h"

namespace attnc {

// A pipeline's outputs by argument name (kernel_arguments / sequence_pipeline_args); the
// generator hands each to the output of that name.
using PipelineOutputs = std::map<std::string, Halide::Func>;

// The Halide type of an argument dtype ("f32", "i32", "u8", "i8", "f16", "bf16"). bits: f16 and bf16
// as UInt(16), their bits (GPU targets take them so, half_bits.h).
Halide::Type halide_type(const std::string &dtype, bool bits);

// One generator invocation, as the builders see it. The generator fills it once (configure's
// arguments, generate's target and tiles); builders only read it, and define and schedule Funcs.
struct PipelineContext {
  attn::Spec spec{};       // resolved
  Halide::Target target;   // the variant's
  std::string core_path;   // "tiles", "packed", "blocks" or "split_keys" (the generator's param)
  std::string role;        // per-sequence kernels: "attend", "paged" or "append"
  std::string tiles_text;  // tile overrides from attnc tune, or empty
  CpuTiles tiles{};        // cpu_tiles(), with the overrides and core_path's packing applied
  VectorUnit unit{};
  bool gpu = false;  // a CUDA or OpenCL target: GPU schedules, gpu_tiles
  GpuTiles gpu_tiles{};
  // Every input tensor as a Func, and its dims' extents (Halide order: innermost first).
  std::map<std::string, Halide::Func> inputs;
  // The input buffers' parameters, by name: what a schedule prefetches.
  std::map<std::string, Halide::Parameter> parameters;
  std::map<std::string, std::vector<Halide::Expr>> extents;

  Halide::Func input(const std::string &name) const { return inputs.at(name); }
  Halide::Func optional_input(const std::string &name) const;
  // The run-time extent of an input's dim (Halide order).
  Halide::Expr extent(const std::string &name, int dim) const { return extents.at(name).at(dim); }
  // A float input as f32 (inline: converted where it is read). f16 converts with F16C where the
  // target has it, bf16 by a shift, and on GPU targets both from their bits (half_bits.h); every
  // computation after that is fp32.
  Halide::Func input_f32(const std::string &name) const;
  // The spec's storage type: q/k/v/x, weights, biases and out.
  Halide::Type storage_type() const;
  // An f32 value as stored: rounded to nearest even, by integer operations on GPU targets.
  Halide::Expr to_storage(const Halide::Expr &value) const;

  // bf16 q, k and v multiplied as stored: in pairs (vdpbf16ps, Zen 4 class) or on AMX tiles
  // (Sapphire Rapids class) by the whole-row core and the q/k/v projections; every other
  // pipeline and dtype converts to fp32 first.
  bool uses_bf16_dot_products() const;
  // On an AMX target the products that cannot take tiles convert to fp32 instead of pairing:
  // Intel cores run vdpbf16ps at half the FMA's rate (bf16_dot_products).
  bool pairs_pay() const { return bf16_dot_products(target); }
  // The bf16 input itself where the target multiplies bf16 pairs, else undefined.
  Halide::Func bf16_input(const std::string &name) const;

  // The mask and modifier inputs, whichever the spec declared, into in.
  void add_mask_inputs(CoreInputs &in) const;
  // The tensors the spec's score_mod / mask_mod capture, and the mask_mod (issue 34), into in.
  void add_captured_inputs(CoreInputs &in) const;
  // The spec the core is defined from: with probs, the core also keeps each row's lse, which the
  // probs stage normalizes by (no lse output unless the spec asks for one). Without probs, the spec.
  attn::Spec core_spec() const;
};

}  // namespace attnc

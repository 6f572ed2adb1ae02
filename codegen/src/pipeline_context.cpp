// The helpers every pipeline builder shares: inputs as f32, storage rounding, bf16 choices, masks.
#include "attnc/pipeline_context.h"

#include "attnc/half_bits.h"

namespace attnc {

Halide::Type halide_type(const std::string &dtype, bool bits) {
  if (dtype == "i32") return Halide::Int(32);
  if (dtype == "u8") return Halide::UInt(8);
  if (dtype == "i8") return Halide::Int(8);
  if (dtype == "u64") return Halide::UInt(64);
  if (dtype == "f16") return bits ? Halide::UInt(16) : Halide::Float(16);
  if (dtype == "bf16") return bits ? Halide::UInt(16) : Halide::BFloat(16);
  return Halide::Float(32);
}

Halide::Func PipelineContext::optional_input(const std::string &name) const {
  return inputs.count(name) ? input(name) : Halide::Func();
}

Halide::Func PipelineContext::input_f32(const std::string &name) const {
  Halide::Func in = input(name);
  if (in.type() == Halide::Float(32)) return in;
  Halide::Func converted(name + "_f32");
  if (in.type() == Halide::UInt(16)) {
    converted(Halide::_) = f32_from_bits(in(Halide::_), spec.dtype);
  } else {
    converted(Halide::_) = Halide::cast<float>(in(Halide::_));
  }
  return converted;
}

Halide::Type PipelineContext::storage_type() const {
  return halide_type(attn::dtype_name(spec.dtype), gpu);
}

Halide::Expr PipelineContext::to_storage(const Halide::Expr &value) const {
  if (gpu && spec.dtype != attn::DType::f32) return bits_from_f32(value, spec.dtype);
  return Halide::cast(storage_type(), value);
}

bool PipelineContext::uses_bf16_dot_products() const {
  return spec.dtype == attn::DType::bf16 && !gpu && (bf16_dot_products(target) || amx_tiles(target));
}

Halide::Func PipelineContext::bf16_input(const std::string &name) const {
  return uses_bf16_dot_products() ? input(name) : Halide::Func();
}

void PipelineContext::add_mask_inputs(CoreInputs &in) const {
  in.masks =
      MaskInputs{optional_input("key_lengths"), optional_input("prefix_lengths"),
                 optional_input("segment_ids_q"), optional_input("segment_ids_k"), optional_input("mask")};
  in.alibi_slopes = optional_input("alibi_slopes");
  in.score_bias = optional_input("score_bias");
  in.scale = optional_input("scale");
  if (spec.has_dropout) {
    in.dropout.seed = input("seed");
    in.dropout.offset = input("offset");
    in.dropout.probability = spec.dropout;
    in.dropout.heads = spec.heads;
  }
}

attn::Spec PipelineContext::core_spec() const {
  attn::Spec s = spec;
  s.lse = s.lse || s.probs;
  return s;
}

}  // namespace attnc

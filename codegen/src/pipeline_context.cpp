// The helpers every pipeline builder shares: inputs as f32, storage rounding, bf16 choices, masks.
#include "attnc/pipeline_context.h"

#include <cstring>

#include "attnc/half_bits.h"

namespace attnc {

using Halide::Expr;

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
  add_captured_inputs(in);
}

void PipelineContext::add_captured_inputs(CoreInputs &in) const {
  for (int t = 0; t < spec.captured.count; ++t) {
    const std::string name(spec.captured.items[t].name,
                           strnlen(spec.captured.items[t].name, attn::max_input_name));
    CapturedTensor tensor{input(name), {}};
    const int rank = spec.captured.items[t].rank;
    for (int d = 0; d < rank; ++d) tensor.extents.push_back(extent(name, rank - 1 - d));
    in.captured[name] = tensor;
  }
  if (spec.mask_mod.empty()) return;
  if (spec.block_mask == attn::BlockMask::input) in.masks.block_mask = input("block_mask");
  // q is the row's key position (MaskPoint::query_pos); i its row, clamped into [0, Sq).
  in.masks.mask_mod = [mask_mod = spec.mask_mod, captured = in.captured, group = spec.heads / spec.kv_heads,
                       seq_q = in.seq_q, seq_k = in.seq_k](const MaskPoint &p) {
    const ExprPoint at{Expr(), p.batch,     p.head, p.head / group, p.query_pos,
                       p.key,  p.query_row, seq_q,  seq_k};
    return lower_expr(mask_mod, at, captured);
  };
  // Skipping: the bounds of a range of queries over every head and row (key_spans' view).
  auto queries = [mask_mod = spec.mask_mod, seq_q = in.seq_q, seq_k = in.seq_k](
                     const Expr &lo, const Expr &hi, const Expr &batch) {
    return PairBlock{lo, hi, Expr(), Expr(), Expr(), Expr(), Expr(), Expr(), batch, seq_q, seq_k};
  };
  in.masks.mask_mod_hull = [mask_mod = spec.mask_mod, queries](const Expr &lo, const Expr &hi,
                                                               const Expr &batch) {
    return mask_mod_key_hull(mask_mod, queries(lo, hi, batch));
  };
  in.masks.mask_mod_kept = [mask_mod = spec.mask_mod, queries](const Expr &lo, const Expr &hi,
                                                               const Expr &batch) {
    return mask_mod_kept_by_all(mask_mod, queries(lo, hi, batch));
  };
  in.masks.mask_mod_block = [mask_mod = spec.mask_mod](const PairBlock &block) {
    return mask_mod_on_block(mask_mod, block);
  };
}

attn::Spec PipelineContext::core_spec() const {
  attn::Spec s = spec;
  s.lse = s.lse || s.probs;
  return s;
}

}  // namespace attnc

// attnc/half_bits.h: f16 and bf16 values as their 16 bits, converted by integer operations (GPU targets).
#pragma once

#include <Halide.h>

#include "attn/spec.h"

namespace attnc {

// GPU targets read and write 16-bit float storage as UInt(16) bits: Halide's OpenCL code for a
// Float(16) buffer needs cl_khr_fp16 (PoCL lacks it), and BFloat(16) crashed LLVM's PTX lowering
// in Halide 21. These conversions are exact on every device: integer operations (and for f16
// subnormals an exact f32 product).

// The f32 value of 16 bits of `dtype` (f16 or bf16): exact, subnormals, infinities and NaNs
// (payload kept) included.
Halide::Expr f32_from_bits(const Halide::Expr &bits, attn::DType dtype);

// The 16 bits of `dtype` (f16 or bf16) nearest an f32 value, ties to even: overflow gives an
// infinity, f16 subnormals are rounded as such, NaN stays a (quiet) NaN.
Halide::Expr bits_from_f32(const Halide::Expr &value, attn::DType dtype);

}  // namespace attnc

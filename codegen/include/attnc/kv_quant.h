// attnc/kv_quant.h: quantized KV caches (issue 37): int8 codes with per-token scales, OCP fp8 e4m3 bytes.
#pragma once

#include <Halide.h>

#include "attn/spec.h"

namespace attnc {

// The f32 value of an OCP E4M3 ("e4m3fn") byte (UInt(8)): bias 7, subnormals m * 2^-9, 0x7F and
// 0xFF NaN, no infinities. Integer operations and one exact product: the same on every target.
Halide::Expr f32_from_e4m3(const Halide::Expr &byte);

// The same value through the target's f16 -> f32 conversion (vcvtph2ps with F16C, fcvtl on
// AArch64): the byte's bits placed in an f16's (sign 15, exponent and mantissa from bit 7) read
// E4M3 * 2^-8, subnormals included, exactly; then times 2^8. For CPU targets with the conversion.
Halide::Expr f32_from_e4m3_by_f16(const Halide::Expr &byte);

// The E4M3 byte nearest an f32 value, ties to even, saturated to +-448 (infinities included);
// NaN gives 0x7F with its sign.
Halide::Expr e4m3_from_f32(const Halide::Expr &value);

// A cache's values as f32, defined inline so that each core decodes where it loads its K/V tiles:
// codes(d, g, j, b) [.., KVH, D] in the cache's storage; scale(g, j, b) per token and KV head for
// int8, a scalar Func () for fp8_e4m3 (undefined for kv_dtype=same: codes converted as is).
// f16_conversion: decode E4M3 with f32_from_e4m3_by_f16 (the target converts f16 in hardware).
Halide::Func dequantized(const Halide::Func &codes, const Halide::Func &scale, attn::KvDType kv_dtype,
                         const std::string &name, bool f16_conversion = false);

// The new tokens' codes and scales for a quantized cache.
struct QuantizedSlots {
  Halide::Func codes;  // (d, g, p, b): int8 codes or e4m3 bytes
  Halide::Func
      scales;  // (g, p, b): int8's max |x| / 127 (NaN when x holds a NaN or an infinity); fp8: undefined
  Halide::Func amax_bits;  // int8: max over d of |x|'s f32 bits (integer order is |x|'s order, NaN above all)
};

// x(d, g, p, b) f32 [.., KVH, head_dim] quantized per token and head (int8) or by the scalar
// scale() (fp8_e4m3), as docs/DSL.md's "Quantized KV caches" says.
QuantizedSlots quantized(const Halide::Func &x, int head_dim, attn::KvDType kv_dtype,
                         const Halide::Func &scale, const std::string &name);

}  // namespace attnc

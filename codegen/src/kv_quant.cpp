// Quantized KV caches: the int8 and E4M3 encodings of the cache append and their decoding where keys are
// read.
#include "attnc/kv_quant.h"

namespace attnc {

using Halide::Expr;
using Halide::Func;

namespace {
// The largest finite f32's bits plus one: |x|'s bits at or above it are an infinity or a NaN.
constexpr uint32_t f32_inf_bits = 0x7f800000u;
// E4M3's largest finite magnitude (0x7E: exponent 15, mantissa 6 = 1.75 * 2^8 = 448).
constexpr int e4m3_max_finite = 0x7E, e4m3_nan = 0x7F;
// 2^-6, E4M3's smallest normal, as f32 bits; below it values are multiples of 2^-9.
constexpr uint32_t e4m3_min_normal_bits = 0x3c800000u;
// f32 exponent bias 127 minus E4M3's 7, in E4M3's (exponent << 3 | mantissa) units.
constexpr int exponent_rebias = (127 - 7) << 3;

Expr nan_f32() {
  return Halide::reinterpret<float>(Expr(0x7fc00000u));
}
}  // namespace

Expr f32_from_e4m3(const Expr &byte) {
  const Expr c = Halide::cast<uint32_t>(byte);
  const Expr sign = (c >> 7) << 31, magnitude = c & Expr(0x7fu);
  // Normal: exponent and mantissa move into f32's fields, rebiased. Subnormal (exponent 0): m * 2^-9.
  const Expr normal =
      Halide::reinterpret<float>(sign | ((magnitude + Expr(uint32_t{exponent_rebias})) << 20));
  const Expr subnormal = Halide::reinterpret<float>(
      sign | Halide::reinterpret<uint32_t>(Halide::cast<float>(magnitude) * (1.0f / 512.0f)));
  return Halide::select(magnitude == Expr(uint32_t{e4m3_nan}), nan_f32(), magnitude < Expr(8u), subnormal,
                        normal);
}

Expr f32_from_e4m3_by_f16(const Expr &byte) {
  const Expr c = Halide::cast<uint16_t>(byte), magnitude = c & Expr(uint16_t{0x7f});
  const Expr half_bits = ((c & Expr(uint16_t{0x80})) << 8) | (magnitude << 7);
  const Expr scaled = Halide::cast<float>(Halide::reinterpret(Halide::Float(16), half_bits)) * 256.0f;
  return Halide::select(magnitude == Expr(uint16_t{e4m3_nan}), nan_f32(), scaled);
}

Expr e4m3_from_f32(const Expr &value) {
  const Expr bits = Halide::reinterpret<uint32_t>(value);
  const Expr sign = Halide::cast<uint8_t>((bits >> 31) << 7), a = bits & Expr(0x7fffffffu);
  // Normal: round the 23-bit mantissa to 3 bits, ties to even (the carry may bump the exponent),
  // then rebias; at or above 448 + half a step, and infinities, saturate to 448.
  const Expr rounded = (a + Expr(0x7ffffu) + ((a >> 20) & Expr(1u))) >> 20;
  const Expr normal =
      Halide::cast<uint8_t>(Halide::min(Halide::cast<int32_t>(rounded) - exponent_rebias, e4m3_max_finite));
  // Subnormal: |x| * 2^9 is exact, rounded to an integer 0..8 (8 is 2^-6, the smallest normal's code).
  const Expr subnormal = Halide::cast<uint8_t>(Halide::round(Halide::reinterpret<float>(a) * 512.0f));
  const Expr magnitude = Halide::select(a > Expr(f32_inf_bits), Halide::cast<uint8_t>(e4m3_nan),
                                        a < Expr(e4m3_min_normal_bits), subnormal, normal);
  return sign | magnitude;
}

Func dequantized(const Func &codes, const Func &scale, attn::KvDType kv_dtype, const std::string &name,
                 bool f16_conversion) {
  Halide::Var d("d"), g("g"), j("j"), b("b");
  Func values(name);
  if (kv_dtype == attn::KvDType::int8) {
    values(d, g, j, b) = Halide::cast<float>(codes(d, g, j, b)) * scale(g, j, b);
  } else if (kv_dtype == attn::KvDType::fp8_e4m3) {
    // Intel Xeon (Sapphire Rapids class), B1 H32 KVH8 Lk8192 decode, 2 threads: the integer
    // decoding took 3.58 ms against 2.31 for int8 (per-lane selects and shifts per element).
    const Expr code = codes(d, g, j, b);
    values(d, g, j, b) = (f16_conversion ? f32_from_e4m3_by_f16(code) : f32_from_e4m3(code)) * scale();
  } else {
    values(d, g, j, b) = Halide::cast<float>(codes(d, g, j, b));
  }
  return values;
}

QuantizedSlots quantized(const Func &x, int head_dim, attn::KvDType kv_dtype, const Func &scale,
                         const std::string &name) {
  Halide::Var d("d"), g("g"), p("p"), b("b");
  QuantizedSlots slots{Func(name + "_codes"), Func(), Func()};
  if (kv_dtype == attn::KvDType::fp8_e4m3) {
    slots.codes(d, g, p, b) = e4m3_from_f32(x(d, g, p, b) / scale());
    return slots;
  }
  // max |x| over the head as f32 bits: integer comparisons see NaNs (fast math may not).
  Halide::RDom r(0, head_dim, "r");
  slots.amax_bits = Func(name + "_amax_bits");
  slots.amax_bits(g, p, b) =
      Halide::maximum(Halide::reinterpret<uint32_t>(x(r, g, p, b)) & Expr(0x7fffffffu));
  const Expr amax_bits = slots.amax_bits(g, p, b);
  slots.scales = Func(name + "_scales");
  slots.scales(g, p, b) = Halide::select(amax_bits >= Expr(f32_inf_bits), nan_f32(),
                                         Halide::reinterpret<float>(amax_bits) / 127.0f);
  // Zero (all-zero token) and non-finite scales store codes 0.
  const Expr usable = amax_bits > Expr(0u) && amax_bits < Expr(f32_inf_bits);
  const Expr code = Halide::clamp(Halide::round(x(d, g, p, b) / slots.scales(g, p, b)), -127.0f, 127.0f);
  slots.codes(d, g, p, b) = Halide::cast<int8_t>(Halide::select(usable, code, 0.0f));
  return slots;
}

}  // namespace attnc

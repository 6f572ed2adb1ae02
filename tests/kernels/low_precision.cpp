// low_precision.cpp: f16 / bf16 rounding and the low-precision calls of the kernel suites.
#include "low_precision.h"

#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <limits>

namespace attnc::test {

uint16_t f16_bits(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u)  // NaN: quiet, the top of its payload kept
    return static_cast<uint16_t>(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
  if (magnitude >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520, inf
  if (magnitude < 0x38800000u) {
    // Below 2^-14: a multiple of 2^-24 (subnormal, or 2^-14 itself when it rounds up). Scaling by
    // 2^24 is exact, and nearbyint rounds to nearest even in the default rounding mode.
    const float units = std::nearbyint(std::abs(x) * 16777216.0f);
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(units));
  }
  // Normal: add just under half an f16 ulp (plus one when the kept part is odd: ties to even),
  // rebias the exponent from 127 to 15 and drop the 13 extra mantissa bits. A carry into the
  // exponent is the right result (up to 65504, the largest below the inf case above).
  const uint32_t rounded = magnitude + 0xfffu + ((magnitude >> 13) & 1u) - ((127u - 15u) << 23);
  return static_cast<uint16_t>(sign | (rounded >> 13));
}

uint16_t bf16_bits(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x0040u);  // quiet NaN
  // Ties to even on the upper half; a carry out of the largest finite value gives inf.
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

float f16_value(uint16_t bits) {
  const int exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  float magnitude;
  if (exponent == 0)
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);
  else if (exponent == 31)
    magnitude = mantissa ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400), exponent - 25);
  return bits & 0x8000 ? -magnitude : magnitude;
}

float bf16_value(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

uint16_t to_bits(attn::DType dtype, float x) {
  return dtype == attn::DType::bf16 ? bf16_bits(x) : f16_bits(x);
}

float from_bits(attn::DType dtype, uint16_t bits) {
  return dtype == attn::DType::bf16 ? bf16_value(bits) : f16_value(bits);
}

float round_to(attn::DType dtype, float x) {
  return from_bits(dtype, to_bits(dtype, x));
}

attn_dtype runtime_dtype(attn::DType dtype) {
  return dtype == attn::DType::bf16 ? ATTN_BF16 : ATTN_F16;
}

double overflow_threshold(attn::DType dtype) {
  // Halfway between the largest finite value and the next power of two; the tie goes to the
  // even neighbour, which is that power of two: inf.
  return dtype == attn::DType::bf16 ? std::ldexp(1.0, 128) - std::ldexp(1.0, 119) : 65520.0;
}

bool is_storage_tensor(const std::string &name) {
  return name == "q" || name == "k" || name == "v" || name == "x" || name == "x_kv" || name == "out" ||
         name.rfind("w_", 0) == 0 || name.rfind("b_", 0) == 0;
}

Call storage_call(const attn::Spec &s, Call &f32_call) {
  Call call;
  call.index_tensors = f32_call.index_tensors;
  call.byte_tensors = f32_call.byte_tensors;
  call.scalars = f32_call.scalars;
  call.u64_scalars = f32_call.u64_scalars;
  call.bits_dtype = runtime_dtype(s.dtype);
  const uint16_t unread = to_bits(s.dtype, std::numeric_limits<float>::quiet_NaN());
  const uint16_t sentinel = to_bits(s.dtype, output_sentinel);
  for (auto &[name, tensor] : f32_call.tensors) {
    if (!is_storage_tensor(name)) {
      call.tensors.emplace(name, tensor);
      continue;
    }
    // The constructor fills every element with the padding value: out's logical elements too.
    BitsTensor bits(tensor.shape(), tensor.strides(), name == "out" ? sentinel : unread);
    if (name != "out") {
      for (int64_t n = 0; n < tensor.elements(); ++n) {
        bits.logical(n) = to_bits(s.dtype, tensor.logical(n));
        tensor.logical(n) = from_bits(s.dtype, bits.logical(n));
      }
    }
    call.bits_tensors.emplace(name, std::move(bits));
  }
  return call;
}

LowPrecisionRun run_low_precision(const attn::Spec &s, const attn_kernel *kernel, Call &f32_call) {
  LowPrecisionRun r{storage_call(s, f32_call)};
  const attn_status status = r.kernel_call.run(kernel);
  INFO("attn_run: ", status_name(status), ": ", last_error());
  REQUIRE(status == ATTN_OK);
  r.expected = expected_result(s, f32_call);
  for (float &x : r.expected.naive) x = round_to(s.dtype, x);
  const BitsTensor &out = r.kernel_call.bits_tensors.at("out");
  for (int64_t n = 0; n < out.elements(); ++n) r.out.push_back(from_bits(s.dtype, out.logical(n)));
  const double threshold = overflow_threshold(s.dtype);
  for (double exact : r.expected.exact) {
    const double magnitude = std::abs(exact);
    r.near_overflow += magnitude > 0.99 * threshold && magnitude < 1.01 * threshold;
    r.exact_saturated.push_back(magnitude >= threshold ? std::copysign(INFINITY, exact) : exact);
  }
  return r;
}

void check_low_precision(const attn::Spec &s, const LowPrecisionRun &run) {
  // Within 1% of the threshold, fp32's own error decides between the largest finite value and
  // inf: the cases keep away from it rather than accept either.
  CHECK(run.near_overflow == 0);
  const NonfiniteComparison out =
      compare_nonfinite([&](int64_t n) { return double(run.out[static_cast<size_t>(n)]); },
                        run.exact_saturated, run.expected.naive);
  CAPTURE(out);
  CHECK(out.pass());
  CHECK(run.kernel_call.bits_tensors.at("out").padding_intact());
  if (s.lse) {
    const LseComparison lse = compare_lse(run.kernel_call.tensors.at("lse"), run.expected);
    // compare_lse's rule, with 4 fp32 ulps of the worst row's lse added to its 1e-5: a kernel
    // may take scores to base 2 and back (two more roundings of a value the lse's size) and
    // scale q before the dot product, which the naive result does not. At ordinary magnitudes
    // the ulps are far below 1e-5; with scores near 1e36 (bf16's large cases) they are the bound.
    const float worst = std::abs(static_cast<float>(lse.worst_exact));
    const double ulps = 4.0 * (std::nextafter(worst, INFINITY) - worst);
    CAPTURE(lse);
    CAPTURE(ulps);
    CHECK(lse.nan_count == 0);
    CHECK(lse.inf_mismatches == 0);
    CHECK(lse.padding_intact);
    CHECK(lse.kernel_error <= lse.bound() + ulps);
  }
}

void run_and_check_in_dtype(const attn::Spec &s, const attn_kernel *kernel, Call &f32_call) {
  if (s.dtype == attn::DType::f32) {
    run_and_check(s, kernel, f32_call);
    return;
  }
  check_low_precision(s, run_low_precision(s, kernel, f32_call));
}

}  // namespace attnc::test

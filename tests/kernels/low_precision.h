// low_precision.h: f16 and bf16 for the kernel tests: rounding float to their bits and back, and
// calls whose storage-typed tensors the kernel gets in 16 bits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/runtime.h"
#include "attn/spec.h"
#include "kernel_test_support.h"

namespace attnc::test {

// float -> f16 / bf16 bits, rounded to nearest even. NaN stays NaN (quiet, sign kept); f16 gives
// ±inf from 65520 up (the tie between 65504 and 65536 rounds to the even 65536), and subnormals
// below 2^-14; bf16 has float's range, so only values within half a bf16 ulp of FLT_MAX and up
// round to ±inf.
uint16_t f16_bits(float x);
uint16_t bf16_bits(float x);
// Bits -> the float they denote (exact: both types are subsets of float).
float f16_value(uint16_t bits);
float bf16_value(uint16_t bits);

// The storage type of a low-precision spec (f16 or bf16), for the 16-bit helpers below.
uint16_t to_bits(attn::DType dtype, float x);
float from_bits(attn::DType dtype, uint16_t bits);
float round_to(attn::DType dtype, float x);  // from_bits(dtype, to_bits(dtype, x))
attn_dtype runtime_dtype(attn::DType dtype);
// The smallest magnitude that rounds to inf in the dtype (65520 for f16; bf16's is above FLT_MAX
// in double: 2^128 - 2^119).
double overflow_threshold(attn::DType dtype);

// The names of a spec's tensors stored in its dtype: q, k, v (core) or x, x_kv, weights, biases
// (block), and out. lse, alibi_slopes and score_bias stay f32.
bool is_storage_tensor(const std::string &name);

// Rounds the storage tensors of an f32 call (make_core_call / make_block_call, add_runtime_inputs)
// to the spec's dtype in place, so that the fp64 reference and the naive fp32 result read what
// the kernel reads, and returns the kernel's call: those tensors as 16-bit copies (same strides,
// NaN in the padding), out 16-bit holding output_sentinel's bits, the other tensors as they are.
Call storage_call(const attn::Spec &resolved, Call &f32_call);

// The outcome of a low-precision run, for the checks that follow it.
struct LowPrecisionRun {
  Call kernel_call;                     // the kernel's tensors after the run (out in 16 bits, lse f32)
  Expected expected;                    // from the rounded f32 call; naive out rounded to the dtype
  std::vector<float> out;               // the kernel's out, widened, dense in logical order
  std::vector<double> exact_saturated;  // exact, with ±inf where it rounds to ±inf in the dtype
  int64_t near_overflow = 0;            // exact values within 1% of the overflow threshold (cases avoid them)
};

// Rounds the call, runs the kernel (it must succeed) and computes the reference: the run's
// results, unchecked.
LowPrecisionRun run_low_precision(const attn::Spec &resolved, const attn_kernel *kernel, Call &f32_call);

// The pass rule of issue 20, as doctest CHECKs: out has no NaN and no padding written; where the
// exact value rounds to ±inf in the dtype, out is that infinity; elsewhere
//   max |out - exact| <= 2 max |round(naive fp32) - exact| + 1e-5,
// exact from the fp64 reference on the same rounded inputs. lse, which stays f32, follows the f32
// suites' rule (compare_lse: the same -inf rows, error within 2x the naive fp32 lse's + 1e-5)
// with a slack of 4 fp32 ulps of the lse added for huge scores (see the definition).
void check_low_precision(const attn::Spec &resolved, const LowPrecisionRun &run);

// Runs an f32 call (make_core_call / make_block_call, add_runtime_inputs) in the spec's storage
// type and checks it: run_and_check for f32 specs, run_low_precision and check_low_precision for
// f16 and bf16.
void run_and_check_in_dtype(const attn::Spec &resolved, const attn_kernel *kernel, Call &f32_call);

}  // namespace attnc::test

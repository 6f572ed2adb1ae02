// fake_kernel.h: hand-written kernel tables standing in for generated ones in the runtime tests.
#pragma once

#include <cstdint>
#include <vector>

#include "attn/kernel_abi.h"

namespace fake {

// "fake_core": q [B, Sq, 2, 4], k [B, Sk, 1, 4], v [B, Sk, 1, 3] -> out [B, Sq, 2, 3] with
//   out[b, s, h, e] = q[b, s, h, e] + 10 * v[b, Sk - 1, 0, e] + 100 * k[b, 0, 0, 3]
// computed from the halide_buffer_t's alone, so that the runtime's translation of shapes and
// strides is what the result checks. Registered at load time, as generated entries are.
constexpr int heads = 2, head_dim = 4, head_dim_v = 3;
extern const attn_kernel_desc core;

// What the last run of core saw in out's buffer, innermost dim first.
struct Observed {
  int runs = 0;
  int32_t dimensions = 0;
  int32_t extent[4] = {}, stride[4] = {};
  uint8_t type_code = 0, type_bits = 0;
  uint16_t type_lanes = 0;
  const void *host = nullptr;
  int threads = -1;  // the last set_num_threads
};
extern Observed observed;

// Same arguments; run records "fake kernel ran out of memory" and returns a Halide error.
extern const attn_kernel_desc failing;
// Same arguments; run returns Halide error -3 without a message.
extern const attn_kernel_desc silent_failure;

// A caller's view of one core call: contiguous tensors filled with distinct values, out filled
// with a sentinel that every failed call must leave in place.
struct CoreCall {
  static constexpr float sentinel = -777.0f;
  int64_t batch = 2, seq_q = 3, seq_k = 5;
  std::vector<int64_t> q_shape, k_shape, v_shape, out_shape;
  std::vector<float> q, k, v, out;
  std::vector<attn_arg> args;

  CoreCall();
  // Rebuilds args from the members (after a test changed a shape or a vector).
  void bind();
  attn_status run(const attn_kernel_desc &desc = core);
  bool out_untouched() const;
  // The expected out[b, s, h, e] from contiguous q, k, v.
  float expected(int64_t b, int64_t s, int64_t h, int64_t e) const;
};

const attn_kernel *find(const char *id);

}  // namespace fake

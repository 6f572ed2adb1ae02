// fake_masked_kernel.h: hand-written kernel tables with broadcast arguments, and value checks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/kernel_abi.h"
#include "fake_kernel.h"

namespace fake {

// "fake_masked": mask u8 [B, H, Sq, Sk] (dim_names B, H, Sq, Sk; H fixed at heads; B and H
// broadcast, min rank 2), then core's q, k, v -> out [B, Sq, H, Dv] with
//   out[b, s, h, e] = q[b, s, h, e] + sum over keys j with mask[b, h, s, j] != 0 of v[b, j, 0, e]
// read through the halide_buffer_t's alone. The mask comes first, so its broadcast sizes come
// from tensors checked after it.
extern const attn_kernel_desc masked;
// "fake_masked_h_only": the same, but only H broadcasts and min_rank is 3: [B, 1, Sq, Sk] works,
// while rank 3 would leave out B, which does not broadcast.
extern const attn_kernel_desc masked_h_only;
// "fake_group_bias": bias f32 [G, 4] (G broadcast, min rank 1) -> out f32 [4], out[e] = the sum
// over g of bias[g, e]. No other tensor names G.
extern const attn_kernel_desc group_bias;

// What a run saw in one input buffer, Halide order (innermost dim first).
struct BufferSeen {
  int runs = 0;
  int32_t dimensions = 0;
  int32_t extent[4] = {}, stride[4] = {};
  const void *host = nullptr;
};
extern BufferSeen mask_seen;  // the last fake_masked or fake_masked_h_only run's mask
extern BufferSeen bias_seen;  // the last fake_group_bias run's bias

// Core's arguments; run records requirement_message and returns Halide's
// halide_error_code_requirement_failed, as a generated kernel's require() does.
extern const attn_kernel_desc invalid_value;
constexpr const char *requirement_message =
    "Requirement Failed: (key_lengths(1) <= 5) key_lengths must be at most Sk";
// The same without a message.
extern const attn_kernel_desc invalid_value_silent;

// One masked call: core's tensors plus a mask of the caller's shape, values 0 or 1.
struct MaskedCall {
  CoreCall core;
  std::vector<int64_t> mask_shape;
  std::vector<uint8_t> mask;
  std::vector<attn_arg> args;

  explicit MaskedCall(std::vector<int64_t> shape);
  attn_status run(const attn_kernel_desc &desc = masked);
  // out[b, s, h, e] for a mask whose caller dim j is declared dim declared[j] (the test's own
  // statement of the rank rule, not the runtime's).
  float expected(const std::vector<int> &declared, int64_t b, int64_t s, int64_t h, int64_t e) const;
};

}  // namespace fake

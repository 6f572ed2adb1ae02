// random_inputs.h: runtime mask inputs beyond add_runtime_inputs' defaults (edge lengths, unsorted
// or extreme segment ids, sparse or dense masks), as the tensor contract allows them.
#pragma once

#include <cstdint>
#include <ostream>
#include <random>

#include "kernel_test_support.h"

namespace attnc::test {

// How a case's runtime mask inputs are drawn.
struct InputStyle {
  // key_lengths / prefix_lengths: uniform in [0, Sk] (add_runtime_inputs), or each one of
  // {0, 1, Sk - 1, Sk} (clamped to [0, Sk]).
  bool edge_lengths = false;
  // segment ids: 0 sorted runs of up to 4 documents (add_runtime_inputs), 1 unsorted ids in [0, 3),
  // 2 unsorted ids from {INT32_MIN, -1, 0, INT32_MAX}.
  int ids = 0;
  // tensor mask: the percentage of kept pairs; 70 is add_runtime_inputs' own draw, kept as it is.
  int mask_keep_percent = 70;
};
std::ostream &operator<<(std::ostream &os, const InputStyle &style);

// Draws a style: each part off (add_runtime_inputs' defaults) about half the time.
InputStyle draw_input_style(std::mt19937_64 &rng);

// Redraws the runtime inputs that `call` (made by add_runtime_inputs) holds, in `style`.
void apply_input_style(const InputStyle &style, Call &call, std::mt19937 &rng);

}  // namespace attnc::test

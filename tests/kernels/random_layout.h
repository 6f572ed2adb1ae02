// random_layout.h: the memory layouts the sweep gives activations and outputs: dense, padded, outer
// dims permuted, batch broadcast (stride 0), all within the contract's "any non-negative outer stride".
#pragma once

#include <ostream>

#include "kernel_test_support.h"

namespace attnc::test {

enum class Layout {
  dense,
  padded,           // outer strides a few elements past dense (make_core_call's padded layout)
  heads_outer,      // core: q, k, v, out stored [B, H, S, D] (as a head split leaves them) and read
                    // as [B, S, H, D]; block: x, out stored [S, B, M] (sequence-first); padded
  batch_broadcast,  // core: k and v with batch stride 0 (one cache for the whole batch); block: x
};
std::ostream &operator<<(std::ostream &os, Layout layout);

// Whether the call's other tensors (weights, runtime inputs, lse) are made padded.
inline bool padded_rest(Layout layout) {
  return layout != Layout::dense;
}

// Moves the call's activations and outputs into `layout`, logical values unchanged (where a stride
// of 0 makes several indices one element, the last one written is what all of them read).
void apply_layout(Layout layout, Call &call);

}  // namespace attnc::test

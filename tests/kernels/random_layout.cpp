// random_layout.cpp: re-laying a call's tensors in permuted or broadcast strides.
#include "random_layout.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace attnc::test {

std::ostream &operator<<(std::ostream &os, Layout layout) {
  switch (layout) {
    case Layout::dense:
      return os << "dense";
    case Layout::padded:
      return os << "padded strides";
    case Layout::heads_outer:
      return os << "outer dims permuted";
    case Layout::batch_broadcast:
      return os << "batch stride 0";
  }
  return os;
}

namespace {

// Strides for `shape` stored with its outer dims in `memory_order` (outermost first; the innermost
// dim stays innermost and contiguous), each dim `pad` elements past the one inside it.
std::vector<int64_t> strides_in_order(const std::vector<int64_t> &shape, const std::vector<int> &memory_order,
                                      int64_t pad) {
  std::vector<int64_t> strides(shape.size());
  strides.back() = 1;
  int64_t extent = shape.back() + pad;
  for (auto d = memory_order.rbegin(); d != memory_order.rend(); ++d) {
    strides[static_cast<size_t>(*d)] = extent;
    extent = extent * shape[static_cast<size_t>(*d)] + pad;
  }
  return strides;
}

void relayout(Call &call, const std::string &name, const std::vector<int> &memory_order,
              bool broadcast_batch) {
  auto it = call.tensors.find(name);
  if (it == call.tensors.end()) return;
  Tensor &old = it->second;
  std::vector<int64_t> strides = strides_in_order(old.shape(), memory_order, 1);
  if (broadcast_batch) strides[0] = 0;
  const bool output = name == "out" || name == "lse";
  Tensor moved(old.shape(), strides, output ? output_sentinel : NAN);
  for (int64_t n = 0; n < old.elements(); ++n) moved.logical(n) = old.logical(n);
  it->second = std::move(moved);
}

}  // namespace

void apply_layout(Layout layout, Call &call) {
  const bool core = call.tensors.count("q") != 0;
  switch (layout) {
    case Layout::dense:
    case Layout::padded:
      return;
    case Layout::heads_outer:
      if (core)
        for (const char *name : {"q", "k", "v", "out"}) relayout(call, name, {0, 2, 1}, false);
      else
        for (const char *name : {"x", "out"}) relayout(call, name, {1, 0}, false);
      return;
    case Layout::batch_broadcast:
      if (core) {
        relayout(call, "k", {0, 1, 2}, true);
        relayout(call, "v", {0, 1, 2}, true);
      } else {
        relayout(call, "x", {0, 1}, true);
      }
      return;
  }
}

}  // namespace attnc::test

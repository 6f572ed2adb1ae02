// random_inputs.cpp: redrawing a call's runtime mask inputs in a case's input style.
#include "random_inputs.h"

#include <climits>

namespace attnc::test {

std::ostream &operator<<(std::ostream &os, const InputStyle &style) {
  static const char *const ids[] = {"sorted ids", "unsorted ids", "extreme ids"};
  return os << (style.edge_lengths ? "edge lengths" : "uniform lengths") << ", " << ids[style.ids]
            << ", mask keeps " << style.mask_keep_percent << "%";
}

InputStyle draw_input_style(std::mt19937_64 &rng) {
  auto pick = [&rng](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  InputStyle style;
  style.edge_lengths = pick(2) == 1;
  style.ids = pick(2) == 0 ? 0 : 1 + pick(2);
  constexpr int keep_percents[] = {0, 3, 30, 97, 100};
  if (pick(2) == 1) style.mask_keep_percent = keep_percents[pick(5)];
  return style;
}

namespace {

void redraw_lengths(IndexTensor &lengths, int64_t seq_k, std::mt19937 &rng) {
  const int64_t edges[] = {0, 1, seq_k - 1, seq_k};
  std::uniform_int_distribution<int> edge(0, 3);
  for (int64_t b = 0; b < lengths.elements(); ++b) {
    const int64_t length = edges[edge(rng)];
    lengths.logical(b) = static_cast<int32_t>(length < 0 ? 0 : length > seq_k ? seq_k : length);
  }
}

void redraw_ids(IndexTensor &ids, int style, std::mt19937 &rng) {
  constexpr int32_t extremes[] = {INT32_MIN, -1, 0, INT32_MAX};
  std::uniform_int_distribution<int> pick(0, style == 1 ? 2 : 3);
  for (int64_t n = 0; n < ids.elements(); ++n) ids.logical(n) = style == 1 ? pick(rng) : extremes[pick(rng)];
}

}  // namespace

void apply_input_style(const InputStyle &style, Call &call, std::mt19937 &rng) {
  auto index = [&call](const char *name) {
    auto it = call.index_tensors.find(name);
    return it == call.index_tensors.end() ? nullptr : &it->second;
  };
  if (style.edge_lengths) {
    // Sk: the keys' seq dim (core), or x's (block, where Sk = S).
    const auto k = call.tensors.find("k");
    const auto x = call.tensors.find("x");
    const int64_t seq_k = k != call.tensors.end() ? k->second.shape()[1] : x->second.shape()[1];
    for (const char *name : {"key_lengths", "prefix_lengths"})
      if (IndexTensor *t = index(name)) redraw_lengths(*t, seq_k, rng);
  }
  if (style.ids != 0)
    for (const char *name : {"segment_ids_q", "segment_ids_k"})
      if (IndexTensor *t = index(name)) redraw_ids(*t, style.ids, rng);
  if (auto it = call.byte_tensors.find("mask");
      it != call.byte_tensors.end() && style.mask_keep_percent != 70) {
    std::bernoulli_distribution keep(style.mask_keep_percent / 100.0);
    std::uniform_int_distribution<int> value(1, 255);
    ByteTensor &mask = it->second;
    for (int64_t n = 0; n < mask.elements(); ++n)
      mask.logical(n) = keep(rng) ? static_cast<uint8_t>(value(rng)) : 0;
  }
}

}  // namespace attnc::test

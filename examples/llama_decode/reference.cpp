// reference.cpp: fp64 causal GQA attention with neox RoPE over a sequence's un-rotated history.
#include "reference.h"

#include <algorithm>
#include <cmath>

#include "rope.h"

namespace llama {

std::vector<double> attention_reference(const float *q, int sq, const float *k_history,
                                        const float *v_history, int length, const AttentionShape &shape) {
  const int H = shape.heads, KVH = shape.kv_heads, D = shape.head_dim, group = H / KVH;
  // Rotated keys of every token, in double.
  std::vector<double> k(k_history, k_history + static_cast<size_t>(length) * KVH * D);
  for (int t = 0; t < length; ++t)
    for (int g = 0; g < KVH; ++g)
      rope_neox(&k[(static_cast<size_t>(t) * KVH + g) * D], t, D, shape.rope_theta);
  std::vector<double> out(static_cast<size_t>(sq) * H * D, 0.0), row(D), p(length);
  const double scale = 1.0 / std::sqrt(double(D));
  for (int i = 0; i < sq; ++i) {
    const int position = length - sq + i;
    for (int h = 0; h < H; ++h) {
      const float *qi = q + (static_cast<size_t>(i) * H + h) * D;
      std::copy(qi, qi + D, row.begin());
      rope_neox(row.data(), position, D, shape.rope_theta);
      const int g = h / group;
      double mx = -INFINITY, sum = 0;
      for (int t = 0; t <= position; ++t) {
        double dot = 0;
        for (int d = 0; d < D; ++d) dot += row[d] * k[(static_cast<size_t>(t) * KVH + g) * D + d];
        mx = std::max(mx, p[t] = dot * scale);
      }
      for (int t = 0; t <= position; ++t) sum += p[t] = std::exp(p[t] - mx);
      double *o = &out[(static_cast<size_t>(i) * H + h) * D];
      for (int t = 0; t <= position; ++t)
        for (int d = 0; d < D; ++d)
          o[d] += p[t] / sum * double(v_history[(static_cast<size_t>(t) * KVH + g) * D + d]);
    }
  }
  return out;
}

}  // namespace llama

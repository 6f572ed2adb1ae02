// sequence_reference.cpp: rotary embeddings and one sequence's attention, written from the contract.
#include "sequence_reference.h"

#include <cmath>
#include <limits>

namespace attnc::reference {

float rope_angle(const RopeOptions &rope, int64_t position, int pair) {
  const float exponent = static_cast<float>(-2 * pair) / static_cast<float>(rope.dim);
  const float inv_freq =
      static_cast<float>(std::pow(static_cast<double>(rope.theta), static_cast<double>(exponent)));
  return static_cast<float>(position) * inv_freq;
}

template <class T>
void rope_rotate(T *x, int head_dim, int64_t position, const RopeOptions &rope) {
  if (rope.kind == attn::Rope::none) return;
  const int half = rope.dim / 2;
  std::vector<T> in(x, x + head_dim);
  for (int i = 0; i < half; ++i) {
    const double angle = rope_angle(rope, position, i);
    const T c = static_cast<T>(std::cos(angle)), s = static_cast<T>(std::sin(angle));
    // neox: (i, i + half); interleaved (GPT-J): (2i, 2i + 1).
    const int a = rope.kind == attn::Rope::neox ? i : 2 * i;
    const int b = rope.kind == attn::Rope::neox ? i + half : 2 * i + 1;
    x[a] = in[a] * c - in[b] * s;
    x[b] = in[b] * c + in[a] * s;
  }
}

template <class T>
void attend_sequence(const std::vector<T> &q, const std::vector<T> &k, const std::vector<T> &v, int seq_q,
                     int seq_k, int heads, int kv_heads, int head_dim, int head_dim_v, const Options &o,
                     T *out, T *lse) {
  const int group = heads / kv_heads;
  std::vector<T> scores(static_cast<size_t>(seq_k));
  std::vector<bool> kept(static_cast<size_t>(seq_k));
  for (int i = 0; i < seq_q; ++i)
    for (int h = 0; h < heads; ++h) {
      const int g = h / group;
      const int64_t q_pos = int64_t{seq_k} - seq_q + i;
      T max = -std::numeric_limits<T>::infinity();
      bool any = false;
      for (int j = 0; j < seq_k; ++j) {
        Pair pair;
        pair.head = h;
        pair.row = i;
        pair.key = j;
        pair.q_pos = q_pos;
        pair.key_length = seq_k;
        kept[j] = keeps(o.mask, o.mask_block, o.inputs, pair);
        if (!kept[j]) continue;
        T dot = 0;
        for (int d = 0; d < head_dim; ++d)
          dot += q[(size_t(i) * heads + h) * head_dim + d] * k[(size_t(j) * kv_heads + g) * head_dim + d];
        T s = dot * static_cast<T>(o.scale);
        if (o.softcap > 0) s = static_cast<T>(o.softcap) * std::tanh(s / static_cast<T>(o.softcap));
        if (o.alibi) s -= static_cast<T>(o.inputs.alibi_slopes.at(h)) * static_cast<T>(std::abs(q_pos - j));
        scores[j] = s;
        max = any ? std::max(max, s) : s;
        any = true;
      }
      T *row = out + (size_t(i) * heads + h) * head_dim_v;
      for (int e = 0; e < head_dim_v; ++e) row[e] = 0;
      if (!any) {
        if (lse != nullptr) lse[size_t(i) * heads + h] = -std::numeric_limits<T>::infinity();
        continue;
      }
      T sum = 0;
      for (int j = 0; j < seq_k; ++j) {
        if (!kept[j]) continue;
        const T p = std::exp(scores[j] - max);
        sum += p;
        for (int e = 0; e < head_dim_v; ++e) row[e] += p * v[(size_t(j) * kv_heads + g) * head_dim_v + e];
      }
      for (int e = 0; e < head_dim_v; ++e) row[e] /= sum;
      if (lse != nullptr) lse[size_t(i) * heads + h] = max + std::log(sum);
    }
}

template void rope_rotate<double>(double *, int, int64_t, const RopeOptions &);
template void rope_rotate<float>(float *, int, int64_t, const RopeOptions &);
template void attend_sequence<double>(const std::vector<double> &, const std::vector<double> &,
                                      const std::vector<double> &, int, int, int, int, int, int,
                                      const Options &, double *, double *);
template void attend_sequence<float>(const std::vector<float> &, const std::vector<float> &,
                                     const std::vector<float> &, int, int, int, int, int, int,
                                     const Options &, float *, float *);

}  // namespace attnc::reference

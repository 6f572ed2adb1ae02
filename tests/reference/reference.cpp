// reference.cpp: plain loops over the contract, instantiated in double (reference) and float (naive).
#include "reference.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace attnc::reference {
namespace {

// A strided rank-4 view of T: the float inputs, or the projected heads of the block form.
template <class T>
struct View4 {
  const T *data = nullptr;
  std::array<int64_t, 4> shape{};
  std::array<int64_t, 4> strides{};

  const T *row(int64_t i0, int64_t i1, int64_t i2) const {
    return data + i0 * strides[0] + i1 * strides[1] + i2 * strides[2];
  }
};

View4<float> as_view4(const TensorView &t, const char *what) {
  if (t.rank != 4 || t.data == nullptr)
    throw std::invalid_argument(std::string(what) + " must be a rank-4 view");
  return View4<float>{t.data, t.shape, t.strides};
}

template <class T>
View4<T> dense_view4(const std::vector<T> &data, int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
  return View4<T>{data.data(), {d0, d1, d2, d3}, {d1 * d2 * d3, d2 * d3, d3, 1}};
}

// The core, computing in T whatever the storage type In.
template <class T, class In>
std::vector<T> attend(const View4<In> &q, const View4<In> &k, const View4<In> &v, T scale,
                      const attn::Mask &mask) {
  const int64_t batch = q.shape[0], seq_q = q.shape[1], heads = q.shape[2], head_dim = q.shape[3];
  const int64_t seq_k = k.shape[1], kv_heads = k.shape[2], head_dim_v = v.shape[3];
  if (k.shape[0] != batch || v.shape[0] != batch || v.shape[1] != seq_k || v.shape[2] != kv_heads ||
      k.shape[3] != head_dim || kv_heads == 0 || heads % kv_heads != 0)
    throw std::invalid_argument("core reference: q, k and v shapes disagree");
  const int64_t group = heads / kv_heads;
  const int64_t qs = q.strides[3], ks = k.strides[3], vs = v.strides[3];

  std::vector<T> out(static_cast<size_t>(batch * seq_q * heads * head_dim_v), T(0));
  std::vector<T> weight(static_cast<size_t>(seq_k));
  std::vector<char> kept(static_cast<size_t>(seq_k));
  std::vector<T> acc(static_cast<size_t>(head_dim_v));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < seq_q; ++i) {
      const int64_t q_pos = i + seq_k - seq_q;
      for (int64_t h = 0; h < heads; ++h) {
        const int64_t kvh = h / group;
        const In *q_row = q.row(b, i, h);
        T running_max = -std::numeric_limits<T>::infinity();
        bool any_kept = false;
        for (int64_t j = 0; j < seq_k; ++j) {
          kept[j] = keeps(mask, q_pos, j);
          if (!kept[j]) continue;
          const In *k_row = k.row(b, j, kvh);
          T dot = 0;
          for (int64_t d = 0; d < head_dim; ++d) dot += T(q_row[d * qs]) * T(k_row[d * ks]);
          weight[j] = dot * scale;
          if (!any_kept || weight[j] > running_max) running_max = weight[j];
          any_kept = true;
        }
        T *out_row = &out[static_cast<size_t>(((b * seq_q + i) * heads + h) * head_dim_v)];
        if (!any_kept) continue;  // every key masked: the row stays 0
        T running_sum = 0;
        for (int64_t j = 0; j < seq_k; ++j) {
          if (!kept[j]) continue;
          weight[j] = std::exp(weight[j] - running_max);
          running_sum += weight[j];
        }
        for (T &a : acc) a = 0;
        for (int64_t j = 0; j < seq_k; ++j) {
          if (!kept[j]) continue;
          const In *v_row = v.row(b, j, kvh);
          for (int64_t e = 0; e < head_dim_v; ++e) acc[e] += weight[j] * T(v_row[e * vs]);
        }
        for (int64_t e = 0; e < head_dim_v; ++e) out_row[e] = acc[e] / running_sum;
      }
    }
  }
  return out;
}

template <class T>
std::vector<T> core(const TensorView &q, const TensorView &k, const TensorView &v, T scale,
                    const attn::Mask &mask) {
  return attend<T, float>(as_view4(q, "q"), as_view4(k, "k"), as_view4(v, "v"), scale, mask);
}

// y[b, s, r] = Σ_c x[b, s, c] · w[first_row + r, c] + bias[first_row + r], r < rows: dense [B, S, rows].
template <class T>
std::vector<T> project(const TensorView &x, const TensorView &w, const TensorView &bias, int64_t first_row,
                       int64_t rows) {
  const int64_t batch = x.shape[0], seq = x.shape[1], in_features = x.shape[2];
  if (w.rank != 2 || w.shape[1] != in_features || w.shape[0] < first_row + rows)
    throw std::invalid_argument("block reference: a weight's shape does not fit x");
  if (!bias.empty() && (bias.rank != 1 || bias.shape[0] < first_row + rows))
    throw std::invalid_argument("block reference: a bias's shape does not fit its weight");
  std::vector<T> y(static_cast<size_t>(batch * seq * rows));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t s = 0; s < seq; ++s)
      for (int64_t r = 0; r < rows; ++r) {
        T sum = bias.empty() ? T(0) : T(bias.at(first_row + r));
        for (int64_t c = 0; c < in_features; ++c) sum += T(x.at(b, s, c)) * T(w.at(first_row + r, c));
        y[static_cast<size_t>((b * seq + s) * rows + r)] = sum;
      }
  return y;
}

template <class T>
std::vector<T> block(const TensorView &x, const BlockWeights &w, const BlockShape &shape, T scale,
                     const attn::Mask &mask) {
  if (x.rank != 3 || x.data == nullptr)
    throw std::invalid_argument("block reference: x must be a rank-3 view");
  const int64_t batch = x.shape[0], seq = x.shape[1], d_model = x.shape[2];
  const int64_t heads = shape.heads, kv_heads = shape.kv_heads, head_dim = shape.head_dim,
                head_dim_v = shape.head_dim_v;
  const int64_t q_rows = heads * head_dim, k_rows = kv_heads * head_dim, v_rows = kv_heads * head_dim_v;

  std::vector<T> q, k, v;
  if (!w.w_qkv.empty()) {
    q = project<T>(x, w.w_qkv, w.b_qkv, 0, q_rows);
    k = project<T>(x, w.w_qkv, w.b_qkv, q_rows, k_rows);
    v = project<T>(x, w.w_qkv, w.b_qkv, q_rows + k_rows, v_rows);
  } else {
    q = project<T>(x, w.w_q, w.b_q, 0, q_rows);
    k = project<T>(x, w.w_k, w.b_k, 0, k_rows);
    v = project<T>(x, w.w_v, w.b_v, 0, v_rows);
  }
  // [B, S, H*D] is [B, S, H, D] with head h in features h*D .. h*D+D-1; likewise the merge.
  const std::vector<T> merged = attend<T, T>(dense_view4(q, batch, seq, heads, head_dim),
                                             dense_view4(k, batch, seq, kv_heads, head_dim),
                                             dense_view4(v, batch, seq, kv_heads, head_dim_v), scale, mask);
  const int64_t merged_width = heads * head_dim_v;
  if (w.w_o.rank != 2 || w.w_o.shape[0] != d_model || w.w_o.shape[1] != merged_width)
    throw std::invalid_argument("block reference: w_o must be [d_model, heads * head_dim_v]");
  std::vector<T> out(static_cast<size_t>(batch * seq * d_model));
  for (int64_t t = 0; t < batch * seq; ++t) {
    const T *merged_row = &merged[static_cast<size_t>(t * merged_width)];
    for (int64_t m = 0; m < d_model; ++m) {
      T sum = w.b_o.empty() ? T(0) : T(w.b_o.at(m));
      for (int64_t c = 0; c < merged_width; ++c) sum += merged_row[c] * T(w.w_o.at(m, c));
      out[static_cast<size_t>(t * d_model + m)] = sum;
    }
  }
  return out;
}

}  // namespace

TensorView TensorView::dense(const float *data, std::initializer_list<int64_t> shape) {
  TensorView t;
  t.data = data;
  t.rank = static_cast<int>(shape.size());
  int d = 0;
  for (int64_t s : shape) t.shape[d++] = s;
  int64_t stride = 1;
  for (d = t.rank - 1; d >= 0; --d) {
    t.strides[d] = stride;
    stride *= t.shape[d];
  }
  return t;
}

TensorView TensorView::strided(const float *data, std::initializer_list<int64_t> shape,
                               std::initializer_list<int64_t> strides) {
  if (shape.size() != strides.size() || shape.size() > 4)
    throw std::invalid_argument("TensorView: shape and strides must have one entry per dim, at most 4");
  TensorView t = dense(data, shape);
  int d = 0;
  for (int64_t s : strides) t.strides[d++] = s;
  return t;
}

bool keeps(const attn::Mask &mask, int64_t q_pos, int64_t k) {
  if (mask.empty()) return true;
  bool value[attn::Mask::capacity] = {};
  for (int n = 0; n < mask.count; ++n) {
    const attn::MaskNode &node = mask.nodes[n];
    switch (node.op) {
      case attn::MaskOp::window:
        value[n] = (node.left < 0 || k >= q_pos - node.left) && (node.right < 0 || k <= q_pos + node.right);
        break;
      case attn::MaskOp::both:
        value[n] = value[node.lhs] && value[node.rhs];
        break;
      case attn::MaskOp::either:
        value[n] = value[node.lhs] || value[node.rhs];
        break;
    }
  }
  return value[mask.root()];
}

double default_scale(int head_dim) {
  return 1.0 / std::sqrt(static_cast<double>(head_dim));
}

std::vector<double> core_reference(const TensorView &q, const TensorView &k, const TensorView &v,
                                   double scale, const attn::Mask &mask) {
  return core<double>(q, k, v, scale, mask);
}

std::vector<float> core_naive_f32(const TensorView &q, const TensorView &k, const TensorView &v, float scale,
                                  const attn::Mask &mask) {
  return core<float>(q, k, v, scale, mask);
}

std::vector<double> block_reference(const TensorView &x, const BlockWeights &w, const BlockShape &shape,
                                    double scale, const attn::Mask &mask) {
  return block<double>(x, w, shape, scale, mask);
}

std::vector<float> block_naive_f32(const TensorView &x, const BlockWeights &w, const BlockShape &shape,
                                   float scale, const attn::Mask &mask) {
  return block<float>(x, w, shape, scale, mask);
}

}  // namespace attnc::reference

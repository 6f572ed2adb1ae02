// backward_reference.cpp: the backward as plain loops per (batch, query row, head), in double and float.
#include "backward_reference.h"

#include <cmath>
#include <cstdint>
#include <stdexcept>

namespace attnc::reference {
namespace {

template <class T>
Gradients<T> backward(const TensorView &q, const TensorView &k, const TensorView &v, const TensorView &dout,
                      const Options &o, const TensorView &out_for_delta) {
  if (q.rank != 4 || k.rank != 4 || v.rank != 4 || dout.rank != 4)
    throw std::invalid_argument("backward reference: q, k, v and dout must be rank 4");
  const int64_t batch = q.shape[0], seq_q = q.shape[1], heads = q.shape[2], head_dim = q.shape[3];
  const int64_t seq_k = k.shape[1], kv_heads = k.shape[2], head_dim_v = v.shape[3];
  if (k.shape[0] != batch || v.shape[0] != batch || v.shape[1] != seq_k || v.shape[2] != kv_heads ||
      k.shape[3] != head_dim || kv_heads == 0 || heads % kv_heads != 0 || dout.shape[0] != batch ||
      dout.shape[1] != seq_q || dout.shape[2] != heads || dout.shape[3] != head_dim_v)
    throw std::invalid_argument("backward reference: q, k, v and dout shapes disagree");
  const int64_t group = heads / kv_heads;
  const T scale = static_cast<T>(o.scale), softcap = static_cast<T>(o.softcap);
  const bool padded = o.mask.uses(attn::MaskOp::padding);
  Gradients<T> g;
  g.dq.assign(static_cast<size_t>(batch * seq_q * heads * head_dim), T(0));
  g.dk.assign(static_cast<size_t>(batch * seq_k * kv_heads * head_dim), T(0));
  g.dv.assign(static_cast<size_t>(batch * seq_k * kv_heads * head_dim_v), T(0));
  g.dlogit.assign(static_cast<size_t>(batch * heads * seq_q * seq_k), T(0));
  std::vector<T> logit(static_cast<size_t>(seq_k)), cap(static_cast<size_t>(seq_k)),
      p(static_cast<size_t>(seq_k));
  std::vector<char> kept(static_cast<size_t>(seq_k));
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t key_length = padded ? o.inputs.key_lengths.at(b) : seq_k;
    for (int64_t i = 0; i < seq_q; ++i) {
      const int64_t q_pos = o.top_left ? i : i + key_length - seq_q;
      for (int64_t h = 0; h < heads; ++h) {
        const int64_t kvh = h / group;
        T row_max = 0;
        bool any = false;
        for (int64_t j = 0; j < seq_k; ++j) {
          kept[j] = keeps(o.mask, o.mask_block, o.inputs, Pair{b, h, i, j, q_pos, key_length});
          if (!kept[j]) continue;
          T dot = 0;
          for (int64_t d = 0; d < head_dim; ++d) dot += T(q.at(b, i, h, d)) * T(k.at(b, j, kvh, d));
          T s = dot * scale;
          cap[j] = 1;
          if (o.softcap > 0) {
            const T t = std::tanh(s / softcap);
            s = softcap * t;
            cap[j] = 1 - t * t;
          }
          if (o.alibi) s -= T(o.inputs.alibi_slopes.at(h)) * T(std::abs(q_pos - j));
          if (o.score_bias) s += T(broadcast_at(o.inputs.score_bias, b, h, i, j));
          logit[j] = s;
          if (!any || s > row_max || std::isnan(s)) row_max = s;
          any = true;
        }
        if (!any) continue;
        T sum = 0;
        for (int64_t j = 0; j < seq_k; ++j)
          if (kept[j]) sum += (p[j] = std::exp(logit[j] - row_max));
        // With dropout out = sum_j P_j Z_j v_j: the gradient by P_j is Z_j (dout . v_j), and dv's
        // weight P_j Z_j (Z: 0 or 1 / (1 - p)).
        T delta = 0;  // sum_j P_j dP_j = dout . out
        std::vector<T> dp(static_cast<size_t>(seq_k), T(0)), z(static_cast<size_t>(seq_k), T(1));
        for (int64_t j = 0; j < seq_k; ++j) {
          if (!kept[j]) continue;
          p[j] /= sum;
          z[j] = dropout_factor<T>(o.dropout, heads, b, h, i, j);
          for (int64_t e = 0; e < head_dim_v; ++e) dp[j] += T(dout.at(b, i, h, e)) * T(v.at(b, j, kvh, e));
          dp[j] *= z[j];
          delta += p[j] * dp[j];
        }
        if (!out_for_delta.empty()) {
          delta = 0;
          for (int64_t e = 0; e < head_dim_v; ++e)
            delta += T(dout.at(b, i, h, e)) * T(out_for_delta.at(b, i, h, e));
        }
        for (int64_t j = 0; j < seq_k; ++j) {
          if (!kept[j]) continue;
          const T dlogit = p[j] * (dp[j] - delta);
          g.dlogit[static_cast<size_t>(((b * heads + h) * seq_q + i) * seq_k + j)] = dlogit;
          const T ds = dlogit * cap[j];
          T *dq_row = &g.dq[static_cast<size_t>(((b * seq_q + i) * heads + h) * head_dim)];
          T *dk_row = &g.dk[static_cast<size_t>(((b * seq_k + j) * kv_heads + kvh) * head_dim)];
          T *dv_row = &g.dv[static_cast<size_t>(((b * seq_k + j) * kv_heads + kvh) * head_dim_v)];
          for (int64_t d = 0; d < head_dim; ++d) {
            dq_row[d] += scale * ds * T(k.at(b, j, kvh, d));
            dk_row[d] += scale * ds * T(q.at(b, i, h, d));
          }
          for (int64_t e = 0; e < head_dim_v; ++e) dv_row[e] += p[j] * z[j] * T(dout.at(b, i, h, e));
        }
      }
    }
  }
  return g;
}

}  // namespace

Gradients<double> core_backward_reference(const TensorView &q, const TensorView &k, const TensorView &v,
                                          const TensorView &dout, const Options &options) {
  return backward<double>(q, k, v, dout, options, TensorView{});
}

Gradients<float> core_backward_naive_f32(const TensorView &q, const TensorView &k, const TensorView &v,
                                         const TensorView &dout, const Options &options,
                                         const TensorView &out_for_delta) {
  return backward<float>(q, k, v, dout, options, out_for_delta);
}

}  // namespace attnc::reference

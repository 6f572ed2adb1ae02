// attention.h: the model's attention through attnc: the forward kernel (out, lse) and the backward (dq, dk,
// dv).
#pragma once

#include <attn/runtime.hpp>
#include <vector>

#include "train_spec.h"

constexpr int heads = train_attention_spec.heads;        // H
constexpr int kv_heads = train_attention_spec.kv_heads;  // KVH: 2 query heads share each
constexpr int head_dim = train_attention_spec.head_dim;  // D, for q, k and v alike

// A failed run is a bug in this program (a shape, a missing tensor): each call prints the
// runtime's message and exits with status 1.
class Attention {
 public:
  // The two kernels linked into this program (attn_add_kernels in CMakeLists.txt).
  static attn::rt::Result<Attention> find();

  // q: [batch, seq, H, D]; k, v: [batch, seq, KVH, D]. Writes out [batch, seq, H, D] and the
  // log-sum-exp of each row's kept scores, lse [batch, seq, H].
  void forward(int batch, int seq, const std::vector<float> &q, const std::vector<float> &k,
               const std::vector<float> &v, std::vector<float> &out, std::vector<float> &lse) const;

  // From the forward's inputs, its out and lse, and dout = dloss/dout [batch, seq, H, D]: dq
  // shaped like q, dk and dv like k and v (each KV head's summed over the query heads sharing it).
  void backward(int batch, int seq, const std::vector<float> &q, const std::vector<float> &k,
                const std::vector<float> &v, const std::vector<float> &out, const std::vector<float> &dout,
                const std::vector<float> &lse, std::vector<float> &dq, std::vector<float> &dk,
                std::vector<float> &dv) const;

  const char *forward_id() const { return forward_.id(); }
  const char *backward_id() const { return backward_.id(); }
  const char *selected_target() const { return forward_.selected_target(); }

 private:
  Attention(attn::rt::Kernel forward, attn::rt::Kernel backward) : forward_(forward), backward_(backward) {}

  attn::rt::Kernel forward_;
  attn::rt::Kernel backward_;
};

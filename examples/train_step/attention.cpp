// attention.cpp: finds the attnc kernels and runs them on the model's tensors.
#include "attention.h"

#include <attn/kernel_id.h>

#include <cstdio>
#include <cstdlib>

namespace {

void exit_on_failure(const attn::rt::Status &status, const char *what) {
  if (status) return;
  std::fprintf(stderr, "train_step: %s failed: %s (%s)\n", what, status.message().c_str(), status.name());
  std::exit(1);
}

}  // namespace

attn::rt::Result<Attention> Attention::find() {
  attn::rt::Result<attn::rt::Kernel> forward =
      attn::rt::Kernel::find(attn::kernel_id(train_forward_spec).c_str());
  if (!forward) return forward.status();
  attn::rt::Result<attn::rt::Kernel> backward =
      attn::rt::Kernel::find(attn::kernel_id(train_backward_spec).c_str());
  if (!backward) return backward.status();
  return Attention(*forward, *backward);
}

void Attention::forward(int batch, int seq, const std::vector<float> &q, const std::vector<float> &k,
                        const std::vector<float> &v, std::vector<float> &out, std::vector<float> &lse) const {
  const attn::rt::Tensor q_t(q.data(), {batch, seq, heads, head_dim}),
      k_t(k.data(), {batch, seq, kv_heads, head_dim}), v_t(v.data(), {batch, seq, kv_heads, head_dim}),
      out_t(out.data(), {batch, seq, heads, head_dim}), lse_t(lse.data(), {batch, seq, heads});
  exit_on_failure(
      attn::rt::run(forward_, {{"q", q_t}, {"k", k_t}, {"v", v_t}, {"out", out_t}, {"lse", lse_t}}),
      "the attention forward");
}

void Attention::backward(int batch, int seq, const std::vector<float> &q, const std::vector<float> &k,
                         const std::vector<float> &v, const std::vector<float> &out,
                         const std::vector<float> &dout, const std::vector<float> &lse,
                         std::vector<float> &dq, std::vector<float> &dk, std::vector<float> &dv) const {
  const std::vector<int64_t> query_shape = {batch, seq, heads, head_dim},
                             key_shape = {batch, seq, kv_heads, head_dim};
  const attn::rt::Tensor q_t(q.data(), query_shape), k_t(k.data(), key_shape), v_t(v.data(), key_shape),
      out_t(out.data(), query_shape), dout_t(dout.data(), query_shape),
      lse_t(lse.data(), {batch, seq, heads}), dq_t(dq.data(), query_shape), dk_t(dk.data(), key_shape),
      dv_t(dv.data(), key_shape);
  exit_on_failure(attn::rt::run(backward_, {{"q", q_t},
                                            {"k", k_t},
                                            {"v", v_t},
                                            {"out", out_t},
                                            {"dout", dout_t},
                                            {"lse", lse_t},
                                            {"dq", dq_t},
                                            {"dk", dk_t},
                                            {"dv", dv_t}}),
                  "the attention backward");
}

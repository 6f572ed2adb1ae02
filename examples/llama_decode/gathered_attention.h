// gathered_attention.h: attention with the cache handled outside the kernel (the unfused path):
// RoPE in C++, keys and values written into their pages, each sequence's pages gathered into one
// contiguous K and V, then attnc's plain causal core kernel.
#pragma once

#include <attn/runtime.h>

#include "attention.h"

namespace llama {

class GatheredAttention : public Attention {
 public:
  // core: a kernel of `heads=H kv_heads=KVH head_dim=D mask=causal`.
  GatheredAttention(const attn_kernel *core, PagedCache &cache, int heads, float rope_theta)
      : core_(core), cache_(cache), heads_(heads), rope_theta_(rope_theta) {}
  const char *name() const override { return "gathered (C++ RoPE, pages copied out, core kernel)"; }
  std::string attend(const AttentionStep &step) override;

 private:
  const attn_kernel *core_;
  PagedCache &cache_;
  int heads_;
  float rope_theta_;
  std::vector<float> q_, k_, v_;  // one sequence's rotated q and gathered K, V
};

}  // namespace llama

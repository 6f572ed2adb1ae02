// paged_attention.h: attention through one attnc kernel that does it all: RoPE, the new keys and
// values into their pages, and causal GQA attention over each sequence's cache (kv_cache=paged).
#pragma once

#include <attn/runtime.h>

#include "attention.h"

namespace llama {

class PagedAttention : public Attention {
 public:
  // kernel: `heads=H kv_heads=KVH head_dim=D mask=causal kv_cache=paged(P) rope=neox`.
  PagedAttention(const attn_kernel *kernel, PagedCache &cache, int heads)
      : kernel_(kernel), cache_(cache), heads_(heads) {}
  const char *name() const override { return "fused (attnc kernel: kv_cache=paged, rope=neox)"; }
  std::string attend(const AttentionStep &step) override;

 private:
  const attn_kernel *kernel_;
  PagedCache &cache_;
  int heads_;
};

}  // namespace llama

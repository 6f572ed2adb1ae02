// quantized_attention.h: the fused paged kernel over a quantized KV cache (kv_dtype=int8 or fp8_e4m3).
#pragma once

#include <attn/runtime.h>

#include <cstdint>
#include <vector>

#include "attention.h"

namespace llama {

// Every layer's codes [pages, P, KVH, D] (int8, or E4M3 bytes) and, for int8, the scales
// [pages, P, KVH] that the kernel writes beside them; fp8's two scalar scales are fixed.
class QuantizedPagedAttention : public Attention {
 public:
  // kernel: `heads=H kv_heads=KVH head_dim=D mask=causal kv_cache=paged(P) kv_dtype=int8|fp8_e4m3
  // rope=neox`; int8 false: fp8_e4m3.
  QuantizedPagedAttention(const attn_kernel *kernel, const PagedCache &shape, int heads, bool int8);
  const char *name() const override {
    return int8_ ? "fused, int8 KV cache (kv_dtype=int8: codes and a scale per token and KV head)"
                 : "fused, fp8 KV cache (kv_dtype=fp8_e4m3: E4M3 bytes, scalar scales)";
  }
  std::string attend(const AttentionStep &step) override;
  // The cache's bytes: codes, and int8's scales.
  size_t bytes() const;

  // fp8's scales: the model's k and v stay well inside +-448 * scale = +-8.96 (the E4M3 range).
  static constexpr float fp8_scale = 0.02f;

 private:
  const attn_kernel *kernel_;
  int pages_, page_tokens_, kv_heads_, head_dim_, heads_;
  bool int8_;
  std::vector<std::vector<uint8_t>> k_codes_, v_codes_;  // per layer
  std::vector<std::vector<float>> k_scales_, v_scales_;  // per layer (int8)
};

}  // namespace llama

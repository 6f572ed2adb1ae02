// sequence_specs.h: the KV cache, RoPE and varlen kernels of the sequence suite (issue 24); keep in
// step with sequence_kernels.cmake.
#pragma once

namespace attnc::test {

// GQA 4:2, contiguous cache, neox on half of each head, lse.
constexpr const char *cache_neox_spec =
    "heads=4 kv_heads=2 head_dim=16 mask=causal kv_cache=contiguous rope=neox rope_dim=8 lse=true";
// MQA, Dv != D, 4-token pages, interleaved on 12 of 16 elements, theta 500.
constexpr const char *paged_interleaved_spec =
    "heads=3 kv_heads=1 head_dim=16 head_dim_v=8 mask=causal kv_cache=paged(4) rope=interleaved rope_dim=12 "
    "rope_theta=500";
// A causal sliding window over a paged cache with softcap and alibi, no rope, lse.
constexpr const char *paged_window_spec =
    "heads=2 head_dim=16 mask=window(5,0) kv_cache=paged(8) softcap=30 alibi=true lse=true";
// Ragged batch, GQA 3:1, causal, neox on the whole head, lse.
constexpr const char *varlen_spec =
    "heads=3 kv_heads=1 head_dim=16 mask=causal layout=varlen rope=neox lse=true";
// Rope without a cache: keys rotated in the kernel at their index.
constexpr const char *dense_rope_spec = "heads=2 head_dim=16 mask=causal rope=interleaved";
// The same with neox halves of whole vectors (the cores rotate each half apart): GQA on whole
// 64-element heads, and no mask with 32 of 64 elements turned (halves of 16, two passing through).
constexpr const char *dense_neox_spec = "heads=4 kv_heads=2 head_dim=64 mask=causal rope=neox";
constexpr const char *dense_partial_neox_spec = "heads=2 head_dim=64 rope=neox rope_dim=32";

// The cache in the kernel's dtype: bf16 paged with GQA, f16 contiguous; a bf16 ragged batch.
constexpr const char *paged_bf16_spec =
    "heads=4 kv_heads=2 head_dim=16 mask=causal kv_cache=paged(4) rope=neox dtype=bf16 lse=true";
constexpr const char *cache_f16_spec =
    "heads=2 head_dim=16 mask=causal kv_cache=contiguous rope=interleaved rope_dim=8 dtype=f16";
constexpr const char *varlen_bf16_spec =
    "heads=2 head_dim=16 mask=window(4,0) layout=varlen rope=neox dtype=bf16 lse=true";

}  // namespace attnc::test

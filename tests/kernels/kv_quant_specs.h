// kv_quant_specs.h: the quantized-cache kernels of the kv_quant suite (issue 37); keep in step with
// kv_quant_kernels.cmake.
#pragma once

namespace attnc::test {

// int8 contiguous with GQA 8:2 (4 query heads a KV head: the split-keys core's head groups),
// causal, neox on half of each head, lse; int8 paged with MQA, Dv != D, a sliding window, bf16;
// fp8 paged with GQA, a window and interleaved rope; fp8 contiguous in bf16.
constexpr const char *kv_quant_specs[] = {
    "heads=8 kv_heads=2 head_dim=16 mask=causal kv_cache=contiguous kv_dtype=int8 rope=neox rope_dim=8 "
    "lse=true",
    "heads=3 kv_heads=1 head_dim=24 head_dim_v=8 mask=window(5,0) kv_cache=paged(4) kv_dtype=int8 dtype=bf16 "
    "lse=true",
    "heads=4 kv_heads=2 head_dim=16 mask=window(5,0) kv_cache=paged(8) kv_dtype=fp8_e4m3 rope=interleaved "
    "lse=true",
    "heads=2 head_dim=16 mask=causal kv_cache=contiguous kv_dtype=fp8_e4m3 dtype=bf16"};
// The window specs' left bound: keys further back than this before a call's first new token are
// masked for every row.
constexpr int kv_quant_window = 5;

}  // namespace attnc::test

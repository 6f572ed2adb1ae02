// api_gaps_specs.h: the specs of the run-time scale and cross-attention suites (issue 26). Keep in
// step with attnc_api_gaps_kernels in CMakeLists.txt (the suites check that both lists agree).
#pragma once

#include <cstddef>
#include <iterator>
#include <span>
#include <string>
#include <vector>

namespace attnc::test {

// Run-time scale: the whole-row core (with its split-keys and long-key block pipelines) under
// masks and the modifiers that follow the scale, the block core under window|global with an
// explicit default scale, bf16 (pair dot products where the target has them: the scale applies
// to the sums), and the block form.
inline constexpr const char *runtime_scale_specs[] = {
    "heads=2 kv_heads=1 head_dim=16 mask=causal&padding softcap=2 alibi=true runtime_scale=true lse=true",
    "heads=2 head_dim=16 mask=window(5,3)|global(2) scale=0.3 runtime_scale=true lse=true",
    "heads=2 head_dim=32 dtype=bf16 mask=causal runtime_scale=true",
    "d_model=32 heads=2 form=block proj_bias=true mask=causal score_bias=tensor runtime_scale=true lse=true",
};

// Cross-attention (x_kv): separate weights under causal&padding (key_lengths count x_kv's tokens)
// with GQA, bias and lse; fused weights (w_qkv's q rows on x, k and v rows on x_kv) with
// Dv != D, a top-left window and a run-time scale; document|prefix with a score bias tensor
// [B,H,Sq,Sk]; bf16 fused with padding.
inline constexpr const char *cross_attention_specs[] = {
    "d_model=32 heads=2 kv_heads=1 form=block proj_bias=true mask=causal&padding lse=true cross=true",
    "d_model=48 heads=3 head_dim_v=8 form=block qkv=fused mask=window(4,2) align=top_left runtime_scale=true "
    "cross=true",
    "d_model=32 heads=2 form=block mask=document|prefix score_bias=tensor lse=true cross=true",
    "d_model=32 heads=2 form=block qkv=fused proj_bias=true dtype=bf16 mask=padding cross=true",
};

// The sizes a suite runs: all of them, or in the OpenCL build the first two (every case runs the
// GPU block core there, and PoCL compiles its kernels anew for new sizes: with a cold kernel cache
// both suites took 110 s with every size, 25 s with two, on the shared 2-core machine).
template <class T, size_t N>
std::span<const T> sizes_to_run(const T (&all)[N]) {
#if defined(API_GAPS_GPU)
  return std::span<const T>(all, N < 2 ? N : 2);
#else
  return std::span<const T>(all, N);
#endif
}

// Every spec of the suites' kernel library.
inline std::vector<std::string> api_gaps_specs() {
  std::vector<std::string> all;
  for (const char *text : runtime_scale_specs) all.push_back(text);
  for (const char *text : cross_attention_specs) all.push_back(text);
  return all;
}

}  // namespace attnc::test

// api_gaps_specs.h: the specs of the run-time scale and cross-attention suites (issue 26). Keep in
// step with attnc_api_gaps_kernels in CMakeLists.txt (the suites check that both lists agree).
#pragma once

#include <iterator>
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

// Every spec of the suites' kernel library.
inline std::vector<std::string> api_gaps_specs() {
  std::vector<std::string> all(std::begin(runtime_scale_specs), std::end(runtime_scale_specs));
  return all;
}

}  // namespace attnc::test

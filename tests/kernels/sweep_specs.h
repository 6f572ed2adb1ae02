// sweep_specs.h: the specs of attnc_test_kernels (tests/kernels/CMakeLists.txt), as the suites name them.
#pragma once

#include <string>
#include <vector>

#include "kernel_test_support.h"

namespace attnc::test {

inline const char *const core_specs[] = {
    "heads=2 head_dim=16 mask=none",
    "heads=2 head_dim=16 mask=causal",
    "heads=2 head_dim=32 mask=none",
    "heads=2 head_dim=64 mask=causal",
    "heads=3 head_dim=80 mask=none",
    "heads=2 head_dim=128 mask=causal",
    "heads=2 head_dim=64 head_dim_v=32 mask=none",
    "heads=2 head_dim=32 head_dim_v=80 mask=causal",
    "heads=4 kv_heads=2 head_dim=64 mask=causal",
    "heads=4 kv_heads=2 head_dim=16 mask=none",
    "heads=4 kv_heads=1 head_dim=32 mask=none",
    "heads=3 kv_heads=1 head_dim=32 mask=causal",
    "heads=2 head_dim=32 mask=window(16,0)",
    "heads=4 kv_heads=2 head_dim=32 mask=window(4,4)|causal",
    "heads=2 head_dim=16 mask=window(2,0)",
    "heads=2 head_dim=16 mask=(window(16,0)|window(0,3))&window(4,-1)",
};

inline const char *const block_specs[] = {
    "d_model=64 heads=2 form=block qkv=separate proj_bias=false mask=none",
    "d_model=64 heads=2 form=block qkv=separate proj_bias=true mask=causal",
    "d_model=64 heads=2 form=block qkv=fused proj_bias=false mask=causal",
    "d_model=64 heads=2 form=block qkv=fused proj_bias=true mask=none",
    "d_model=128 heads=4 kv_heads=2 form=block qkv=fused proj_bias=true mask=causal",
    "d_model=128 heads=4 kv_heads=1 form=block qkv=separate proj_bias=false mask=causal",
    "d_model=96 heads=3 head_dim_v=16 form=block qkv=separate proj_bias=true mask=none",
    "d_model=96 heads=3 head_dim_v=16 form=block qkv=fused proj_bias=false mask=none",
};

// Drift between this header and the CMake list (see kernel_test_support.h).
inline SpecListDrift spec_list_drift() {
  std::vector<std::string> listed(std::begin(core_specs), std::end(core_specs));
  listed.insert(listed.end(), std::begin(block_specs), std::end(block_specs));
  return spec_list_drift(listed);
}

}  // namespace attnc::test

// sweep_specs.h: the specs of attnc_test_kernels (tests/kernels/CMakeLists.txt), as the suites name them.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "attn/kernel_id.h"
#include "attn/runtime.h"
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

// The ids of the listed specs that are not linked, and of the linked kernels not listed: both
// empty when this header and the CMake list agree.
struct SpecListDrift {
  std::vector<std::string> missing, unlisted;
};
inline SpecListDrift spec_list_drift() {
  std::vector<std::string> listed;
  for (const char *spec : core_specs) listed.push_back(attn::kernel_id(parse(spec)));
  for (const char *spec : block_specs) listed.push_back(attn::kernel_id(parse(spec)));
  SpecListDrift drift;
  for (const std::string &id : listed) {
    const attn_kernel *kernel = nullptr;
    if (attn_find_kernel(id.c_str(), &kernel) != ATTN_OK) drift.missing.push_back(id);
  }
  for (int i = 0; i < attn_kernel_count(); ++i) {
    const std::string id = attn_kernel_id(attn_kernel_at(i));
    if (std::find(listed.begin(), listed.end(), id) == listed.end()) drift.unlisted.push_back(id);
  }
  return drift;
}

}  // namespace attnc::test

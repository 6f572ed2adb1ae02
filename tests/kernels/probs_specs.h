// probs_specs.h: the specs of attnc_probs_kernels (tests/kernels/CMakeLists.txt), as probs_test names them.
#pragma once

namespace attnc::test {

inline const char *const probs_specs[] = {
    "heads=2 kv_heads=1 head_dim=16 mask=causal&padding probs=true",
    "heads=2 head_dim=16 mask=(window(3,1)|global(1))&tensor softcap=2 alibi=true score_bias=tensor lse=true "
    "probs=true",
    "heads=3 head_dim=32 mask=document&causal align=top_left mask_block=4 probs=true",
    "d_model=32 heads=2 form=block qkv=fused proj_bias=true mask=padding probs=true",
    "d_model=48 heads=3 kv_heads=1 form=block mask=window(5,0) lse=true probs=true",
};

}  // namespace attnc::test

// mask_specs.h: the specs of the mask, modifier and lse kernels (attnc_mask_kernels_* in
// tests/kernels/CMakeLists.txt, in the same order); the suites check that both lists agree.
#pragma once

#include <iterator>
#include <string>
#include <vector>

#include "kernel_test_support.h"

namespace attnc::test {

// Heads <= 2 and head_dim 16 / 32 keep generation (~1.5 s a kernel) and the fp64 reference cheap.
inline const char *const mask_specs[] = {
    // each term alone
    "heads=2 head_dim=16 mask=window(5,3)",
    "heads=1 head_dim=32 mask=causal",
    "heads=2 head_dim=16 mask=global(4)",
    "heads=2 head_dim=16 mask=random(16,2,42)",
    "heads=2 head_dim=32 mask=padding",
    "heads=2 head_dim=16 mask=prefix",
    "heads=2 head_dim=16 mask=document",
    "heads=2 head_dim=32 mask=tensor",
    // compositions
    "heads=2 head_dim=16 mask=causal|prefix",
    "heads=2 head_dim=32 mask=document&causal",
    "heads=2 head_dim=16 mask=(window(8,8)|global(4))&padding",
    "heads=2 head_dim=16 mask=tensor&causal",
    "heads=2 head_dim=16 mask=random(16,2,42)&causal",
    "heads=2 head_dim=32 mask=window(16,0)&padding",
    "heads=2 head_dim=16 mask=(window(3,3)|global(2)|random(8,1,7))&padding",
    "heads=2 kv_heads=1 head_dim=16 mask=causal&padding",
    "heads=2 head_dim=16 mask=document&padding",
    "heads=2 head_dim=16 mask=tensor|global(3)",
    "heads=2 head_dim=16 mask=(causal|prefix)&padding",
    "heads=2 head_dim=16 mask=tensor&padding&causal",
    "heads=2 head_dim=32 mask=(window(4,0)|prefix)&document",
    "heads=2 head_dim=16 mask=window(2,2)|tensor",
    "heads=2 head_dim=16 mask=global(1)&causal",
    "heads=2 head_dim=16 mask=(causal&document)|global(2)",
    "heads=2 head_dim=16 mask=window(0,0)|random(4,3,1)",
    "heads=2 head_dim=16 mask=(tensor|prefix)&(window(32,32)|global(1))",
    "heads=2 head_dim=16 mask=random(8,2,3)&padding",
    "heads=2 head_dim=16 mask=prefix&document|window(1,-1)&tensor",
    "heads=2 kv_heads=1 head_dim=32 mask=window(8,8)|global(4)",
    // mask_block: structural terms widened to blocks (random stays at its own block size)
    "heads=2 head_dim=16 mask=causal mask_block=16",
    "heads=2 head_dim=16 mask=(window(16,16)|global(4))&padding mask_block=16",
    "heads=2 head_dim=16 mask=window(8,0)|random(6,2,5) mask_block=8",
    "heads=2 head_dim=32 mask=causal&document mask_block=32",
    "heads=2 head_dim=16 mask=(window(5,1)|global(3))&tensor mask_block=4",
    // score modifiers, alone and together
    "heads=2 head_dim=16 mask=none softcap=1.5 scale=0.5",
    "heads=2 head_dim=16 mask=causal alibi=true",
    "heads=2 head_dim=32 mask=none score_bias=tensor",
    "heads=2 head_dim=16 mask=causal&padding softcap=2 alibi=true score_bias=tensor lse=true",
    // lse
    "heads=2 head_dim=16 mask=none lse=true",
    "heads=2 head_dim=32 mask=(window(8,8)|global(4))&padding lse=true",
    "heads=2 head_dim=16 mask=tensor lse=true",
    "heads=2 head_dim=16 mask=window(2,0) lse=true",
    "heads=2 kv_heads=1 head_dim=16 mask=(window(16,0)|global(2))&tensor mask_block=8 softcap=3 alibi=true "
    "score_bias=tensor lse=true",
    // the block form with masks, modifiers and lse
    "d_model=32 heads=2 form=block mask=padding",
    "d_model=32 heads=2 form=block qkv=fused proj_bias=true mask=causal|prefix",
    "d_model=64 heads=2 form=block mask=(window(8,8)|global(4))&padding lse=true",
    "d_model=32 heads=2 form=block proj_bias=true mask=document&causal softcap=2 alibi=true "
    "score_bias=tensor lse=true",
    "d_model=32 heads=2 form=block mask=tensor&causal mask_block=8",
    // top-left alignment
    "heads=2 head_dim=16 mask=causal align=top_left",
    "heads=2 kv_heads=1 head_dim=16 mask=(window(4,2)|global(2))&padding align=top_left alibi=true lse=true",
};

inline SpecListDrift mask_spec_list_drift() {
  return spec_list_drift(std::vector<std::string>(std::begin(mask_specs), std::end(mask_specs)));
}

}  // namespace attnc::test

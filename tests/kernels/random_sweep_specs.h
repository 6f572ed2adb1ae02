// random_sweep_specs.h: the randomized sweep's own two-variant kernels (attnc_random_sweep_kernels_*
// in tests/kernels/CMakeLists.txt, in the same order) and every spec the sweep binary links.
#pragma once

#include <iterator>
#include <string>
#include <vector>

#include "kernel_test_support.h"
#include "mask_specs.h"
#include "sweep_specs.h"

namespace attnc::test {

#if ATTNC_ARM_SWEEP
// The AArch64 cross tree's kernels (attnc_arm_kernels_* in tests/kernels/arm_suites.cmake, in the
// same order), each for both arm64 variants; the sweep runs over these alone there.
inline const char *const random_sweep_specs[] = {
    "heads=4 kv_heads=2 head_dim=64 mask=causal",
    "d_model=96 heads=3 head_dim_v=16 form=block qkv=separate proj_bias=true mask=none",
    "d_model=128 heads=4 kv_heads=2 form=block qkv=fused proj_bias=true mask=causal",
    "heads=4 kv_heads=1 head_dim=24 head_dim_v=40 mask=(window(3,3)|global(2)|random(8,1,7))&padding "
    "mask_block=8 softcap=3 alibi=true score_bias=tensor lse=true",
    "heads=2 head_dim=16 mask=((document|prefix)&tensor&causal)|window(2,0) lse=true",
    "heads=2 kv_heads=1 head_dim=48 mask=causal",
};

inline std::vector<std::string> all_linked_specs() {
  return {std::begin(random_sweep_specs), std::end(random_sweep_specs)};
}
#else
// Combinations the other suites do not build, each generated for an AVX-512 and an AVX2 variant so
// that the sweep can run both: every mask term, & / | / nesting, mask_block, GQA and MQA, Dv != D,
// head dims 16 .. 128 (24 and 48 included), softcap, alibi, score_bias, scale and lse, both forms.
inline const char *const random_sweep_specs[] = {
    // attnc_random_sweep_kernels_1
    "heads=4 kv_heads=1 head_dim=32 head_dim_v=48 mask=causal&padding lse=true",
    "heads=4 kv_heads=2 head_dim=64 mask=window(7,2)",
    "heads=2 head_dim=48 mask=global(3)|window(4,0)",
    "heads=3 head_dim=16 mask=random(8,3,11)|causal",
    "heads=2 head_dim=32 mask=prefix&padding",
    "heads=4 kv_heads=2 head_dim=16 head_dim_v=32 mask=document&window(16,16)",
    "heads=2 head_dim=24 mask=tensor&(causal|global(2))",
    "heads=6 kv_heads=2 head_dim=16 mask=none softcap=5 lse=true",
    "heads=2 head_dim=64 head_dim_v=16 mask=causal alibi=true score_bias=tensor",
    "heads=2 kv_heads=1 head_dim=32 mask=padding score_bias=tensor lse=true",
    // attnc_random_sweep_kernels_2
    "heads=4 head_dim=16 mask=(document|prefix)&padding softcap=4 alibi=true",
    "heads=2 head_dim=32 mask=window(32,0)&padding mask_block=16 lse=true",
    "heads=2 head_dim=16 mask=random(16,1,99)&document",
    "heads=8 kv_heads=1 head_dim=32 mask=causal scale=0.2 lse=true",
    "heads=2 head_dim=128 mask=tensor lse=true",
    "heads=3 head_dim=16 mask=(window(2,2)|tensor)&padding",
    "heads=2 head_dim=16 mask=global(2)&(prefix|causal) score_bias=tensor",
    "heads=2 head_dim=32 mask=none alibi=true",
    "d_model=48 heads=3 form=block qkv=fused proj_bias=true mask=padding&causal lse=true",
    "d_model=64 heads=4 kv_heads=1 head_dim_v=8 form=block mask=window(8,0)|global(1)",
    "d_model=64 heads=4 kv_heads=2 form=block proj_bias=true mask=tensor&document softcap=3 alibi=true "
    "score_bias=tensor",
    "d_model=32 heads=2 form=block qkv=fused mask=random(8,2,5)&padding mask_block=8",
    "d_model=40 heads=2 form=block mask=prefix|document lse=true",
    "d_model=64 heads=2 form=block mask=none score_bias=tensor lse=true",
};

// Every spec linked into the sweep: its own kernels, then the sweep and mask suites' kernels
// (built for this machine's target only).
inline std::vector<std::string> all_linked_specs() {
  std::vector<std::string> specs(std::begin(random_sweep_specs), std::end(random_sweep_specs));
  specs.insert(specs.end(), std::begin(core_specs), std::end(core_specs));
  specs.insert(specs.end(), std::begin(block_specs), std::end(block_specs));
  specs.insert(specs.end(), std::begin(mask_specs), std::end(mask_specs));
  return specs;
}
#endif

}  // namespace attnc::test

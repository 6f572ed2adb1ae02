// low_precision_specs.h: the specs of the f16 / bf16 kernels (attnc_low_precision_kernels_* in
// tests/kernels/CMakeLists.txt, in the same order); the suite checks that both lists agree.
#pragma once

#include <iterator>
#include <string>
#include <vector>

#include "kernel_test_support.h"

namespace attnc::test {

// Few specs, each carrying many features: generation costs ~15 s a spec on the shared machine.
// Every dtype gets the same three core specs and two block specs (bf16 two more core specs); between the two
// dtypes the block specs take all four of {separate, fused} x {bias, no bias}.
inline const char *const low_precision_specs[] = {
    // GQA, Dv < D, causal & padding | global, lse: the block core (global reads few blocks)
    "heads=4 kv_heads=2 head_dim=32 head_dim_v=16 mask=(causal&padding)|global(2) lse=true dtype=bf16",
    // MQA, document, prefix, tensor, every modifier, lse: the whole-row core, packed from 1024 keys
    "heads=8 kv_heads=1 head_dim=16 mask=document&(causal|prefix)&tensor softcap=2 alibi=true "
    "score_bias=tensor lse=true dtype=bf16",
    // Dv > D, a window | block-sparse random blocks, widened to 8x8 blocks
    "heads=2 head_dim=16 head_dim_v=32 mask=window(8,4)|random(16,2,7) mask_block=8 dtype=bf16",
    "d_model=32 heads=2 form=block qkv=separate proj_bias=true mask=causal&padding lse=true dtype=bf16",
    "d_model=64 heads=4 kv_heads=1 head_dim_v=8 form=block qkv=fused mask=window(4,0)|tensor dtype=bf16",
    // The whole-row core's bf16 pairs (vdpbf16ps) with no mask, and with spans of odd lengths
    "heads=4 kv_heads=2 head_dim=64 mask=none lse=true dtype=bf16",
    "heads=3 head_dim=32 head_dim_v=48 mask=causal&padding dtype=bf16",

    "heads=4 kv_heads=2 head_dim=32 head_dim_v=16 mask=(causal&padding)|global(2) lse=true dtype=f16",
    "heads=8 kv_heads=1 head_dim=16 mask=document&(causal|prefix)&tensor softcap=2 alibi=true "
    "score_bias=tensor lse=true dtype=f16",
    "heads=2 head_dim=16 head_dim_v=32 mask=window(8,4)|random(16,2,7) mask_block=8 dtype=f16",
    "d_model=32 heads=2 form=block qkv=fused proj_bias=true mask=causal&padding lse=true dtype=f16",
    "d_model=64 heads=4 kv_heads=2 head_dim_v=8 form=block qkv=separate mask=window(4,0)|tensor dtype=f16",
};

inline SpecListDrift low_precision_spec_list_drift() {
  return spec_list_drift(
      std::vector<std::string>(std::begin(low_precision_specs), std::end(low_precision_specs)));
}

}  // namespace attnc::test

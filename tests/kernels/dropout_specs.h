// dropout_specs.h: the specs of attnc_dropout_kernels (dropout_kernels.cmake): forward kernels with dropout
// on every core family (whole-row, block core, split keys, packed, the block form with and without head
// groups), bf16, and the pair that checks dropout=0 against no dropout.
#pragma once

#include <cstddef>
#include <iterator>

namespace attnc::test {

inline const char *const dropout_specs[] = {
    "heads=4 kv_heads=2 head_dim=24 mask=causal dropout=0.2",
    "heads=2 head_dim=16 head_dim_v=24 mask=window(5,2)&padding softcap=2 alibi=true dropout=0.5 lse=true",
    "heads=16 head_dim=64 mask=none dropout=0.1",
    "heads=2 head_dim=32 mask=causal dropout=0",
    "heads=2 head_dim=32 mask=causal",
    "form=block d_model=64 heads=4 mask=causal proj_bias=true dropout=0.3",
    "form=block d_model=96 head_groups=2x32+4x8/2 mask=causal dropout=0.4",
    "heads=4 kv_heads=2 head_dim=32 mask=causal dtype=bf16 dropout=0.25",
};

// Indices into dropout_specs with a role of their own in the suite.
constexpr int mask_readout_spec = 2;  // v one-hot over Sk = Dv = 64 keys: out holds the mask
constexpr int zero_dropout_spec = 3, no_dropout_spec = 4;

// The specs this build's library holds: all of them, or the first ATTNC_DROPOUT_SHARE (the
// AArch64 tree's make test share: dropout_kernels.cmake's dropout_share).
#ifdef ATTNC_DROPOUT_SHARE
constexpr size_t active_dropout_count = ATTNC_DROPOUT_SHARE;
#else
constexpr size_t active_dropout_count = std::size(dropout_specs);
#endif
static_assert(active_dropout_count > no_dropout_spec && active_dropout_count <= std::size(dropout_specs));

}  // namespace attnc::test

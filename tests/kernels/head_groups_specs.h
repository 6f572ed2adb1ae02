// head_groups_specs.h: the block-form specs with mixed head groups (issue 24) that
// kernels_head_groups_test runs (and its OpenCL twin, the GPU list); keep in step with
// head_groups_kernels.cmake and gpu/CMakeLists.txt.
#pragma once

namespace attnc::test {

inline constexpr const char *head_groups_specs[] = {
    // The seed's layer: 4 heads of 128 and 8 of 64, at a d_model unrelated to either.
    "form=block d_model=96 head_groups=4x128+8x64 mask=causal lse=true",
    // GQA per group, fused qkv (every group's q rows, then k rows, then v rows), biases, padding.
    "form=block d_model=96 head_groups=4x128/2+8x64/4 qkv=fused proj_bias=true mask=causal&padding lse=true",
    // MQA in the first group, GQA in the second, separate weights, padding alone.
    "form=block d_model=96 head_groups=4x128/1+8x64/2 proj_bias=true mask=padding",
    // Three groups, head-indexed inputs (tensor mask, ALiBi) read at each group's heads, one
    // explicit scale for every group, odd d_model.
    "form=block d_model=41 head_groups=2x16+3x8/1+1x32 mask=window(4,0)|tensor alibi=true scale=0.3",
    // bf16 and f16 storage.
    "form=block d_model=96 head_groups=4x128+8x64/4 proj_bias=true mask=causal lse=true dtype=bf16",
    "form=block d_model=96 head_groups=4x128/2+8x64 qkv=fused mask=padding lse=true dtype=f16",
};

// The GPU variant's share (PoCL is slow, so two, f32: the low-precision suite runs f16/bf16 on
// OpenCL): the seed's layer first, as above.
inline constexpr const char *head_groups_gpu_specs[] = {
    "form=block d_model=96 head_groups=4x128+8x64 mask=causal lse=true",
    "form=block d_model=96 head_groups=4x128/2+8x64/4 qkv=fused proj_bias=true mask=causal&padding lse=true",
};

}  // namespace attnc::test

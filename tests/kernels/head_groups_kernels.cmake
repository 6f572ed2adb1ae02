# Mixed head groups in the block form (issue 24): a few specs carrying many features, this
# machine's variant only (each kernel costs seconds to generate). Keep in step with
# head_groups_specs.h (the suite checks that both lists agree).
attn_add_kernels(attnc_head_groups_kernels
  SPECS
    "form=block d_model=96 head_groups=4x128+8x64 mask=causal lse=true"
    "form=block d_model=96 head_groups=4x128/2+8x64/4 qkv=fused proj_bias=true mask=causal&padding lse=true"
    "form=block d_model=96 head_groups=4x128/1+8x64/2 proj_bias=true mask=padding"
    "form=block d_model=41 head_groups=2x16+3x8/1+1x32 mask=window(4,0)|tensor alibi=true scale=0.3"
    "form=block d_model=96 head_groups=4x128+8x64/4 proj_bias=true mask=causal lse=true dtype=bf16"
    "form=block d_model=96 head_groups=4x128/2+8x64 qkv=fused mask=padding lse=true dtype=f16"
  TARGETS native)
attnc_add_test(kernels_head_groups_test LABEL kernels SOURCES head_groups_test.cpp
  LIBS attnc_head_groups_kernels attnc_kernel_test_support)

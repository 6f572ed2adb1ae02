# f16 and bf16 storage (issue 20): few specs, each carrying many features, one library per dtype
# so that two generate at once (70-75 s a library of 5, measured on the shared 2-core machine).
# Included by CMakeLists.txt (label kernels) and arm_suites.cmake (label arm): low_precision_label.
# Keep in step with low_precision_specs.h (the suite checks that both lists agree). The bf16
# kernels are built for the sweep's two x86 variants where it has them: the AVX-512 one this CPU
# runs (Zen 4 class on AMD: bf16 dot products in the whole-row core; Skylake class on Intel:
# converted to fp32) and AVX2 (converted to fp32), and the suite runs both.
# (attnc_low_precision_specs_bf16 / _f16: the OpenCL run in CMakeLists.txt builds the same specs.)
set(attnc_low_precision_specs_bf16
  "heads=4 kv_heads=2 head_dim=32 head_dim_v=16 mask=(causal&padding)|global(2) lse=true dtype=bf16"
  "heads=8 kv_heads=1 head_dim=16 mask=document&(causal|prefix)&tensor softcap=2 alibi=true score_bias=tensor lse=true dtype=bf16"
  "heads=2 head_dim=16 head_dim_v=32 mask=window(8,4)|random(16,2,7) mask_block=8 dtype=bf16"
  "d_model=32 heads=2 form=block qkv=separate proj_bias=true mask=causal&padding lse=true dtype=bf16"
  "d_model=64 heads=4 kv_heads=1 head_dim_v=8 form=block qkv=fused mask=window(4,0)|tensor dtype=bf16"
  "heads=4 kv_heads=2 head_dim=64 mask=none lse=true dtype=bf16"
  "heads=3 head_dim=32 head_dim_v=48 mask=causal&padding dtype=bf16")
set(attnc_low_precision_specs_f16
  "heads=4 kv_heads=2 head_dim=32 head_dim_v=16 mask=(causal&padding)|global(2) lse=true dtype=f16"
  "heads=8 kv_heads=1 head_dim=16 mask=document&(causal|prefix)&tensor softcap=2 alibi=true score_bias=tensor lse=true dtype=f16"
  "heads=2 head_dim=16 head_dim_v=32 mask=window(8,4)|random(16,2,7) mask_block=8 dtype=f16"
  "d_model=32 heads=2 form=block qkv=fused proj_bias=true mask=causal&padding lse=true dtype=f16"
  "d_model=64 heads=4 kv_heads=2 head_dim_v=8 form=block qkv=separate mask=window(4,0)|tensor dtype=f16")
attn_add_kernels(attnc_low_precision_kernels_bf16 SPECS ${attnc_low_precision_specs_bf16}
  TARGETS ${random_sweep_targets})
attn_add_kernels(attnc_low_precision_kernels_f16 SPECS ${attnc_low_precision_specs_f16} TARGETS native)
attnc_add_test(kernels_low_precision_test LABEL ${low_precision_label} SOURCES low_precision_test.cpp
  LIBS attnc_low_precision_kernels_bf16 attnc_low_precision_kernels_f16 attnc_kernel_test_support
  ARGS ${low_precision_test_args})

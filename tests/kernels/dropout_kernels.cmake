# Attention dropout in the forward (dropout=P, issue 33): dropout_specs.h's kernels, built for
# random_sweep_targets (the x86 tree: this CPU's AVX-512 variant and AVX2; the AArch64 tree: both
# arm64 variants), and the suite that runs each variant. Included by CMakeLists.txt (label
# kernels; again for OpenCL, label opencl, dropout_targets opencl and dropout_name opencl_dropout)
# and arm_suites.cmake (label arm; a share unless ATTNC_FULL_TESTS: dropout_share). The
# backward's dropout runs in backward_kernels.cmake's specs. Keep in step with dropout_specs.h (the
# suite checks that both lists agree).
set(attnc_dropout_specs
    "heads=4 kv_heads=2 head_dim=24 mask=causal dropout=0.2"
    "heads=2 head_dim=16 head_dim_v=24 mask=window(5,2)&padding softcap=2 alibi=true dropout=0.5 lse=true"
    "heads=16 head_dim=64 mask=none dropout=0.1"
    "heads=2 head_dim=32 mask=causal dropout=0"
    "heads=2 head_dim=32 mask=causal"
    "form=block d_model=64 heads=4 mask=causal proj_bias=true dropout=0.3"
    "form=block d_model=96 head_groups=2x32+4x8/2 mask=causal dropout=0.4"
    "heads=4 kv_heads=2 head_dim=32 mask=causal dtype=bf16 dropout=0.25")
# dropout_share (arm_suites.cmake): the first five only (the core families, the mask read back,
# dropout=0 against none; not the block form's or bf16's).
if(dropout_share)
  list(SUBLIST attnc_dropout_specs 0 5 attnc_dropout_specs)
endif()
if(NOT DEFINED dropout_targets)
  set(dropout_targets ${random_sweep_targets})
endif()
if(NOT DEFINED dropout_name)
  set(dropout_name dropout)
endif()
attn_add_kernels(attnc_${dropout_name}_kernels SPECS ${attnc_dropout_specs} TARGETS ${dropout_targets})
attnc_add_test(kernels_${dropout_name}_test LABEL ${dropout_label} SOURCES dropout_test.cpp
  LIBS attnc_${dropout_name}_kernels attnc_kernel_test_support)
if(dropout_share)
  target_compile_definitions(kernels_${dropout_name}_test PRIVATE ATTNC_DROPOUT_SHARE=5)
endif()
if(NOT CMAKE_CROSSCOMPILING AND dropout_name STREQUAL "dropout")
  attnc_add_refused_calls_test(kernels_dropout_refused_calls_test LABEL ${dropout_label} LIBS attnc_dropout_kernels)
endif()
unset(dropout_targets)
unset(dropout_name)
unset(dropout_share)

# The backward pass (backward=true, issue 33): each backward kernel with its forward (lse=true), with
# and without dropout (the second spec has it, so every share runs dropout's regenerated mask),
# built for random_sweep_targets (the x86 tree: this CPU's AVX-512 variant and AVX2; the AArch64
# tree: both arm64 variants), and the suite runs each variant. Included by CMakeLists.txt (label
# kernels; again for OpenCL, label opencl, with backward_targets opencl and backward_name
# opencl_backward, a share as PoCL is slow) and arm_suites.cmake (label arm, backward_share ON: the
# first three backward specs and their forwards, as emulation is slow). backward_targets and
# backward_name hold for one include (default random_sweep_targets and backward: the library
# attnc_backward_kernels, the test kernels_backward_test). Keep in step with backward_specs.h (the
# suite checks that both lists agree).
set(attnc_backward_specs_all
    "heads=4 kv_heads=2 head_dim=24 mask=causal backward=true"
    "heads=2 head_dim=16 head_dim_v=24 mask=(window(3,1)|global(1))&tensor softcap=2 alibi=true score_bias=tensor dropout=0.5 backward=true"
    "heads=3 kv_heads=1 head_dim=32 mask=document&padding backward=true"
    "heads=2 head_dim=8 mask=prefix|window(5,3) scale=0.3 runtime_scale=true backward=true"
    "heads=2 head_dim=64 mask=none backward=true"
    "heads=4 kv_heads=2 head_dim=24 mask=causal lse=true"
    "heads=2 head_dim=16 head_dim_v=24 mask=(window(3,1)|global(1))&tensor softcap=2 alibi=true score_bias=tensor dropout=0.5 lse=true"
    "heads=3 kv_heads=1 head_dim=32 mask=document&padding lse=true"
    "heads=2 head_dim=8 mask=prefix|window(5,3) scale=0.3 runtime_scale=true lse=true"
    "heads=2 head_dim=64 mask=none lse=true"
    "heads=4 kv_heads=2 head_dim=32 mask=causal&padding dtype=bf16 backward=true"
    "heads=2 head_dim=16 head_dim_v=24 mask=window(8,4) softcap=2 alibi=true dtype=f16 backward=true"
    "heads=4 kv_heads=2 head_dim=32 mask=causal&padding dtype=bf16 lse=true"
    "heads=2 head_dim=16 head_dim_v=24 mask=window(8,4) softcap=2 alibi=true dtype=f16 lse=true"
    "heads=4 kv_heads=2 head_dim=16 mask=causal rope=neox backward=true"
    "heads=2 head_dim=16 head_dim_v=8 mask=window(6,2) rope=interleaved rope_dim=8 rope_theta=500 backward=true"
    "heads=4 kv_heads=2 head_dim=16 mask=causal rope=neox lse=true"
    "heads=2 head_dim=16 head_dim_v=8 mask=window(6,2) rope=interleaved rope_dim=8 rope_theta=500 lse=true"
    "heads=2 kv_heads=1 head_dim=16 mask=causal&tensor softcap=2 score_bias=tensor backward=true dscore_bias=true"
    "heads=2 kv_heads=1 head_dim=16 mask=causal&tensor softcap=2 score_bias=tensor lse=true"
    "heads=2 head_dim=16 head_dim_v=24 mask=(window(3,1)|global(1))&tensor softcap=2 alibi=true score_bias=tensor backward=true"
    "heads=2 head_dim=16 head_dim_v=24 mask=(window(3,1)|global(1))&tensor softcap=2 alibi=true score_bias=tensor lse=true"
    "heads=4 kv_heads=2 head_dim=32 mask=causal&padding dtype=bf16 dropout=0.1 backward=true"
    "heads=4 kv_heads=2 head_dim=32 mask=causal&padding dtype=bf16 dropout=0.1 lse=true"
    "heads=2 kv_heads=1 head_dim=16 mask=causal&tensor softcap=2 score_bias=tensor dropout=0.3 backward=true dscore_bias=true"
    "heads=2 kv_heads=1 head_dim=16 mask=causal&tensor softcap=2 score_bias=tensor dropout=0.3 lse=true"
    "heads=4 kv_heads=2 head_dim=24 head_dim_v=16 mask=causal layout=varlen backward=true"
    "heads=4 kv_heads=2 head_dim=24 head_dim_v=16 mask=causal layout=varlen lse=true")
if(backward_share)
  list(SUBLIST attnc_backward_specs_all 0 3 attnc_backward_specs)
  list(SUBLIST attnc_backward_specs_all 5 3 backward_forwards)
  list(APPEND attnc_backward_specs ${backward_forwards})
else()
  set(attnc_backward_specs ${attnc_backward_specs_all})
endif()
if(NOT DEFINED backward_targets)
  set(backward_targets ${random_sweep_targets})
endif()
if(NOT DEFINED backward_name)
  set(backward_name backward)
endif()
attn_add_kernels(attnc_${backward_name}_kernels SPECS ${attnc_backward_specs} TARGETS ${backward_targets})
attnc_add_test(kernels_${backward_name}_test LABEL ${backward_label} SOURCES backward_test.cpp
  LIBS attnc_${backward_name}_kernels attnc_kernel_test_support)
if(backward_share)
  target_compile_definitions(kernels_${backward_name}_test PRIVATE ATTNC_BACKWARD_SHARE=3)
endif()
# Every bad call of the backward kernels (and their forwards): its status, nothing written (the x86
# tree's CPU library).
if(NOT CMAKE_CROSSCOMPILING AND backward_name STREQUAL "backward")
  attnc_add_refused_calls_test(kernels_backward_refused_calls_test LABEL ${backward_label} LIBS attnc_backward_kernels)
endif()
unset(backward_targets)
unset(backward_name)

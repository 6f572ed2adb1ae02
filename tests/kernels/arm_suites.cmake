# The kernel suites of the AArch64 cross tree (make arm), label arm: tests/arm runs them under
# qemu-user on two emulated CPUs, so that both arm64 variants run. They are the x86 suites' own
# sources on kernels generated for the arm64 set (host and native mean it here, AttncKernels.cmake).
#
# Emulation and generation are slow (~25 s of CPU a spec for both variants on the shared 2-core
# machine), so the f32 kernels are six specs with many features each: every mask term and
# composition, both forms with separate and fused weights, GQA and MQA, Dv != D, odd head dims,
# softcap, alibi, score_bias and lse. The first three are the bad-call suite's, the last the
# dispatch suite's. Keep in step with
# random_sweep_specs.h (ATTNC_ARM_SWEEP; the sweep checks that both lists agree).
attn_add_kernels(attnc_arm_kernels_1
  SPECS
    "heads=4 kv_heads=2 head_dim=64 mask=causal"
    "d_model=96 heads=3 head_dim_v=16 form=block qkv=separate proj_bias=true mask=none"
    "d_model=128 heads=4 kv_heads=2 form=block qkv=fused proj_bias=true mask=causal"
  TARGETS ${ATTNC_TEST_TARGETS})
attn_add_kernels(attnc_arm_kernels_2
  SPECS
    "heads=4 kv_heads=1 head_dim=24 head_dim_v=40 mask=(window(3,3)|global(2)|random(8,1,7))&padding mask_block=8 softcap=3 alibi=true score_bias=tensor lse=true"
    "heads=2 head_dim=16 mask=((document|prefix)&tensor&causal)|window(2,0) lse=true"
    "heads=2 kv_heads=1 head_dim=48 mask=causal"
  TARGETS ${ATTNC_TEST_TARGETS})
set(arm_libs attnc_arm_kernels_1 attnc_arm_kernels_2 attnc_kernel_test_support)

# The randomized sweep over those six (SWEEP_CASES cases a run; tests/arm sets how many).
attnc_add_test(kernels_arm_sweep_test LABEL arm
  SOURCES random_sweep_test.cpp random_cases.cpp random_inputs.cpp random_layout.cpp LIBS ${arm_libs})
target_compile_definitions(kernels_arm_sweep_test PRIVATE ATTNC_ARM_SWEEP=1)
# Every tensor and dim of a call spoiled one at a time: named statuses, outputs untouched.
attnc_add_test(kernels_arm_run_errors_test LABEL arm SOURCES run_errors_test.cpp LIBS ${arm_libs})
# The variant follows the CPU's HWCAP bits and attn_set_max_isa's neon / armv8.2; each is right.
attnc_add_test(kernels_arm_dispatch_test LABEL arm SOURCES dispatch_test.cpp LIBS ${arm_libs})
target_compile_definitions(kernels_arm_dispatch_test PRIVATE "ATTNC_DISPATCH_TARGETS=\"${ATTNC_TEST_TARGETS}\"")

# make test runs a share of the suites below (generating them for both arm64 variants is most of
# the tree's ~17 min of CPU); ATTNC_FULL_TESTS (make test FULL=1, make arm FULL=1) every spec and
# case of each, as the x86 tree runs them.
# f16 and bf16 (bf16 converted to fp32 on both variants), with their masked rows and rounding.
set(random_sweep_targets ${ATTNC_TEST_TARGETS})
set(low_precision_label arm)
if(NOT ATTNC_FULL_TESTS)
  # Not its long-keys case (Sk up to 16384: 68 s of the suite's 93 under qemu on a Cortex-A53);
  # the packed pipeline and the block core over many key blocks run in the x86 tree.
  set(low_precision_test_args "--test-case-exclude=long keys*")
endif()
include(low_precision_kernels.cmake)

# The backward suite; the share: its first three specs.
set(backward_label arm)
if(NOT ATTNC_FULL_TESTS)
  set(backward_share ON)
else()
  set(backward_share OFF)
endif()
include(backward_kernels.cmake)

# The quantized KV caches (issue 37); the share: an int8 and an fp8 paged spec.
include(kv_quant_kernels.cmake)

# Dropout in the forward; the share (dropout_specs.h): the core specs, the mask read back bit for
# bit, and dropout=0 against none; not the block form's or bf16's.
set(dropout_label arm)
if(NOT ATTNC_FULL_TESTS)
  set(dropout_share ON)
endif()
include(dropout_kernels.cmake)

# score_mod / mask_mod (issue 34): the random-expression suite; the share: kernels 0 .. 2 (48
# expressions: GQA, lse, split keys and whole rows).
include(expr_random.cmake)
if(ATTNC_FULL_TESTS)
  attnc_add_expr_random(kernels_arm_expr_random arm 0 34 ${ATTNC_TEST_TARGETS})
else()
  attnc_add_expr_random(kernels_arm_expr_random arm 0 3 ${ATTNC_TEST_TARGETS})
endif()

# The run-time block mask (issue 34, expr_block_mask_specs.h): the whole suite (the pass against
# its own classification, attention given a block mask against fp64, NaN in masked keys, wrong
# block masks; four small kernels).
attn_add_kernels(attnc_arm_expr_block_mask_kernels
  SPEC_SOURCES ${CMAKE_CURRENT_LIST_DIR}/expr_block_mask_specs_export.cpp TARGETS ${ATTNC_TEST_TARGETS})
target_include_directories(attnc_arm_expr_block_mask_kernels_spec_printer PRIVATE ${CMAKE_CURRENT_LIST_DIR})
attnc_add_test(kernels_arm_expr_block_mask_test LABEL arm SOURCES expr_block_mask_test.cpp
  LIBS attnc_arm_expr_block_mask_kernels attnc_kernel_test_support)

# What tests/arm builds of this tree before running label arm (make arm builds all of it).
add_custom_target(attnc_arm_suites
  DEPENDS attn_run kernels_arm_sweep_test kernels_arm_run_errors_test kernels_arm_dispatch_test kernels_low_precision_test
          kernels_backward_test kernels_arm_kv_quant_test kernels_dropout_test kernels_arm_expr_random_test
          kernels_arm_expr_block_mask_test)

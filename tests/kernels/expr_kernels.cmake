# Issue 34's score_mod / mask_mod kernels: the examples (expr_specs.h, read by the spec printer from
# expr_specs_export.cpp, so one list serves kernels and suite), on this machine's target.
attn_add_kernels(attnc_expr_kernels SPEC_SOURCES ${CMAKE_CURRENT_LIST_DIR}/expr_specs_export.cpp TARGETS native)
target_include_directories(attnc_expr_kernels_spec_printer PRIVATE ${CMAKE_CURRENT_LIST_DIR})
attnc_add_test(kernels_expr_examples_test LABEL expr SOURCES expr_examples_test.cpp
  LIBS attnc_expr_kernels attnc_kernel_test_support)
# Every bad call of those kernels, captured tensors included (wrong rank, dims, dtype, strides, null
# data): refused with a named status, outputs untouched.
attnc_add_refused_calls_test(kernels_expr_refused_calls_test LABEL expr LIBS attnc_expr_kernels)

# The random-expression suite: random_expr_spec's kernels 0 .. 31 (8 score_mods and 8 mask_mods
# each: 512 expressions) in two libraries, so that two generate at once. A larger sweep, kernels 34
# .. ATTNC_EXPR_RANDOM_KERNELS - 1 under the label expr_sweep, when configured with more than 34
# (each kernel ~3 s to generate): cmake -DATTNC_EXPR_RANDOM_KERNELS=128, make test LABEL=expr_sweep.
include(expr_random.cmake)
attnc_add_expr_random(kernels_expr_random_a expr 0 16)
attnc_add_expr_random(kernels_expr_random_b expr 16 32)
# The x86 variants: kernels 32 and 33 for the test targets (host: AVX-512 down to baseline x86-64),
# run under each cap of attn_set_max_isa (ATTN_MAX_ISA).
attnc_add_expr_random(kernels_expr_random_x86 expr 32 34 ${ATTNC_TEST_TARGETS})
foreach(isa avx2 sse41 x86-64)
  add_test(NAME kernels_expr_random_x86_${isa}_test COMMAND kernels_expr_random_x86_test)
  set_tests_properties(kernels_expr_random_x86_${isa}_test PROPERTIES LABELS expr ENVIRONMENT ATTN_MAX_ISA=${isa})
  attnc_test_needs(kernels_expr_random_x86_${isa}_test kernels_expr_random_x86_test)
endforeach()
set(ATTNC_EXPR_RANDOM_KERNELS 34 CACHE STRING "random-expression kernels in all (label expr_sweep past 34)")
if(ATTNC_EXPR_RANDOM_KERNELS GREATER 34)
  attnc_add_expr_random(kernels_expr_random_sweep expr_sweep 34 ${ATTNC_EXPR_RANDOM_KERNELS})
endif()

# The run-time block mask (block_mask=input and its pass, expr_block_mask_specs.h): the pass against
# a classification of its own, attention given its block mask against the reference, reuse, NaN in
# masked keys, wrong block masks; the bad-call harness over the four kernels.
attn_add_kernels(attnc_expr_block_mask_kernels SPEC_SOURCES ${CMAKE_CURRENT_LIST_DIR}/expr_block_mask_specs_export.cpp
  TARGETS native)
target_include_directories(attnc_expr_block_mask_kernels_spec_printer PRIVATE ${CMAKE_CURRENT_LIST_DIR})
attnc_add_test(kernels_expr_block_mask_test LABEL expr SOURCES expr_block_mask_test.cpp
  LIBS attnc_expr_block_mask_kernels attnc_kernel_test_support)
attnc_add_refused_calls_test(kernels_expr_block_mask_refused_calls_test LABEL expr LIBS attnc_expr_block_mask_kernels)

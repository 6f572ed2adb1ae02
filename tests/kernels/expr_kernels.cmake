# Issue 34's score_mod / mask_mod kernels: the examples (expr_specs.h, read by the spec printer from
# expr_specs_export.cpp, so one list serves kernels and suite), on this machine's target.
attn_add_kernels(attnc_expr_kernels SPEC_SOURCES ${CMAKE_CURRENT_LIST_DIR}/expr_specs_export.cpp TARGETS native)
target_include_directories(attnc_expr_kernels_spec_printer PRIVATE ${CMAKE_CURRENT_LIST_DIR})
attnc_add_test(kernels_expr_examples_test LABEL expr SOURCES expr_examples_test.cpp
  LIBS attnc_expr_kernels attnc_kernel_test_support)

# The random-expression suite: random_expr_spec's kernels 0 .. 31 (8 score_mods and 8 mask_mods
# each: 512 expressions) in two libraries, so that two generate at once. A larger sweep, kernels 32
# .. ATTNC_EXPR_RANDOM_KERNELS - 1 under the label expr_sweep, when configured with more than 32
# (each kernel ~3 s to generate): cmake -DATTNC_EXPR_RANDOM_KERNELS=128, make test LABEL=expr_sweep.
# attnc_add_expr_random(<name> <label> <first> <last> [<targets>]): kernels first .. last - 1 and
# their suite, for this machine's target or the targets given.
function(attnc_add_expr_random name label first last)
  set(targets native)
  if(ARGC GREATER 4)
    set(targets ${ARGV4})
  endif()
  attn_add_kernels(${name}_kernels SPEC_SOURCES ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/expr_random_export.cpp
    TARGETS ${targets})
  target_link_libraries(${name}_kernels_spec_printer PRIVATE attnc_expr_random)
  target_compile_definitions(${name}_kernels_spec_printer PRIVATE EXPR_RANDOM_FIRST=${first} EXPR_RANDOM_LAST=${last})
  attnc_add_test(${name}_test LABEL ${label} SOURCES ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/expr_random_test.cpp
    LIBS ${name}_kernels attnc_expr_random attnc_kernel_test_support)
  target_compile_definitions(${name}_test PRIVATE EXPR_RANDOM_FIRST=${first} EXPR_RANDOM_LAST=${last})
endfunction()
attnc_add_expr_random(kernels_expr_random_a expr 0 16)
attnc_add_expr_random(kernels_expr_random_b expr 16 32)
set(ATTNC_EXPR_RANDOM_KERNELS 32 CACHE STRING "random-expression kernels in all (label expr_sweep past 32)")
if(ATTNC_EXPR_RANDOM_KERNELS GREATER 32)
  attnc_add_expr_random(kernels_expr_random_sweep expr_sweep 32 ${ATTNC_EXPR_RANDOM_KERNELS})
endif()

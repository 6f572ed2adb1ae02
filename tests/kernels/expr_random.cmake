# attnc_add_expr_random(<name> <label> <first> <last> [<targets>]): random_expr_spec's kernels
# first .. last - 1 (expr_random.h) and their suite, for this machine's target or the targets given.
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

# The Python binding's suites under ASan+UBSan (label python): the project's Python is not
# instrumented, so the compiler's shared ASan runtime (UBSan's handlers included) is preloaded for
# it to load this tree's instrumented libattnc_runtime.so; the kernel libraries are attnc's own
# (uninstrumented Halide code) as in the plain tree. Leak checking is off: CPython keeps interned
# objects, arenas and module state alive until exit on purpose, and NumPy's caches too, so LSan
# would report thousands of blocks that are neither the runtime's nor a bug.
execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libclang_rt.asan-${CMAKE_SYSTEM_PROCESSOR}.so
  OUTPUT_VARIABLE asan_runtime OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT IS_ABSOLUTE "${asan_runtime}" OR NOT EXISTS "${asan_runtime}")
  # GCC names it libasan.so, with UBSan's handlers in libubsan.so beside it.
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libasan.so
    OUTPUT_VARIABLE asan_runtime OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libubsan.so
    OUTPUT_VARIABLE ubsan_runtime OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(IS_ABSOLUTE "${ubsan_runtime}" AND EXISTS "${ubsan_runtime}")
    string(APPEND asan_runtime ":${ubsan_runtime}")
  endif()
endif()
if(NOT IS_ABSOLUTE "${asan_runtime}")
  message(STATUS "python: no shared ASan runtime for ${CMAKE_CXX_COMPILER}: the binding's suites stay out of this tree")
  return()
endif()

attnc_generated_test_library(attnc_python_test_kernels python_library python_library SPECS ${python_test_specs})
add_custom_target(attnc_python_tests ALL DEPENDS attnc_python_test_kernels_gen attnc_runtime_shared)

# Every finding fails the test (halt_on_error); a finding in a child Python (test_binding_safety's
# close-during-run) fails it through that child's exit status. PYTHONMALLOC=malloc: Python's own
# objects (the ctypes shape and stride arrays the runtime reads) come from malloc, which ASan
# guards, not from pymalloc's arenas, where a read past one object lands in the next unseen.
# symbolize=0: the llvm-symbolizer ASan starts for a report outlived the Python that exited on it,
# holding ctest's output open (the test hung until it was killed); a report names each frame's
# module and offset instead (llvm-symbolizer --obj=MODULE OFFSET, or rerun with symbolize=1).
set(sanitize_env
  "LD_PRELOAD=${asan_runtime}"
  "ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:abort_on_error=0:detect_stack_use_after_return=1:symbolize=0"
  "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1"
  "PYTHONMALLOC=malloc"
  "ATTNC_RUNTIME=$<TARGET_FILE:attnc_runtime_shared>"
  "PYTHONPATH=${PROJECT_SOURCE_DIR}/python:${CMAKE_CURRENT_SOURCE_DIR}")
foreach(suite binding binding_safety)
  add_test(NAME python_${suite}_test COMMAND ${ATTNC_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/test_${suite}.py ${python_library})
  set_tests_properties(python_${suite}_test PROPERTIES LABELS python ENVIRONMENT "${sanitize_env}" TIMEOUT 300)
  attnc_test_needs(python_${suite}_test attnc_python_tests)
endforeach()
# attn-inspect end to end (MiniLM through the binding, the tool run as a child Python): where its
# kernels and the model are there, as in the plain tree.
if(TARGET attn_inspect_kernels)
  add_test(NAME python_attn_inspect_test
    COMMAND ${ATTNC_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/test_attn_inspect.py
            ${PROJECT_BINARY_DIR}/tools/attn_inspect/attn_inspect_kernels.so ${python_library})
  set_tests_properties(python_attn_inspect_test PROPERTIES LABELS python TIMEOUT 600
    ENVIRONMENT "${sanitize_env};MPLBACKEND=Agg;OPENBLAS_NUM_THREADS=1")
  attnc_test_needs(python_attn_inspect_test attn_inspect_kernels attnc_python_tests)
endif()

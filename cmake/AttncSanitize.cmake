# Sanitizer and fuzzer builds: instruments every target of the project's own code (runtime, tools,
# tests, kernel entries) in a second build tree that takes its attnc from a plain build.
include_guard(GLOBAL)

if(ATTNC_SANITIZE)
  # libHalide and LLVM are not built with sanitizers, so attnc (codegen) must come from elsewhere;
  # the Halide-emitted kernel objects are not compiled here and stay uninstrumented either way.
  if(NOT ATTNC_TOOL)
    message(FATAL_ERROR "ATTNC_SANITIZE=${ATTNC_SANITIZE} needs ATTNC_TOOL: the path of an attnc "
                        "built without sanitizers (e.g. build/tools/attnc)")
  endif()
  string(REPLACE "," ";" _attnc_sanitizers "${ATTNC_SANITIZE}")
  foreach(sanitizer IN LISTS _attnc_sanitizers)
    if(NOT sanitizer MATCHES "^(address|undefined|leak|thread)$")
      message(FATAL_ERROR "ATTNC_SANITIZE: unknown sanitizer '${sanitizer}' "
                          "(valid: address, undefined, leak, thread, comma separated)")
    endif()
  endforeach()
  # Every finding is fatal, so a test that triggers one fails instead of printing and passing.
  add_compile_options(-fsanitize=${ATTNC_SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer -g)
  add_link_options(-fsanitize=${ATTNC_SANITIZE})
  # Under TSan the test kernels and their Halide runtime are generated with Halide's tsan feature:
  # the runtime's thread pool then synchronizes through atomics TSan sees (without it, every hand-off
  # of work to a pool thread reads as a race).
  if("thread" IN_LIST _attnc_sanitizers)
    set(ATTNC_TEST_TARGET_FEATURES "-tsan")
  endif()
endif()

if(ATTNC_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "ATTNC_BUILD_FUZZERS needs Clang (libFuzzer); the C++ compiler is "
                        "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER}")
  endif()
  # Coverage feedback from the libraries the fuzz targets call, not only from the targets.
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

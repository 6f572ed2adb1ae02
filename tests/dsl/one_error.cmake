# Compiles one file that must fail with exactly one error, which contains every EXPECT part, in
# at most MAX_CHARS characters of output (no template dump, no follow-on errors).
# cmake -DCOMPILE="<compiler;args>" -DEXPECT="<part;part>" -DMAX_CHARS=N -P one_error.cmake
execute_process(COMMAND ${COMPILE} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc EQUAL 0)
  message(FATAL_ERROR "compiled, but must not: ${COMPILE}")
endif()
string(REGEX MATCHALL ": error: " errors "${out}")
list(LENGTH errors error_count)
string(LENGTH "${out}" chars)
if(NOT error_count EQUAL 1 OR chars GREATER MAX_CHARS)
  message(FATAL_ERROR "expected one error in at most ${MAX_CHARS} characters, got ${error_count} in ${chars}:\n${out}")
endif()
foreach(part IN LISTS EXPECT)
  string(FIND "${out}" "${part}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "expected '${part}' in:\n${out}")
  endif()
endforeach()

# consumer_env.cmake: what the consumer builds share: step(), which stops at a failed command
# with its output, and user_env, a command prefix giving the environment a user's shell would
# have (no Halide_DIR, CMAKE_PREFIX_PATH, LD_LIBRARY_PATH, nor the trees' or the .venv's folders
# on PATH). Needs MODE, SOURCE_DIR, MAIN_BUILD_DIR and CMAKE_COMMAND_PATH.
function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer (${MODE}): failed: ${ARGN}\n${out}")
  endif()
  message(STATUS "${out}")
endfunction()

# PATH without the folders of the source tree, the build tree and the .venv.
set(path "$ENV{PATH}")
string(REPLACE ":" ";" path "${path}")
set(clean_path "")
foreach(dir IN LISTS path)
  string(FIND "${dir}" "${SOURCE_DIR}" in_source)
  string(FIND "${dir}" "${MAIN_BUILD_DIR}" in_build)
  if(NOT dir MATCHES "/\\.venv(/|$)" AND NOT in_source EQUAL 0 AND NOT in_build EQUAL 0)
    list(APPEND clean_path "${dir}")
  endif()
endforeach()
list(JOIN clean_path ":" clean_path)
set(user_env ${CMAKE_COMMAND_PATH} -E env --unset=Halide_DIR --unset=CMAKE_PREFIX_PATH --unset=LD_LIBRARY_PATH
    "PATH=${clean_path}")

# Builds tests/examples/consumer as a user's project would, following README.md, then runs it.
# MODE=find_package: `cmake --install` this build into a prefix, move the prefix elsewhere, check
#   that nothing in it points back into the source tree, its build tree or the .venv, that the
#   Python binding imports from it and loads the runtime beside it, then build the consumer
#   against the moved prefix alone.
# MODE=add_subdirectory: the consumer adds the source tree; Halide is found in the source tree's
#   .venv without Halide_DIR or the .venv on PATH. TOOL, when given, is the consumer's ATTNC_TOOL
#   (the generator is not built there).
# Either way the consumer's configure and build see neither Halide_DIR, CMAKE_PREFIX_PATH nor the
# .venv's bin folder in their environment.
include(${CMAKE_CURRENT_LIST_DIR}/consumer_env.cmake)

file(REMOVE_RECURSE "${WORK_DIR}")
set(common -G "${GENERATOR}" -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM} -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_C_COMPILER=${CC} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
if(MODE STREQUAL "add_subdirectory")
  set(tool_arg "")
  if(TOOL)
    set(tool_arg -DATTNC_TOOL=${TOOL})
  endif()
  step(${user_env} ${CMAKE_COMMAND_PATH} -S ${CONSUMER_DIR} -B ${WORK_DIR}/build ${common}
       -DATTNC_SOURCE_DIR=${SOURCE_DIR} ${tool_arg})
else()
  step(${CMAKE_COMMAND_PATH} --install ${MAIN_BUILD_DIR} --prefix ${WORK_DIR}/staged)
  set(prefix "${WORK_DIR}/moved/prefix")
  file(MAKE_DIRECTORY "${WORK_DIR}/moved")
  file(RENAME "${WORK_DIR}/staged" "${prefix}")

  # The package files name no path outside the prefix.
  file(GLOB_RECURSE package_files "${prefix}/lib/cmake/*")
  get_filename_component(venv "${SOURCE_DIR}/.venv" REALPATH)
  foreach(file IN LISTS package_files)
    file(READ "${file}" text)
    foreach(outside "${SOURCE_DIR}" "${MAIN_BUILD_DIR}" "${venv}" "${WORK_DIR}/staged")
      string(FIND "${text}" "${outside}" at)
      if(NOT at EQUAL -1)
        message(FATAL_ERROR "consumer (${MODE}): ${file} names '${outside}'")
      endif()
    endforeach()
  endforeach()
  # The tool's shared libraries resolve inside the prefix, and its RUNPATH is relative to it.
  file(GET_RUNTIME_DEPENDENCIES EXECUTABLES "${prefix}/bin/attnc"
       RESOLVED_DEPENDENCIES_VAR resolved UNRESOLVED_DEPENDENCIES_VAR unresolved
       PRE_EXCLUDE_REGEXES "^lib(c|m|dl|rt|pthread|gcc_s|stdc\\+\\+)\\.so" "^ld-linux")
  if(unresolved)
    message(FATAL_ERROR "consumer (${MODE}): bin/attnc needs '${unresolved}', not found")
  endif()
  set(halide_found FALSE)
  foreach(lib IN LISTS resolved)
    if(lib MATCHES "libHalide")
      string(FIND "${lib}" "${prefix}/" at)
      if(NOT at EQUAL 0)
        message(FATAL_ERROR "consumer (${MODE}): bin/attnc loads libHalide from '${lib}', not from the prefix")
      endif()
      set(halide_found TRUE)
    endif()
  endforeach()
  if(NOT halide_found)
    message(FATAL_ERROR "consumer (${MODE}): bin/attnc does not link libHalide? resolved: ${resolved}")
  endif()
  # The Python binding runs from the prefix alone: the package in lib/python finds the runtime
  # beside itself (a Python with NumPy: the .venv's; no ATTNC_RUNTIME, nothing of the clone).
  foreach(file lib/libattnc_runtime.so lib/python/attnc/__init__.py lib/python/attnc/libattnc_runtime.so)
    if(NOT EXISTS "${prefix}/${file}")
      message(FATAL_ERROR "consumer (${MODE}): the prefix has no ${file}")
    endif()
  endforeach()
  if(PYTHON)
    execute_process(COMMAND ${CMAKE_COMMAND_PATH} -E env --unset=ATTNC_RUNTIME "PYTHONPATH=${prefix}/lib/python"
                            ${PYTHON} -c "import attnc; print(attnc.load_runtime())"
                    WORKING_DIRECTORY "${WORK_DIR}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0 OR NOT out STREQUAL "${prefix}/lib/python/attnc/libattnc_runtime.so\n")
      message(FATAL_ERROR "consumer (${MODE}): attnc from the prefix loaded '${out}' (exit ${rc}), expected "
                          "${prefix}/lib/python/attnc/libattnc_runtime.so\n${err}")
    endif()
  endif()
  find_program(readelf readelf)
  if(readelf)
    execute_process(COMMAND ${readelf} -d "${prefix}/bin/attnc" OUTPUT_VARIABLE dynamic)
    string(REGEX MATCH "RUNPATH[^\n]*" runpath "${dynamic}")
    if(NOT runpath MATCHES "\\[\\$ORIGIN/\\.\\./lib[^:]*\\]")
      message(FATAL_ERROR "consumer (${MODE}): bin/attnc's ${runpath}: expected only $ORIGIN/../lib")
    endif()
  endif()

  step(${user_env} ${CMAKE_COMMAND_PATH} -S ${CONSUMER_DIR} -B ${WORK_DIR}/build ${common}
       -DCMAKE_PREFIX_PATH=${prefix})
  # Invalid text specs are all reported when configuring, before anything is generated.
  execute_process(COMMAND ${user_env} ${CMAKE_COMMAND_PATH} -S ${CONSUMER_DIR}_bad_specs -B ${WORK_DIR}/bad_specs
                          ${common} -DCMAKE_PREFIX_PATH=${prefix}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  foreach(part "attn_add_kernels(bad_kernels): 2 invalid text spec(s) in SPECS"
               "'d_model=770 heads=12': " "(12) must divide d_model (770)"
               "'heads=4 kv_heads=3 head_dim=16': " "kv_heads (3) must divide heads (4)")
    string(FIND "${out}" "${part}" at)
    if(rc EQUAL 0 OR at EQUAL -1)
      message(FATAL_ERROR "consumer (${MODE}): configuring invalid specs: expected '${part}' (exit ${rc}):\n${out}")
    endif()
  endforeach()

  file(STRINGS "${WORK_DIR}/build/CMakeCache.txt" attnc_dir REGEX "^attnc_DIR:")
  string(FIND "${attnc_dir}" "${prefix}/" at)
  if(NOT at GREATER -1)
    message(FATAL_ERROR "consumer (${MODE}): found attnc elsewhere: ${attnc_dir}")
  endif()
endif()
step(${user_env} ${CMAKE_COMMAND_PATH} --build ${WORK_DIR}/build)
step(${WORK_DIR}/build/consumer)

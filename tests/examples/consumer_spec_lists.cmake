# Builds and runs tests/examples/consumer against this build's installed prefix once per CMake
# generator and kind of spec list the consumer_find_package / consumer_add_subdirectory tests
# (Ninja, mixed lists) leave out: "Unix Makefiles" (CMake's default, what README.md's
# `cmake -S my_app -B my_app/build` gives) with C++-only, text-only and mixed lists, and Ninja with
# C++-only and text-only ones. A C++-only list under "Unix Makefiles" is what issue 35 found broken:
# the spec printer wrote into a folder nothing had made.
set(MODE spec_lists)
include(${CMAKE_CURRENT_LIST_DIR}/consumer_env.cmake)

file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
step(${CMAKE_COMMAND_PATH} --install ${MAIN_BUILD_DIR} --prefix ${prefix})

foreach(build IN ITEMS "Unix Makefiles|cpp" "Unix Makefiles|text" "Unix Makefiles|mixed" "Ninja|cpp" "Ninja|text")
  string(REPLACE "|" ";" build "${build}")
  list(GET build 0 generator)
  list(GET build 1 lists)
  string(REPLACE " " "_" dir "${generator}_${lists}")
  set(dir "${WORK_DIR}/${dir}")
  # Ninja comes from the .venv, which is not on the user's PATH; make is the system's.
  set(make_program "")
  if(generator STREQUAL "Ninja")
    set(make_program -DCMAKE_MAKE_PROGRAM=${NINJA})
  endif()
  message(STATUS "consumer (${MODE}): ${generator}, ${lists} spec lists")
  step(${user_env} ${CMAKE_COMMAND_PATH} -S ${CONSUMER_DIR} -B ${dir} -G "${generator}" ${make_program}
       -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_C_COMPILER=${CC}
       -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_PREFIX_PATH=${prefix} -DCONSUMER_SPEC_LISTS=${lists})
  step(${user_env} ${CMAKE_COMMAND_PATH} --build ${dir})
  execute_process(COMMAND ${dir}/consumer RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  # Exactly the kernels of that list ran, and the other one is not registered.
  set(expected_cpp "attn_core_h1_kv1_d16_f32: max abs error")
  set(expected_text "attn_core_h2_kv1_d16_f32_causal: max abs error")
  if(lists STREQUAL "cpp")
    set(expected_text "attn_core_h2_kv1_d16_f32_causal: absent, as expected")
  elseif(lists STREQUAL "text")
    set(expected_cpp "attn_core_h1_kv1_d16_f32: absent, as expected")
  endif()
  foreach(part "${expected_cpp}" "${expected_text}")
    string(FIND "${out}" "${part}" at)
    if(NOT rc EQUAL 0 OR at EQUAL -1)
      message(FATAL_ERROR "consumer (${MODE}, ${generator}, ${lists}): expected '${part}' (exit ${rc}):\n${out}")
    endif()
  endforeach()
  message(STATUS "${out}")
endforeach()

# Builds the examples as a user's project would, then runs them. MODE: add_subdirectory or
# find_package (after installing the already-built attnc into a prefix).
function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer (${MODE}): failed: ${ARGN}\n${out}")
  endif()
  message(STATUS "${out}")
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
set(common -G "${GENERATOR}" -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM} -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_C_COMPILER=${CC} -DEXAMPLES_DIR=${EXAMPLES_DIR}
    -DGPT2_TARGETS=native -DSEED_TARGETS=native -DBERT_TARGETS=native -DLONGFORMER_TARGETS=native)
if(MODE STREQUAL "add_subdirectory")
  step(${CMAKE_COMMAND_PATH} -S ${CONSUMER_DIR} -B ${WORK_DIR}/build ${common}
       -DATTNC_SOURCE_DIR=${SOURCE_DIR} -DHalide_DIR=${HALIDE_DIR})
else()
  step(${CMAKE_COMMAND_PATH} --install ${MAIN_BUILD_DIR} --prefix ${WORK_DIR}/prefix)
  step(${CMAKE_COMMAND_PATH} -S ${CONSUMER_DIR} -B ${WORK_DIR}/build ${common}
       -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
endif()
step(${CMAKE_COMMAND_PATH} --build ${WORK_DIR}/build)
step(${WORK_DIR}/build/gpt2_attention/gpt2_attention 33)
step(${WORK_DIR}/build/seed_configs/seed_configs 65)
step(${WORK_DIR}/build/bert_padding/bert_padding 32)
step(${WORK_DIR}/build/longformer/longformer 1100)

# check_spec_printer.cmake: the spec printer writes its file, and leaves an unchanged file untouched.
# cmake -DPRINTER=<exe> -DOUT=<file> -P check_spec_printer.cmake
set(expected
    "name=gpt2 d_model=768 heads=12 kv_heads=12 head_dim=64 head_dim_v=64 form=core qkv=separate proj_bias=false mask=causal dtype=f32 scale=0.125
name=gpt2_block d_model=768 heads=12 kv_heads=12 head_dim=64 head_dim_v=64 form=block qkv=fused proj_bias=true mask=causal dtype=f32 scale=0.125
")

function(run_printer)
  execute_process(COMMAND "${PRINTER}" "${OUT}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "spec printer exited with ${rc}")
  endif()
  file(READ "${OUT}" content)
  if(NOT content STREQUAL expected)
    message(FATAL_ERROR "spec printer wrote:\n${content}\nexpected:\n${expected}")
  endif()
endfunction()

file(REMOVE "${OUT}")
run_printer()

# Stale content is replaced.
file(WRITE "${OUT}" "stale\n")
run_printer()

# Same content: the file keeps its time stamp, so nothing that depends on it rebuilds.
file(TIMESTAMP "${OUT}" before "%s")
execute_process(COMMAND "${CMAKE_COMMAND}" -E sleep 1.1)
run_printer()
file(TIMESTAMP "${OUT}" after "%s")
if(NOT before STREQUAL after)
  message(FATAL_ERROR "spec printer rewrote an unchanged file (${before} -> ${after})")
endif()

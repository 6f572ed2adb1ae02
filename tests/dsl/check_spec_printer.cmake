# check_spec_printer.cmake: the spec printer writes its file, and leaves an unchanged file untouched.
# cmake -DPRINTER=<exe> -DOUT=<file> -P check_spec_printer.cmake
set(expected
    "name=gpt2 d_model=768 heads=12 kv_heads=12 head_dim=64 head_dim_v=64 form=core qkv=separate proj_bias=false mask=causal mask_block=0 dtype=f32 scale=0.125 softcap=none alibi=false score_bias=none lse=false
name=gpt2_block d_model=768 heads=12 kv_heads=12 head_dim=64 head_dim_v=64 form=block qkv=fused proj_bias=true mask=causal mask_block=0 dtype=f32 scale=0.125 softcap=none alibi=false score_bias=none lse=false
name=bigbird d_model=512 heads=8 kv_heads=8 head_dim=64 head_dim_v=64 form=core qkv=separate proj_bias=false mask=(window(64,64)|global(2)|random(64,3,42))&padding mask_block=64 dtype=f32 scale=0.125 softcap=30 alibi=true score_bias=tensor lse=true
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

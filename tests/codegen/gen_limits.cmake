# gen_limits.cmake: attnc gen builds the specs that sit exactly on the limits of docs/DSL.md
# (structural positions 2^24, heads 4096, a block weight just below 2 GiB, a cache page of
# 2^31 - 1024 elements), so `attnc check` accepts nothing that Halide then refuses. One baseline
# target, entry source only (~50 s).
# cmake -DATTNC=<attnc> -DWORK_DIR=<scratch dir> -P gen_limits.cmake
file(REMOVE_RECURSE "${WORK_DIR}")
set(specs
    "heads=1 head_dim=16 mask=(window(16777216,16777216)|global(16777216))&random(16777216,1,4294967295) mask_block=16777216"
    "heads=4096 head_dim=16 mask=causal"
    "d_model=23168 heads=32 form=block"
    # Issue 32: P * kv_heads * head_dim just below 2^31 (paged(2097152) is refused by check).
    "heads=1 head_dim=1024 kv_cache=paged(2097151)")
set(arguments)
foreach(spec IN LISTS specs)
  list(APPEND arguments --spec "${spec}")
endforeach()
execute_process(COMMAND ${ATTNC} gen ${arguments} --target x86-64-linux --entry-source-only --no-runtime
                        -o "${WORK_DIR}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gen failed on specs at the limits (exit ${rc}):\n${out}\n${err}")
endif()
foreach(id attn_core_h1_kv1_d16_f32_and_or_win16777216x16777216_glob16777216_rnd16777216x1s4294967295_mb16777216
           attn_core_h4096_kv4096_d16_f32_causal attn_block_m23168_h32_kv32_d724_f32_sep
           attn_core_h1_kv1_d1024_f32_kvp2097151)
  string(FIND "${out}" "kernel ${id}\n" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "gen did not report kernel ${id}:\n${out}")
  endif()
endforeach()

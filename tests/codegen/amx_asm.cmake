# amx_asm.cmake: the Sapphire Rapids target's bf16 kernels multiply on AMX tiles (issue 36): the
# assembly configures tiles (ldtilecfg), loads them (tileloadd) and multiplies them (tdpbf16ps)
# in both whole-row pipelines of the core and in the block form's projections; a head_dim that is
# no multiple of 32 converts bf16 to fp32 (no vdpbf16ps pairs on Intel); the Zen 4 target keeps its code free of tile
# instructions. Assembly only: no AMX machine needed. cmake -DATTNC=<attnc> -DWORK_DIR=<scratch dir> -P amx_asm.cmake
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(avx512 "x86-64-linux-sse41-avx-f16c-fma-avx2-avx512-avx512_skylake-avx512_cannonlake-avx512_zen4")
set(spr "${avx512}-avx512_sapphirerapids")

# Generates `spec` for `target` with --asm into WORK_DIR/<name>; the text of each whole-row
# pipeline's assembly (main and packed) in <name>_main and <name>_packed.
function(gen_asm name spec target)
  execute_process(COMMAND ${ATTNC} gen --spec "${spec}" --target ${target} --asm -o "${WORK_DIR}/${name}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "gen ${name} failed (${rc}): ${spec}\n${out}\n${err}")
  endif()
  file(GLOB main "${WORK_DIR}/${name}/*_v0.s")
  list(FILTER main EXCLUDE REGEX "_(packed|blocks|split_keys)_v0\\.s$")
  file(GLOB packed "${WORK_DIR}/${name}/*_packed_v0.s")
  if(NOT main OR NOT packed)
    message(FATAL_ERROR "gen ${name}: no main or packed pipeline assembly in ${WORK_DIR}/${name}")
  endif()
  file(READ "${main}" text)
  set(${name}_main "${text}" PARENT_SCOPE)
  file(READ "${packed}" text)
  set(${name}_packed "${text}" PARENT_SCOPE)
endfunction()

function(expect_instructions text what)
  foreach(instruction ldtilecfg tileloadd tdpbf16ps)
    string(REGEX MATCH "[ \t]${instruction}[ \t]" found "${text}")
    if(NOT found)
      message(FATAL_ERROR "${what}: no ${instruction}")
    endif()
  endforeach()
endfunction()

function(expect_no_tiles text what)
  string(REGEX MATCH "[ \t](tdpbf16ps|tileloadd|ldtilecfg)[ \t]" found "${text}")
  if(found)
    message(FATAL_ERROR "${what}: unexpected tile instruction '${found}'")
  endif()
endfunction()

gen_asm(causal "heads=4 kv_heads=2 head_dim=64 mask=causal&padding dtype=bf16" ${spr})
expect_instructions("${causal_main}" "sapphirerapids bf16 causal d64, main pipeline")
expect_instructions("${causal_packed}" "sapphirerapids bf16 causal d64, packed pipeline")

gen_asm(d48 "heads=2 head_dim=48 dtype=bf16" ${spr})
expect_no_tiles("${d48_main}" "sapphirerapids bf16 d48 (no multiple of 32)")
# Off tiles, Intel bf16 converts to fp32: its cores run vdpbf16ps at half the FMA's rate.
string(FIND "${d48_main}" "vdpbf16ps" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "sapphirerapids bf16 d48: vdpbf16ps pairs, where fp32 conversion was expected")
endif()

# The block form's q/k/v projections (bf16 x, 64 inputs, 64 outputs each) on tiles too; its core
# is the block core (no whole-row pipelines), so only the one pipeline's assembly is read.
execute_process(COMMAND ${ATTNC} gen --spec "d_model=64 heads=2 form=block qkv=separate dtype=bf16" --target ${spr}
                        --asm -o "${WORK_DIR}/block" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gen block failed (${rc})\n${out}\n${err}")
endif()
file(GLOB block_asm "${WORK_DIR}/block/*_v0.s")
file(READ "${block_asm}" block_text)
expect_instructions("${block_text}" "sapphirerapids bf16 block form, projections")

gen_asm(zen4 "heads=4 kv_heads=2 head_dim=64 mask=causal&padding dtype=bf16" ${avx512})
expect_no_tiles("${zen4_main}" "zen4 bf16 causal d64")

# attnc_cli.cmake: attnc's command line against hostile input: --help and --opt=value for every
# command, specs beyond the limits refused by check, id and gen with the field named, bad spec
# files named as such, and a failed gen leaving nothing in its output directory.
# cmake -DATTNC=<attnc> -DWORK_DIR=<scratch dir> -P attnc_cli.cmake
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
# One baseline target keeps the few kernels generated here at a few seconds each.
set(target x86-64-linux)

function(expect_run code out_var err_var)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc STREQUAL code)
    message(FATAL_ERROR "expected exit ${code}, got ${rc}: ${ARGN}\nstdout: ${out}\nstderr: ${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
  set(${err_var} "${err}" PARENT_SCOPE)
endfunction()

function(expect_contains text part what)
  string(FIND "${text}" "${part}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${what}: expected '${part}' in:\n${text}")
  endif()
endfunction()

# The files under `dir` (relative, sorted, hidden ones included), in `out_var`.
function(list_files dir out_var)
  file(GLOB_RECURSE files LIST_DIRECTORIES false RELATIVE "${dir}" "${dir}/*")
  list(SORT files)
  set(${out_var} "${files}" PARENT_SCOPE)
endfunction()

# ---- --help, -h and --opt=value ---------------------------------------------------------------
foreach(command gen tune runtime check id tensors)
  foreach(flag --help -h)
    expect_run(0 out err ${ATTNC} ${command} ${flag})
    expect_contains("${out}" "usage: attnc ${command} " "${command} ${flag}")
  endforeach()
  # Help wins over what else was given, and goes to stdout.
  expect_run(0 out err ${ATTNC} ${command} --spec "heads=2 head_dim=16" --help)
  expect_contains("${out}" "usage: attnc ${command} " "${command} --spec ... --help")
endforeach()
expect_run(0 out err ${ATTNC} --help)
expect_contains("${out}" "attnc COMMAND --help" "attnc --help")
# Every command says what it does in the overview, and gen's help explains every option it takes.
expect_contains("${out}" "generate a kernel library (static, or shared with --shared)" "attnc --help, gen")
expect_contains("${out}" "write the Halide runtime that an application's static kernels share" "attnc --help, runtime")
expect_run(0 out err ${ATTNC} gen --help)
foreach(part "the keys and\n                       values are in docs/DSL.md (Text form)"
             "--basename NAME      default: the kernel id when there is one spec, else attn_kernels"
             "where it compiles the entry, DIR/include/ with attn/runtime.h" "--no-runtime         do not write NAME_runtime.a"
             "--entry-source-only  leave NAME_entry.c as source" "--cc CC              C compiler for the entry"
             "-v                   print a line per kernel" "--stmt, --asm" "--tuning FILE" "--spec-file FILE")
  expect_contains("${out}" "${part}" "attnc gen --help")
endforeach()

expect_run(0 out err ${ATTNC} id "--spec=heads=2 head_dim=16 mask=causal")
expect_contains("${out}" "attn_core_h2_kv2_d16_f32_causal" "id --spec=TEXT")
expect_run(0 out err ${ATTNC} check "--spec=heads=2 head_dim=16")
expect_contains("${out}" "id: attn_core_h2_kv2_d16_f32" "check --spec=TEXT")
expect_run(2 out err ${ATTNC} check --spec "heads=2 head_dim=16" "--spec=heads=4 head_dim=16")
expect_contains("${err}" "--spec given twice ('heads=2 head_dim=16', then 'heads=4 head_dim=16')" "two specs")
expect_run(2 out err ${ATTNC} check)
expect_contains("${err}" "expected --spec TEXT" "check without a spec")
# --target defaults to host: without it, gen goes on to read the spec (and refuses this one).
expect_run(1 out err ${ATTNC} gen --spec "heads=3 d_model=64" -o "${WORK_DIR}/no_target")
expect_contains("${err}" "heads" "gen without --target")
# Every invalid spec is named, not only the first.
expect_run(1 out err ${ATTNC} gen --spec "heads=3 d_model=64" --spec "heads=2 head_dim=16"
           --spec "heads=4 kv_heads=3 head_dim=16" -o "${WORK_DIR}/two_invalid")
expect_contains("${err}" "spec 1 ('heads=3 d_model=64'): " "gen with two invalid specs")
expect_contains("${err}" "spec 3 ('heads=4 kv_heads=3 head_dim=16'): " "gen with two invalid specs")
expect_run(2 out err ${ATTNC} gen --shared=yes)
expect_contains("${err}" "--shared takes no value (got '--shared=yes')" "a flag with a value")
expect_run(2 out err ${ATTNC} gen --spec)
expect_contains("${err}" "--spec needs a value" "an option without its value")
expect_run(2 out err ${ATTNC} tune "--spec=heads=2 head_dim=16" --shape=2,37)
expect_contains("${err}" "--shape '2,37': expected B,SQ,SK" "tune --shape=")
expect_run(2 out err ${ATTNC} tune "--spec=heads=2 head_dim=16" --shape=1,2,3 --threads=-4)
expect_contains("${err}" "--threads '-4' is not a valid count" "tune --threads=")

# ---- values beyond the limits: refused with the field, by check, id and gen -------------------
string(REPEAT "(" 3000 open)
string(REPEAT ")" 3000 close)
set(deep "heads=1 head_dim=16 mask=${open}causal${close}")
foreach(command check id)
  expect_run(1 out err ${ATTNC} ${command} --spec "${deep}")
  expect_contains("${err}" "key 'mask': parentheses nest deeper than 64 at offset 65" "${command}, 3000 parentheses")
endforeach()
expect_run(1 out err ${ATTNC} gen --spec "${deep}" --target ${target} -o "${WORK_DIR}/deep")
expect_contains("${err}" "parentheses nest deeper than 64" "gen, 3000 parentheses")

set(refused
    "heads=2147483647 head_dim=16|heads (2147483647) must be at most 4096"
    "heads=65536 head_dim=65536|heads (65536) must be at most 4096"
    "heads=128 head_dim=1024|heads * head_dim (131072) must be at most 65536"
    "heads=1 head_dim=16 mask=window(2147483647,0)|window bound (2147483647) must be at most 16777216"
    "heads=1 head_dim=16 mask=window(1073741824,0)|window bound (1073741824) must be at most 16777216"
    "heads=1 head_dim=16 mask_block=2147483647|mask_block (2147483647) must be at most 16777216"
    "heads=1 head_dim=16 mask=global(2147483647)|global(G) needs G <= 16777216 (got 2147483647)"
    "heads=1 head_dim=16 mask=random(64,2147483647,1)|random(BS,N,SEED) needs N <= 16 blocks (got 2147483647)"
    "heads=1 head_dim=16 mask=random(64,64,1)|random(BS,N,SEED) needs N <= 16 blocks (got 64)"
    "heads=1 head_dim=16 mask=random(2147483647,1,1)|needs a block size BS <= 16777216 (got 2147483647)"
    "d_model=32768 heads=32 form=block|w_q [32768, 32768] would hold 1073741824 elements"
    # Issue 32: check accepted these and gen failed inside Halide.
    "heads=1 head_dim=16 kv_cache=paged(4) probs=true|probs=true does not combine with kv_cache"
    "heads=1 head_dim=1024 kv_cache=paged(16777216)|16777216 * 1024 = 17179869184 elements"
    # Issue 34: score_mod / mask_mod, named with the expression and the column.
    "heads=1 head_dim=16 mask_mod=\"q - k\"|key 'mask_mod': \"q - k\" at column 3 ('q - k'): mask_mod must be a bool"
    "heads=1 head_dim=16 inputs=rel:f32[H,8] score_mod=\"s + rel[h]\"|at column 5 ('rel[h]'): gives 1 indices to a tensor of rank 2"
    "heads=1 head_dim=16 score_mod=\"s * x\"|key 'score_mod': \"s * x\" at column 5: unknown name 'x'"
    "heads=1 head_dim=16 score_mod=\"s / 0\"|at column 5 ('0'): division by a literal zero")
foreach(entry IN LISTS refused)
  string(FIND "${entry}" "|" bar)
  string(SUBSTRING "${entry}" 0 ${bar} spec)
  math(EXPR after "${bar} + 1")
  string(SUBSTRING "${entry}" ${after} -1 expected)
  expect_run(1 out err ${ATTNC} check --spec "${spec}")
  expect_contains("${err}" "${expected}" "check --spec '${spec}'")
  # gen refuses before it creates or writes anything.
  expect_run(1 out err ${ATTNC} gen --spec "${spec}" --target ${target} -o "${WORK_DIR}/refused")
  expect_contains("${err}" "${expected}" "gen --spec '${spec}'")
  if(EXISTS "${WORK_DIR}/refused")
    message(FATAL_ERROR "gen created its output directory for the invalid spec '${spec}'")
  endif()
endforeach()
# tune: shapes whose tensors no kernel can address are refused, not allocated.
expect_run(2 out err ${ATTNC} tune "--spec=heads=1 head_dim=16" --shape=1,99999999999,3)
expect_contains("${err}" "sizes must be positive integers up to 2147483647" "tune, a size beyond int32")
expect_run(1 out err ${ATTNC} tune "--spec=heads=1 head_dim=16" --shape=100000,100000,100000 --max-candidates=1
           --runs=1 --threads=1)
expect_contains("${err}" "argument 'q' would hold more than 2147483647 elements" "tune, a huge shape")
string(REPEAT "x" 70000 long_text)
expect_run(1 out err ${ATTNC} check "--spec=${long_text}")
expect_contains("${err}" "spec text is 70000 bytes long; at most 65536" "a 70000-byte spec")

# ---- spec files that are not one --------------------------------------------------------------
expect_run(2 out err ${ATTNC} gen --spec-file "${WORK_DIR}" --target ${target} -o "${WORK_DIR}/out")
expect_contains("${err}" "spec file '${WORK_DIR}' is a directory" "--spec-file DIR")
expect_run(2 out err ${ATTNC} gen "--spec-file=${WORK_DIR}/missing.txt" --target ${target} -o "${WORK_DIR}/out")
expect_contains("${err}" "cannot read spec file '${WORK_DIR}/missing.txt': No such file or directory" "missing file")
file(WRITE "${WORK_DIR}/comments.txt" "# only a comment\n\n   \n")
expect_run(2 out err ${ATTNC} gen --spec-file "${WORK_DIR}/comments.txt" --target ${target} -o "${WORK_DIR}/out")
expect_contains("${err}" "holds no spec (only blank lines and # comments)" "a spec file without specs")
string(REPEAT "# padding line of a file far larger than any spec file\n" 20000 big)
file(WRITE "${WORK_DIR}/big.txt" "${big}")
expect_run(2 out err ${ATTNC} gen --spec-file "${WORK_DIR}/big.txt" --target ${target} -o "${WORK_DIR}/out")
expect_contains("${err}" "is larger than 1048576 bytes" "a 1 MB spec file")
# Issue 32: a fifo blocked forever and /dev/zero grew without end (2 GB in 3.6 s, then bad_alloc);
# both are refused before they are opened. (A 60 s limit, so that a hang fails instead of waiting.)
execute_process(COMMAND mkfifo "${WORK_DIR}/specs.fifo")
foreach(option --spec-file --tuning)
  foreach(path_kind "${WORK_DIR}/specs.fifo|a fifo" "/dev/zero|a character device" "${WORK_DIR}|a directory")
    string(FIND "${path_kind}" "|" bar)
    string(SUBSTRING "${path_kind}" 0 ${bar} path)
    math(EXPR after "${bar} + 1")
    string(SUBSTRING "${path_kind}" ${after} -1 kind)
    execute_process(COMMAND ${ATTNC} gen --spec "heads=1 head_dim=16" ${option} "${path}" --target ${target}
                            -o "${WORK_DIR}/out"
                    RESULT_VARIABLE rc ERROR_VARIABLE err TIMEOUT 60)
    if(NOT rc STREQUAL "2")
      message(FATAL_ERROR "${option} ${path}: expected exit 2, got ${rc}\nstderr: ${err}")
    endif()
    expect_contains("${err}" "is ${kind}; expected a regular text file" "${option} ${path}")
  endforeach()
endforeach()
file(WRITE "${WORK_DIR}/big_tuning.txt" "${big}")
expect_run(2 out err ${ATTNC} gen --spec "heads=1 head_dim=16" --tuning "${WORK_DIR}/big_tuning.txt"
           --target ${target} -o "${WORK_DIR}/out")
expect_contains("${err}" "tuning file '${WORK_DIR}/big_tuning.txt' is larger than 1048576 bytes" "a 1 MB tuning file")
if(EXISTS "${WORK_DIR}/out")
  message(FATAL_ERROR "gen created its output directory although its arguments were refused")
endif()

# ---- gen output: all files or none --------------------------------------------------------------
set(spec "heads=1 head_dim=16 mask=causal")
set(out_dir "${WORK_DIR}/gen")
file(WRITE "${out_dir}/already_there.txt" "left alone\n")
# The entry source cannot compile: gen fails after every kernel is built.
expect_run(1 out err ${ATTNC} gen --spec "${spec}" --target=${target} --cc=false -o "${out_dir}")
expect_contains("${err}" "command failed: false" "gen with a failing C compiler")
list_files("${out_dir}" left)
if(NOT left STREQUAL "already_there.txt")
  message(FATAL_ERROR "a failed gen left files in its output directory: ${left}")
endif()

expect_run(0 out err ${ATTNC} gen "--spec=${spec}" --target=${target} -o "${out_dir}" --basename=cli_kernels)
foreach(name cli_kernels.a cli_kernels.h cli_kernels.json cli_kernels_entry.c cli_kernels_runtime.a
             include/attn/runtime.h)
  if(NOT EXISTS "${out_dir}/${name}")
    message(FATAL_ERROR "gen did not write ${name}; it printed:\n${out}")
  endif()
endforeach()
# One C header for the library; the variants' own declarations stay inside the entry source.
file(GLOB headers RELATIVE "${out_dir}" "${out_dir}/*.h")
if(NOT headers STREQUAL "cli_kernels.h")
  message(FATAL_ERROR "gen wrote the headers '${headers}'; expected only cli_kernels.h")
endif()
expect_contains("${out}" "wrote ${out_dir}/cli_kernels.a\n" "gen's list of files")
expect_contains("${out}" "wrote ${out_dir}/cli_kernels.json\n" "gen's list of files")
file(READ "${out_dir}/cli_kernels.json" manifest)
expect_contains("${manifest}" "\"compute\": \"fp32\"" "the manifest's compute path of an f32 variant")
list_files("${out_dir}" after)
string(FIND "${after}" ".attnc-partial" staging_left)
if(NOT staging_left EQUAL -1)
  message(FATAL_ERROR "gen left its staging directory behind: ${after}")
endif()
file(READ "${out_dir}/already_there.txt" kept)
if(NOT kept STREQUAL "left alone\n")
  message(FATAL_ERROR "gen changed a file it did not write")
endif()

expect_run(0 out err ${ATTNC} runtime --target=${target} -o "${WORK_DIR}/runtime/halide_runtime.a")
list_files("${WORK_DIR}/runtime" runtime_files)
if(NOT runtime_files STREQUAL "halide_runtime.a")
  message(FATAL_ERROR "attnc runtime wrote: ${runtime_files}")
endif()
expect_run(1 out err ${ATTNC} runtime --target=${target} -o "${WORK_DIR}/runtime/")
expect_contains("${err}" "is a directory; expected a file name" "attnc runtime -o DIR/")

# ---- probs=true with a KV cache (on a GPU target): refused at generation, saying why ------------
expect_run(1 out err ${ATTNC} gen --spec "heads=2 head_dim=16 kv_cache=contiguous probs=true"
           --target x86-64-linux-opencl -o "${WORK_DIR}/probs_gpu")
expect_contains("${err}" "probs=true does not combine with kv_cache" "probs with a cache")
list_files("${WORK_DIR}/probs_gpu" left)
if(left)
  message(FATAL_ERROR "a refused probs gen left files: ${left}")
endif()

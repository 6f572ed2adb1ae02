# attnc gen --target arm64-osx: the archive holds Mach-O arm64 objects with both variants' entry
# points, and the entry is left as source (no macOS SDK here). Linking and running them needs a Mac.
#   cmake -DATTNC=<attnc> -DWORK_DIR=<dir> -P osx_objects.cmake
file(REMOVE_RECURSE "${WORK_DIR}")
set(spec "heads=2 head_dim=16 mask=causal")
execute_process(COMMAND "${ATTNC}" id --spec "${spec}" OUTPUT_VARIABLE id OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "attnc id failed: ${status}")
endif()
execute_process(COMMAND "${ATTNC}" gen --spec "${spec}" --target arm64-osx -o "${WORK_DIR}"
                RESULT_VARIABLE status ERROR_VARIABLE errors)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "attnc gen --target arm64-osx failed (${status}): ${errors}")
endif()
if(NOT errors MATCHES "no C compiler for arm-64-osx")
  message(FATAL_ERROR "attnc gen did not say that the entry stays source: ${errors}")
endif()
foreach(file "${id}.a" "${id}_entry.c" "${id}.h" "${id}.json" "${id}_runtime.a")
  if(NOT EXISTS "${WORK_DIR}/${file}")
    message(FATAL_ERROR "attnc gen --target arm64-osx wrote no ${file}")
  endif()
endforeach()
# Mach-O 64-bit (0xfeedfacf, little-endian) with CPU type arm64 (0x0100000c) right after it.
file(READ "${WORK_DIR}/${id}.a" archive HEX)
if(NOT archive MATCHES "cffaedfe0c000001")
  message(FATAL_ERROR "${id}.a holds no Mach-O arm64 object")
endif()
# Each variant's pipeline, with Mach-O's leading underscore.
foreach(symbol "_${id}_v0" "_${id}_v1" "_${id}_split_keys_v0" "_${id}_split_keys_v1")
  string(HEX "${symbol}" hex)
  string(FIND "${archive}" "${hex}00" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${id}.a has no symbol ${symbol}")
  endif()
endforeach()
execute_process(COMMAND "${ATTNC}" gen --spec "${spec}" --target arm64-osx -o "${WORK_DIR}/shared" --shared
                RESULT_VARIABLE status ERROR_VARIABLE errors)
if(status EQUAL 0 OR NOT errors MATCHES "--shared for arm-64-osx needs a linker")
  message(FATAL_ERROR "attnc gen --shared --target arm64-osx was not refused as expected (${status}): ${errors}")
endif()
message(STATUS "arm64-osx: Mach-O arm64 objects with ${id}'s v0/v1 symbols; entry left as source")

# attn_add_kernels(<target>
#                  [SPECS "<spec text>" ...]          one-line text forms
#                  [SPEC_SOURCES <file.cpp> ...]      C++ files using ATTN_EXPORT_SPECS(...)
#                  [TARGETS host|native|x86|arm64|arm64-osx|<halide target>[,...]]   default: host
#                  [TUNING <file>])                   tile sizes from `attnc tune` (attnc gen --tuning)
#
# Generates the kernels at build time and makes <target> an object library to link into an
# executable or shared library: the kernels register themselves with attn/runtime.h at load
# time. Every application gets one Halide runtime (attnc_halide_runtime), shared by all its
# kernel targets.
#
# In a build for AArch64 Linux from another machine (cmake/toolchains/aarch64-linux-gnu.cmake), host
# and native mean the arm64 dispatch set: the machine the kernels run on, not the one attnc runs on.
include_guard(GLOBAL)

# The attnc tool: the in-tree target, or the one an installed package imports.
function(_attnc_tool out)
  if(TARGET attnc::attnc)
    set(${out} attnc::attnc PARENT_SCOPE)
  else()
    message(FATAL_ERROR "attn_add_kernels: the attnc tool (attnc::attnc) is not available; "
                        "use find_package(attnc) or add_subdirectory(attnc) first")
  endif()
endfunction()

# One Halide runtime per build and set of device APIs, for the dispatch set of the first call.
# TARGETS cuda / opencl add a GPU variant ("host cuda": the CPU variants and a CUDA one, in one
# kernel); those kernels link a runtime with the device APIs (attnc_halide_runtime_cuda,
# ..._opencl), so an application mixing CPU-only and GPU kernel libraries gives all the same
# GPU targets (two Halide runtimes cannot share one program).
function(_attnc_halide_runtime targets out)
  set(name attnc_halide_runtime)
  foreach(api cuda opencl)
    if(targets MATCHES "(^|[,-])${api}($|[,-])")
      string(APPEND name "_${api}")
    endif()
  endforeach()
  if(NOT TARGET ${name})
    _attnc_tool(tool)
    set(dir "${CMAKE_BINARY_DIR}/${name}")
    set(lib "${dir}/${name}.a")
    add_custom_command(
      OUTPUT "${lib}"
      COMMAND ${tool} runtime --target "${targets}" -o "${lib}"
      DEPENDS ${tool}
      COMMENT "attnc: Halide runtime for ${targets}"
      VERBATIM)
    add_custom_target(${name}_gen DEPENDS "${lib}")
    add_library(${name} STATIC IMPORTED GLOBAL)
    set_target_properties(${name} PROPERTIES IMPORTED_LOCATION "${lib}")
    target_link_libraries(${name} INTERFACE Threads::Threads ${CMAKE_DL_LIBS} m)
    add_dependencies(${name} ${name}_gen)
  endif()
  set(${out} ${name} PARENT_SCOPE)
endfunction()

# Checks every text spec of a call now, at configure time, and reports all the invalid ones in
# one error. Only where the tool already exists (an installed package, or ATTNC_TOOL): an in-tree
# attnc is built after configuring, and its `attnc gen` names every invalid spec at build time.
function(_attnc_check_specs target tool)
  get_target_property(imported ${tool} IMPORTED)
  if(NOT imported)
    return()
  endif()
  get_target_property(attnc ${tool} LOCATION)
  if(NOT EXISTS "${attnc}")
    return()
  endif()
  set(invalid "")
  set(count 0)
  foreach(spec IN LISTS ARGN)
    execute_process(COMMAND "${attnc}" check --spec "${spec}"
                    RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE error)
    if(NOT rc EQUAL 0)
      string(STRIP "${error}" error)
      string(REGEX REPLACE "^attnc: " "" error "${error}")
      string(APPEND invalid "\n  '${spec}': ${error}")
      math(EXPR count "${count} + 1")
    endif()
  endforeach()
  if(count GREATER 0)
    message(SEND_ERROR "attn_add_kernels(${target}): ${count} invalid text spec(s) in SPECS:${invalid}")
  endif()
endfunction()

function(attn_add_kernels target)
  cmake_parse_arguments(ARG "" "TUNING" "SPECS;SPEC_SOURCES;TARGETS" ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "attn_add_kernels(${target}): unknown arguments '${ARG_UNPARSED_ARGUMENTS}'")
  endif()
  if(NOT ARG_SPECS AND NOT ARG_SPEC_SOURCES)
    message(FATAL_ERROR "attn_add_kernels(${target}): give SPECS and/or SPEC_SOURCES")
  endif()
  if(NOT target MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "attn_add_kernels: target name '${target}' must be a C identifier")
  endif()
  if(NOT ARG_TARGETS)
    set(ARG_TARGETS host)
  endif()
  if(CMAKE_CROSSCOMPILING AND CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
    list(TRANSFORM ARG_TARGETS REPLACE "^(host|native)(-|$)" "arm64\\2")
  endif()
  list(JOIN ARG_TARGETS "," targets)
  find_package(Threads REQUIRED)
  _attnc_tool(tool)
  _attnc_check_specs(${target} ${tool} ${ARG_SPECS})
  _attnc_halide_runtime("${targets}" runtime)

  set(dir "${CMAKE_CURRENT_BINARY_DIR}/${target}.attnc")
  # Made now: Ninja creates an output's folder, "Unix Makefiles" does not, and the spec printer
  # (SPEC_SOURCES without SPECS) writes there before anything else does.
  file(MAKE_DIRECTORY "${dir}")
  set(spec_args "")
  set(spec_deps "")
  if(ARG_SPECS)
    # Written only when it changes, so an unchanged spec list does not regenerate kernels.
    set(inline_file "${dir}/specs_inline.txt")
    list(JOIN ARG_SPECS "\n" inline_text)
    file(CONFIGURE OUTPUT "${inline_file}" CONTENT "${inline_text}\n" @ONLY)
    list(APPEND spec_args --spec-file "${inline_file}")
    list(APPEND spec_deps "${inline_file}")
  endif()
  if(ARG_SPEC_SOURCES)
    # A small host program compiled from the user's C++ specs prints their text forms.
    set(printer ${target}_spec_printer)
    add_executable(${printer} ${ARG_SPEC_SOURCES})
    target_link_libraries(${printer} PRIVATE attnc::spec_printer)
    set(source_file "${dir}/specs_from_sources.txt")
    add_custom_command(
      OUTPUT "${source_file}"
      COMMAND ${printer} "${source_file}"
      DEPENDS ${printer}
      COMMENT "attnc: reading specs of ${target}"
      VERBATIM)
    list(APPEND spec_args --spec-file "${source_file}")
    list(APPEND spec_deps "${source_file}")
  endif()

  set(tuning_args "")
  if(ARG_TUNING)
    get_filename_component(tuning_file "${ARG_TUNING}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    set(tuning_args --tuning "${tuning_file}")
    list(APPEND spec_deps "${tuning_file}")
  endif()

  set(archive "${dir}/${target}.a")
  set(entry "${dir}/${target}_entry.c")
  add_custom_command(
    OUTPUT "${archive}" "${entry}" "${dir}/${target}.h" "${dir}/${target}.json"
    COMMAND ${tool} gen ${spec_args} ${tuning_args} --target "${targets}" -o "${dir}" --basename ${target}
            --no-runtime --entry-source-only
    DEPENDS ${tool} ${spec_deps}
    COMMENT "attnc: generating kernels of ${target} for ${targets}"
    VERBATIM)
  add_custom_target(${target}_gen DEPENDS "${archive}" "${entry}")

  add_library(${target}_halide STATIC IMPORTED)
  set_target_properties(${target}_halide PROPERTIES IMPORTED_LOCATION "${archive}")
  add_dependencies(${target}_halide ${target}_gen)

  # An object library: its entry object (with the load-time registration) is always linked.
  add_library(${target} OBJECT "${entry}")
  add_dependencies(${target} ${target}_gen)
  target_compile_definitions(${target} PRIVATE ATTN_STATIC_REGISTRY)
  target_include_directories(${target} PUBLIC "${dir}")
  target_link_libraries(${target} PUBLIC attnc::runtime ${target}_halide ${runtime})
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON
                        ATTNC_MANIFEST "${dir}/${target}.json")
endfunction()

# Install rules and the package config, so `find_package(attnc)` gives attnc::runtime,
# attnc::dsl, attnc::spec_printer, the attnc tool and attn_add_kernels().
include(CMakePackageConfigHelpers)

# attnc links libHalide from the project's environment; keep that path in the installed tool.
get_target_property(_attnc_halide_lib Halide::Halide LOCATION)
get_filename_component(_attnc_halide_lib_dir "${_attnc_halide_lib}" DIRECTORY)
set_target_properties(attnc_cli PROPERTIES INSTALL_RPATH "${_attnc_halide_lib_dir}")

install(TARGETS attnc_dsl attnc_spec_printer attnc_runtime attnc_runtime_headers attnc_cli attn_run
  EXPORT attncTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY dsl/include/attn runtime/include/attn DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(_attnc_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/attnc)
install(EXPORT attncTargets NAMESPACE attnc:: DESTINATION ${_attnc_cmake_dir})
configure_package_config_file(cmake/attncConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/attncConfig.cmake
  INSTALL_DESTINATION ${_attnc_cmake_dir})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/attncConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/attncConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/attncConfigVersion.cmake
  cmake/AttncKernels.cmake DESTINATION ${_attnc_cmake_dir})

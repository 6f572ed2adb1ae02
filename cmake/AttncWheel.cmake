# The Python wheel (`make wheel`, target attnc_wheel): the attnc generator, libattnc_runtime.so and
# the binding as one package, for `pip install` into any virtual environment. libHalide is not in
# it: the wheel depends on the halide wheel the generator was built against, and the generator finds
# libHalide in that package, beside attnc in site-packages, through its RUNPATH.
#
# The component attnc_wheel lays out the package (attnc/, attnc/bin/attnc); it is not part of a
# plain install. scripts/build_wheel.py zips the staged package with its .dist-info.
if(CMAKE_CROSSCOMPILING)  # the wheel's platform tag is the build machine's
  return()
endif()

install(DIRECTORY python/attnc DESTINATION . COMPONENT attnc_wheel EXCLUDE_FROM_ALL
        FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
install(TARGETS attnc_runtime_shared LIBRARY DESTINATION attnc COMPONENT attnc_wheel EXCLUDE_FROM_ALL)
install(TARGETS attnc_cli RUNTIME DESTINATION attnc/bin COMPONENT attnc_wheel EXCLUDE_FROM_ALL)
# site-packages/attnc/bin/attnc -> site-packages/halide/lib64/libHalide.so. The installed copy's
# RUNPATH entry keeps the space of the (longer) build-tree one, so the new path fits.
install(CODE "file(RPATH_SET FILE \"\${CMAKE_INSTALL_PREFIX}/attnc/bin/attnc\" NEW_RPATH \"\\\$ORIGIN/../../halide/lib64\")"
        COMPONENT attnc_wheel EXCLUDE_FROM_ALL)

find_program(ATTNC_WHEEL_PYTHON NAMES python3 HINTS "${PROJECT_SOURCE_DIR}/.venv/bin" REQUIRED)
set(ATTNC_WHEEL_DIR ${PROJECT_BINARY_DIR}/wheel)  # where attnc_wheel writes attnc-*.whl
set(_attnc_wheel_stage ${PROJECT_BINARY_DIR}/wheel-stage)
set(_attnc_wheel_stamp ${ATTNC_WHEEL_DIR}/attnc_wheel.stamp)
set(_attnc_wheel_sources __init__.py __main__.py _capi.py _tensor_checks.py errors.py layout.py library.py)
list(TRANSFORM _attnc_wheel_sources PREPEND ${PROJECT_SOURCE_DIR}/python/attnc/)
add_custom_command(OUTPUT ${_attnc_wheel_stamp}
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${_attnc_wheel_stage}
  COMMAND ${CMAKE_COMMAND} --install ${PROJECT_BINARY_DIR} --prefix ${_attnc_wheel_stage}
          --component attnc_wheel --strip
  COMMAND ${ATTNC_WHEEL_PYTHON} ${PROJECT_SOURCE_DIR}/scripts/build_wheel.py ${_attnc_wheel_stage} ${ATTNC_WHEEL_DIR}
          --version ${PROJECT_VERSION} --halide-version ${Halide_VERSION}
          --readme ${PROJECT_SOURCE_DIR}/python/README.md --stamp ${_attnc_wheel_stamp}
  DEPENDS attnc_cli attnc_runtime_shared ${_attnc_wheel_sources} ${PROJECT_SOURCE_DIR}/python/README.md
          ${PROJECT_SOURCE_DIR}/scripts/build_wheel.py ${PROJECT_SOURCE_DIR}/cmake/AttncWheel.cmake
  COMMENT "attnc: assembling the Python wheel in ${ATTNC_WHEEL_DIR}"
  VERBATIM)
add_custom_target(attnc_wheel ALL DEPENDS ${_attnc_wheel_stamp})

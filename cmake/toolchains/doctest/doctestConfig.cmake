# doctest for a cross build: Debian's config names /usr/include, which would put the build
# machine's C library headers before the sysroot's. This one copies the single header aside.
if(NOT TARGET doctest::doctest)
  find_file(_attnc_doctest_header doctest/doctest.h PATHS /usr/include /usr/local/include
            NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH REQUIRED)
  set(_attnc_doctest_dir "${CMAKE_BINARY_DIR}/doctest-include")
  file(COPY "${_attnc_doctest_header}" DESTINATION "${_attnc_doctest_dir}/doctest")
  add_library(doctest::doctest INTERFACE IMPORTED)
  set_target_properties(doctest::doctest PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_attnc_doctest_dir}")
endif()
set(doctest_FOUND TRUE)

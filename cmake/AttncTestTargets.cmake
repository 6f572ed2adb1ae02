# One build target per test label, tests_<label>, that builds what that label's tests need and
# nothing else, so `make test LABEL=examples` does not build the whole tree first.
# A test needs the targets attnc_test_needs names for it (attnc_add_test names its own executable);
# tests/label_targets_check.py checks that every build output a test names is in its labels' targets.
include_guard(GLOBAL)

# attnc_test_needs(<test> <target>...): the build targets test <test> runs or reads.
function(attnc_test_needs test)
  set_property(TEST ${test} APPEND PROPERTY ATTNC_NEEDS ${ARGN})
endfunction()

function(_attnc_directories dir out)
  set(all "${dir}")
  get_property(children DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(child IN LISTS children)
    _attnc_directories("${child}" below)
    list(APPEND all ${below})
  endforeach()
  set(${out} "${all}" PARENT_SCOPE)
endfunction()

# Makes tests_<label> for every label of the tests defined so far (call it once every test and
# target exists); the labels, sorted, in the global property ATTNC_TEST_LABELS.
function(attnc_add_label_targets)
  _attnc_directories("${PROJECT_SOURCE_DIR}" dirs)
  set(labels "")
  foreach(dir IN LISTS dirs)
    get_property(tests DIRECTORY "${dir}" PROPERTY TESTS)
    foreach(test IN LISTS tests)
      get_property(test_labels TEST ${test} DIRECTORY "${dir}" PROPERTY LABELS)
      get_property(needs TEST ${test} DIRECTORY "${dir}" PROPERTY ATTNC_NEEDS)
      foreach(label IN LISTS test_labels)
        if(NOT TARGET tests_${label})
          add_custom_target(tests_${label})
          list(APPEND labels ${label})
        endif()
        foreach(target IN LISTS needs)
          if(TARGET ${target})
            add_dependencies(tests_${label} ${target})
          endif()
        endforeach()
      endforeach()
    endforeach()
  endforeach()
  list(SORT labels)
  set_property(GLOBAL PROPERTY ATTNC_TEST_LABELS "${labels}")
endfunction()

# PoCL runs the OpenCL suites on the CPU with a thread per core by default; its work-group threads
# wait on each other, so beside the builds that run inside tests (arm_build, sanitize_build) they
# crawled: kernels_opencl_random_sweep_test took 196 s in a fresh clone's make test against 6 s
# alone, the opencl label 692 s of the run's 1037. One PoCL thread per test is as fast alone (the six
# largest opencl suites, ctest -j2: 25.2 s against 27.0) and does not crawl beside a build.
function(attnc_pocl_one_thread)
  _attnc_directories("${PROJECT_SOURCE_DIR}" dirs)
  foreach(dir IN LISTS dirs)
    get_property(tests DIRECTORY "${dir}" PROPERTY TESTS)
    foreach(test IN LISTS tests)
      get_property(test_labels TEST ${test} DIRECTORY "${dir}" PROPERTY LABELS)
      if("opencl" IN_LIST test_labels)
        set_property(TEST ${test} DIRECTORY "${dir}" APPEND PROPERTY ENVIRONMENT POCL_MAX_PTHREAD_COUNT=1)
      endif()
    endforeach()
  endforeach()
endfunction()

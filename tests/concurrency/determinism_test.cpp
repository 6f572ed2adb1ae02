// Bitwise reproducibility, as README.md promises it: the same inputs give the same bits on every
// run, at every thread count, wherever the tensors lie; across ISA variants nothing is promised.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "concurrency_cases.h"

namespace {

using namespace attnc::test;

std::vector<RunCase> all_cases() {
  std::vector<RunCase> cases{dispatch_case()};
  cases.insert(cases.end(), native_cases().begin(), native_cases().end());
  return cases;
}

// The first run's out, and every later run (a copy of the call, so other addresses) against it.
void check_repeatable(PreparedCase &prepared, const std::vector<int> &thread_counts, int runs_per_count) {
  const attn_status status = run_fresh(prepared.kernel, prepared.call);
  REQUIRE_MESSAGE(status == ATTN_OK, status_name(status), ": ", last_error());
  const Tensor first = prepared.call.tensors.at("out");
  for (int threads : thread_counts) {
    CAPTURE(threads);
    REQUIRE(attn_kernel_set_threads(prepared.kernel, threads) == ATTN_OK);
    for (int run = 0; run < runs_per_count; ++run) {
      CAPTURE(run);
      Call again = prepared.call;
      REQUIRE(run_fresh(prepared.kernel, again) == ATTN_OK);
      const int64_t differing = differing_elements(first, again.tensors.at("out"));
      CHECK_MESSAGE(differing == 0, differing, " elements differ from the first run");
    }
  }
  REQUIRE(attn_kernel_set_threads(prepared.kernel, 0) == ATTN_OK);
}

TEST_CASE("repeated runs give the same bits") {
  RuntimeDefaults defaults;
  for (const RunCase &c : all_cases()) {
    CAPTURE(c);
    PreparedCase prepared = prepare(c, 21);
    check_repeatable(prepared, {0}, 3);
  }
}

TEST_CASE("1, 2, 3 and 8 threads give the same bits") {
  RuntimeDefaults defaults;
  for (const RunCase &c : all_cases()) {
    CAPTURE(c);
    PreparedCase prepared = prepare(c, 22);
    check_repeatable(prepared, {1, 2, 3, 8}, 1);
  }
}

TEST_CASE("each ISA variant of the dispatch kernel is reproducible on its own") {
  RuntimeDefaults defaults;
  PreparedCase prepared = prepare(dispatch_case(), 23);
  for (const std::string limit : {"x86-64", "avx2", "avx512"}) {
    CAPTURE(limit);
    REQUIRE(attn_set_max_isa(limit.c_str()) == ATTN_OK);
    CAPTURE(std::string(attn_kernel_selected_target(prepared.kernel)));
    check_repeatable(prepared, {1, 2, 8}, 2);
  }
}

}  // namespace

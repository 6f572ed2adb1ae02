// api_gaps_cases.h: how the run-time scale and cross-attention suites run one case.
#pragma once

#include <doctest/doctest.h>

#include "kernel_test_support.h"
#include "low_precision.h"

namespace attnc::test {

// Runs one case of a suite against the fp64 reference in the spec's dtype: the case prints itself
// (operator<<), names its spec text (c.spec), and the suite's make_case_call(spec, c) builds its
// call (found by argument-dependent lookup).
template <class Case>
void check_case(const Case &c) {
  CAPTURE(c);
  const attn::Spec spec = parse(c.spec);
  const attn_kernel *kernel = find_kernel(spec);
  REQUIRE(kernel != nullptr);
  Call call = make_case_call(spec, c);
  run_and_check_in_dtype(spec, kernel, call);
}

}  // namespace attnc::test

// The block form against the fp64 reference: projections, heads, core, merge, output projection.
#include <doctest/doctest.h>

#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_support.h"
#include "sweep_specs.h"

namespace {

using namespace attnc::test;

struct BlockCase {
  std::string spec;
  int batch;
  int seq;
  bool padded;  // outer strides of x, weights and out larger than dense
};

std::ostream &operator<<(std::ostream &os, const BlockCase &c) {
  return os << "{\"" << c.spec << "\", B=" << c.batch << ", S=" << c.seq
            << (c.padded ? ", padded strides}" : ", dense}");
}

constexpr int lengths[] = {1, 2, 17, 64, 65, 129, 300};

// The one table: every block spec over every length, with B = 1, 2, 3 and both layouts.
std::vector<BlockCase> block_cases() {
  std::vector<BlockCase> cases;
  int spec_index = 0;
  for (const char *spec : block_specs) {
    int n = spec_index++;
    for (int seq : lengths) {
      cases.push_back({spec, 1 + n % 3, seq, n % 2 == 1});
      ++n;
    }
    cases.push_back({spec, 3, 129, n % 2 == 0});  // both layouts at B = 3 and a ragged tile
  }
  return cases;
}

TEST_CASE("block kernels match the fp64 reference") {
  for (const BlockCase &c : block_cases()) {
    CAPTURE(c);
    const attn::Spec spec = parse(c.spec);
    const attn_kernel *kernel = find_kernel(spec);
    REQUIRE(kernel != nullptr);
    std::mt19937 rng(static_cast<unsigned>(c.batch * 7919 + c.seq));
    Call call = make_block_call(spec, c.batch, c.seq, c.padded, rng);
    const attn_status status = call.run(kernel);
    INFO("attn_run: ", status_name(status), ": ", last_error());
    REQUIRE(status == ATTN_OK);
    const Comparison result = compare(call.tensors.at("out"), expected_result(spec, call));
    CAPTURE(result);
    CHECK(result.pass());
  }
}

}  // namespace

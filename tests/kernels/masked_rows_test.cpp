// Query rows whose every key is masked give exactly 0, never NaN, and leave the other rows right.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_support.h"
#include "sweep_specs.h"

namespace {

using namespace attnc::test;

struct Lengths {
  int batch, seq_q, seq_k;
};
// More queries than keys: bottom-right alignment puts the first Sq - Sk rows before key 0.
constexpr Lengths lengths[] = {{2, 129, 17}, {1, 65, 1}, {3, 17, 2}, {1, 300, 48}, {1, 64, 63}};

TEST_CASE("fully masked rows are zero") {
  int specs_with_masked_rows = 0;
  for (const char *spec_text : core_specs) {
    const attn::Spec spec = parse(spec_text);
    if (fully_masked_queries(spec, 129, 17).empty()) continue;  // masks that never empty a row
    ++specs_with_masked_rows;
    const attn_kernel *kernel = find_kernel(spec);
    REQUIRE(kernel != nullptr);
    for (const Lengths &l : lengths) {
      const std::string spec_name = spec_text;
      CAPTURE(spec_name);
      CAPTURE(l.batch);
      CAPTURE(l.seq_q);
      CAPTURE(l.seq_k);
      std::mt19937 rng(static_cast<unsigned>(l.seq_q * 31 + l.seq_k));
      Call call = make_core_call(spec, l.batch, l.seq_q, l.seq_k, l.seq_k % 2 == 1, rng);
      REQUIRE(call.run(kernel) == ATTN_OK);
      const Tensor &out = call.tensors.at("out");
      const Expected expected = expected_result(spec, call);

      const std::vector<int> masked = fully_masked_queries(spec, l.seq_q, l.seq_k);
      const int64_t row = int64_t{spec.heads} * spec.head_dim_v;  // elements per query, all heads
      int64_t nonzero = 0, reference_nonzero = 0;
      for (int b = 0; b < l.batch; ++b)
        for (int i : masked)
          for (int64_t e = 0; e < row; ++e) {
            const int64_t n = (int64_t{b} * l.seq_q + i) * row + e;
            if (out.logical(n) != 0.0f) ++nonzero;
            if (expected.exact[static_cast<size_t>(n)] != 0.0) ++reference_nonzero;
          }
      CAPTURE(masked.size());
      CHECK(reference_nonzero == 0);
      CHECK(nonzero == 0);  // NaN counts as nonzero too
      const Comparison result = compare(out, expected);
      CAPTURE(result);
      CHECK(result.nan_count == 0);
      CHECK(result.pass());
    }
  }
  // causal, window(16,0), window(2,0), window(4,4)|causal and the composition.
  CHECK(specs_with_masked_rows >= 5);
}

}  // namespace

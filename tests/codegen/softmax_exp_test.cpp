// softmax_exp / softmax_exp2 (the kernels' own exp): relative error against exp in double over
// the whole range the softmax uses, exactly 0 where it must be, never NaN or negative.
#include <Halide.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "attnc/core_algorithm.h"

namespace {

struct Sweep {
  double worst_excess = 0;      // max of relative error / allowed error; <= 1 passes
  double max_error_near_0 = 0;  // max relative error for inputs in [-16, 0]
  double max_error = 0;         // max relative error where the result must be nonzero
  int wrong_zeros = 0;          // results that should be 0 and are not
  int bad = 0;                  // NaN, negative, or above 1
};

// count inputs evenly over [lo, 0]. Allowed relative error: base + slope |x| (softmax_exp
// rounds x log2(e) to a float first, an error that grows with |x|).
Sweep sweep(bool base2, float lo, int count, double base, double slope) {
  // The inputs are filled here, not computed in the pipeline: a pipeline could fuse or
  // contract their arithmetic differently from a second realization.
  Halide::Buffer<float> in(count);
  for (int n = 0; n < count; ++n) in(n) = std::min(0.0f, lo - lo * float(n) / float(count - 1));
  Halide::Var i("i");
  Halide::Func result("result");
  result(i) = base2 ? attnc::softmax_exp2(in(i)) : attnc::softmax_exp(in(i));
  result.vectorize(i, 8);
  Halide::Buffer<float> out = result.realize({count});
  Sweep s;
  // Below these the result is exactly 0 (2^-125.5 is the smallest normal result it builds).
  const double zero_below = base2 ? -125.5 : -87.0;
  for (int n = 0; n < count; ++n) {
    const double x = in(n), y = out(n);
    if (std::isnan(y) || y < 0 || y > 1) {
      ++s.bad;
      std::printf("bad: f(%.9g) = %.9g\n", x, y);
    }
    if (x < zero_below - 0.01) {
      if (y != 0) ++s.wrong_zeros;
    } else if (x > zero_below + 0.01) {
      const double exact = base2 ? std::exp2(x) : std::exp(x);
      const double error = std::fabs(y - exact) / exact;
      s.max_error = std::max(s.max_error, error);
      if (x >= -16) s.max_error_near_0 = std::max(s.max_error_near_0, error);
      s.worst_excess = std::max(s.worst_excess, error / (base + slope * std::fabs(x)));
    }
  }
  return s;
}

}  // namespace

TEST_CASE("softmax_exp2: relative error under 2e-7 on [-125.5, 0], exactly 0 below") {
  const Sweep s = sweep(true, -200.0f, 1 << 20, 2e-7, 0);
  std::printf("softmax_exp2: max relative error %.3g on [-125.5, 0]\n", s.max_error);
  CHECK(s.worst_excess <= 1);
  CHECK(s.wrong_zeros == 0);
  CHECK(s.bad == 0);
}

TEST_CASE("softmax_exp: relative error under 2.5e-7 + 8e-8 |x| on [-87, 0], exactly 0 below") {
  // x log2(e) rounded to a float carries up to 2^-24 |x| log2(e) absolute error into the power.
  const Sweep s = sweep(false, -120.0f, 1 << 20, 2.5e-7, 8e-8);
  std::printf("softmax_exp: max relative error %.3g on [-16, 0], %.3g on [-87, 0]\n", s.max_error_near_0,
              s.max_error);
  CHECK(s.worst_excess <= 1);
  CHECK(s.wrong_zeros == 0);
  CHECK(s.bad == 0);
}

TEST_CASE("softmax_exp2 of masked logits (near -2e30) is exactly 0") {
  // The kernels add -2e30 to a masked key's logit; what reaches the exp is about -1e30 or less.
  const Sweep s = sweep(true, -3.0e30f, 4096, 2e-7, 0);
  CHECK(s.bad == 0);
  CHECK(s.wrong_zeros == 0);
}

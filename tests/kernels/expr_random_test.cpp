// The random-expression suite: kernels EXPR_RANDOM_FIRST .. EXPR_RANDOM_LAST - 1 of random_expr_spec,
// each holding expr_random_picks random score_mods and mask_mods chosen at run time by the captured
// pick; every pick against the fp64 reference (its own evaluator of the language) at two shapes
// of the kernel's core families, with random captured tensors whose indices often clamp.
#include "expr_random.h"

#include <doctest/doctest.h>

#include <ostream>
#include <random>
#include <string>

#include "kernel_test_support.h"

namespace {

using namespace attnc::test;

struct Shape {
  int batch, seq_q, seq_k;
};

// Split keys (Sq <= 8), whole rows with Sq < Sk, Sq = Sk and Sq > Sk; odd lengths.
constexpr Shape shapes[] = {{2, 1, 19}, {1, 6, 33}, {2, 29, 29}, {1, 40, 23}};

TEST_CASE("random score_mod and mask_mod expressions against the fp64 reference") {
  std::mt19937 rng(expr_random_seed);
  int expressions = 0;
  for (int n = EXPR_RANDOM_FIRST; n < EXPR_RANDOM_LAST; ++n) {
    const std::string text = random_expr_spec(expr_random_seed, n);
    const attn::Spec spec = parse(text);
    const attn_kernel *kernel = find_kernel(spec);
    REQUIRE(kernel != nullptr);
    for (int j = 0; j < expr_random_picks; ++j) {
      // The mask's pick apart from the score's, so that pairs of expressions vary too.
      const int mask_pick = (j + n) % expr_random_picks;
      for (int r = 0; r < 2; ++r) {
        const Shape shape = shapes[(j + 2 * r + n) % 4];
        const bool padded = (j + r) % 2 == 1;
        const int seq_k = spec.form == attn::Form::block ? shape.seq_q : shape.seq_k;
        CAPTURE(text);
        CAPTURE(j);
        CAPTURE(mask_pick);
        CAPTURE(shape.batch);
        CAPTURE(shape.seq_q);
        CAPTURE(seq_k);
        Call call = make_call(spec, shape.batch, shape.seq_q, seq_k, padded, rng);
        add_runtime_inputs(spec, call, shape.batch, shape.seq_q, seq_k, padded, MaskShape::b_h_sq_sk, rng);
        IndexTensor &pick = call.index_tensors.at("pick");
        pick.logical(0) = j;
        pick.logical(1) = mask_pick;
        run_and_check(spec, kernel, call);
      }
      expressions += 2;  // one score_mod, one mask_mod
    }
  }
  MESSAGE(expressions, " random expressions in ", EXPR_RANDOM_LAST - EXPR_RANDOM_FIRST, " kernels");
  CHECK(expressions == 2 * expr_random_picks * (EXPR_RANDOM_LAST - EXPR_RANDOM_FIRST));
}

}  // namespace

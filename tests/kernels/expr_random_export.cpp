// expr_random_export.cpp: the spec printer's source for one library of the random-expression suite:
// kernels EXPR_RANDOM_FIRST .. EXPR_RANDOM_LAST - 1 of random_expr_spec (compile definitions).
#include <vector>

#include "attn/spec_text.h"
#include "expr_random.h"

extern "C" const attn::Spec *attn_exported_specs(int *count) {
  static const std::vector<attn::Spec> specs = [] {
    std::vector<attn::Spec> all;
    for (int n = EXPR_RANDOM_FIRST; n < EXPR_RANDOM_LAST; ++n)
      all.push_back(attn::parse_spec(attnc::test::random_expr_spec(attnc::test::expr_random_seed, n)).spec);
    return all;
  }();
  *count = static_cast<int>(specs.size());
  return specs.data();
}

// expr_specs_export.cpp: the spec printer's source for attnc_expr_kernels: expr_specs.h's examples
// and their built-in twins, parsed from their text (one list for the suite and the kernels).
#include <string>
#include <vector>

#include "attn/spec_text.h"
#include "expr_specs.h"

extern "C" const attn::Spec *attn_exported_specs(int *count) {
  static const std::vector<attn::Spec> specs = [] {
    std::vector<attn::Spec> all;
    for (const char *text : attnc::test::expr_example_specs) all.push_back(attn::parse_spec(text).spec);
    for (const attnc::test::ExprTwin &twin : attnc::test::expr_twins)
      all.push_back(attn::parse_spec(twin.built_in).spec);
    return all;
  }();
  *count = static_cast<int>(specs.size());
  return specs.data();
}

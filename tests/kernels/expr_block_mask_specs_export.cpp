// expr_block_mask_specs_export.cpp: the spec printer's source for attnc_expr_block_mask_kernels:
// expr_block_mask_specs.h's kernels, parsed from their text.
#include <vector>

#include "attn/spec_text.h"
#include "expr_block_mask_specs.h"

extern "C" const attn::Spec *attn_exported_specs(int *count) {
  static const std::vector<attn::Spec> specs = [] {
    std::vector<attn::Spec> all;
    for (const attnc::test::BlockMaskSpecs &pair : attnc::test::block_mask_specs)
      for (const char *text : {pair.attention, pair.pass}) all.push_back(attn::parse_spec(text).spec);
    all.push_back(attn::parse_spec(attnc::test::provably_true_spec).spec);
    return all;
  }();
  *count = static_cast<int>(specs.size());
  return specs.data();
}

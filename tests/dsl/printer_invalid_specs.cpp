// printer_invalid_specs.cpp: exports an invalid spec by hand (ATTN_EXPORT_SPECS would not compile),
// so the spec printer's own validation can be seen to fail.
#include "attn/spec.h"

extern "C" const attn::Spec *attn_exported_specs(int *count) {
  static constexpr attn::Spec specs[] = {attn::attention().named("gpt2").with_d_model(770).with_heads(12)};
  *count = 1;
  return specs;
}

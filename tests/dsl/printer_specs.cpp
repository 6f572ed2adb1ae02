// printer_specs.cpp: a spec file as a user writes it, for the spec printer test.
#include "attn/check.h"

namespace {
constexpr attn::Spec gpt2 = attn::attention().named("gpt2").with_d_model(768).with_heads(12).causal();
}  // namespace

ATTN_EXPORT_SPECS(gpt2, gpt2.named("gpt2_block").block().fused_qkv().with_proj_bias())

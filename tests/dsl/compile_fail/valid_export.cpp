// Must compile: the positive control for the compile-fail cases next to it.
#include "attn/check.h"

constexpr attn::Spec gpt2 = attn::attention().named("gpt2").with_d_model(768).with_heads(12).causal();
static_assert(attn::checked<gpt2>());

ATTN_EXPORT_SPECS(gpt2, gpt2.block().fused_qkv().with_proj_bias(),
                  attn::attention().with_heads(8).with_kv_heads(2).with_head_dim(128).with_scale(0.1f))

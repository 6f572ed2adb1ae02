// printer_specs.cpp: a spec file as a user writes it, for the spec printer test.
#include "attn/check.h"

namespace {
constexpr attn::Spec gpt2 = attn::attention().named("gpt2").with_d_model(768).with_heads(12).causal();
constexpr attn::Spec bigbird =
    attn::attention()
        .named("bigbird")
        .with_heads(8)
        .with_head_dim(64)
        .with_mask((attn::window(64, 64) | attn::global_tokens(2) | attn::random_blocks(64, 3, 42)) &
                   attn::padding())
        .with_mask_block(64)
        .with_softcap(30.0f)
        .with_alibi()
        .with_score_bias()
        .with_lse();
}  // namespace

ATTN_EXPORT_SPECS(gpt2, gpt2.named("gpt2_block").block().fused_qkv().with_proj_bias(), bigbird)

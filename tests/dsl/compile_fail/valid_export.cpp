// Must compile: the positive control for the compile-fail cases next to it.
#include "attn/check.h"

constexpr attn::Spec gpt2 = attn::attention().named("gpt2").with_d_model(768).with_heads(12).causal();
static_assert(attn::checked<gpt2>());

constexpr attn::Spec bigbird =
    attn::attention()
        .with_heads(8)
        .with_head_dim(64)
        .with_mask((attn::window(64, 64) | attn::global_tokens(2) | attn::random_blocks(64, 3, 42)) &
                   attn::padding())
        .with_mask_block(64)
        .with_softcap(30.0f)
        .with_alibi()
        .with_score_bias()
        .with_lse();
static_assert(attn::checked<bigbird>());

ATTN_EXPORT_SPECS(gpt2, gpt2.block().fused_qkv().with_proj_bias(),
                  attn::attention().with_heads(8).with_kv_heads(2).with_head_dim(128).with_scale(0.1f),
                  bigbird,
                  gpt2.with_mask((attn::document() & attn::causal()) |
                                 (attn::prefix() & attn::mask_tensor())))

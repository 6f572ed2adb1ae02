// spec_cases.h: one table of valid specs covering every text and kernel-id feature, for the DSL tests.
#pragma once

#include "attn/spec.h"

namespace attn_test {

struct SpecCase {
  const char *label;  // printed with CAPTURE when a case fails
  attn::Spec spec;
};

namespace detail {
constexpr attn::Spec gpt2 = attn::attention().with_d_model(768).with_heads(12);
constexpr attn::Spec core64 = attn::attention().with_heads(8).with_head_dim(64);
constexpr attn::Mask w128 = attn::window(128, 0);
constexpr attn::Mask w4 = attn::window(4, 4);
}  // namespace detail

// Pairwise distinct kernels: no two cases compute the same thing.
inline constexpr SpecCase spec_cases[] = {
    {"core, no mask", detail::gpt2},
    {"core, causal", detail::gpt2.causal()},
    {"core, named", detail::gpt2.named("gpt2-small_v2").with_mask(attn::window(3, 1))},
    {"core, head_dim only", detail::core64},
    {"core, gqa", attn::attention().with_d_model(4096).with_heads(32).with_kv_heads(8).causal()},
    {"core, mqa", attn::attention().with_heads(16).with_kv_heads(1).with_head_dim(128)},
    {"core, head_dim_v differs", detail::core64.with_head_dim_v(128)},
    {"core, bf16", detail::core64.with_dtype(attn::DType::bf16)},
    {"core, f16 causal", detail::core64.with_dtype(attn::DType::f16).causal()},
    {"block, bf16", detail::gpt2.block().with_dtype(attn::DType::bf16)},
    {"core, causal top-left", detail::core64.causal().with_align(attn::Align::top_left)},
    {"core, d_model and head_dim both set", detail::gpt2.with_head_dim(32)},
    {"core, explicit scale", detail::gpt2.with_scale(0.1f)},
    {"core, tiny scale", detail::core64.with_scale(1e-30f)},
    {"core, huge scale", detail::core64.with_scale(1e30f)},
    {"core, sliding window", detail::core64.with_mask(detail::w128)},
    {"core, anti-causal", detail::core64.with_mask(attn::window(0, -1))},
    {"core, unbounded window", detail::core64.with_mask(attn::window(-1, -1))},
    {"core, window and causal", detail::core64.with_mask(detail::w128 &attn::causal())},
    {"core, causal and window", detail::core64.with_mask(attn::causal() & detail::w128)},
    {"core, window or causal", detail::core64.with_mask(detail::w128 | attn::causal())},
    {"core, (a|b)&c",
     detail::core64.with_mask((attn::window(256, 256) | attn::causal()) & attn::window(-1, 4))},
    {"core, a|b&c", detail::core64.with_mask(detail::w4 | (attn::causal() & detail::w128))},
    {"core, (a|b)|c", detail::core64.with_mask((detail::w4 | detail::w128) | attn::causal())},
    {"core, a|(b|c)", detail::core64.with_mask(detail::w4 | (detail::w128 | attn::causal()))},
    {"core, a&(b&c)", detail::core64.with_mask(detail::w4 &(detail::w128 &attn::causal()))},
    {"core, long id",
     detail::core64.with_head_dim_v(96).with_scale(0.3f).with_mask(
         (attn::window(1000000, 2000000) | attn::window(3000000, 4000000)) &
         (attn::window(5000000, 6000000) | attn::window(7000000, 8000000)) & attn::causal())},
    {"block, separate", detail::gpt2.block()},
    {"block, fused", detail::gpt2.block().fused_qkv()},
    {"block, fused bias causal", detail::gpt2.block().fused_qkv().with_proj_bias().causal()},
    {"block, separate bias", detail::gpt2.block().with_proj_bias()},
    {"block, head groups", attn::attention().block().with_d_model(1024).with_head_groups({{4, 128}, {8, 64}})},
    {"block, head groups gqa fused scaled",
     attn::attention().block().with_d_model(96).with_head_groups({{4, 128, 2}, {8, 64, 4}}).fused_qkv().with_scale(0.5f)},
    {"block, gqa window",
     attn::attention().with_d_model(2048).with_heads(16).with_kv_heads(4).block().with_mask(detail::w128)},
    {"block, head_dim override", detail::gpt2.block().with_head_dim(32).with_head_dim_v(48)},
    {"block, mqa scale",
     attn::attention().with_d_model(512).with_heads(8).with_kv_heads(1).block().with_scale(2.0f)},
    // Masks and sparsity.
    {"core, global", detail::core64.with_mask(attn::global_tokens(4))},
    {"core, random", detail::core64.with_mask(attn::random_blocks(64, 3, 42))},
    {"core, random, other seed", detail::core64.with_mask(attn::random_blocks(64, 3, 43))},
    {"core, random, largest seed", detail::core64.with_mask(attn::random_blocks(64, 3, 4294967295u))},
    {"core, padding", detail::gpt2.with_mask(attn::padding())},
    {"core, causal and padding", detail::gpt2.with_mask(attn::causal() & attn::padding())},
    {"core, prefix lm", detail::gpt2.with_mask(attn::causal() | attn::prefix())},
    {"core, documents", detail::gpt2.with_mask(attn::document() & attn::causal())},
    {"core, mask tensor", detail::gpt2.with_mask(attn::mask_tensor())},
    {"core, (window|global)&padding",
     detail::core64.with_mask((attn::window(256, 256) | attn::global_tokens(4)) & attn::padding())},
    {"core, bigbird",
     detail::core64
         .with_mask((detail::w4 | attn::global_tokens(2) | attn::random_blocks(64, 3, 7)) & attn::padding())
         .with_mask_block(64)},
    {"core, block-sparse window", detail::core64.with_mask(detail::w128).with_mask_block(64)},
    {"core, block-sparse window, 128", detail::core64.with_mask(detail::w128).with_mask_block(128)},
    {"core, softcap", detail::gpt2.causal().with_softcap(50.0f)},
    {"core, softcap 30", detail::gpt2.causal().with_softcap(30.0f)},
    {"core, alibi", detail::core64.causal().with_alibi()},
    {"core, score bias", detail::core64.with_score_bias()},
    {"core, lse", detail::gpt2.causal().with_lse()},
    {"core, probs", detail::gpt2.causal().with_probs()},
    {"block, probs and lse", detail::gpt2.block().with_mask(attn::padding()).with_lse().with_probs()},
    {"core, every modifier", detail::core64.with_mask(attn::causal() & attn::padding())
                                 .with_softcap(30.0f)
                                 .with_alibi()
                                 .with_score_bias()
                                 .with_lse()},
    {"block, everything", detail::gpt2.block()
                              .fused_qkv()
                              .with_proj_bias()
                              .with_mask((detail::w128 | attn::global_tokens(1)) & attn::document())
                              .with_mask_block(32)
                              .with_scale(0.2f)
                              .with_softcap(20.0f)
                              .with_alibi()
                              .with_score_bias()
                              .with_lse()},
    {"block, score bias", detail::gpt2.block().with_score_bias()},
    {"block, proj bias and score bias", detail::gpt2.block().with_proj_bias().with_score_bias()},
};

}  // namespace attn_test

// flex_specs.h: three programmable-attention specs (and a block-mask pass) (issue 34) in the C++ DSL, checked
// at compile time.
#pragma once

#include <attn/spec.h>

namespace flex {

using namespace attn::expr;

constexpr int heads = 4, head_dim = 64, max_seq = 512;

inline constexpr attn::Spec base = attn::attention().with_heads(heads).with_head_dim(head_dim);

// Relative position bias from a captured table rel [H, 2 * max_seq - 1], causal.
inline constexpr attn::Spec relative_bias =
    base.named("relative_bias")
        .with_input("rel", attn::InputDType::f32, {attn::dim::H, 2 * max_seq - 1})
        .with_score_mod(s + tensor("rel")(h, q - k + (max_seq - 1)))
        .with_mask_mod(q >= k);

// StreamingLLM: 4 sink tokens and a window of 64, causal (the skipped keys are never computed).
inline constexpr attn::Spec sink_window =
    base.named("sink_window").with_mask_mod(q >= k && (k < 4 || q - k < 64));

// A document mask from per-token ids doc [B, Sk] (queries and keys share positions: Sq = Sk),
// reading a run-time block mask that its pass computes once from doc (docs/DSL.md, Block masks).
inline constexpr attn::Spec documents =
    base.named("documents")
        .with_input("doc", attn::InputDType::i32, {attn::dim::B, attn::dim::Sk})
        .with_mask_mod(tensor("doc")(b, q) == tensor("doc")(b, k))
        .with_block_mask();
inline constexpr attn::Spec documents_pass =
    documents.named("documents_pass").with_block_mask(attn::BlockMask::pass);

}  // namespace flex

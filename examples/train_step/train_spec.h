// train_spec.h: the model's attention as constexpr attnc specs: the forward (with lse) and its backward.
#pragma once

#include <attn/spec.h>

// 4 query heads sharing 2 KV heads of 16, causal: q [B,S,4,16], k and v [B,S,2,16].
inline constexpr attn::Spec train_attention_spec =
    attn::attention().named("train_step").with_heads(4).with_kv_heads(2).with_head_dim(16).causal();

// The forward also writes lse [B,S,H]: the backward recomputes the probabilities from it.
inline constexpr attn::Spec train_forward_spec = train_attention_spec.with_lse();

// dq, dk, dv from q, k, v, the forward's out and lse, and dout = dloss/dout.
inline constexpr attn::Spec train_backward_spec = train_attention_spec.backward();

// minilm_spec.h: all-MiniLM-L6-v2's self-attention block (BERT, post-LN) as a constexpr attnc spec.
#pragma once

#include <attn/spec.h>

// x [B,S,384] -> separate Q, K, V projections with bias -> 12 heads of 32 that see only their
// sentence's real tokens (key_lengths [B]) -> output projection with bias -> out [B,S,384].
inline constexpr attn::Spec minilm_attention_spec = attn::attention()
                                                        .named("minilm_l6")
                                                        .block()
                                                        .with_d_model(384)
                                                        .with_heads(12)
                                                        .separate_qkv()
                                                        .with_proj_bias()
                                                        .with_mask(attn::padding());

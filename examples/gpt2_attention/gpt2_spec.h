// gpt2_spec.h: the GPT-2 (small) attention block, as a constexpr attnc spec.
#pragma once

#include <attn/spec.h>

// x [B,S,768] -> fused QKV projection with bias -> 12 causal heads of 64 -> output projection.
inline constexpr attn::Spec gpt2_attention_spec = attn::attention()
                                                      .named("gpt2")
                                                      .block()
                                                      .with_d_model(768)
                                                      .with_heads(12)
                                                      .fused_qkv()
                                                      .with_proj_bias()
                                                      .causal();

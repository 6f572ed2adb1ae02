// bert_spec.h: the BERT-base attention block over padded sequences, as a constexpr attnc spec.
#pragma once

#include <attn/spec.h>

// x [B,S,768] -> separate Q, K, V projections with bias -> 12 heads of 64 that see only their
// sequence's real tokens (key_lengths [B]) -> output projection.
inline constexpr attn::Spec bert_padding_spec = attn::attention()
                                                    .named("bert_base")
                                                    .block()
                                                    .with_d_model(768)
                                                    .with_heads(12)
                                                    .separate_qkv()
                                                    .with_proj_bias()
                                                    .with_mask(attn::padding());

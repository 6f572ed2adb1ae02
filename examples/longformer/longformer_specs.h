// longformer_specs.h: Longformer's attention pattern and a dense twin, as constexpr attnc specs.
#pragma once

#include <attn/spec.h>

// q, k, v [B,S,4,64]. Each token sees the 512 tokens on either side; the first 8 tokens (e.g. [CLS]
// and a question) see every token and are seen by every token.
inline constexpr attn::Spec longformer_spec = attn::attention()
                                                  .named("longformer")
                                                  .core()
                                                  .with_heads(4)
                                                  .with_head_dim(64)
                                                  .with_mask(attn::window(512, 512) | attn::global_tokens(8));

// The same shape with no mask: what the pattern saves.
inline constexpr attn::Spec longformer_dense_spec =
    attn::attention().named("longformer_dense").core().with_heads(4).with_head_dim(64);

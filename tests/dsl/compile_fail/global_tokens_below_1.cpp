// Must not compile: global(G) needs at least one global token.
#include "attn/check.h"

constexpr attn::Spec s =
    attn::attention().with_d_model(768).with_heads(12).with_mask(attn::global_tokens(-1));
static_assert(attn::checked<s>());

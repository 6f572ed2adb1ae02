// Must not compile: two random terms that draw 20 key blocks in all (at most 16).
#include "attn/check.h"

constexpr attn::Spec s = attn::attention().with_heads(2).with_head_dim(16).with_mask(
    attn::random_blocks(64, 10, 1) | attn::random_blocks(64, 10, 2));
static_assert(attn::checked<s>());

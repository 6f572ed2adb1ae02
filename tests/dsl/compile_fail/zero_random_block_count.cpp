// Must not compile: random(BS,N,SEED) needs N >= 1 key blocks.
#include "attn/check.h"

constexpr attn::Spec s =
    attn::attention().with_d_model(768).with_heads(12).with_mask(attn::random_blocks(64, 0, 1));
static_assert(attn::checked<s>());

// Must not compile: with_mask_block(0) is out of range (leave it out for per-element masks).
#include "attn/check.h"

constexpr attn::Spec s = attn::attention().with_d_model(768).with_heads(12).causal().with_mask_block(0);
static_assert(attn::checked<s>());

// Must not compile: the scale must be a finite number > 0.
#include "attn/check.h"

constexpr attn::Spec s = attn::attention().with_d_model(768).with_heads(12).with_scale(-0.5f);
static_assert(attn::checked<s>());

// Must not compile: the softcap must be a finite number > 0.
#include "attn/check.h"

constexpr attn::Spec s = attn::attention().with_d_model(768).with_heads(12).with_softcap(0.0f);
static_assert(attn::checked<s>());

// Must not compile: 12 heads do not divide a d_model of 770.
#include "attn/check.h"

constexpr attn::Spec gpt2 = attn::attention().named("gpt2").with_d_model(770).with_heads(12);
static_assert(attn::checked<gpt2>());

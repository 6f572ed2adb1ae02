// Must not compile: a block form whose w_q [65536, 65536] would not fit 32-bit offsets.
#include "attn/check.h"

constexpr attn::Spec s = attn::attention().with_d_model(65536).with_heads(64).block();
static_assert(attn::checked<s>());

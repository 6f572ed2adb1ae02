// Must not compile: a block form whose w_q [23296, 23296] would take more than 2 GiB.
#include "attn/check.h"

constexpr attn::Spec s = attn::attention().with_d_model(23296).with_heads(32).block();
static_assert(attn::checked<s>());

// Must not compile: with_head_dim(0) is out of range (0 is not "use the default" in the DSL).
#include "attn/check.h"

constexpr attn::Spec s = attn::attention().with_heads(12).with_head_dim(0);
static_assert(attn::checked<s>());

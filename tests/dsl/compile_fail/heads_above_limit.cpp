// Must not compile: heads above attn::limits::max_heads (heads * head_dim would overflow int32).
#include "attn/check.h"

constexpr attn::Spec s = attn::attention().with_heads(2147483647).with_head_dim(16);
static_assert(attn::checked<s>());

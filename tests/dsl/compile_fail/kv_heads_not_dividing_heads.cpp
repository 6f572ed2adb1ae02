// Must not compile: 5 kv_heads do not divide 12 heads.
#include "attn/check.h"

constexpr attn::Spec gqa = attn::attention().with_d_model(768).with_heads(12).with_kv_heads(5);
static_assert(attn::checked<gqa>());

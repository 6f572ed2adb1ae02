// Must not compile: cross-attention (x_kv) is a block-form option; a core spec has k and v already.
#include "attn/check.h"

constexpr attn::Spec decoder = attn::attention().with_heads(8).with_head_dim(64).with_cross_attention();
ATTN_CHECK_SPEC(decoder);

// Must not compile, with one error naming the variable `llama_gqa` (it has no label) and the rule.
#include "attn/check.h"

inline constexpr attn::Spec llama_gqa = attn::attention().with_heads(32).with_kv_heads(6).with_head_dim(128);

ATTN_CHECK_SPEC(llama_gqa);

// Must not compile: an int8 KV cache type on a spec with no cache (issue 37).
#include "attn/check.h"

constexpr attn::Spec dense =
    attn::attention().with_heads(2).with_head_dim(16).with_kv_dtype(attn::KvDType::int8);
ATTN_CHECK_SPEC(dense);

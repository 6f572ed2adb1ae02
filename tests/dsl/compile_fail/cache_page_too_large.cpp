// Must not compile: one page of 2^24 tokens of 1024 elements is past the 2^31 - 1 a tensor holds.
#include "attn/check.h"

constexpr attn::Spec decode =
    attn::attention().with_heads(1).with_head_dim(1024).with_kv_cache(attn::KvCache::paged, 16777216);
ATTN_CHECK_SPEC(decode);

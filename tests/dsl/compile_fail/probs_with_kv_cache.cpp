// Must not compile: probs [B, H, Sq, Sk] has no Sk per cached sequence (issue 32: gen failed).
#include "attn/check.h"

constexpr attn::Spec decode =
    attn::attention().with_heads(2).with_head_dim(16).with_kv_cache(attn::KvCache::paged, 4).with_probs(true);
ATTN_CHECK_SPEC(decode);

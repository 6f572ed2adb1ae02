// Must not compile, with one error naming 'gpt2' and the rule: the second of two exported specs.
#include "attn/check.h"

inline constexpr attn::Spec fine = attn::attention().with_heads(2).with_head_dim(16);
inline constexpr attn::Spec gpt2 = attn::attention().named("gpt2").block().with_d_model(770).with_heads(12);

ATTN_EXPORT_SPECS(fine, gpt2)

// Must not compile: a window bound above 2^24 positions; checked through ATTN_EXPORT_SPECS.
#include "attn/check.h"

ATTN_EXPORT_SPECS(attn::attention().with_heads(2).with_head_dim(16).with_mask(attn::window(1073741824, 0)))

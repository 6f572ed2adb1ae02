// Must not compile: random(BS,N,SEED) needs a block size BS >= 1; checked through ATTN_EXPORT_SPECS.
#include "attn/check.h"

ATTN_EXPORT_SPECS(attn::attention().with_d_model(768).with_heads(12).with_mask(attn::causal() |
                                                                               attn::random_blocks(0, 2, 1)))

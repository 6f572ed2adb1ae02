// Must not compile: a window bound below -1; checked through ATTN_EXPORT_SPECS.
#include "attn/check.h"

ATTN_EXPORT_SPECS(attn::attention().with_d_model(768).with_heads(12).causal(),
                  attn::attention().with_d_model(768).with_heads(12).with_mask(attn::window(-2, 0)))

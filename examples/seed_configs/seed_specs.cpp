// seed_specs.cpp: exports the seed specs to attn_add_kernels (checked at compile time).
#include <attn/check.h>

#include "seed_specs.h"

ATTN_EXPORT_SPECS(seed_512, seed_1024, seed_mixed)

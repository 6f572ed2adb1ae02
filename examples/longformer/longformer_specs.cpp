// longformer_specs.cpp: exports both specs to attn_add_kernels (checked at compile time).
#include "longformer_specs.h"

#include <attn/check.h>

ATTN_EXPORT_SPECS(longformer_spec, longformer_dense_spec)

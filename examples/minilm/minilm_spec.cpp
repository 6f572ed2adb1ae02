// minilm_spec.cpp: exports the MiniLM attention spec to attn_add_kernels (checked at compile time).
#include "minilm_spec.h"

#include <attn/check.h>

ATTN_EXPORT_SPECS(minilm_attention_spec)

// gpt2_spec.cpp: exports the GPT-2 spec to attn_add_kernels (checked at compile time).
#include <attn/check.h>

#include "gpt2_spec.h"

ATTN_EXPORT_SPECS(gpt2_attention_spec)

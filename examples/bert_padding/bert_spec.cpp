// bert_spec.cpp: exports the BERT spec to attn_add_kernels (checked at compile time).
#include "bert_spec.h"

#include <attn/check.h>

ATTN_EXPORT_SPECS(bert_padding_spec)

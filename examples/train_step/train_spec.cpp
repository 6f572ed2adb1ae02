// train_spec.cpp: exports the forward and backward specs to attn_add_kernels (checked at compile time).
#include "train_spec.h"

#include <attn/check.h>

ATTN_EXPORT_SPECS(train_forward_spec, train_backward_spec)

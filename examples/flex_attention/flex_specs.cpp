// flex_specs.cpp: exports the four specs to attn_add_kernels (checked at compile time).
#include "flex_specs.h"

#include <attn/check.h>

ATTN_EXPORT_SPECS(flex::relative_bias, flex::sink_window, flex::documents, flex::documents_pass)

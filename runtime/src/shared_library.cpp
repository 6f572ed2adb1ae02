// The shared runtime library (libattnc_runtime.so): every object of attnc_runtime, linked whole.
// This file only gives the target a source of its own; the ABI is runtime.h's.
#include "attn/runtime.h"

static_assert(ATTN_ABI_VERSION > 0, "attn/runtime.h");

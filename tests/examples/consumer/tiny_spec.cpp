// tiny_spec.cpp: the consumer's C++ spec, checked at compile time and exported to attn_add_kernels.
#include <attn/check.h>

inline constexpr attn::Spec tiny = attn::attention().named("tiny").with_heads(1).with_head_dim(16);

ATTN_EXPORT_SPECS(tiny)

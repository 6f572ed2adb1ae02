// seed_specs.h: the two common attention configurations, core form (q, k, v given).
#pragma once

#include <attn/spec.h>

inline constexpr attn::Spec seed_512 = attn::attention().named("seed_512").with_d_model(512).with_heads(8);
inline constexpr attn::Spec seed_1024 = attn::attention().named("seed_1024").with_d_model(1024).with_heads(16);

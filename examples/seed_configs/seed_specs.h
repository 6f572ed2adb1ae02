// seed_specs.h: the two common attention configurations, core form (q, k, v given), and the
// mixed layer: 4 heads of 128 and 8 of 64 in one block (x -> projections -> heads -> w_o).
#pragma once

#include <attn/spec.h>

inline constexpr attn::Spec seed_512 = attn::attention().named("seed_512").with_d_model(512).with_heads(8);
inline constexpr attn::Spec seed_1024 = attn::attention().named("seed_1024").with_d_model(1024).with_heads(16);
inline constexpr attn::Spec seed_mixed =
    attn::attention().named("seed_mixed").block().with_d_model(1024).with_head_groups({{4, 128}, {8, 64}});

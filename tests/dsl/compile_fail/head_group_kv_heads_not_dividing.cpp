// A head group whose kv heads do not divide its heads must not compile.
#include "attn/check.h"

constexpr attn::Spec mixed =
    attn::attention().block().with_d_model(96).with_head_groups({{4, 128}, {8, 64, 3}});
ATTN_CHECK_SPEC(mixed);

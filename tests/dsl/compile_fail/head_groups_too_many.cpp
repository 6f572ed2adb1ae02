// Must not compile: five head groups, one more than a Spec holds.
#include "attn/check.h"

constexpr attn::Spec five =
    attn::attention().block().with_d_model(64).with_head_groups({{1, 8}, {1, 8}, {1, 8}, {1, 8}, {1, 8}});
static_assert(attn::checked<five>());

// expr_random.h: random well-typed score_mod / mask_mod expressions over every variable and captured
// tensors, several to a kernel behind a run-time pick, so a few dozen kernels test hundreds.
#pragma once

#include <cstdint>
#include <string>

namespace attnc::test {

// The seed of the suite (expr_random_export.cpp and expr_random_test.cpp agree on it).
constexpr uint32_t expr_random_seed = 3401;
// Expressions per kernel and field: score_mod is select(pick[0] == 0, E0, select(pick[0] == 1, E1,
// ...)) and mask_mod likewise over pick[1], pick an i32 [2] input.
constexpr int expr_random_picks = 8;

// Kernel n's spec text: a base (core families, the block form, built-in masks and modifiers,
// align, lse, probs) with inputs pick, a float, an int and a byte tensor of random shapes, and
// the two select chains. Deterministic in (seed, n); every spec parses and checks.
std::string random_expr_spec(uint32_t seed, int n);

}  // namespace attnc::test

// attnc/probs_output.h: the probs output, the softmax of every (query, key) pair, after the core.
#pragma once

#include <Halide.h>

#include "attn/spec.h"
#include "attnc/core_algorithm.h"

namespace attnc {

// probs(key, i, h, b) for [B, H, Sq, Sk]: exp(logit - lse) for a kept key, exactly 0 for a
// masked one (so 0 across a row with no kept key), NaN across a row whose lse is NaN (a kept
// NaN or +inf logit). The logits are recomputed from q and k with the cores' own score, mask
// and modifier lowering; row_lse(h, i, b) is the core's log-sum-exp of the same row. For
// inspection: the fast path never computes it (a spec without probs does not reach here).
struct ProbsFuncs {
  Halide::Var key{"key"}, i{"i"}, h{"h"}, b{"b"};
  Halide::RDom over_head_dim;
  Halide::Func keys;    // keys(key, d, g, b): k transposed so that a row's logits are vectors over keys
  Halide::Func scores;  // scores(key, i, h, b): scaled q . k
  Halide::Func probs;
};
ProbsFuncs define_probs(const CoreInputs &in, const attn::Spec &resolved, const Halide::Func &row_lse);

// Rows in parallel, each row's scores and probabilities vectorized over keys.
void schedule_probs_cpu(ProbsFuncs &f, int lanes);

}  // namespace attnc

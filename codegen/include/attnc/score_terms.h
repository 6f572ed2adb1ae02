// attnc/score_terms.h: what every core algorithm applies per score: modifiers and length checks.
#pragma once

#include <Halide.h>

#include <vector>

#include "attn/spec.h"
#include "attnc/core_algorithm.h"

namespace attnc {

// One score's coordinates. query_pos is the query's key position q' (bottom-right aligned);
// key_pos the key's position, key_row and query_row the clamped rows that index inputs.
struct ScorePoint {
  Halide::Expr query_pos, key_pos, key_row, query_row, head, batch;
};

// The score after the spec's modifiers, in order: softcap, alibi, then the bias tensor.
Halide::Expr modified_logit(const attn::Spec &resolved, const CoreInputs &in, const Halide::Expr &score,
                            const ScorePoint &p);

// The factor q . k is scaled by: the run-time scale where the spec takes one, else its constant.
Halide::Expr score_scale(const attn::Spec &resolved, const CoreInputs &in);

// `in` with its length inputs wrapped in run-time checks (0 <= length <= Sk, Halide require()),
// and its run-time scale in one that it is finite (NaN and infinities have no meaning as a scale;
// zero and negative scales are valid); each check is appended to `checks`, to be computed before
// any output is written.
CoreInputs with_checked_lengths(const CoreInputs &in, std::vector<Halide::Func> *checks);

}  // namespace attnc

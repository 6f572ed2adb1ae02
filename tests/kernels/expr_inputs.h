// expr_inputs.h: the captured tensors of a score_mod / mask_mod spec (inputs=) in a test call, and
// the reference's view of them.
#pragma once

#include <cstdint>
#include <random>

#include "attn/spec.h"
#include "expr_reference.h"
#include "kernel_test_support.h"

namespace attnc::test {

// Adds each declared tensor at its shape (B, Sq, Sk from the call; H, KVH from the spec): f32
// uniform in [-1, 1], i32 in [-8, 8], u8 in [0, 3]; padded tensors get unreadable padding.
void add_captured_inputs(const attn::Spec &resolved, Call &call, int batch, int seq_q, int seq_k, bool padded,
                         std::mt19937 &rng);

// The call's captured tensors as the reference's evaluator reads them (views into the call).
reference::CapturedViews captured_views(const attn::Spec &resolved, const Call &call);

// o's score_mod / mask_mod for the spec and the call (its tensors must outlive o's use).
void add_expr_reference(reference::Options &o, const attn::Spec &resolved, const Call &call);

}  // namespace attnc::test

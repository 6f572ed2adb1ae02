// attnc/rope.h: rotary position embeddings (rope=neox|interleaved) as a Halide wrapper of q or k.
#pragma once

#include <Halide.h>

#include <functional>
#include <string>

#include "attn/spec.h"

namespace attnc {

// The cos and sin table of a spec's rotation: angles(i, position) = {cos, sin} of position *
// rope_theta^(-2i / rope_dim) in fp32 (docs/DSL.md), computed once per call over the positions its
// readers need (compute_root; on_gpu: a GPU kernel).
Halide::Func rope_angles(const attn::Spec &resolved, const std::string &name, bool on_gpu = false);

// x(d, head, row, b), f32, rotated: for d < rope_dim, pairs (d, partner) turn by the angle of
// position(row, b) (i the pair's index), the rest pass through. neox pairs i with i + rope_dim / 2,
// interleaved 2i with 2i + 1. cos and sin come from `angles` (rope_angles), or without it from a
// table of its own named name + "_angles"; the rotation itself is inline where it is read. Reads x
// only at d in [0, head_dim).
Halide::Func rope_rotated(const Halide::Func &x, const attn::Spec &resolved,
                          const std::function<Halide::Expr(Halide::Expr row, Halide::Expr b)> &position,
                          const std::string &name, bool on_gpu = false, const Halide::Func &angles = {});

// neox's half (rope_dim / 2) where halves tile head_dim: a vector of d inside one half reads its
// partners (d +- half) and angles (d % half) as whole vectors. 0 for interleaved pairs, or halves
// that do not tile head_dim.
int rope_half_block(const attn::Spec &resolved);

// f's pure stage vectorized along d by `lanes`; with a half block that lanes divides, d is split
// into its halves first (unrolled), so no vector crosses a half (vectors across one gathered
// their partners and angles lane by lane).
void vectorize_rotated(Halide::Func f, const Halide::Var &d, int half_block, int lanes);

}  // namespace attnc

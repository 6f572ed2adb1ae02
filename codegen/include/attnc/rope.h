// attnc/rope.h: rotary position embeddings (rope=neox|interleaved) as a Halide wrapper of q or k.
#pragma once

#include <Halide.h>

#include <functional>
#include <string>

#include "attn/spec.h"

namespace attnc {

// x(d, head, row, b), f32, rotated: for d < rope_dim, pairs (d, partner) turn by the angle
// position(row, b) * rope_theta^(-2i / rope_dim) (i the pair's index; fp32, docs/DSL.md), the rest
// pass through. neox pairs i with i + rope_dim / 2, interleaved 2i with 2i + 1. cos and sin come
// from a table over (i, position) computed once per call (compute_root, named name + "_angles";
// on_gpu: a GPU kernel); the rotation itself is inline where it is read. Reads x only at d in
// [0, head_dim).
Halide::Func rope_rotated(const Halide::Func &x, const attn::Spec &resolved,
                          const std::function<Halide::Expr(Halide::Expr row, Halide::Expr b)> &position,
                          const std::string &name, bool on_gpu = false);

}  // namespace attnc

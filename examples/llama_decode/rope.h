// rope.h: rotary position embeddings in the "neox" layout (element i pairs with i + rope_dim/2),
// with the angles attnc's kernels use (docs/DSL.md, RoPE).
#pragma once

namespace llama {

// The angle of pair i at a position, computed in fp32 as the kernel computes it:
// position · theta^(−2i/rope_dim).
float rope_angle(int position, int pair, int rope_dim, float theta);

// Rotates x[0, rope_dim) in place at `position`, in fp32 (cos/sin of the fp32 angle).
void rope_neox(float *x, int position, int rope_dim, float theta);

// The same rotation in double at the fp32 angles: the fp64 reference's.
void rope_neox(double *x, int position, int rope_dim, float theta);

}  // namespace llama

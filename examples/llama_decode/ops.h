// ops.h: the decoder's dense parts in plain C++: projections, RMSNorm, SwiGLU, greedy sampling.
#pragma once

#include <cstddef>
#include <vector>

namespace llama {

// y [tokens, rows] = x [tokens, cols] · wᵀ, w [rows, cols] (nn.Linear, no bias), over `threads`
// threads (0: one per core), each taking a band of w's rows.
void linear(const float *x, int tokens, int cols, const float *w, int rows, float *y, int threads);

// x [tokens, n] → y: x / sqrt(mean(x²) + eps) · weight [n].
void rms_norm(const float *x, int tokens, int n, const float *weight, float eps, float *y);

// gate [tokens, n] ← silu(gate) · up (in place).
void swiglu(float *gate, const float *up, size_t count);

// The index of the largest of n logits (the first, on ties).
int argmax(const float *logits, int n);

}  // namespace llama

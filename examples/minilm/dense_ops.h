// dense_ops.h: the encoder's row-wise math besides attention: linear layers, LayerNorm, GELU.
#pragma once

#include <cstddef>

namespace minilm {

// y [rows, out] = x [rows, in] · w_t [in, out] + b [out]; rows split over the machine's threads.
void linear(const float *x, size_t rows, size_t in, const float *w_t, const float *b, size_t out, float *y);

// x [rows, n] = LayerNorm(x + residual) with gamma, beta [n]; statistics in double.
void add_layer_norm(float *x, const float *residual, size_t rows, size_t n, const float *gamma,
                    const float *beta, double eps);

// x = x · Φ(x), the exact GELU (erf), in place over n values.
void gelu(float *x, size_t n);

}  // namespace minilm

// linear.h: the dense products around attention (y = x·wᵀ) and their gradients, in plain loops.
#pragma once

#include <span>

// Every product accumulates in double and rounds once, so the finite-difference check sees the
// kernels' rounding rather than these loops'.

// y [rows, out] = x [rows, in] · w [out, in]ᵀ
void linear(std::span<const float> x, std::span<const float> w, int rows, int in, int out,
            std::span<float> y);

// dw [out, in] = dy [rows, out]ᵀ · x [rows, in]
void linear_weight_grad(std::span<const float> dy, std::span<const float> x, int rows, int in, int out,
                        std::span<float> dw);

// dx [rows, in] = dy [rows, out] · w [out, in]
void linear_input_grad(std::span<const float> dy, std::span<const float> w, int rows, int in, int out,
                       std::span<float> dx);

// ops.cpp: blocked, threaded projections and the element-wise parts of a Llama layer.
#include "ops.h"

#include <algorithm>
#include <cmath>
#include <thread>

namespace llama {
namespace {

constexpr int LANES = 16;  // independent partial sums per dot product: the compiler vectorizes them
constexpr int TOKEN_BLOCK = 4;

// y[t, r] for t in [0, tokens) and r in [r0, r1): each row of w read once per TOKEN_BLOCK tokens.
void linear_rows(const float *x, int tokens, int cols, const float *w, int rows, float *y, int r0, int r1) {
  const int vector_cols = cols / LANES * LANES;
  for (int r = r0; r < r1; ++r) {
    const float *wr = w + static_cast<size_t>(r) * cols;
    for (int t0 = 0; t0 < tokens; t0 += TOKEN_BLOCK) {
      const int nt = std::min(TOKEN_BLOCK, tokens - t0);
      float acc[TOKEN_BLOCK][LANES] = {};
      for (int c = 0; c < vector_cols; c += LANES)
        for (int t = 0; t < nt; ++t) {
          const float *xt = x + static_cast<size_t>(t0 + t) * cols + c;
          for (int l = 0; l < LANES; ++l) acc[t][l] += xt[l] * wr[c + l];
        }
      for (int t = 0; t < nt; ++t) {
        float sum = 0;
        for (int l = 0; l < LANES; ++l) sum += acc[t][l];
        const float *xt = x + static_cast<size_t>(t0 + t) * cols;
        for (int c = vector_cols; c < cols; ++c) sum += xt[c] * wr[c];
        y[static_cast<size_t>(t0 + t) * rows + r] = sum;
      }
    }
  }
}

}  // namespace

void linear(const float *x, int tokens, int cols, const float *w, int rows, float *y, int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = std::min(threads, rows);
  if (threads == 1) return linear_rows(x, tokens, cols, w, rows, y, 0, rows);
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i)
    pool.emplace_back(linear_rows, x, tokens, cols, w, rows, y, rows * i / threads, rows * (i + 1) / threads);
  for (std::thread &t : pool) t.join();
}

void rms_norm(const float *x, int tokens, int n, const float *weight, float eps, float *y) {
  for (int t = 0; t < tokens; ++t) {
    const float *xt = x + static_cast<size_t>(t) * n;
    double squares = 0;
    for (int i = 0; i < n; ++i) squares += double(xt[i]) * xt[i];
    const float inv = 1.0f / std::sqrt(static_cast<float>(squares / n) + eps);
    for (int i = 0; i < n; ++i) y[static_cast<size_t>(t) * n + i] = xt[i] * inv * weight[i];
  }
}

void swiglu(float *gate, const float *up, size_t count) {
  for (size_t i = 0; i < count; ++i) gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

int argmax(const float *logits, int n) {
  return static_cast<int>(std::max_element(logits, logits + n) - logits);
}

}  // namespace llama

// dense_ops.cpp: a cache-tiled linear layer (rows in blocks of 8, outputs in tiles of 64, so the
// accumulators stay in L1 and the compiler vectorizes the inner loop) over std::thread workers.
#include "dense_ops.h"

#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

namespace minilm {
namespace {

constexpr size_t kRowBlock = 8, kOutTile = 64;

void linear_rows(const float *x, size_t first, size_t last, size_t in, const float *w_t, const float *b, size_t out,
                 float *y) {
  float acc[kRowBlock][kOutTile];
  for (size_t o0 = 0; o0 < out; o0 += kOutTile) {
    const size_t on = std::min(kOutTile, out - o0);
    for (size_t r0 = first; r0 < last; r0 += kRowBlock) {
      const size_t rn = std::min(kRowBlock, last - r0);
      for (size_t r = 0; r < rn; ++r)
        for (size_t o = 0; o < on; ++o) acc[r][o] = b ? b[o0 + o] : 0.0f;
      for (size_t c = 0; c < in; ++c) {
        const float *w = w_t + c * out + o0;
        for (size_t r = 0; r < rn; ++r) {
          const float a = x[(r0 + r) * in + c];
          for (size_t o = 0; o < on; ++o) acc[r][o] += a * w[o];
        }
      }
      for (size_t r = 0; r < rn; ++r) std::copy(acc[r], acc[r] + on, y + (r0 + r) * out + o0);
    }
  }
}

}  // namespace

void linear(const float *x, size_t rows, size_t in, const float *w_t, const float *b, size_t out, float *y) {
  const size_t threads = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, (rows + 63) / 64);
  if (threads <= 1) return linear_rows(x, 0, rows, in, w_t, b, out, y);
  std::vector<std::thread> workers;
  const size_t per = (rows + threads - 1) / threads;
  for (size_t t = 0; t < threads; ++t) {
    const size_t first = t * per, last = std::min(rows, first + per);
    if (first < last) workers.emplace_back(linear_rows, x, first, last, in, w_t, b, out, y);
  }
  for (std::thread &w : workers) w.join();
}

void add_layer_norm(float *x, const float *residual, size_t rows, size_t n, const float *gamma, const float *beta,
                    double eps) {
  for (size_t r = 0; r < rows; ++r) {
    float *row = x + r * n;
    const float *res = residual + r * n;
    double sum = 0, square = 0;
    for (size_t i = 0; i < n; ++i) sum += row[i] += res[i];
    const double mean = sum / double(n);
    for (size_t i = 0; i < n; ++i) square += (row[i] - mean) * (row[i] - mean);
    const double inv = 1.0 / std::sqrt(square / double(n) + eps);
    for (size_t i = 0; i < n; ++i) row[i] = float((row[i] - mean) * inv * gamma[i] + beta[i]);
  }
}

void gelu(float *x, size_t n) {
  for (size_t i = 0; i < n; ++i) x[i] = float(0.5 * x[i] * (1.0 + std::erf(x[i] * 0.70710678118654752440)));
}

}  // namespace minilm

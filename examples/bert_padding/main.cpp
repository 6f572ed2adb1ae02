// main.cpp: a BERT attention block over 4 sequences of different lengths padded to one length S;
// times it and checks every real token against an fp64 reference of its own sequence.
#include <attn/kernel_id.h>
#include <attn/runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "bert_spec.h"

namespace {

constexpr int M = 768, H = 12, D = 64, B = 4;

struct Weights {
  std::vector<float> w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o;  // w_*: [M, M] (nn.Linear), b_*: [M]
};

// y[s, r] = b[r] + sum_c x[s, c] w[r, c], in double.
std::vector<double> linear(const std::vector<double> &x, int rows, const std::vector<float> &w,
                           const std::vector<float> &b) {
  std::vector<double> y(size_t(rows) * M);
  for (int s = 0; s < rows; ++s)
    for (int r = 0; r < M; ++r) {
      double acc = b[r];
      for (int c = 0; c < M; ++c) acc += x[size_t(s) * M + c] * w[size_t(r) * M + c];
      y[size_t(s) * M + r] = acc;
    }
  return y;
}

// The block for one sequence's len real tokens alone, as if it had never been padded.
std::vector<double> reference(const float *x32, int len, const Weights &w) {
  const std::vector<double> x(x32, x32 + size_t(len) * M);
  const std::vector<double> q = linear(x, len, w.w_q, w.b_q), k = linear(x, len, w.w_k, w.b_k),
                            v = linear(x, len, w.w_v, w.b_v);
  std::vector<double> merged(size_t(len) * M, 0.0), p(len);
  for (int h = 0; h < H; ++h)
    for (int i = 0; i < len; ++i) {
      double mx = -INFINITY, sum = 0;
      for (int j = 0; j < len; ++j) {
        double dot = 0;
        for (int d = 0; d < D; ++d) dot += q[size_t(i) * M + h * D + d] * k[size_t(j) * M + h * D + d];
        mx = std::max(mx, p[j] = dot / std::sqrt(double(D)));
      }
      for (int j = 0; j < len; ++j) sum += p[j] = std::exp(p[j] - mx);
      for (int j = 0; j < len; ++j)
        for (int d = 0; d < D; ++d)
          merged[size_t(i) * M + h * D + d] += p[j] / sum * v[size_t(j) * M + h * D + d];
    }
  return linear(merged, len, w.w_o, w.b_o);
}

}  // namespace

int main(int argc, char **argv) {
  const int S = argc > 1 ? std::atoi(argv[1]) : 128;
  if (S < 4) return std::fprintf(stderr, "usage: bert_padding [padded_length >= 4]\n"), 2;
  // Sequences of 128, 77, 31 and 100 tokens at S = 128, scaled with S.
  int32_t lengths[B] = {S, std::max(1, 77 * S / 128), std::max(1, 31 * S / 128), std::max(1, 100 * S / 128)};
  const std::string id = attn::kernel_id(bert_padding_spec);
  const attn_kernel *kernel = nullptr;
  if (attn_find_kernel(id.c_str(), &kernel) != ATTN_OK)
    return std::fprintf(stderr, "%s\n", attn_last_error()), 1;

  std::mt19937 rng(1810);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  auto random = [&](size_t n, float scale) {
    std::vector<float> t(n);
    for (float &e : t) e = uniform(rng) * scale;
    return t;
  };
  const float init = 1.0f / std::sqrt(float(M));  // nn.Linear's default range
  Weights w{random(M * M, init), random(M * M, init), random(M * M, init), random(M * M, init),
            random(M, init),     random(M, init),     random(M, init),     random(M, init)};
  // Pad tokens hold large values: the mask must keep them out of every real token's result.
  std::vector<float> x = random(size_t(B) * S * M, 1.0f), out(size_t(B) * S * M);
  for (int b = 0; b < B; ++b)
    for (size_t n = size_t(lengths[b]) * M; n < size_t(S) * M; ++n) x[size_t(b) * S * M + n] *= 100.0f;

  const int64_t x_shape[] = {B, S, M}, w_shape[] = {M, M}, b_shape[] = {M}, lengths_shape[] = {B};
  const attn_arg args[] = {
      {"x", {x.data(), ATTN_F32, 3, x_shape, nullptr}},
      {"w_q", {w.w_q.data(), ATTN_F32, 2, w_shape, nullptr}},
      {"w_k", {w.w_k.data(), ATTN_F32, 2, w_shape, nullptr}},
      {"w_v", {w.w_v.data(), ATTN_F32, 2, w_shape, nullptr}},
      {"b_q", {w.b_q.data(), ATTN_F32, 1, b_shape, nullptr}},
      {"b_k", {w.b_k.data(), ATTN_F32, 1, b_shape, nullptr}},
      {"b_v", {w.b_v.data(), ATTN_F32, 1, b_shape, nullptr}},
      {"w_o", {w.w_o.data(), ATTN_F32, 2, w_shape, nullptr}},
      {"b_o", {w.b_o.data(), ATTN_F32, 1, b_shape, nullptr}},
      {"key_lengths", {lengths, ATTN_I32, 1, lengths_shape, nullptr}},
      {"out", {out.data(), ATTN_F32, 3, x_shape, nullptr}},
  };
  const int arg_count = sizeof args / sizeof args[0];

  std::vector<double> ms;
  for (int run = 0; run < 12; ++run) {
    const auto start = std::chrono::steady_clock::now();
    if (attn_run(kernel, args, arg_count) != ATTN_OK)
      return std::fprintf(stderr, "%s\n", attn_last_error()), 1;
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin() + 2, ms.end());  // the first two runs warm up
  const double median = ms[2 + (ms.size() - 2) / 2];

  // Pad rows get computed too (they attend to their sequence's real tokens); compare real rows only.
  double err = 0, scale = 0;
  int real_tokens = 0;
  for (int b = 0; b < B; ++b) {
    const std::vector<double> ref = reference(&x[size_t(b) * S * M], lengths[b], w);
    real_tokens += lengths[b];
    for (size_t n = 0; n < ref.size(); ++n) {
      const float got = out[size_t(b) * S * M + n];
      err = std::isfinite(got) ? std::max(err, std::fabs(got - ref[n])) : INFINITY;
      scale = std::max(scale, std::fabs(ref[n]));
    }
  }
  std::printf("bert_padding: kernel %s\n  targets %s\n", id.c_str(), attn_kernel_target(kernel));
  std::printf("  B=%d S=%d, lengths %d %d %d %d (%d real tokens of %d): median %.3f ms\n", B, S, lengths[0],
              lengths[1], lengths[2], lengths[3], real_tokens, B * S, median);
  std::printf("  max |out - fp64 reference| over real tokens = %.3g (max |reference| = %.3g)\n", err, scale);
  return std::isfinite(err) && err <= 1e-4 * scale ? 0 : 1;
}

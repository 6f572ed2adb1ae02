// main.cpp: runs the GPT-2 attention block on random weights, times it, checks it against fp64.
#include <attn/kernel_id.h>
#include <attn/runtime.h>
#include <attn/validate.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "gpt2_spec.h"

namespace {

constexpr int M = 768, H = 12, D = 64;

// y[s, r] = b[r] + sum_c x[s, c] w[r, c]  (nn.Linear), in double.
std::vector<double> linear(const std::vector<double> &x, int S, int in, const std::vector<float> &w,
                           const std::vector<float> &b, int out) {
  std::vector<double> y(static_cast<size_t>(S) * out);
  for (int s = 0; s < S; ++s)
    for (int r = 0; r < out; ++r) {
      double acc = b[r];
      for (int c = 0; c < in; ++c) acc += x[s * in + c] * w[static_cast<size_t>(r) * in + c];
      y[static_cast<size_t>(s) * out + r] = acc;
    }
  return y;
}

// The block for one sequence, straight from its definition.
std::vector<double> reference(const std::vector<float> &x32, int S, const std::vector<float> &w_qkv,
                              const std::vector<float> &b_qkv, const std::vector<float> &w_o,
                              const std::vector<float> &b_o) {
  std::vector<double> x(x32.begin(), x32.end());
  const std::vector<double> qkv = linear(x, S, M, w_qkv, b_qkv, 3 * M);
  std::vector<double> merged(static_cast<size_t>(S) * M, 0.0), p(S);
  for (int h = 0; h < H; ++h)
    for (int i = 0; i < S; ++i) {
      double mx = -INFINITY, sum = 0;
      for (int j = 0; j <= i; ++j) {
        double dot = 0;
        for (int d = 0; d < D; ++d) dot += qkv[i * 3 * M + h * D + d] * qkv[j * 3 * M + M + h * D + d];
        p[j] = dot / std::sqrt(double(D));
        mx = std::max(mx, p[j]);
      }
      for (int j = 0; j <= i; ++j) sum += p[j] = std::exp(p[j] - mx);
      for (int j = 0; j <= i; ++j)
        for (int d = 0; d < D; ++d) merged[i * M + h * D + d] += p[j] / sum * qkv[j * 3 * M + 2 * M + h * D + d];
    }
  return linear(merged, S, M, w_o, b_o, M);
}

}  // namespace

int main(int argc, char **argv) {
  const int S = argc > 1 ? std::atoi(argv[1]) : 256;
  if (S < 1) return std::fprintf(stderr, "usage: gpt2_attention [seq_len >= 1]\n"), 2;
  const std::string id = attn::kernel_id(gpt2_attention_spec);
  const attn_kernel *kernel = nullptr;
  if (attn_find_kernel(id.c_str(), &kernel) != ATTN_OK) return std::fprintf(stderr, "%s\n", attn_last_error()), 1;

  std::mt19937 rng(2019);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  auto random = [&](size_t n, float scale) {
    std::vector<float> v(n);
    for (float &e : v) e = uniform(rng) * scale;
    return v;
  };
  const float init = 1.0f / std::sqrt(float(M));  // nn.Linear's default range
  std::vector<float> x = random(size_t(S) * M, 1.0f), w_qkv = random(3 * M * M, init), b_qkv = random(3 * M, init),
                     w_o = random(M * M, init), b_o = random(M, init), out(size_t(S) * M);

  const int64_t x_shape[] = {1, S, M}, w_qkv_shape[] = {3 * M, M}, b_qkv_shape[] = {3 * M}, w_o_shape[] = {M, M},
                b_o_shape[] = {M};
  const attn_arg args[] = {
      {"x", {x.data(), ATTN_F32, 3, x_shape, nullptr}},
      {"w_qkv", {w_qkv.data(), ATTN_F32, 2, w_qkv_shape, nullptr}},
      {"b_qkv", {b_qkv.data(), ATTN_F32, 1, b_qkv_shape, nullptr}},
      {"w_o", {w_o.data(), ATTN_F32, 2, w_o_shape, nullptr}},
      {"b_o", {b_o.data(), ATTN_F32, 1, b_o_shape, nullptr}},
      {"out", {out.data(), ATTN_F32, 3, x_shape, nullptr}},
  };

  std::vector<double> ms;
  for (int run = 0; run < 12; ++run) {
    const auto start = std::chrono::steady_clock::now();
    if (attn_run(kernel, args, 6) != ATTN_OK) return std::fprintf(stderr, "%s\n", attn_last_error()), 1;
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin() + 2, ms.end());  // the first two runs warm up
  const double median = ms[2 + (ms.size() - 2) / 2];
  const double flops = 2.0 * S * M * 3 * M + 4.0 * H * D * (double(S) * (S + 1) / 2) + 2.0 * S * M * M;

  const std::vector<double> ref = reference(x, S, w_qkv, b_qkv, w_o, b_o);
  double err = 0, scale = 0;
  for (size_t n = 0; n < ref.size(); ++n) {
    if (!std::isfinite(out[n])) err = INFINITY;
    err = std::max(err, std::fabs(out[n] - ref[n]));
    scale = std::max(scale, std::fabs(ref[n]));
  }
  std::printf("gpt2_attention: kernel %s\n  targets %s\n  runs    %s (ATTN_MAX_ISA caps it)\n", id.c_str(),
              attn_kernel_target(kernel), attn_kernel_selected_target(kernel));
  std::printf("  B=1 S=%d: median %.3f ms, %.1f GFLOP/s\n", S, median, flops / median * 1e-6);
  std::printf("  max |out - fp64 reference| = %.3g (max |reference| = %.3g)\n", err, scale);
  return err <= 1e-4 * std::max(scale, 1.0) && std::isfinite(err) ? 0 : 1;
}

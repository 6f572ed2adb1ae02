// main.cpp: Longformer attention (window(512,512) | global(8)) on one long sequence against the
// dense kernel: times both, prints the speedup, checks sampled rows of both against fp64.
#include <attn/kernel_id.h>
#include <attn/runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "longformer_specs.h"

namespace {

constexpr int H = 4, D = 64, window = 512, global = 8;

// Whether query i sees key j under window(512,512) | global(8) (Sq = Sk, so q' = i).
bool kept(int i, int j) {
  return std::abs(i - j) <= window || i < global || j < global;
}

// Median milliseconds of runs calls after warmup calls; negative if a call fails.
double time_kernel(const attn_kernel *kernel, const attn_arg *args, int warmup, int runs) {
  std::vector<double> ms;
  for (int run = 0; run < warmup + runs; ++run) {
    const auto start = std::chrono::steady_clock::now();
    if (attn_run(kernel, args, 4) != ATTN_OK) return std::fprintf(stderr, "%s\n", attn_last_error()), -1.0;
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin() + warmup, ms.end());
  return ms[warmup + runs / 2];
}

// max |out - fp64| over every head of query row i; scale collects max |fp64|.
double row_error(const std::vector<float> &q, const std::vector<float> &k, const std::vector<float> &v,
                 const std::vector<float> &out, int S, int i, bool windowed, double &scale) {
  auto at = [](const std::vector<float> &t, int s, int h, int d) {
    return double(t[(size_t(s) * H + h) * D + d]);
  };
  double err = 0;
  std::vector<double> p(S);
  for (int h = 0; h < H; ++h) {
    double mx = -INFINITY, sum = 0;
    for (int j = 0; j < S; ++j) {
      if (windowed && !kept(i, j)) continue;
      double dot = 0;
      for (int d = 0; d < D; ++d) dot += at(q, i, h, d) * at(k, j, h, d);
      mx = std::max(mx, p[j] = dot / std::sqrt(double(D)));
    }
    for (int j = 0; j < S; ++j)
      if (!windowed || kept(i, j)) sum += p[j] = std::exp(p[j] - mx);
    for (int d = 0; d < D; ++d) {
      double ref = 0;
      for (int j = 0; j < S; ++j)
        if (!windowed || kept(i, j)) ref += p[j] / sum * at(v, j, h, d);
      const float got = out[(size_t(i) * H + h) * D + d];
      err = std::isfinite(got) ? std::max(err, std::fabs(got - ref)) : INFINITY;
      scale = std::max(scale, std::fabs(ref));
    }
  }
  return err;
}

}  // namespace

int main(int argc, char **argv) {
  const int S = argc > 1 ? std::atoi(argv[1]) : 16384;
  if (S < 1) return std::fprintf(stderr, "usage: longformer [seq_len >= 1, default 16384]\n"), 2;
  const std::string sparse_id = attn::kernel_id(longformer_spec),
                    dense_id = attn::kernel_id(longformer_dense_spec);
  const attn_kernel *sparse = nullptr, *dense = nullptr;
  if (attn_find_kernel(sparse_id.c_str(), &sparse) != ATTN_OK ||
      attn_find_kernel(dense_id.c_str(), &dense) != ATTN_OK)
    return std::fprintf(stderr, "%s\n", attn_last_error()), 1;

  const size_t n = size_t(S) * H * D;
  std::mt19937 rng(2004);
  std::normal_distribution<float> normal;
  std::vector<float> q(n), k(n), v(n), out_sparse(n), out_dense(n);
  for (auto *t : {&q, &k, &v})
    for (float &e : *t) e = normal(rng);
  const int64_t shape[] = {1, S, H, D};
  auto args_for = [&](std::vector<float> &out) {
    return std::vector<attn_arg>{{"q", {q.data(), ATTN_F32, 4, shape, nullptr}},
                                 {"k", {k.data(), ATTN_F32, 4, shape, nullptr}},
                                 {"v", {v.data(), ATTN_F32, 4, shape, nullptr}},
                                 {"out", {out.data(), ATTN_F32, 4, shape, nullptr}}};
  };
  // Long dense runs take seconds each on a small machine: time one, unwarmed.
  const bool long_run = S > 4096;
  const double sparse_ms = time_kernel(sparse, args_for(out_sparse).data(), 1, 3);
  const double dense_ms = time_kernel(dense, args_for(out_dense).data(), long_run ? 0 : 1, long_run ? 1 : 3);
  if (sparse_ms < 0 || dense_ms < 0) return 1;

  int64_t kept_pairs = 0;
  for (int i = 0; i < S; ++i)
    kept_pairs += i < global ? S
                             : std::min(S - 1, i + window) - std::max(0, i - window) + 1 +
                                   std::min(global, std::max(0, i - window));
  // The global rows (every key), then rows spread over the sequence (window and global keys).
  std::vector<int> rows;
  for (int i = 0; i < std::min(S, global); ++i) rows.push_back(i);
  for (int j = 0; j < 16 && S > global; ++j) rows.push_back(global + int(int64_t(j) * (S - 1 - global) / 15));
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  double sparse_err = 0, dense_err = 0, scale = 0;
  for (int i : rows) {
    sparse_err = std::max(sparse_err, row_error(q, k, v, out_sparse, S, i, true, scale));
    dense_err = std::max(dense_err, row_error(q, k, v, out_dense, S, i, false, scale));
  }

  std::printf("longformer: %s vs %s\n  targets %s\n", sparse_id.c_str(), dense_id.c_str(),
              attn_kernel_target(sparse));
  std::printf("  B=1 S=%d H=%d D=%d: window(%d,%d)|global(%d) keeps %.2f%% of the score matrix\n", S, H, D,
              window, window, global, 100.0 * double(kept_pairs) / (double(S) * S));
  std::printf("  windowed %.3f ms, dense %.3f ms: %.2fx faster\n", sparse_ms, dense_ms, dense_ms / sparse_ms);
  std::printf("  %zu rows vs fp64: max error windowed %.3g, dense %.3g (max |reference| %.3g)\n", rows.size(),
              sparse_err, dense_err, scale);
  const double bound = 1e-4 * std::max(scale, 1.0);
  return std::isfinite(sparse_err + dense_err) && sparse_err <= bound && dense_err <= bound ? 0 : 1;
}

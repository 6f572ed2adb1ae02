// mixed_block.cpp: the seed's mixed head groups in one block kernel, checked in fp64 on sampled rows.
#include "mixed_block.h"

#include <attn/kernel_id.h>
#include <attn/runtime.h>
#include <attn/validate.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "median_time.h"

namespace {

// y[t, r] = sum_c x[t, c] w[r, c] over `rows` weight rows from `first`, for every token t.
std::vector<double> project(const std::vector<float> &x, const std::vector<float> &w, int tokens, int m,
                            int first, int rows) {
  std::vector<double> y(size_t(tokens) * rows);
  for (int t = 0; t < tokens; ++t)
    for (int r = 0; r < rows; ++r) {
      double sum = 0;
      for (int c = 0; c < m; ++c) sum += double(x[size_t(t) * m + c]) * w[size_t(first + r) * m + c];
      y[size_t(t) * rows + r] = sum;
    }
  return y;
}

}  // namespace

bool run_mixed_block(const attn::Spec &user_spec, int B, int S) {
  const attn::Spec spec = attn::resolve(user_spec);
  const int M = spec.d_model, Q = int(attn::query_width(spec)), K = int(attn::key_width(spec));
  const std::string id = attn::kernel_id(spec);
  const attn_kernel *kernel = nullptr;
  if (attn_find_kernel(id.c_str(), &kernel) != ATTN_OK)
    return std::fprintf(stderr, "%s\n", attn_last_error()), false;

  // w_q [Q, M] group by group, head by head; w_k, w_v [K, M] likewise; w_o [M, Q].
  std::mt19937 rng(1024);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::vector<float> x(size_t(B) * S * M), wq(size_t(Q) * M), wk(size_t(K) * M), wv(size_t(K) * M),
      wo(size_t(M) * Q), out(x.size());
  for (float &e : x) e = unit(rng);
  for (auto *w : {&wq, &wk, &wv})
    for (float &e : *w) e = unit(rng) / std::sqrt(float(M));
  for (float &e : wo) e = unit(rng) / std::sqrt(float(Q));
  const int64_t x_shape[] = {B, S, M}, q_shape[] = {Q, M}, k_shape[] = {K, M}, o_shape[] = {M, Q};
  const attn_arg args[] = {{"x", {x.data(), ATTN_F32, 3, x_shape, nullptr}},
                           {"w_q", {wq.data(), ATTN_F32, 2, q_shape, nullptr}},
                           {"w_k", {wk.data(), ATTN_F32, 2, k_shape, nullptr}},
                           {"w_v", {wv.data(), ATTN_F32, 2, k_shape, nullptr}},
                           {"w_o", {wo.data(), ATTN_F32, 2, o_shape, nullptr}},
                           {"out", {out.data(), ATTN_F32, 3, x_shape, nullptr}}};
  const double median = median_run_ms(kernel, args, 6);
  if (median < 0) return false;

  // fp64, batch 0: every token's q, k, v; a sample of query rows through every group and w_o.
  const std::vector<double> q = project(x, wq, S, M, 0, Q), k = project(x, wk, S, M, 0, K),
                            v = project(x, wv, S, M, 0, K);
  double err = 0;
  std::vector<double> merged(Q), p(S);
  for (int i = 0; i < S; i += std::max(1, S / 16)) {
    int q_first = 0, k_first = 0;
    for (int g = 0; g < spec.group_count; ++g) {
      const attn::HeadGroup &group = spec.head_groups[g];
      const int D = group.head_dim, per_kv = group.heads / group.kv_heads;
      const double scale = 1.0 / std::sqrt(double(D));
      for (int h = 0; h < group.heads; ++h) {
        const double *qi = &q[size_t(i) * Q + q_first + h * D];
        const int kv_col = k_first + (h / per_kv) * D;
        double mx = -INFINITY, sum = 0;
        for (int j = 0; j < S; ++j) {
          double dot = 0;
          for (int d = 0; d < D; ++d) dot += qi[d] * k[size_t(j) * K + kv_col + d];
          mx = std::max(mx, p[j] = dot * scale);
        }
        for (int j = 0; j < S; ++j) sum += p[j] = std::exp(p[j] - mx);
        for (int d = 0; d < D; ++d) {
          double o = 0;
          for (int j = 0; j < S; ++j) o += p[j] / sum * v[size_t(j) * K + kv_col + d];
          merged[q_first + h * D + d] = o;
        }
      }
      q_first += group.heads * D;
      k_first += group.kv_heads * D;
    }
    for (int m = 0; m < M; ++m) {
      double o = 0;
      for (int c = 0; c < Q; ++c) o += merged[c] * wo[size_t(m) * Q + c];
      const double got = out[size_t(i) * M + m];
      err = std::isfinite(got) ? std::max(err, std::fabs(got - o)) : INFINITY;
    }
  }
  std::printf("%-10s %s\n  B=%d S=%d d_model=%d: median %.3f ms, max |out - fp64| = %.3g\n", spec.name,
              id.c_str(), B, S, M, median, err);
  return err < 1e-4;
}

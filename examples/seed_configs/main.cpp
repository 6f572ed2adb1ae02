// main.cpp: runs the seed configurations on random inputs (the two core ones on q, k, v, the mixed
// block on x and weights); times them; checks sampled rows in fp64.
#include <attn/kernel_id.h>
#include <attn/runtime.h>
#include <attn/validate.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "median_time.h"
#include "mixed_block.h"
#include "seed_specs.h"

namespace {

// Runs one spec at [B, S, H, D]; returns false if the kernel fails or disagrees with fp64.
bool run_config(const attn::Spec &user_spec, int B, int S) {
  const attn::Spec spec = attn::resolve(user_spec);
  const int H = spec.heads, D = spec.head_dim;
  const std::string id = attn::kernel_id(spec);
  const attn_kernel *kernel = nullptr;
  if (attn_find_kernel(id.c_str(), &kernel) != ATTN_OK) return std::fprintf(stderr, "%s\n", attn_last_error()), false;

  const size_t n = size_t(B) * S * H * D;
  std::mt19937 rng(512);
  std::normal_distribution<float> normal;
  std::vector<float> q(n), k(n), v(n), out(n);
  for (auto *t : {&q, &k, &v})
    for (float &e : *t) e = normal(rng);
  const int64_t shape[] = {B, S, H, D};
  const attn_arg args[] = {{"q", {q.data(), ATTN_F32, 4, shape, nullptr}},
                           {"k", {k.data(), ATTN_F32, 4, shape, nullptr}},
                           {"v", {v.data(), ATTN_F32, 4, shape, nullptr}},
                           {"out", {out.data(), ATTN_F32, 4, shape, nullptr}}};
  const double median = median_run_ms(kernel, args, 4);
  if (median < 0) return false;
  const double flops = 4.0 * B * H * double(S) * S * D;

  // fp64 check of every head on a sample of query rows (first, last, and a spread between).
  double err = 0;
  std::vector<double> p(S);
  auto at = [&](const std::vector<float> &t, int b, int s, int h, int d) {
    return double(t[((size_t(b) * S + s) * H + h) * D + d]);
  };
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < S; i += std::max(1, S / 16)) {
        double mx = -INFINITY, sum = 0;
        for (int j = 0; j < S; ++j) {
          double dot = 0;
          for (int d = 0; d < D; ++d) dot += at(q, b, i, h, d) * at(k, b, j, h, d);
          mx = std::max(mx, p[j] = dot * spec.scale);
        }
        for (int j = 0; j < S; ++j) sum += p[j] = std::exp(p[j] - mx);
        for (int d = 0; d < D; ++d) {
          double o = 0;
          for (int j = 0; j < S; ++j) o += p[j] / sum * at(v, b, j, h, d);
          const double got = at(out, b, i, h, d);
          err = std::isfinite(got) ? std::max(err, std::fabs(got - o)) : INFINITY;
        }
      }
  std::printf("%-10s %s\n  B=%d S=%d H=%d D=%d: median %.3f ms, %.1f GFLOP/s, max |out - fp64| = %.3g\n",
              spec.name, id.c_str(), B, S, H, D, median, flops / median * 1e-6, err);
  return err < 1e-4;
}

}  // namespace

int main(int argc, char **argv) {
  const int S = argc > 1 ? std::atoi(argv[1]) : 512;
  if (S < 1) return std::fprintf(stderr, "usage: seed_configs [seq_len >= 1]\n"), 2;
  const bool ok = run_config(seed_512, 1, S) && run_config(seed_1024, 1, S) && run_mixed_block(seed_mixed, 1, S);
  return ok ? 0 : 1;
}

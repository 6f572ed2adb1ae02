// main.cpp: runs the consumer's kernels (one or two, by its spec lists) and checks them against fp64.
#include <attn/runtime.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace {

// One core kernel on [1, S, H, 16] queries and [1, S, KVH, 16] keys and values; 0 when it matches.
int run(const char *id, int heads, int kv_heads, bool causal) {
  constexpr int S = 37, D = 16;
  const attn_kernel *kernel = nullptr;
  if (attn_find_kernel(id, &kernel) != ATTN_OK) return std::fprintf(stderr, "%s\n", attn_last_error()), 1;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> q(S * heads * D), k(S * kv_heads * D), v(S * kv_heads * D), out(q.size());
  for (std::vector<float> *t : {&q, &k, &v})
    for (float &e : *t) e = uniform(rng);
  const int64_t q_shape[] = {1, S, heads, D}, kv_shape[] = {1, S, kv_heads, D};
  const attn_arg args[] = {{"q", {q.data(), ATTN_F32, 4, q_shape, nullptr}},
                           {"k", {k.data(), ATTN_F32, 4, kv_shape, nullptr}},
                           {"v", {v.data(), ATTN_F32, 4, kv_shape, nullptr}},
                           {"out", {out.data(), ATTN_F32, 4, q_shape, nullptr}}};
  if (attn_run(kernel, args, 4) != ATTN_OK) return std::fprintf(stderr, "%s\n", attn_last_error()), 1;
  double worst = 0;
  for (int h = 0; h < heads; ++h) {
    const int g = h / (heads / kv_heads);
    for (int i = 0; i < S; ++i) {
      const int keys = causal ? i + 1 : S;
      std::vector<double> p(keys);
      double max = -INFINITY, sum = 0;
      for (int j = 0; j < keys; ++j) {
        double dot = 0;
        for (int d = 0; d < D; ++d) dot += double(q[(i * heads + h) * D + d]) * k[(j * kv_heads + g) * D + d];
        max = std::fmax(max, p[j] = dot / std::sqrt(double(D)));
      }
      for (double &e : p) sum += e = std::exp(e - max);
      for (int d = 0; d < D; ++d) {
        double ref = 0;
        for (int j = 0; j < keys; ++j) ref += p[j] / sum * v[(j * kv_heads + g) * D + d];
        worst = std::fmax(worst, std::fabs(ref - out[(i * heads + h) * D + d]));
      }
    }
  }
  std::printf("%s: max abs error vs fp64 %.3g\n", id, worst);
  return worst < 1e-5 ? 0 : 1;
}

// A kernel the spec lists left out must not be registered; 0 when it is absent.
int absent(const char *id) {
  const attn_kernel *kernel = nullptr;
  if (attn_find_kernel(id, &kernel) == ATTN_OK) return std::fprintf(stderr, "%s: registered, expected absent\n", id), 1;
  std::printf("%s: absent, as expected\n", id);
  return 0;
}

}  // namespace

// CONSUMER_HAS_CPP_SPEC and CONSUMER_HAS_TEXT_SPEC say which spec lists CMakeLists.txt gave.
int main() {
  const char *cpp_id = "attn_core_h1_kv1_d16_f32", *text_id = "attn_core_h2_kv1_d16_f32_causal";
  return (CONSUMER_HAS_CPP_SPEC ? run(cpp_id, 1, 1, false) : absent(cpp_id)) |
         (CONSUMER_HAS_TEXT_SPEC ? run(text_id, 2, 1, true) : absent(text_id));
}

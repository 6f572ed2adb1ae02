// main.cpp: runs the three flex_attention kernels on random q, k, v (B = 1, Sq = Sk = S), times
// each, and checks every output against this file's own fp64 attention with the same functions.
// The document mask's block mask is computed once, by its pass, and given to every run.
#include <attn/kernel_id.h>
#include <attn/runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <vector>

#include "flex_specs.h"

namespace {

using flex::head_dim;
using flex::heads;

// out [S, H, D] in double: softmax over kept keys of the modified scores (rows with none: 0).
std::vector<double> reference(const std::vector<float> &q, const std::vector<float> &k,
                              const std::vector<float> &v, int seq,
                              const std::function<double(double, int, int, int)> &score,
                              const std::function<bool(int, int)> &keep) {
  std::vector<double> out(q.size(), 0.0), p(seq);
  for (int h = 0; h < heads; ++h)
    for (int i = 0; i < seq; ++i) {
      double mx = -INFINITY, sum = 0;
      for (int j = 0; j < seq; ++j) {
        double dot = 0;
        for (int d = 0; d < head_dim; ++d)
          dot +=
              double(q[(size_t(i) * heads + h) * head_dim + d]) * k[(size_t(j) * heads + h) * head_dim + d];
        p[j] = keep(i, j) ? score(dot / std::sqrt(double(head_dim)), h, i, j) : -INFINITY;
        mx = std::max(mx, p[j]);
      }
      if (mx == -INFINITY) continue;
      for (int j = 0; j < seq; ++j) sum += p[j] = std::exp(p[j] - mx);
      for (int j = 0; j < seq; ++j)
        for (int d = 0; d < head_dim; ++d)
          out[(size_t(i) * heads + h) * head_dim + d] +=
              p[j] / sum * v[(size_t(j) * heads + h) * head_dim + d];
    }
  return out;
}

}  // namespace

int main(int argc, char **argv) {
  const int S = argc > 1 ? std::atoi(argv[1]) : flex::max_seq;
  if (S < 1 || S > flex::max_seq)
    return std::fprintf(stderr, "usage: flex_attention [S in 1..%d]\n", flex::max_seq), 2;
  std::mt19937 rng(34);
  std::normal_distribution<float> normal;
  auto random = [&](size_t n) {
    std::vector<float> t(n);
    for (float &e : t) e = normal(rng);
    return t;
  };
  const size_t n = size_t(S) * heads * head_dim;
  const std::vector<float> q = random(n), k = random(n), v = random(n),
                           rel = random(size_t(heads) * (2 * flex::max_seq - 1));
  std::vector<int32_t> doc(S);
  for (int t = 0; t < S; ++t) doc[t] = t * 5 / S;  // five documents
  std::vector<float> out(n);
  const int64_t qkv_shape[] = {1, S, heads, head_dim}, rel_shape[] = {heads, 2 * flex::max_seq - 1},
                doc_shape[] = {1, S};
  // block_mask [B, 1, ceil(S/128), ceil(S/128)]: 0 empty, 1 partial, 2 full (docs/DSL.md).
  const int64_t blocks = (S + 127) / 128, block_mask_shape[] = {1, 1, blocks, blocks};
  std::vector<uint8_t> block_mask(size_t(blocks * blocks));
  const attn_kernel *pass = nullptr;
  const attn_arg pass_args[] = {{"q", {const_cast<float *>(q.data()), ATTN_F32, 4, qkv_shape, nullptr}},
                                {"k", {const_cast<float *>(k.data()), ATTN_F32, 4, qkv_shape, nullptr}},
                                {"doc", {doc.data(), ATTN_I32, 2, doc_shape, nullptr}},
                                {"block_mask", {block_mask.data(), ATTN_U8, 4, block_mask_shape, nullptr}}};
  if (attn_find_kernel(attn::kernel_id(flex::documents_pass).c_str(), &pass) != ATTN_OK ||
      attn_run(pass, pass_args, 4) != ATTN_OK)
    return std::fprintf(stderr, "block-mask pass: %s\n", attn_last_error()), 1;
  const auto full = std::count(block_mask.begin(), block_mask.end(), 2);
  const auto empty = std::count(block_mask.begin(), block_mask.end(), 0);
  std::printf("block mask: %lld blocks, %lld full, %lld empty\n", static_cast<long long>(block_mask.size()),
              static_cast<long long>(full), static_cast<long long>(empty));

  struct Case {
    const char *name;
    attn::Spec spec;
    std::function<double(double, int, int, int)> score;
    std::function<bool(int, int)> keep;
  };
  const Case cases[] = {
      {"relative_bias", flex::relative_bias,
       [&](double s, int h, int i, int j) {
         return s + rel[size_t(h) * (2 * flex::max_seq - 1) + i - j + flex::max_seq - 1];
       },
       [](int i, int j) { return i >= j; }},
      {"sink_window", flex::sink_window, [](double s, int, int, int) { return s; },
       [](int i, int j) { return i >= j && (j < 4 || i - j < 64); }},
      {"documents", flex::documents, [](double s, int, int, int) { return s; },
       [&](int i, int j) { return doc[i] == doc[j]; }},
  };
  bool ok = true;
  for (const Case &c : cases) {
    const attn_kernel *kernel = nullptr;
    if (attn_find_kernel(attn::kernel_id(c.spec).c_str(), &kernel) != ATTN_OK)
      return std::fprintf(stderr, "%s\n", attn_last_error()), 1;
    std::vector<attn_arg> args = {{"q", {const_cast<float *>(q.data()), ATTN_F32, 4, qkv_shape, nullptr}},
                                  {"k", {const_cast<float *>(k.data()), ATTN_F32, 4, qkv_shape, nullptr}},
                                  {"v", {const_cast<float *>(v.data()), ATTN_F32, 4, qkv_shape, nullptr}},
                                  {"out", {out.data(), ATTN_F32, 4, qkv_shape, nullptr}}};
    if (c.spec.captured.count > 0 && c.spec.captured.items[0].name[0] == 'r')
      args.push_back({"rel", {const_cast<float *>(rel.data()), ATTN_F32, 2, rel_shape, nullptr}});
    if (c.spec.captured.count > 0 && c.spec.captured.items[0].name[0] == 'd') {
      args.push_back({"doc", {doc.data(), ATTN_I32, 2, doc_shape, nullptr}});
      args.push_back({"block_mask", {block_mask.data(), ATTN_U8, 4, block_mask_shape, nullptr}});
    }
    std::vector<double> ms;
    for (int run = 0; run < 7; ++run) {
      const auto start = std::chrono::steady_clock::now();
      if (attn_run(kernel, args.data(), static_cast<int>(args.size())) != ATTN_OK)
        return std::fprintf(stderr, "%s: %s\n", c.name, attn_last_error()), 1;
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(ms.begin() + 1, ms.end());  // the first run warms up
    const std::vector<double> ref = reference(q, k, v, S, c.score, c.keep);
    double err = 0;
    for (size_t e = 0; e < n; ++e)
      err = std::isfinite(out[e]) ? std::max(err, std::fabs(out[e] - ref[e])) : INFINITY;
    std::printf("%-14s %s: S=%d median %.3f ms, max |out - fp64| = %.3g\n", c.name,
                attn::kernel_id(c.spec).c_str(), S, ms[1 + (ms.size() - 1) / 2], err);
    ok = ok && err <= 1e-4;
  }
  return ok ? 0 : 1;
}

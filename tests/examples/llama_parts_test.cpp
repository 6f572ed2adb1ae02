// llama_parts_test.cpp: the llama_decode example's pieces that need no kernel: the page pool and
// block tables, neox RoPE, the fp64 attention reference, the projections and the command line's --kv.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "config.h"
#include "ops.h"
#include "page_pool.h"
#include "reference.h"
#include "rope.h"

using namespace llama;

TEST_CASE("the page pool hands out its free list in order, runs out, and takes pages back once") {
  PagePool pool(4, 16, {2, 0, 3, 1});
  CHECK(pool.allocate() == 2);
  CHECK(pool.allocate() == 0);
  CHECK(pool.used() == 2);
  CHECK(pool.release(0));
  CHECK_FALSE(pool.release(0));  // already free
  CHECK_FALSE(pool.release(4));  // outside the pool
  CHECK_FALSE(pool.release(-1));
  CHECK(pool.allocate() == 0);  // the page just released comes back first
  CHECK(pool.allocate() == 3);
  CHECK(pool.allocate() == 1);
  CHECK(pool.allocate() == -1);  // empty
  CHECK(pool.used() == 4);
}

TEST_CASE("a sequence reserves whole pages for its tokens and the block table pads with page 0") {
  PagePool pool(8, 16, {5, 3, 7, 1, 0, 2, 4, 6});
  SequencePages a, b;
  CHECK(a.reserve(pool, 17));  // 2 pages
  CHECK(a.pages == std::vector<int32_t>{5, 3});
  CHECK(a.reserve(pool, 32));  // still 2
  CHECK(a.pages.size() == 2);
  CHECK(b.reserve(pool, 1));
  CHECK(b.pages == std::vector<int32_t>{7});
  CHECK(a.page_of(16, 16) == 3);
  CHECK(a.page_of(15, 16) == 5);
  const std::vector<int32_t> table = block_table({&a, &b}, 3);
  CHECK(table == std::vector<int32_t>{5, 3, 0, 7, 0, 0});
  SequencePages c;
  CHECK_FALSE(c.reserve(pool, 6 * 16));  // 5 pages left
  CHECK(c.pages.size() == 5);
  a.release(pool);
  CHECK(a.pages.empty());
  CHECK(pool.used() == 6);
}

TEST_CASE("neox RoPE: i pairs with i + d/2 at angle position * theta^(-2i/d); fp32 and fp64 agree") {
  const int D = 10;
  const float theta = 10000.0f;
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  for (int position : {0, 1, 7, 129}) {
    std::vector<float> x(D + 2);  // two elements beyond rope_dim stay as they are
    for (float &e : x) e = normal(rng);
    std::vector<float> f = x;
    std::vector<double> d(x.begin(), x.end());
    rope_neox(f.data(), position, D, theta);
    rope_neox(d.data(), position, D, theta);
    for (int i = 0; i < D / 2; ++i) {
      const double angle = position * std::pow(double(theta), -2.0 * i / D);  // all in double
      CHECK(d[i] == doctest::Approx(x[i] * std::cos(angle) - x[i + D / 2] * std::sin(angle)).epsilon(1e-5));
      CHECK(d[i + D / 2] ==
            doctest::Approx(x[i + D / 2] * std::cos(angle) + x[i] * std::sin(angle)).epsilon(1e-5));
    }
    for (int i = 0; i < D + 2; ++i) CHECK(f[i] == doctest::Approx(d[i]).epsilon(1e-5));
    CHECK(d[D] == double(x[D]));
    CHECK(d[D + 1] == double(x[D + 1]));
  }
}

TEST_CASE("the fp64 reference: one key gives its value; causal rows never see later keys") {
  const AttentionShape shape{4, 2, 8, 10000.0f};  // GQA: heads 0-1 read KV head 0, 2-3 head 1
  std::mt19937 rng(5);
  std::normal_distribution<float> normal;
  auto random = [&](size_t n) {
    std::vector<float> t(n);
    for (float &e : t) e = normal(rng);
    return t;
  };
  {
    const std::vector<float> q = random(4 * 8), k = random(2 * 8), v = random(2 * 8);
    const std::vector<double> out = attention_reference(q.data(), 1, k.data(), v.data(), 1, shape);
    for (int h = 0; h < 4; ++h)
      for (int d = 0; d < 8; ++d) CHECK(out[h * 8 + d] == doctest::Approx(v[(h / 2) * 8 + d]).epsilon(1e-12));
  }
  // Two queries over 5 tokens: row 0 sits at position 3 and must not see token 4 (NaN in its v).
  std::vector<float> q = random(2 * 4 * 8), k = random(5 * 2 * 8), v = random(5 * 2 * 8);
  for (int i = 0; i < 16; ++i) v[4 * 16 + i] = NAN;
  const std::vector<double> out = attention_reference(q.data(), 2, k.data(), v.data(), 5, shape);
  for (int i = 0; i < 32; ++i) CHECK(std::isfinite(out[i]));
  for (int i = 32; i < 64; ++i) CHECK(std::isnan(out[i]));
}

TEST_CASE("linear: y = x W^T over threads, odd sizes, against double") {
  const int tokens = 5, cols = 37, rows = 19;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1, 1);
  std::vector<float> x(tokens * cols), w(rows * cols), y(tokens * rows);
  for (float &e : x) e = uniform(rng);
  for (float &e : w) e = uniform(rng);
  for (int threads : {1, 3}) {
    linear(x.data(), tokens, cols, w.data(), rows, y.data(), threads);
    for (int t = 0; t < tokens; ++t)
      for (int r = 0; r < rows; ++r) {
        double ref = 0;
        for (int c = 0; c < cols; ++c) ref += double(x[t * cols + c]) * w[r * cols + c];
        CHECK(y[t * rows + r] == doctest::Approx(ref).epsilon(1e-5));
      }
  }
  std::vector<float> normed(tokens * cols), ones(cols, 1.0f);
  rms_norm(x.data(), tokens, cols, ones.data(), 0.0f, normed.data());
  double squares = 0;
  for (int c = 0; c < cols; ++c) squares += double(normed[c]) * normed[c];
  CHECK(squares / cols == doctest::Approx(1.0).epsilon(1e-5));
}

TEST_CASE("the generation plan counts the prefill's token, the decode steps and the timed ones alike") {
  Config c;
  c.tokens = 16;
  CHECK(generation_plan(c) ==
        "16 tokens generated each: the first by the prefill, then one per batched decode step (15 steps: 14 "
        "timed, the last checked against fp64 and not timed)");
  c.tokens = 2;
  CHECK(generation_plan(c) ==
        "2 tokens generated each: the first by the prefill, then one per batched decode step (1 step: 0 timed, "
        "the last checked against fp64 and not timed)");
  c.tokens = 1;
  CHECK(generation_plan(c) == "1 token generated each, by the prefill (no decode step)");
}

TEST_CASE("--kv takes one cache type or a list, and int8 / fp8 need the fused path") {
  auto parse = [](std::vector<const char *> args, Config &c) {
    args.insert(args.begin(), "llama_decode");
    return parse_args(static_cast<int>(args.size()), const_cast<char **>(args.data()), c);
  };
  Config c;
  CHECK(c.kv == std::vector<std::string>{"f32"});
  CHECK(parse({"--kv", "int8"}, c).empty());
  CHECK(c.kv == std::vector<std::string>{"int8"});
  CHECK(parse({"--kv", "f32,int8,fp8"}, c).empty());
  CHECK(c.kv == std::vector<std::string>{"f32", "int8", "fp8"});
  Config bad;
  CHECK(parse({"--kv", "int4"}, bad) ==
        "--kv needs cache types from f32, int8 and fp8, like int8 or f32,int8,fp8 (got 'int4')");
  Config gathered;
  CHECK(parse({"--kv", "fp8", "--attention", "gathered"}, gathered) ==
        "--kv fp8 needs --attention fused (the gathered path keeps an f32 cache)");
}

// fma_peak.cpp: the machine's fp32 FMA peak, all cores, with the widest vectors the build allows.
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

#if defined(__AVX512F__)
using Vec = __m512;
constexpr int kLanes = 16;
Vec splat(float x) { return _mm512_set1_ps(x); }
Vec fma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
float first(Vec v) { return _mm512_cvtss_f32(v); }
#else
using Vec = __m256;
constexpr int kLanes = 8;
Vec splat(float x) { return _mm256_set1_ps(x); }
Vec fma(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
float first(Vec v) { return _mm256_cvtss_f32(v); }
#endif

// 12 independent chains cover the FMA latency x throughput of current x86 cores.
float chains(long iterations) {
  Vec acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = splat(0.001f * i);
  const Vec m = splat(0.999f), c = splat(0.001f);
  for (long it = 0; it < iterations; ++it)
    for (int i = 0; i < 12; ++i) acc[i] = fma(acc[i], m, c);
  float sum = 0;
  for (int i = 0; i < 12; ++i) sum += first(acc[i]);
  return sum;
}

}  // namespace

int main(int argc, char **argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : static_cast<int>(std::thread::hardware_concurrency());
  const long iterations = 100'000'000;
  std::vector<double> gflops;
  for (int rep = 0; rep < 5; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    std::vector<float> sink(threads);
    for (int t = 0; t < threads; ++t) pool.emplace_back([&, t] { sink[t] = chains(iterations); });
    for (auto &th : pool) th.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    gflops.push_back(threads * double(iterations) * 12 * kLanes * 2 / s * 1e-9);
  }
  std::sort(gflops.begin(), gflops.end());
  std::printf("{\"fma_peak_gflops\": %.1f, \"threads\": %d, \"lanes\": %d}\n", gflops[gflops.size() / 2], threads, kLanes);
  return 0;
}

// bf16_peak.cpp: the machine's bf16 dot-product peak (vdpbf16ps), on one core and on all of them.
//
// One 512-bit vdpbf16ps does 32 bf16 products, each added into fp32: 64 FLOP, the count the
// issue uses. Built with -march=native like fma_peak.cpp, but the loop carries its own target
// attribute, so a compiler that knows avx512bf16 builds it on any CPU; the CPU is asked at run
// time, and one without the instruction prints {"skipped": "no avx512bf16"}.
// Usage: bf16_peak [THREADS]  (default: all cores); prints JSON.
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

constexpr int kChains = 12;  // as fma_peak.cpp: covers latency x throughput of current x86 cores
constexpr int kFlopsPerInstruction = 64;

// kChains independent accumulators, each fed the same two bf16 vectors; returns a lane so the
// loop is not dropped. The products are small, so no chain overflows or goes subnormal.
__attribute__((target("avx512f,avx512bf16"))) float chains(long iterations) {
  __m512 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(0.001f * i);
  const __m512bh a = _mm512_cvtne2ps_pbh(_mm512_set1_ps(0.001f), _mm512_set1_ps(0.002f));
  const __m512bh b = _mm512_cvtne2ps_pbh(_mm512_set1_ps(0.003f), _mm512_set1_ps(0.004f));
  for (long it = 0; it < iterations; ++it)
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_dpbf16_ps(acc[i], a, b);
  float sum = 0;
  for (int i = 0; i < kChains; ++i) sum += _mm512_cvtss_f32(acc[i]);
  return sum;
}

// The median GFLOP/s of five runs of `threads` threads, each running its own chains.
double peak_gflops(int threads, long iterations) {
  std::vector<double> gflops;
  std::vector<float> sink(threads);
  for (int rep = 0; rep < 5; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back([&, t] { sink[t] = chains(iterations); });
    for (auto &th : pool) th.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    gflops.push_back(threads * double(iterations) * kChains * kFlopsPerInstruction / s * 1e-9);
  }
  std::sort(gflops.begin(), gflops.end());
  return gflops[gflops.size() / 2];
}

}  // namespace

int main(int argc, char **argv) {
  if (!__builtin_cpu_supports("avx512bf16")) {
    std::printf("{\"skipped\": \"no avx512bf16\"}\n");
    return 0;
  }
  const int threads = argc > 1 ? std::atoi(argv[1]) : static_cast<int>(std::thread::hardware_concurrency());
  const long iterations = 100'000'000;
  const double one = peak_gflops(1, iterations);
  const double all = threads > 1 ? peak_gflops(threads, iterations) : one;
  std::printf(
      "{\"bf16_peak_gflops\": %.1f, \"bf16_peak_gflops_1t\": %.1f, \"threads\": %d, "
      "\"flops_per_instruction\": %d}\n",
      all, one, threads, kFlopsPerInstruction);
  return 0;
}

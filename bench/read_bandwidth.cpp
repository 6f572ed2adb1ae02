// read_bandwidth.cpp: the machine's DRAM read bandwidth, all threads streaming an array far beyond L3.
//
// Usage: read_bandwidth [THREADS] [MIB]  (defaults: all cores, 1024 MiB); prints JSON.
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

// Sums [begin, end) with 8 independent vector accumulators, so loads, not adds, set the pace.
float read_span(const float *begin, const float *end) {
  __m256 acc[8];
  for (__m256 &a : acc) a = _mm256_setzero_ps();
  for (const float *p = begin; p + 64 <= end; p += 64)
    for (int i = 0; i < 8; ++i) acc[i] = _mm256_add_ps(acc[i], _mm256_load_ps(p + 8 * i));
  for (int i = 1; i < 8; ++i) acc[0] = _mm256_add_ps(acc[0], acc[i]);
  return _mm256_cvtss_f32(acc[0]);
}

}  // namespace

int main(int argc, char **argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : static_cast<int>(std::thread::hardware_concurrency());
  const size_t mib = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 1024;
  const size_t count = mib * 1024 * 1024 / sizeof(float);
  const size_t per_thread = count / threads / 64 * 64;
  float *data = static_cast<float *>(std::aligned_alloc(64, count * sizeof(float)));
  std::vector<float> sink(threads);
  auto parallel = [&](auto body) {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(body, t);
    for (std::thread &th : pool) th.join();
  };
  // Each thread first writes its own part, so its pages are mapped before anything is timed.
  parallel([&](int t) { std::fill(data + t * per_thread, data + (t + 1) * per_thread, 1.0f); });
  std::vector<double> gbps;
  for (int pass = 0; pass < 7; ++pass) {
    const auto start = std::chrono::steady_clock::now();
    parallel([&](int t) { sink[t] += read_span(data + t * per_thread, data + (t + 1) * per_thread); });
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    gbps.push_back(double(per_thread) * threads * sizeof(float) / s * 1e-9);
  }
  std::sort(gbps.begin(), gbps.end());
  float checksum = 0;
  for (float s : sink) checksum += s;
  std::printf("{\"read_gbps\": %.2f, \"threads\": %d, \"mib\": %zu, \"passes\": %zu, \"checksum\": %g}\n",
              gbps[gbps.size() / 2], threads, mib, gbps.size(), checksum);
  std::free(data);
  return 0;
}

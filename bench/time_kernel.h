// time_kernel.h: the bench drivers' timing loop: WARMUP calls, then RUNS timed calls of one kernel.
#pragma once

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "attn/runtime.h"

namespace bench_time {

inline void check(attn_status status) {
  if (status != ATTN_OK)
    throw std::runtime_error(std::string(attn_last_error()) + " (" + attn_status_name(status) + ")");
}

struct Timing {
  double median_ms, min_ms;
};

// Throws on a failed call.
inline Timing time_kernel(const attn_kernel *kernel, const std::vector<attn_arg> &args, int warmup,
                          int runs) {
  const int count = static_cast<int>(args.size());
  for (int i = 0; i < warmup; ++i) check(attn_run(kernel, args.data(), count));
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const attn_status status = attn_run(kernel, args.data(), count);
    const auto stop = std::chrono::steady_clock::now();
    check(status);
    ms.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
  }
  std::sort(ms.begin(), ms.end());
  const size_t n = ms.size();
  return {n % 2 == 1 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]), ms.front()};
}

}  // namespace bench_time

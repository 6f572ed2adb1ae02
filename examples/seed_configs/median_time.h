// median_time.h: the median time of a kernel call over 10 runs after 2 warm-up runs.
#pragma once

#include <attn/runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

// Milliseconds; a negative value when a run fails (its error printed).
inline double median_run_ms(const attn_kernel *kernel, const attn_arg *args, int count) {
  std::vector<double> ms;
  for (int run = 0; run < 12; ++run) {
    const auto start = std::chrono::steady_clock::now();
    if (attn_run(kernel, args, count) != ATTN_OK)
      return std::fprintf(stderr, "%s\n", attn_last_error()), -1.0;
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin() + 2, ms.end());
  return ms[2 + (ms.size() - 2) / 2];
}

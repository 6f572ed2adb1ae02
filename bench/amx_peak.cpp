// amx_peak.cpp: the machine's AMX bf16 tile peak (tdpbf16ps on register tiles, no loads), all cores.
//
// Each tdpbf16ps multiplies a 16 x 32 bf16 tile by a 32 x 16 one into 16 x 16 fp32 sums: 16 * 16 *
// 32 * 2 = 16384 FLOP. Four accumulator tiles fed by two A and two B tiles keep the unit busy (one
// tdpbf16ps every 16 cycles per core on Sapphire Rapids). Prints {"amx_peak_gflops": null} where the
// CPU has no AMX or Linux refuses the tile state, so a benchmark can say why it has no AMX limit.
// Build: c++ -O3 -march=native (needs a compiler that knows -mamx-tile -mamx-bf16, GCC 11+).
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

#if defined(__AMX_TILE__) && defined(__AMX_BF16__)

// The tile configuration (palette 1): every tile 16 rows of 64 bytes.
struct alignas(64) TileConfig {
  uint8_t palette, start_row;
  uint8_t reserved[14];
  uint16_t bytes_per_row[16];
  uint8_t rows[16];
};

// Linux's tile-state permission, per process, before the first tile instruction.
bool request_tiles() {
  constexpr long arch_req_xcomp_perm = 0x1023;
  constexpr int xfeature_xtiledata = 18;
  return syscall(SYS_arch_prctl, arch_req_xcomp_perm, xfeature_xtiledata) == 0;
}

// Runs `iterations` rounds of 4 tdpbf16ps on one thread; returns a sum so nothing is optimized out.
float tile_rounds(long iterations) {
  TileConfig config;
  std::memset(&config, 0, sizeof config);
  config.palette = 1;
  for (int t = 0; t < 8; ++t) {
    config.bytes_per_row[t] = 64;
    config.rows[t] = 16;
  }
  _tile_loadconfig(&config);
  alignas(64) static thread_local uint16_t ones[16 * 32];
  for (uint16_t &x : ones) x = 0x3c00;  // bf16 0.0078125: the sums stay finite
  alignas(64) static thread_local float sums[16 * 16];
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_loadd(4, ones, 64);
  _tile_loadd(5, ones, 64);
  _tile_loadd(6, ones, 64);
  _tile_loadd(7, ones, 64);
  for (long i = 0; i < iterations; ++i) {
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  _tile_stored(0, sums, 64);
  _tile_release();
  return sums[0];
}

#endif

}  // namespace

int main(int argc, char **argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : static_cast<int>(std::thread::hardware_concurrency());
#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
  if (!request_tiles()) {
    std::printf("{\"amx_peak_gflops\": null, \"threads\": %d, \"why\": \"Linux refused the tile state\"}\n", threads);
    return 0;
  }
  const long iterations = 2'000'000;
  std::vector<double> gflops;
  for (int rep = 0; rep < 5; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    std::vector<float> sink(threads);
    for (int t = 0; t < threads; ++t) pool.emplace_back([&, t] { sink[t] = tile_rounds(iterations); });
    for (auto &th : pool) th.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    gflops.push_back(threads * double(iterations) * 4 * 16384 / s * 1e-9);
  }
  std::sort(gflops.begin(), gflops.end());
  std::printf("{\"amx_peak_gflops\": %.1f, \"threads\": %d}\n", gflops[gflops.size() / 2], threads);
#else
  std::printf("{\"amx_peak_gflops\": null, \"threads\": %d, \"why\": \"no AMX in this build's -march\"}\n", threads);
#endif
  return 0;
}

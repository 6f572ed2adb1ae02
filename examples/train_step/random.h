// random.h: a seeded generator whose draws are the same with every standard library.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

// std::mt19937's output is fixed by the standard, its distributions are not: these are built on
// the raw output so a seed gives the same run everywhere.
class Random {
 public:
  explicit Random(uint32_t seed) : engine_(seed) {}

  // Uniform in [0, 1).
  double uniform() { return engine_() / 4294967296.0; }
  // Standard normal (Box-Muller).
  double normal();
  // Uniform in [0, n).
  int below(int n) { return static_cast<int>(uniform() * n); }
  // 0 .. n-1 in a random order.
  std::vector<int> permutation(int n);
  // count values drawn from normal() * scale.
  std::vector<float> normals(size_t count, double scale);

 private:
  std::mt19937 engine_;
};

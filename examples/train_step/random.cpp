// random.cpp: the seeded generator's draws.
#include "random.h"

#include <cmath>
#include <numbers>
#include <utility>

double Random::normal() {
  const double u1 = 1.0 - uniform();  // in (0, 1]: log stays finite
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

std::vector<int> Random::permutation(int n) {
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[i] = i;
  for (int i = n - 1; i > 0; --i) std::swap(order[i], order[below(i + 1)]);
  return order;
}

std::vector<float> Random::normals(size_t count, double scale) {
  std::vector<float> values(count);
  for (float &value : values) value = static_cast<float>(normal() * scale);
  return values;
}

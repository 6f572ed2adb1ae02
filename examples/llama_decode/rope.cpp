// rope.cpp: neox rotary embeddings in fp32 and fp64.
#include "rope.h"

#include <cmath>

namespace llama {

float rope_angle(int position, int pair, int rope_dim, float theta) {
  const float inv_freq = std::pow(theta, -2.0f * static_cast<float>(pair) / static_cast<float>(rope_dim));
  return static_cast<float>(position) * inv_freq;
}

namespace {

template <typename T>
void rotate(T *x, int position, int rope_dim, float theta) {
  const int half = rope_dim / 2;
  for (int i = 0; i < half; ++i) {
    const float angle = rope_angle(position, i, rope_dim, theta);
    const T c = sizeof(T) == sizeof(float) ? T(std::cos(angle)) : T(std::cos(double(angle)));
    const T s = sizeof(T) == sizeof(float) ? T(std::sin(angle)) : T(std::sin(double(angle)));
    const T a = x[i], b = x[i + half];
    x[i] = a * c - b * s;
    x[i + half] = b * c + a * s;
  }
}

}  // namespace

void rope_neox(float *x, int position, int rope_dim, float theta) {
  rotate(x, position, rope_dim, theta);
}
void rope_neox(double *x, int position, int rope_dim, float theta) {
  rotate(x, position, rope_dim, theta);
}

}  // namespace llama

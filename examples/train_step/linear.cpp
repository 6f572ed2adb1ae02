// linear.cpp: y = x·wᵀ and its gradients by w and by x, as one strided matrix product.
#include "linear.h"

#include <cstddef>

namespace {

// A matrix read in place, transposed or not: element (i, j) is data[i * row + j * column].
struct MatrixView {
  const float *data;
  size_t row, column;
  double at(size_t i, size_t j) const { return data[i * row + j * column]; }
};

// c [n, p] = a [n, inner] · b [inner, p], accumulated in double.
void product(MatrixView a, MatrixView b, int n, int inner, int p, std::span<float> c) {
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < p; ++j) {
      double acc = 0;
      for (int k = 0; k < inner; ++k) acc += a.at(i, k) * b.at(k, j);
      c[size_t(i) * p + j] = static_cast<float>(acc);
    }
  }
}

}  // namespace

void linear(std::span<const float> x, std::span<const float> w, int rows, int in, int out,
            std::span<float> y) {
  product({x.data(), size_t(in), 1}, {w.data(), 1, size_t(in)}, rows, in, out, y);  // x · wᵀ
}

void linear_weight_grad(std::span<const float> dy, std::span<const float> x, int rows, int in, int out,
                        std::span<float> dw) {
  product({dy.data(), 1, size_t(out)}, {x.data(), size_t(in), 1}, out, rows, in, dw);  // dyᵀ · x
}

void linear_input_grad(std::span<const float> dy, std::span<const float> w, int rows, int in, int out,
                       std::span<float> dx) {
  product({dy.data(), size_t(out), 1}, {w.data(), size_t(in), 1}, rows, out, in, dx);  // dy · w
}

// npy_files.h: .npy files written and read by the attn-run tests, failing the test on an error.
#pragma once

#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "npy.h"

namespace attnc::test {

inline void save_npy(const std::string &path, const attn::npy::Array &array) {
  std::string error;
  REQUIRE_MESSAGE(attn::npy::write(path, array, &error), error);
}

inline attn::npy::Array load_npy(const std::string &path) {
  attn::npy::Array array;
  std::string error;
  REQUIRE_MESSAGE(attn::npy::read(path, &array, &error), error);
  return array;
}

// An array of `dtype` and `shape` holding `values` (T: the dtype's C type, bf16 as uint16_t).
template <class T>
attn::npy::Array array_of(attn_dtype dtype, std::vector<int64_t> shape, const std::vector<T> &values) {
  attn::npy::Array array;
  array.dtype = dtype;
  array.shape = std::move(shape);
  array.data.resize(values.size() * sizeof(T));
  std::memcpy(array.data.data(), values.data(), array.data.size());
  return array;
}

// An array's elements as T.
template <class T>
std::vector<T> values_of(const attn::npy::Array &array) {
  std::vector<T> values(array.data.size() / sizeof(T));
  std::memcpy(values.data(), array.data.data(), array.data.size());
  return values;
}

}  // namespace attnc::test

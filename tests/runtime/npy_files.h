// npy_files.h: .npy files written and read by the attn-run tests, failing the test on an error.
#pragma once

#include <doctest/doctest.h>

#include <string>

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

}  // namespace attnc::test

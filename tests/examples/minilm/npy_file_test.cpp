// npy_file_test.cpp: the MiniLM example's .npy reader on synthetic files: a good one read back
// exactly, and headers whose size product wraps or whose dict only mentions the right text refused
// (issue 32).
#include "npy_file.h"

#include <doctest/doctest.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// Version 1: magic, version, 2-byte little-endian header length, the header, then the data.
std::string npy(const std::string &header, const std::vector<float> &values) {
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += char(header.size() & 0xFF);
  out += char(header.size() >> 8);
  out += header;
  std::string data(values.size() * 4, '\0');
  if (!values.empty()) std::memcpy(data.data(), values.data(), data.size());
  return out + data;
}

std::string error_of(const std::string &bytes) {
  try {
    minilm::parse_npy_f32(bytes, "synthetic");
  } catch (const std::runtime_error &e) {
    return e.what();
  }
  return "accepted";
}

const std::string good = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }   \n";

}  // namespace

TEST_CASE("a good file reads back exactly") {
  const minilm::Matrix m = minilm::parse_npy_f32(npy(good, {0, 1, 2, 3, 4, 5.5f}), "synthetic");
  CHECK(m.rows == 2);
  CHECK(m.cols == 3);
  CHECK(m.values == std::vector<float>{0, 1, 2, 3, 4, 5.5f});
  // Double quotes, no trailing comma, keys in another order.
  CHECK(minilm::parse_npy_f32(npy("{\"shape\": (1, 1), \"fortran_order\": False, \"descr\": \"<f4\"}", {7}),
                              "synthetic")
            .values == std::vector<float>{7});
}

TEST_CASE("a shape whose size product wraps 2^64 is refused") {
  // (2^62 + 1) x 4 x 4 bytes wrapped to 16: a 'matrix' of 2^62 + 1 rows over 4 values.
  CHECK(error_of(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387905, 4), }",
                     {1, 2, 3, 4})) ==
        "synthetic: the shape (4611686018427387905, 4) needs more than 2^64 bytes");
  CHECK(error_of(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", {})) ==
        "synthetic: the shape (4294967296, 4294967296) needs more than 2^64 bytes");
  CHECK(error_of(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999, 1), }", {})) ==
        "synthetic: a shape entry is larger than 2^64 - 1");
  CHECK(error_of(npy(good, {1, 2, 3})) == "synthetic: holds 12 data bytes, the shape needs 24");
}

TEST_CASE("descr and the other keys are read as the dict's values, not found as text anywhere") {
  // '<f4' inside another key's string, the real descr '<f8'.
  CHECK(error_of(npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1), 'x': \"'descr': '<f4'\"}",
                     {0, 0})) == "synthetic: the header has the unknown key 'x'");
  CHECK(error_of(npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2), }", {0, 0})) ==
        "synthetic: descr is '<f8', not little-endian float32 ('<f4')");
  CHECK(error_of(npy("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1, 1)}", {0})) ==
        "synthetic: the header gives 'descr' twice");
  CHECK(error_of(npy("{'descr': '<f4', 'fortran_order': True, 'shape': (1, 1)}", {0})) ==
        "synthetic: not in C order");
  CHECK(error_of(npy("{'descr': '<f4', 'shape': (1, 1)}", {0})) ==
        "synthetic: the header lacks one of 'descr', 'fortran_order' and 'shape'");
  CHECK(error_of(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", {0, 0, 0})) ==
        "synthetic: the shape has 1 dims, not 2");
  CHECK(error_of(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, -1)}", {0})) ==
        "synthetic: a shape entry is not a non-negative integer");
  CHECK(error_of(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1)} x", {0})) ==
        "synthetic: the header has text after its dict at offset 58");
  CHECK(error_of("\x93NUMPY\x01") == "synthetic: not a .npy file");
}

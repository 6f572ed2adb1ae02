// npy.h: reads and writes NumPy .npy files (C order; little-endian f32, f16, bf16 as '<u2' bit
// patterns, i32, u8).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/runtime.h"

namespace attn::npy {

struct Array {
  attn_dtype dtype = ATTN_F32;
  std::vector<int64_t> shape;  // outermost first; empty for a scalar
  std::vector<uint8_t> data;   // C order, element_count() * element_size(dtype) bytes

  int64_t element_count() const;
};

// Bytes per element; 0 for a value outside the enum.
size_t element_size(attn_dtype dtype);

// The descriptor a file of dtype has ("<f4", "<f2", "<u2" for bf16, "<i4", "|u1"); null for a
// value outside the enum. NumPy has no bfloat16, so bf16 is read and written as uint16 patterns.
const char *descr_of(attn_dtype dtype);

// Reads format versions 1.0, 2.0 and 3.0. On failure returns false and sets error to a message
// naming the file and what is wrong with it.
bool read(const std::string &path, Array *out, std::string *error);

// Writes format version 1.0, the header padded so that the data starts at a multiple of 64.
bool write(const std::string &path, const Array &array, std::string *error);

}  // namespace attn::npy

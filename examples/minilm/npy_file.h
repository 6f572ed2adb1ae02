// npy_file.h: reads a 2-D little-endian float32 .npy file (NumPy's format version 1 or 2).
#pragma once

#include <string>
#include <vector>

namespace minilm {

struct Matrix {
  size_t rows = 0, cols = 0;
  std::vector<float> values;  // [rows, cols], row-major
};

// Throws std::runtime_error unless the file is a C-order '<f4' array of two dimensions.
Matrix read_npy_f32(const std::string &path);
// The same for a file's bytes; origin names it in messages.
Matrix parse_npy_f32(const std::string &bytes, const std::string &origin);

}  // namespace minilm

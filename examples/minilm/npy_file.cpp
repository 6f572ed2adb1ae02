// npy_file.cpp: the .npy header is a magic string, a version, a length and a Python dict literal;
// this reads the three keys it needs from that dict and checks the data size against the shape.
#include "npy_file.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace minilm {

Matrix read_npy_f32(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto fail = [&](const std::string &what) { return std::runtime_error(path + ": " + what); };
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) throw fail("not a .npy file");
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len, header_at;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | size_t(static_cast<unsigned char>(bytes[9])) << 8;
    header_at = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw fail("truncated header");
    header_len = 0;
    for (int i = 3; i >= 0; --i)
      header_len = header_len << 8 | static_cast<unsigned char>(bytes[8 + size_t(i)]);
    header_at = 12;
  } else {
    throw fail("unknown .npy version " + std::to_string(major));
  }
  if (header_at + header_len > bytes.size()) throw fail("truncated header");
  const std::string header = bytes.substr(header_at, header_len);
  if (header.find("'descr': '<f4'") == std::string::npos) throw fail("not little-endian float32 ('<f4')");
  if (header.find("'fortran_order': False") == std::string::npos) throw fail("not in C order");
  const size_t shape_at = header.find("'shape': (");
  if (shape_at == std::string::npos) throw fail("no shape in the header");
  Matrix m;
  if (std::sscanf(header.c_str() + shape_at, "'shape': (%zu, %zu)", &m.rows, &m.cols) != 2)
    throw fail("the shape is not two-dimensional");
  const size_t data_at = header_at + header_len, count = m.rows * m.cols;
  if (bytes.size() - data_at != count * 4)
    throw fail("holds " + std::to_string(bytes.size() - data_at) + " data bytes, the shape needs " +
               std::to_string(count * 4));
  m.values.resize(count);
  std::memcpy(m.values.data(), bytes.data() + data_at, count * 4);
  return m;
}

}  // namespace minilm

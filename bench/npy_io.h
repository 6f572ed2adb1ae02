// npy_io.h: reads and writes C-order little-endian float32 .npy files for the C++ bench peers
// (and reads int8 / uint8 ones: quantized caches' codes).
#pragma once

#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace bench_npy {

struct Array {
  std::vector<int64_t> shape;  // outermost first
  std::vector<float> data;     // C order
};

// The value text after 'key': in the header dict, e.g. "'<f4'" or "(1, 1024, 12, 64)".
inline std::string header_value(const std::string &header, const std::string &key) {
  const size_t at = header.find("'" + key + "'");
  if (at == std::string::npos) throw std::runtime_error("npy header has no '" + key + "'");
  size_t start = header.find(':', at) + 1;
  while (header[start] == ' ') ++start;
  const size_t end = header[start] == '(' ? header.find(')', start) + 1 : header.find_first_of(",}", start);
  return header.substr(start, end - start);
}

// Opens a .npy file and reads its header: the shape (outermost first), after checking that its
// elements are `descr` ("'<f4'", "'|i1'", "'|u1'") in C order; `in` is left at the data.
inline std::vector<int64_t> read_header(std::ifstream &in, const std::string &path,
                                        const std::string &descr) {
  if (!in) throw std::runtime_error("cannot open '" + path + "'");
  char magic[8];
  in.read(magic, 8);
  if (!in || std::string(magic, 6) != "\x93NUMPY")
    throw std::runtime_error("'" + path + "' is not a .npy file");
  uint32_t header_size = 0;
  if (magic[6] == 1) {
    uint16_t size16 = 0;
    in.read(reinterpret_cast<char *>(&size16), 2);
    header_size = size16;
  } else {
    in.read(reinterpret_cast<char *>(&header_size), 4);
  }
  std::string header(header_size, '\0');
  in.read(header.data(), header_size);
  if (header_value(header, "descr") != descr)
    throw std::runtime_error("'" + path + "' holds " + header_value(header, "descr") + ", not " + descr);
  if (header_value(header, "fortran_order") != "False")
    throw std::runtime_error("'" + path + "' is Fortran order");
  std::vector<int64_t> dims;
  const std::string shape = header_value(header, "shape");
  for (size_t i = 1; i < shape.size();) {
    size_t used = 0;
    if (shape[i] >= '0' && shape[i] <= '9') dims.push_back(std::stoll(shape.substr(i), &used));
    i += used > 0 ? used : 1;
  }
  return dims;
}

inline int64_t element_count(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t n : shape) count *= n;
  return count;
}

inline Array read(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  Array array;
  array.shape = read_header(in, path, "'<f4'");
  array.data.resize(static_cast<size_t>(element_count(array.shape)));
  in.read(reinterpret_cast<char *>(array.data.data()),
          static_cast<std::streamsize>(array.data.size() * sizeof(float)));
  if (!in) throw std::runtime_error("'" + path + "' is shorter than its shape says");
  return array;
}

// One-byte elements: int8 ("'|i1'") or uint8 ("'|u1'") codes of a quantized KV cache.
struct ByteArray {
  std::vector<int64_t> shape;  // outermost first
  std::vector<uint8_t> data;   // C order
};

inline ByteArray read_bytes(const std::string &path, const std::string &descr) {
  std::ifstream in(path, std::ios::binary);
  ByteArray array;
  array.shape = read_header(in, path, descr);
  array.data.resize(static_cast<size_t>(element_count(array.shape)));
  in.read(reinterpret_cast<char *>(array.data.data()), static_cast<std::streamsize>(array.data.size()));
  if (!in) throw std::runtime_error("'" + path + "' is shorter than its shape says");
  return array;
}

inline void write(const std::string &path, const Array &array) {
  std::string shape;
  for (size_t i = 0; i < array.shape.size(); ++i)
    shape += (i > 0 ? ", " : "") + std::to_string(array.shape[i]);
  if (array.shape.size() == 1) shape += ",";  // a 1-tuple is "(n,)"
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + shape + "), }";
  header.append(63 - (10 + header.size()) % 64, ' ');  // the data starts 64-byte aligned
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  const uint16_t header_size = static_cast<uint16_t>(header.size());
  out.write("\x93NUMPY\x01\x00", 8);
  out.write(reinterpret_cast<const char *>(&header_size), 2);
  out << header;
  out.write(reinterpret_cast<const char *>(array.data.data()),
            static_cast<std::streamsize>(array.data.size() * sizeof(float)));
  if (!out) throw std::runtime_error("cannot write '" + path + "'");
}

}  // namespace bench_npy

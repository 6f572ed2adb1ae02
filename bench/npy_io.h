// npy_io.h: reads and writes C-order little-endian float32 .npy files for the C++ bench peers.
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

inline Array read(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
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
  if (header_value(header, "descr") != "'<f4'") throw std::runtime_error("'" + path + "' is not float32");
  if (header_value(header, "fortran_order") != "False")
    throw std::runtime_error("'" + path + "' is Fortran order");
  Array array;
  const std::string shape = header_value(header, "shape");
  int64_t count = 1;
  for (size_t i = 1; i < shape.size();) {
    size_t used = 0;
    if (shape[i] >= '0' && shape[i] <= '9') {
      array.shape.push_back(std::stoll(shape.substr(i), &used));
      count *= array.shape.back();
    }
    i += used > 0 ? used : 1;
  }
  array.data.resize(static_cast<size_t>(count));
  in.read(reinterpret_cast<char *>(array.data.data()), static_cast<std::streamsize>(count * sizeof(float)));
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

// npy_file.cpp: the .npy header is a magic string, a version, a length and a Python dict literal;
// this parses that dict (exactly the keys descr, fortran_order and shape) and checks the data size
// against the shape in checked 64-bit products.
#include "npy_file.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string_view>

namespace minilm {
namespace {

// What the header's dict literal says: {'descr': '<f4', 'fortran_order': False, 'shape': (r, c), }
struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<uint64_t> shape;
};

class DictParser {
 public:
  explicit DictParser(std::string_view text) : text_(text) {}

  // Throws a message (without the path) naming what is wrong.
  NpyHeader parse() {
    NpyHeader h;
    bool seen_descr = false, seen_order = false, seen_shape = false;
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      const std::string key = quoted("a key");
      expect(':');
      bool *seen = key == "descr" ? &seen_descr : key == "fortran_order" ? &seen_order
                                                : key == "shape"         ? &seen_shape
                                                                         : nullptr;
      if (seen == nullptr) throw std::runtime_error("the header has the unknown key '" + key + "'");
      if (*seen) throw std::runtime_error("the header gives '" + key + "' twice");
      *seen = true;
      if (key == "descr") h.descr = quoted("the descr");
      if (key == "fortran_order") h.fortran_order = boolean();
      if (key == "shape") h.shape = tuple();
      skip_space();
      if (peek() == ',') {
        ++at_;
        continue;
      }
      if (peek() != '}') throw std::runtime_error("the header dict has no ',' or '}' at offset " + offset());
    }
    ++at_;
    skip_space();
    if (at_ != text_.size()) throw std::runtime_error("the header has text after its dict at offset " + offset());
    if (!seen_descr || !seen_order || !seen_shape)
      throw std::runtime_error("the header lacks one of 'descr', 'fortran_order' and 'shape'");
    return h;
  }

 private:
  char peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }
  std::string offset() const { return std::to_string(at_); }
  void skip_space() {
    while (peek() == ' ' || peek() == '\n') ++at_;
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) throw std::runtime_error(std::string("the header dict needs '") + c + "' at offset " + offset());
    ++at_;
  }
  std::string quoted(const char *what) {
    skip_space();
    const char quote = peek();
    if (quote != '\'' && quote != '"') throw std::runtime_error(std::string(what) + " is not a quoted string");
    const size_t end = text_.find(quote, at_ + 1);
    if (end == std::string_view::npos) throw std::runtime_error(std::string(what) + " is not closed");
    const std::string value(text_.substr(at_ + 1, end - at_ - 1));
    at_ = end + 1;
    return value;
  }
  bool boolean() {
    skip_space();
    for (const auto &[word, value] : {std::pair{std::string_view("True"), true}, {"False", false}})
      if (text_.substr(at_, word.size()) == word) {
        at_ += word.size();
        return value;
      }
    throw std::runtime_error("fortran_order is not True or False");
  }
  std::vector<uint64_t> tuple() {
    std::vector<uint64_t> dims;
    expect('(');
    while (true) {
      skip_space();
      if (peek() == ')') break;
      if (peek() < '0' || peek() > '9') throw std::runtime_error("a shape entry is not a non-negative integer");
      uint64_t dim = 0;
      while (peek() >= '0' && peek() <= '9') {
        if (__builtin_mul_overflow(dim, uint64_t{10}, &dim) ||
            __builtin_add_overflow(dim, uint64_t(peek() - '0'), &dim))
          throw std::runtime_error("a shape entry is larger than 2^64 - 1");
        ++at_;
      }
      dims.push_back(dim);
      skip_space();
      if (peek() == ',') ++at_;
      else if (peek() != ')') throw std::runtime_error("the shape tuple needs ',' or ')' at offset " + offset());
    }
    ++at_;
    return dims;
  }

  std::string_view text_;
  size_t at_ = 0;
};

}  // namespace

Matrix parse_npy_f32(const std::string &bytes, const std::string &origin) {
  auto fail = [&](const std::string &what) { return std::runtime_error(origin + ": " + what); };
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
  if (header_len > bytes.size() - header_at) throw fail("truncated header");
  NpyHeader h;
  try {
    h = DictParser(std::string_view(bytes).substr(header_at, header_len)).parse();
  } catch (const std::runtime_error &e) {
    throw fail(e.what());
  }
  if (h.descr != "<f4") throw fail("descr is '" + h.descr + "', not little-endian float32 ('<f4')");
  if (h.fortran_order) throw fail("not in C order");
  if (h.shape.size() != 2) throw fail("the shape has " + std::to_string(h.shape.size()) + " dims, not 2");
  const size_t data_at = header_at + header_len, data_bytes = bytes.size() - data_at;
  uint64_t count = 0, needed = 0;
  if (__builtin_mul_overflow(h.shape[0], h.shape[1], &count) || __builtin_mul_overflow(count, uint64_t{4}, &needed))
    throw fail("the shape (" + std::to_string(h.shape[0]) + ", " + std::to_string(h.shape[1]) +
               ") needs more than 2^64 bytes");
  if (data_bytes != needed)
    throw fail("holds " + std::to_string(data_bytes) + " data bytes, the shape needs " + std::to_string(needed));
  Matrix m;
  m.rows = h.shape[0];
  m.cols = h.shape[1];
  m.values.resize(count);
  std::memcpy(m.values.data(), bytes.data() + data_at, needed);
  return m;
}

Matrix read_npy_f32(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_npy_f32(bytes, path);
}

}  // namespace minilm

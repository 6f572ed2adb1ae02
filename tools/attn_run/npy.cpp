// npy.cpp: the .npy format: magic, version, a Python-literal header dict, then raw C-order data.
#include "npy.h"

#include <sys/stat.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string_view>

namespace attn::npy {
namespace {

constexpr char magic[] = "\x93NUMPY";
constexpr size_t magic_size = 6;
constexpr size_t header_alignment = 64;
constexpr uint32_t largest_header = 1u << 20;  // numpy writes a few hundred bytes at most

struct Header {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
  bool has_descr = false, has_fortran_order = false, has_shape = false;
};

// Parses the header's Python dict literal: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  bool parse(Header *out, std::string *why) {
    skip_space();
    if (!take('{')) return fail(why, "the header is not a dict");
    for (;;) {
      skip_space();
      if (take('}')) break;
      std::string key;
      if (!quoted(&key)) return fail(why, "expected a quoted key in the header");
      skip_space();
      if (!take(':')) return fail(why, "expected ':' after '" + key + "'");
      skip_space();
      if (key == "descr") {
        if (!quoted(&out->descr)) return fail(why, "'descr' is not a string");
        out->has_descr = true;
      } else if (key == "fortran_order") {
        if (word("True"))
          out->fortran_order = true;
        else if (word("False"))
          out->fortran_order = false;
        else
          return fail(why, "'fortran_order' is not True or False");
        out->has_fortran_order = true;
      } else if (key == "shape") {
        if (!tuple(&out->shape)) return fail(why, "'shape' is not a tuple of sizes");
        out->has_shape = true;
      } else {
        return fail(why, "unexpected header key '" + key + "'");
      }
      skip_space();
      if (!take(',')) {
        skip_space();
        if (!take('}')) return fail(why, "expected ',' or '}' in the header");
        break;
      }
    }
    if (!out->has_descr || !out->has_fortran_order || !out->has_shape) {
      return fail(why, "the header lacks one of 'descr', 'fortran_order', 'shape'");
    }
    return true;
  }

 private:
  static bool fail(std::string *why, std::string text) {
    *why = std::move(text);
    return false;
  }
  void skip_space() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool take(char c) {
    if (pos_ >= text_.size() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }
  bool word(std::string_view w) {
    if (text_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }
  bool quoted(std::string *out) {
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) return false;
    const char quote = text_[pos_++];
    const size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) return false;
    *out = std::string(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return true;
  }
  bool tuple(std::vector<int64_t> *out) {
    out->clear();
    if (!take('(')) return false;
    for (;;) {
      skip_space();
      if (take(')')) return true;
      if (pos_ >= text_.size() || text_[pos_] < '0' || text_[pos_] > '9') return false;
      int64_t size = 0;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
        if (size > (INT64_MAX - 9) / 10) return false;
        size = size * 10 + (text_[pos_++] - '0');
      }
      take('L');  // Python 2 longs
      out->push_back(size);
      skip_space();
      if (!take(',')) {
        skip_space();
        return take(')');
      }
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
};

bool dtype_from_descr(const std::string &descr, attn_dtype *dtype, std::string *why) {
  if (descr == "<f4")
    *dtype = ATTN_F32;
  else if (descr == "<f2")
    *dtype = ATTN_F16;
  else if (descr == "<u2")  // NumPy has no bfloat16: bf16 travels as its bit patterns
    *dtype = ATTN_BF16;
  else if (descr == "<i4")
    *dtype = ATTN_I32;
  else if (descr == "|u1" || descr == "<u1" || descr == "u1")
    *dtype = ATTN_U8;
  else if (descr == "|i1" || descr == "<i1" || descr == "i1")  // int8 KV cache codes
    *dtype = ATTN_I8;
  else if (descr == "<u8")
    *dtype = ATTN_U64;
  else if (!descr.empty() && descr[0] == '>') {
    *why = "holds big-endian data ('" + descr + "'); save it little-endian ('<" + descr.substr(1) + "')";
    return false;
  } else {
    *why = "has dtype '" + descr +
           "'; supported are '<f4', '<f2', '<u2' (bf16 bit patterns), '<i4', '|u1', '|i1' and '<u8'";
    return false;
  }
  return true;
}

std::string shape_text(const std::vector<int64_t> &shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + (shape.size() == 1 ? ",)" : ")");
}

// Bytes the data of shape takes, or -1 when that overflows.
int64_t data_bytes(const std::vector<int64_t> &shape, size_t element) {
  int64_t bytes = static_cast<int64_t>(element);
  for (int64_t size : shape) {
    if (size < 0 || (size > 0 && bytes > INT64_MAX / size)) return -1;
    bytes *= size;
  }
  return bytes;
}

bool problem(std::string *error, const std::string &path, const std::string &what) {
  *error = "'" + path + "' " + what;
  return false;
}

}  // namespace

const char *descr_of(attn_dtype dtype) {
  switch (dtype) {
    case ATTN_F32:
      return "<f4";
    case ATTN_F16:
      return "<f2";
    case ATTN_BF16:
      return "<u2";
    case ATTN_I32:
      return "<i4";
    case ATTN_U8:
      return "|u1";
    case ATTN_I8:
      return "|i1";
    case ATTN_U64:
      return "<u8";
  }
  return nullptr;
}

int64_t Array::element_count() const {
  int64_t count = 1;
  for (int64_t size : shape) count *= size;
  return count;
}

size_t element_size(attn_dtype dtype) {
  switch (dtype) {
    case ATTN_F32:
      return 4;
    case ATTN_F16:
      return 2;
    case ATTN_I32:
      return 4;
    case ATTN_U8:
    case ATTN_I8:
      return 1;
    case ATTN_U64:
      return 8;
    case ATTN_BF16:
      return 2;
  }
  return 0;
}

bool read(const std::string &path, Array *out, std::string *error) {
  if constexpr (std::endian::native != std::endian::little) {
    return problem(error, path, "cannot be read: this machine is not little-endian");
  }
  // Only regular files: a fifo or device has no size to check the data against, and reading one
  // may never end.
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
    const char *kind = S_ISDIR(info.st_mode)    ? "a folder"
                       : S_ISFIFO(info.st_mode) ? "a fifo"
                       : S_ISCHR(info.st_mode)  ? "a character device"
                       : S_ISSOCK(info.st_mode) ? "a socket"
                                                : "not a regular file";
    return problem(error, path,
                   std::string("is ") + kind + ", not a .npy file; attn-run reads regular files only");
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) return problem(error, path, std::string("cannot be opened: ") + std::strerror(errno));
  file.seekg(0, std::ios::end);
  const int64_t file_size = static_cast<int64_t>(file.tellg());
  file.seekg(0, std::ios::beg);

  unsigned char prefix[8] = {};
  if (!file.read(reinterpret_cast<char *>(prefix), 8) || std::memcmp(prefix, magic, magic_size) != 0) {
    return problem(error, path, "is not a .npy file (no \\x93NUMPY magic)");
  }
  const int major = prefix[6], minor = prefix[7];
  uint32_t header_size = 0;
  size_t prefix_size = 0;
  if (major == 1) {
    unsigned char len[2] = {};
    if (!file.read(reinterpret_cast<char *>(len), 2))
      return problem(error, path, "is truncated in its header");
    header_size = len[0] | (len[1] << 8);
    prefix_size = 10;
  } else if (major == 2 || major == 3) {
    unsigned char len[4] = {};
    if (!file.read(reinterpret_cast<char *>(len), 4))
      return problem(error, path, "is truncated in its header");
    header_size = len[0] | (len[1] << 8) | (len[2] << 16) | (static_cast<uint32_t>(len[3]) << 24);
    prefix_size = 12;
  } else {
    return problem(error, path,
                   "has .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                       "; supported are 1.0, 2.0 and 3.0");
  }
  if (header_size > largest_header) {
    return problem(
        error, path,
        "has a header of " + std::to_string(header_size) + " bytes, more than any .npy writer makes");
  }
  std::string header_text(header_size, '\0');
  if (!file.read(header_text.data(), header_size)) return problem(error, path, "is truncated in its header");

  Header header;
  std::string why;
  if (!HeaderParser(header_text).parse(&header, &why))
    return problem(error, path, "has a bad header: " + why);
  if (header.fortran_order) {
    return problem(error, path,
                   "is in Fortran order (fortran_order: True); save it in C order "
                   "(numpy.ascontiguousarray) first");
  }
  Array array;
  if (!dtype_from_descr(header.descr, &array.dtype, &why)) return problem(error, path, why);
  array.shape = header.shape;
  const int64_t bytes = data_bytes(array.shape, element_size(array.dtype));
  const int64_t available = file_size - static_cast<int64_t>(prefix_size + header_size);
  if (bytes < 0) {
    return problem(error, path,
                   "has shape " + shape_text(array.shape) + ", too large: its data would take more than " +
                       std::to_string(INT64_MAX) + " bytes");
  }
  if (bytes > available) {
    return problem(error, path,
                   "is truncated: shape " + shape_text(array.shape) + " needs " + std::to_string(bytes) +
                       " bytes of data, it has " + std::to_string(available));
  }
  array.data.resize(static_cast<size_t>(bytes));
  if (bytes > 0 && !file.read(reinterpret_cast<char *>(array.data.data()), bytes)) {
    return problem(error, path, "could not be read to its end");
  }
  *out = std::move(array);
  return true;
}

bool write(const std::string &path, const Array &array, std::string *error) {
  if constexpr (std::endian::native != std::endian::little) {
    return problem(error, path, "cannot be written: this machine is not little-endian");
  }
  const char *descr = descr_of(array.dtype);
  if (descr == nullptr) return problem(error, path, "cannot be written: its dtype has no .npy descriptor");
  const int64_t bytes = data_bytes(array.shape, element_size(array.dtype));
  if (bytes < 0)
    return problem(error, path, "cannot be written: shape " + shape_text(array.shape) + " is too large");
  if (static_cast<uint64_t>(bytes) != array.data.size()) {
    return problem(error, path,
                   "cannot be written: shape " + shape_text(array.shape) + " needs " + std::to_string(bytes) +
                       " bytes, the array holds " + std::to_string(array.data.size()));
  }
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': " + shape_text(array.shape) + ", }";
  // magic (6) + version (2) + header length (2) + header + '\n', padded with spaces.
  const size_t unpadded = magic_size + 2 + 2 + header.size() + 1;
  header.append((header_alignment - unpadded % header_alignment) % header_alignment, ' ');
  header += '\n';
  if (header.size() > 0xFFFF)
    return problem(error, path, "cannot be written: its header is too long for version 1.0");

  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) return problem(error, path, std::string("cannot be created: ") + std::strerror(errno));
  const char version_and_size[4] = {1, 0, static_cast<char>(header.size() & 0xFF),
                                    static_cast<char>(header.size() >> 8)};
  file.write(magic, magic_size);
  file.write(version_and_size, 4);
  file.write(header.data(), static_cast<std::streamsize>(header.size()));
  file.write(reinterpret_cast<const char *>(array.data.data()), bytes);
  file.close();
  if (!file) return problem(error, path, std::string("could not be written: ") + std::strerror(errno));
  return true;
}

}  // namespace attn::npy

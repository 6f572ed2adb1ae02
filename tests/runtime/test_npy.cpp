// test_npy.cpp: attn-run's .npy reader and writer (tools/attn_run/npy.cpp).
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "npy.h"

namespace fs = std::filesystem;

namespace {

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("attnc_npy_test_" + std::to_string(getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  std::string file(const std::string &name) const { return (path / name).string(); }
};

std::string slurp(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), {});
}

// A file with a hand-written header, as numpy would write it for the given version.
void write_raw(const std::string &path, int major, const std::string &dict, const std::string &data) {
  std::string header = dict;
  const size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string bytes = std::string("\x93NUMPY", 6) + static_cast<char>(major) + '\0';
  const size_t n = header.size();
  bytes += static_cast<char>(n & 0xFF);
  bytes += static_cast<char>((n >> 8) & 0xFF);
  if (major != 1) bytes += std::string(2, '\0');
  std::ofstream(path, std::ios::binary) << bytes << header << data;
}

}  // namespace

TEST_CASE("arrays round-trip through a .npy file") {
  TempDir dir;
  for (const attn_dtype dtype : {ATTN_F32, ATTN_F16, ATTN_BF16, ATTN_I32, ATTN_U8}) {
    for (const std::vector<int64_t> &shape : {std::vector<int64_t>{2, 3, 4}, {5}, {1, 1}, {}}) {
      CAPTURE(static_cast<int>(dtype));
      CAPTURE(shape.size());
      attn::npy::Array array;
      array.dtype = dtype;
      array.shape = shape;
      array.data.resize(static_cast<size_t>(array.element_count()) * attn::npy::element_size(dtype));
      for (size_t i = 0; i < array.data.size(); ++i) array.data[i] = static_cast<uint8_t>(i * 7 + 1);
      std::string error;
      const std::string path = dir.file("round.npy");
      REQUIRE_MESSAGE(attn::npy::write(path, array, &error), error);
      const std::string bytes = slurp(path);
      REQUIRE(bytes.size() >= 10);
      CHECK(bytes.compare(0, 8, std::string("\x93NUMPY\x01\x00", 8)) == 0);
      const size_t header = static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
      CHECK((10 + header) % 64 == 0);
      CHECK(bytes[10 + header - 1] == '\n');
      CHECK(bytes.size() == 10 + header + array.data.size());

      attn::npy::Array back;
      REQUIRE_MESSAGE(attn::npy::read(path, &back, &error), error);
      CHECK(back.dtype == array.dtype);
      CHECK(back.shape == array.shape);
      CHECK(back.data == array.data);
    }
  }
}

TEST_CASE("the header as numpy writes it") {
  TempDir dir;
  attn::npy::Array array;
  array.shape = {2, 3};
  array.data.resize(24);
  std::string error;
  REQUIRE(attn::npy::write(dir.file("a.npy"), array, &error));
  CHECK(contains(slurp(dir.file("a.npy")), "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"));
  array.shape = {6};
  REQUIRE(attn::npy::write(dir.file("b.npy"), array, &error));
  CHECK(contains(slurp(dir.file("b.npy")), "'shape': (6,)"));
  // NumPy has no bfloat16: bf16 is written, and read back, as its uint16 bit patterns.
  array.dtype = ATTN_BF16;
  array.shape = {12};
  REQUIRE(attn::npy::write(dir.file("c.npy"), array, &error));
  CHECK(contains(slurp(dir.file("c.npy")), "{'descr': '<u2', 'fortran_order': False, 'shape': (12,), }"));
  array.dtype = ATTN_F16;
  REQUIRE(attn::npy::write(dir.file("d.npy"), array, &error));
  CHECK(contains(slurp(dir.file("d.npy")), "'descr': '<f2'"));
}

TEST_CASE("versions 2.0 and 3.0 and other key orders are read") {
  TempDir dir;
  const float values[3] = {1.5f, -2.0f, 3.25f};
  const std::string data(reinterpret_cast<const char *>(values), sizeof(values));
  for (int major : {1, 2, 3}) {
    CAPTURE(major);
    write_raw(dir.file("v.npy"), major, R"({"shape": (3,), "fortran_order": False, "descr": "<f4"})", data);
    attn::npy::Array array;
    std::string error;
    REQUIRE_MESSAGE(attn::npy::read(dir.file("v.npy"), &array, &error), error);
    CHECK(array.shape == std::vector<int64_t>{3});
    float back[3];
    std::memcpy(back, array.data.data(), sizeof(back));
    CHECK(back[2] == 3.25f);
  }
}

TEST_CASE("bad files are refused with a message naming the file") {
  TempDir dir;
  const std::string path = dir.file("bad.npy");
  attn::npy::Array array;
  std::string error;
  auto refused = [&](const std::string &part) {
    CHECK_FALSE(attn::npy::read(path, &array, &error));
    CAPTURE(error);
    CHECK(contains(error, path));
    CHECK(contains(error, part));
  };
  SUBCASE("missing") {
    refused("cannot be opened");
  }
  SUBCASE("not npy") {
    std::ofstream(path) << "hello, world";
    refused("not a .npy file");
  }
  SUBCASE("fortran order") {
    write_raw(path, 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", std::string(16, '\0'));
    refused("Fortran order");
  }
  SUBCASE("big-endian") {
    write_raw(path, 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", std::string(8, '\0'));
    refused("big-endian");
  }
  SUBCASE("float64") {
    write_raw(path, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", std::string(16, '\0'));
    refused("'<f8'");
  }
  SUBCASE("truncated data") {
    write_raw(path, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4), }", std::string(60, '\0'));
    refused("truncated");
  }
  SUBCASE("truncated header") {
    std::ofstream(path, std::ios::binary) << std::string("\x93NUMPY\x01\x00\x76\x00{'descr'", 18);
    refused("truncated");
  }
  SUBCASE("an unsupported version") {
    write_raw(path, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", std::string(4, '\0'));
    std::string bytes = slurp(path);
    bytes[6] = 9;
    std::ofstream(path, std::ios::binary) << bytes;
    refused("version 9.0");
  }
  SUBCASE("a header without a shape") {
    write_raw(path, 1, "{'descr': '<f4', 'fortran_order': False, }", "");
    refused("lacks");
  }
  SUBCASE("a malformed shape") {
    write_raw(path, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", "");
    refused("'shape'");
  }
}

TEST_CASE("writing refuses what .npy cannot hold") {
  TempDir dir;
  attn::npy::Array array;
  std::string error;
  array.dtype = static_cast<attn_dtype>(0);  // no dtype: the enum starts at 1
  array.shape = {2};
  array.data.resize(4);
  CHECK_FALSE(attn::npy::write(dir.file("x.npy"), array, &error));
  CHECK(contains(error, "no .npy descriptor"));
  array.dtype = ATTN_F32;
  CHECK_FALSE(attn::npy::write(dir.file("x.npy"), array, &error));
  CHECK(contains(error, "needs 8 bytes"));
  array.data.resize(8);
  CHECK_FALSE(attn::npy::write(dir.file("no/such/dir/x.npy"), array, &error));
  CHECK(contains(error, "cannot be created"));
}

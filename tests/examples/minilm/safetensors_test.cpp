// safetensors_test.cpp: the MiniLM example's safetensors reader and JSON parser on small synthetic
// files: a good one read back exactly (F32, F16, BF16, F64), and each kind of damage named.
#include "safetensors.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "json_value.h"

using minilm::SafetensorsError;
using minilm::SafetensorsFile;
using minilm::SafetensorsProblem;

namespace {

// 8-byte little-endian header length, the header text, then the data bytes.
std::vector<uint8_t> file_bytes(const std::string &header, const std::vector<uint8_t> &data) {
  std::vector<uint8_t> out;
  for (int i = 0; i < 8; ++i) out.push_back(uint8_t(uint64_t(header.size()) >> (8 * i)));
  for (const char c : header) out.push_back(uint8_t(c));
  for (const uint8_t b : data) out.push_back(b);
  return out;
}

template <typename T>
void put(std::vector<uint8_t> *data, T value) {
  uint8_t raw[sizeof(T)];
  std::memcpy(raw, &value, sizeof(T));
  data->insert(data->end(), raw, raw + sizeof(T));
}

// a: F32 [2,3] = 0.5 * i; h: F16 [4] = 1, -2, 65504, 2^-24 (a subnormal); b: BF16 [2] = 1.5, -inf;
// d: F64 [1] = 0.1; ids: I64 [2].
const std::string kHeader =
    R"({"__metadata__": {"format": "pt"},
        "a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
        "h": {"dtype": "F16", "shape": [4], "data_offsets": [24, 32]},
        "b": {"dtype": "BF16", "shape": [2], "data_offsets": [32, 36]},
        "d": {"dtype": "F64", "shape": [1], "data_offsets": [36, 44]},
        "ids": {"dtype": "I64", "shape": [2], "data_offsets": [44, 60]}}   )";

std::vector<uint8_t> good_data() {
  std::vector<uint8_t> d;
  for (int i = 0; i < 6; ++i) put(&d, 0.5f * float(i));
  for (uint16_t h : {uint16_t(0x3C00), uint16_t(0xC000), uint16_t(0x7BFF), uint16_t(0x0001)}) put(&d, h);
  for (uint16_t b : {uint16_t(0x3FC0), uint16_t(0xFF80)}) put(&d, b);
  put(&d, 0.1);
  put(&d, int64_t(7));
  put(&d, int64_t(-1));
  return d;
}

SafetensorsProblem problem_of(std::vector<uint8_t> bytes) {
  try {
    SafetensorsFile::parse(std::move(bytes), "synthetic");
  } catch (const SafetensorsError &e) {
    MESSAGE(std::string(e.what()));
    return e.problem;
  }
  FAIL("the file was accepted");
  return SafetensorsProblem::io;
}

SafetensorsProblem problem_of(const std::string &header, const std::vector<uint8_t> &data) {
  return problem_of(file_bytes(header, data));
}

std::string tensor(const char *name, const char *dtype, const char *shape, const char *offsets) {
  return std::string("\"") + name + "\": {\"dtype\": \"" + dtype + "\", \"shape\": " + shape +
         ", \"data_offsets\": " + offsets + "}";
}

}  // namespace

TEST_CASE("a good file reads back every tensor, converted to f32 where asked") {
  const SafetensorsFile f = SafetensorsFile::parse(file_bytes(kHeader, good_data()), "synthetic");
  REQUIRE(f.tensors().size() == 5);
  CHECK(f.tensors()[0].name == "a");  // file order
  const std::vector<float> a = f.floats("a", {2, 3});
  for (int i = 0; i < 6; ++i) CHECK(a[size_t(i)] == 0.5f * float(i));
  const std::vector<float> h = f.floats("h", {4});
  CHECK(h[0] == 1.0f);
  CHECK(h[1] == -2.0f);
  CHECK(h[2] == 65504.0f);
  CHECK(h[3] == std::ldexp(1.0f, -24));
  const std::vector<float> b = f.floats("b", {2});
  CHECK(b[0] == 1.5f);
  CHECK(std::isinf(b[1]));
  CHECK(b[1] < 0);
  CHECK(f.floats("d", {1})[0] == 0.1f);
  REQUIRE(f.find("ids") != nullptr);
  CHECK(f.find("ids")->dtype == minilm::DType::i64);
  CHECK(f.find("nope") == nullptr);
}

TEST_CASE("asking for the wrong shape, a missing tensor or integers as floats is an error") {
  const SafetensorsFile f = SafetensorsFile::parse(file_bytes(kHeader, good_data()), "synthetic");
  auto problem = [&](const char *name, std::vector<int64_t> shape) {
    try {
      f.floats(name, shape);
    } catch (const SafetensorsError &e) {
      return e.problem;
    }
    return SafetensorsProblem::io;
  };
  CHECK(problem("a", {3, 2}) == SafetensorsProblem::shape);
  CHECK(problem("a", {6}) == SafetensorsProblem::shape);
  CHECK(problem("q", {1}) == SafetensorsProblem::missing);
  CHECK(problem("ids", {2}) == SafetensorsProblem::dtype);
}

TEST_CASE("a truncated file is named as truncated wherever it is cut") {
  const std::vector<uint8_t> whole = file_bytes(kHeader, good_data());
  for (size_t keep : {size_t(0), size_t(5), size_t(8), size_t(20), 8 + kHeader.size() - 1, 8 + kHeader.size(),
                      8 + kHeader.size() + 30, whole.size() - 1}) {
    CAPTURE(keep);
    CHECK(problem_of(std::vector<uint8_t>(whole.begin(), whole.begin() + long(keep))) ==
          SafetensorsProblem::truncated);
  }
}

TEST_CASE("an altered header is refused with its problem named") {
  const std::vector<uint8_t> data = good_data();
  std::string broken = kHeader;
  broken[broken.find(':')] = ';';
  CHECK(problem_of(broken, data) == SafetensorsProblem::header);
  CHECK(problem_of("[1, 2]", {}) == SafetensorsProblem::header);
  CHECK(problem_of("{\"a\": {\"dtype\": \"F32\", \"shape\": [1]}}", {0, 0, 0, 0}) ==
        SafetensorsProblem::header);
  CHECK(problem_of("{" + tensor("a", "F32", "[-1]", "[0, 4]") + "}", {0, 0, 0, 0}) ==
        SafetensorsProblem::header);
  CHECK(problem_of("{" + tensor("a", "F32", "[1.5]", "[0, 4]") + "}", {0, 0, 0, 0}) ==
        SafetensorsProblem::header);
  CHECK(problem_of("{" + tensor("a", "F32", "[1]", "[0]") + "}", {0, 0, 0, 0}) == SafetensorsProblem::header);
  CHECK(problem_of("{\"__metadata__\": {\"n\": 1}}", {}) == SafetensorsProblem::header);
  CHECK(
      problem_of("{" + tensor("a", "F32", "[1]", "[0, 4]") + ", " + tensor("a", "F32", "[1]", "[0, 4]") + "}",
                 {0, 0, 0, 0}) == SafetensorsProblem::header);  // a duplicate name
  // A header length beyond the format's limit (a flipped high byte) is not a truncated file.
  std::vector<uint8_t> bytes = file_bytes(kHeader, data);
  bytes[6] = 1;
  CHECK(problem_of(bytes) == SafetensorsProblem::header);
}

TEST_CASE("unknown dtypes and shapes that disagree with the byte ranges are refused") {
  CHECK(problem_of("{" + tensor("a", "F8_E4M3", "[4]", "[0, 4]") + "}", {0, 0, 0, 0}) ==
        SafetensorsProblem::dtype);
  CHECK(problem_of("{" + tensor("a", "f32", "[1]", "[0, 4]") + "}", {0, 0, 0, 0}) ==
        SafetensorsProblem::dtype);
  CHECK(problem_of("{" + tensor("a", "F32", "[2]", "[0, 4]") + "}", {0, 0, 0, 0}) ==
        SafetensorsProblem::shape);
  CHECK(problem_of("{" + tensor("a", "F16", "[1]", "[0, 4]") + "}", {0, 0, 0, 0}) ==
        SafetensorsProblem::shape);
  CHECK(problem_of("{" + tensor("a", "F32", "[4611686018427387904, 4]", "[0, 4]") + "}", {0, 0, 0, 0}) ==
        SafetensorsProblem::shape);
}

TEST_CASE("shapes whose byte count wraps 2^64 are refused, not matched to a small range (issue 32)") {
  const std::vector<uint8_t> eight(8, 0);
  // 2^61 + 1 elements of 8 bytes: 2^64 + 8, which wrapped to the 8 bytes given.
  CHECK(problem_of("{" + tensor("a", "F64", "[2305843009213693953]", "[0, 8]") + "}", eight) ==
        SafetensorsProblem::shape);
  // 2^62 elements of 4 bytes: 2^64, which wrapped to 0.
  CHECK(problem_of("{" + tensor("a", "F32", "[2147483648, 2147483648]", "[0, 0]") + ", " +
                   tensor("b", "F64", "[1]", "[0, 8]") + "}",
                   eight) == SafetensorsProblem::shape);
  CHECK(problem_of("{" + tensor("a", "U8", "[4294967296, 4294967296, 1]", "[0, 0]") + ", " +
                   tensor("b", "F64", "[1]", "[0, 8]") + "}",
                   eight) == SafetensorsProblem::shape);
  // A zero dim makes the tensor empty however large the others are.
  const SafetensorsFile f = SafetensorsFile::parse(
      file_bytes("{" + tensor("z", "F64", "[4294967296, 0, 4294967296]", "[0, 0]") + ", " +
                     tensor("b", "F64", "[1]", "[0, 8]") + "}",
                 eight),
      "synthetic");
  REQUIRE(f.find("z") != nullptr);
  CHECK(f.find("z")->end == 0);
  // Just inside: 2^61 - 1 elements of 8 bytes need 2^64 - 8 bytes, more than the file holds.
  CHECK(problem_of("{" + tensor("a", "F64", "[2305843009213693951]", "[0, 8]") + "}", eight) ==
        SafetensorsProblem::shape);
}

TEST_CASE("overlapping, backward, holed or out-of-range offsets are refused") {
  const std::vector<uint8_t> eight(8, 0);
  CHECK(
      problem_of("{" + tensor("a", "F32", "[1]", "[0, 4]") + ", " + tensor("b", "F32", "[1]", "[2, 6]") + "}",
                 eight) == SafetensorsProblem::offsets);
  CHECK(
      problem_of("{" + tensor("a", "F32", "[1]", "[0, 4]") + ", " + tensor("b", "F32", "[1]", "[0, 4]") + "}",
                 eight) == SafetensorsProblem::offsets);
  CHECK(problem_of("{" + tensor("a", "F32", "[0]", "[4, 0]") + "}", eight) == SafetensorsProblem::offsets);
  CHECK(problem_of("{" + tensor("a", "F32", "[1]", "[4, 8]") + "}", eight) ==
        SafetensorsProblem::offsets);  // hole
  CHECK(problem_of("{" + tensor("a", "F32", "[1]", "[0, 4]") + "}", eight) ==
        SafetensorsProblem::offsets);  // tail
  CHECK(problem_of("{" + tensor("a", "F32", "[1]", "[8, 12]") + "}", eight) == SafetensorsProblem::truncated);
  CHECK(problem_of("{" + tensor("a", "F32", "[1]", "[18446744073709551612, 0]") + "}", eight) ==
        SafetensorsProblem::header);  // beyond int64: not a usable integer
}

TEST_CASE("a file that cannot be opened is an io problem") {
  try {
    SafetensorsFile::read("/nonexistent/model.safetensors");
    FAIL("opened");
  } catch (const SafetensorsError &e) {
    CHECK(e.problem == SafetensorsProblem::io);
  }
}

TEST_CASE("the JSON parser: escapes, surrogate pairs, numbers, and errors with their offsets") {
  const minilm::JsonValue v =
      minilm::parse_json(R"({"s": "a\"\\\/\n\u00e9\ud83d\ude00", "n": [-0, 12, 1.5e3, 9007199254740993]})");
  CHECK(v.find("s")->string == "a\"\\/\n\xC3\xA9\xF0\x9F\x98\x80");
  const auto &n = v.find("n")->array;
  REQUIRE(n.size() == 4);
  CHECK(n[1].is_integer);
  CHECK(n[1].integer == 12);
  CHECK_FALSE(n[2].is_integer);
  CHECK(n[2].number == 1500.0);
  CHECK(n[3].integer == 9007199254740993LL);  // exact, past double's 2^53
  for (const char *bad : {"", "{", "{\"a\" 1}", "[1,]", "01", "\"\\ud800\"", "\"\\x\"", "[1] 2", "tru",
                          "{\"a\":1,\"a\":2}", "\"a\nb\""}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(minilm::parse_json(bad), minilm::JsonError);
  }
  std::string deep(40, '[');
  deep += std::string(40, ']');
  CHECK_THROWS_WITH_AS(minilm::parse_json(deep), doctest::Contains("deeper than 32"), minilm::JsonError);
}

// test_input_dtype.cpp: attn-run takes an input in its argument's dtype, rounds f32 to f16 or bf16,
// and refuses any other dtype by name (tools/attn_run/input_dtype.cpp).
#include <doctest/doctest.h>

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "attn/half.hpp"
#include "input_dtype.h"

namespace {

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

attn::npy::Array floats(const std::vector<float> &values) {
  attn::npy::Array array;
  array.dtype = ATTN_F32;
  array.shape = {static_cast<int64_t>(values.size())};
  array.data.resize(values.size() * sizeof(float));
  std::memcpy(array.data.data(), values.data(), array.data.size());
  return array;
}

std::vector<uint16_t> patterns(const attn::npy::Array &array) {
  std::vector<uint16_t> bits(array.data.size() / 2);
  std::memcpy(bits.data(), array.data.data(), array.data.size());
  return bits;
}

}  // namespace

TEST_CASE("an f32 file for an f16 or bf16 argument is rounded to nearest even") {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> values = {1.0f, 1.00390625f, -3.1415926f, 70000.0f, inf, -0.0f};
  std::vector<uint16_t> want_bf16, want_f16;
  for (float v : values) {
    want_bf16.push_back(attn::rt::to_bf16(v).bits);
    want_f16.push_back(attn::rt::to_f16(v).bits);
  }
  CHECK(want_bf16[1] == 0x3F80);  // a tie goes to the even 1.0
  CHECK(want_f16[3] == 0x7C00);   // 70000 is above f16's 65504: inf

  attn::run_tool::InputConversion conversion;
  attn::npy::Array array = floats(values);
  CHECK_FALSE(attn::run_tool::match_input_dtype("q", "q.npy", ATTN_BF16, &array, &conversion));
  CHECK(conversion == attn::run_tool::InputConversion::rounded_from_f32);
  CHECK(array.dtype == ATTN_BF16);
  CHECK(array.shape == std::vector<int64_t>{6});
  CHECK(patterns(array) == want_bf16);

  array = floats(values);
  CHECK_FALSE(attn::run_tool::match_input_dtype("x", "x.npy", ATTN_F16, &array, &conversion));
  CHECK(conversion == attn::run_tool::InputConversion::rounded_from_f32);
  CHECK(array.dtype == ATTN_F16);
  CHECK(patterns(array) == want_f16);
}

TEST_CASE("a file in the argument's dtype is taken as it is") {
  attn::npy::Array array;
  array.dtype = ATTN_BF16;
  array.shape = {2};
  array.data = {0x80, 0x3F, 0xC0, 0x7F};
  const std::vector<uint8_t> before = array.data;
  attn::run_tool::InputConversion conversion;
  CHECK_FALSE(attn::run_tool::match_input_dtype("k", "k.npy", ATTN_BF16, &array, &conversion));
  CHECK(conversion == attn::run_tool::InputConversion::none);
  CHECK(array.data == before);
  array = floats({2.5f});
  CHECK_FALSE(attn::run_tool::match_input_dtype("alibi_slopes", "a.npy", ATTN_F32, &array, &conversion));
  CHECK(conversion == attn::run_tool::InputConversion::none);
}

TEST_CASE("any other dtype is refused, naming the input, its file, and what would do") {
  struct Case {
    attn_dtype given, expected;
    const char *message;
  };
  const Case cases[] = {
      {ATTN_I32, ATTN_BF16,
       "input 'q' ('in.npy') has dtype i32 ('<i4'), kernel expects bf16: give '<u2' (bf16 bit patterns) or "
       "'<f4' (rounded to nearest even)"},
      {ATTN_F16, ATTN_BF16, "has dtype f16 ('<f2'), kernel expects bf16"},
      {ATTN_BF16, ATTN_F16,
       "has dtype bf16 ('<u2' bit patterns), kernel expects f16: give '<f2' or '<f4' (rounded to nearest "
       "even)"},
      {ATTN_U8, ATTN_F16, "has dtype u8 ('|u1'), kernel expects f16"},
      {ATTN_F16, ATTN_F32, "has dtype f16 ('<f2'), kernel expects f32 ('<f4')"},
      {ATTN_F32, ATTN_I32, "has dtype f32 ('<f4'), kernel expects i32 ('<i4')"},
  };
  for (const Case &c : cases) {
    CAPTURE(c.message);
    attn::npy::Array array;
    array.dtype = c.given;
    array.shape = {1};
    array.data.resize(attn::npy::element_size(c.given));
    const std::vector<uint8_t> before = array.data;
    attn::run_tool::InputConversion conversion;
    const auto refused = attn::run_tool::match_input_dtype("q", "in.npy", c.expected, &array, &conversion);
    REQUIRE(refused.has_value());
    CAPTURE(*refused);
    CHECK(contains(*refused, c.message));
    CHECK(array.dtype == c.given);
    CHECK(array.data == before);
  }
}

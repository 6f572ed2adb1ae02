// input_dtype.cpp: an input file taken in its kernel argument's dtype, rounded from f32, or refused.
#include "input_dtype.h"

#include <cstring>
#include <vector>

#include "attn/half.hpp"

namespace attn::run_tool {
namespace {

bool is_low_precision(attn_dtype dtype) {
  return dtype == ATTN_F16 || dtype == ATTN_BF16;
}

// "bf16 ('<u2' bit patterns)", the way a dtype reaches attn-run in a file.
std::string file_dtype(attn_dtype dtype) {
  const char *descr = npy::descr_of(dtype);
  std::string text = std::string(attn_dtype_name(dtype)) + " ('" + (descr != nullptr ? descr : "?") + "'";
  if (dtype == ATTN_BF16) text += " bit patterns";
  return text + ")";
}

template <class Half, class Round>
void round_in_place(npy::Array *array, Round round) {
  const size_t count = array->data.size() / sizeof(float);
  std::vector<uint8_t> rounded(count * sizeof(Half));
  for (size_t i = 0; i < count; ++i) {
    float value;
    std::memcpy(&value, array->data.data() + i * sizeof(float), sizeof(float));
    const Half half = round(value);
    std::memcpy(rounded.data() + i * sizeof(Half), &half, sizeof(Half));
  }
  array->data = std::move(rounded);
}

}  // namespace

std::optional<std::string> match_input_dtype(const std::string &name, const std::string &path,
                                             attn_dtype expected, npy::Array *array,
                                             InputConversion *conversion) {
  *conversion = InputConversion::none;
  if (array->dtype == expected) return std::nullopt;
  if (array->dtype == ATTN_F32 && is_low_precision(expected)) {
    if (expected == ATTN_BF16) {
      round_in_place<rt::bf16>(array, [](float x) { return rt::to_bf16(x); });
    } else {
      round_in_place<rt::f16>(array, [](float x) { return rt::to_f16(x); });
    }
    array->dtype = expected;
    *conversion = InputConversion::rounded_from_f32;
    return std::nullopt;
  }
  const std::string given =
      "input '" + name + "' ('" + path + "') has dtype " + file_dtype(array->dtype) + ", kernel expects ";
  if (expected == ATTN_BF16)
    return given + "bf16: give '<u2' (bf16 bit patterns) or '<f4' (rounded to nearest even)";
  if (expected == ATTN_F16) return given + "f16: give '<f2' or '<f4' (rounded to nearest even)";
  return given + file_dtype(expected);
}

}  // namespace attn::run_tool

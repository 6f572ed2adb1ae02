// input_dtype.h: how an input file's dtype meets the dtype its kernel argument takes.
#pragma once

#include <optional>
#include <string>

#include "npy.h"

namespace attn::run_tool {

// What an input of a low-precision argument became: read as it was, or rounded from f32.
enum class InputConversion { none, rounded_from_f32 };

// Takes array as it is when its dtype is the argument's. For an f16 or bf16 argument, an f32
// ('<f4') array is rounded to it in place, to nearest with ties to even (as the kernels round
// their outputs), and the result says so. Any other dtype is refused with a message naming the
// input, its file, the dtype given and the files that would do.
std::optional<std::string> match_input_dtype(const std::string &name, const std::string &path,
                                             attn_dtype expected, npy::Array *array,
                                             InputConversion *conversion);

}  // namespace attn::run_tool

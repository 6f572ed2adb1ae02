// status_internal.h: how runtime functions record the message of a failed call (printf-style).
#pragma once

#include <cstring>
#include <type_traits>

#include "attn/runtime.h"

namespace attn::detail {

// Formats the message into this thread's last-error slot and returns status, so that a failing
// function can `return fail(ATTN_ERR_SHAPE, "tensor '%s' ...", name);`.
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
attn_status
fail(attn_status status, const char *format, ...);

// A dtype as the integer a C caller stored. Reading an attn_dtype that holds a value outside
// the enum is undefined in C++, so values from callers and tables are read through this.
inline int dtype_value(const attn_dtype &dtype) {
  std::underlying_type_t<attn_dtype> value;
  std::memcpy(&value, &dtype, sizeof(value));
  return static_cast<int>(value);
}

// The text form of a dtype value ("f32", ...), or "dtype <n>" for a value outside the enum.
const char *dtype_name(int dtype);

}  // namespace attn::detail

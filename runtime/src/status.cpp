// status.cpp: status names, the runtime ABI version and the per-thread last-error message.
#include <cstdarg>
#include <cstdio>

#include "status_internal.h"

namespace {

// Large enough for any message the runtime writes; longer ones are truncated, never overrun.
thread_local char last_error[2048] = "";

}  // namespace

namespace attn::detail {

attn_status fail(attn_status status, const char *format, ...) {
  va_list args;
  va_start(args, format);
  std::vsnprintf(last_error, sizeof(last_error), format, args);
  va_end(args);
  return status;
}

const char *dtype_name(int dtype) {
  switch (dtype) {
    case ATTN_F32:
      return "f32";
    case ATTN_F16:
      return "f16";
    case ATTN_BF16:
      return "bf16";
    case ATTN_I32:
      return "i32";
    case ATTN_U8:
      return "u8";
    case ATTN_I8:
      return "i8";
    case ATTN_U64:
      return "u64";
  }
  // A value outside the enum, named so that messages stay readable.
  thread_local char unknown[32];
  std::snprintf(unknown, sizeof(unknown), "dtype %d", dtype);
  return unknown;
}

}  // namespace attn::detail

// Read as an int: a C caller may pass any value (an enum outside its range is undefined in C++).
extern "C" const char *attn_dtype_name(attn_dtype dtype) {
  return attn::detail::dtype_name(attn::detail::dtype_value(dtype));
}

extern "C" const char *attn_last_error(void) {
  return last_error;
}

extern "C" const char *attn_status_name(attn_status status) {
  // A C caller may pass any int; read it as one, since an attn_status holding a value outside the
  // enum is undefined in C++ (UBSan: "load of value 99, which is not a valid value").
  std::underlying_type_t<attn_status> code;
  std::memcpy(&code, &status, sizeof(code));
  switch (code) {
    case ATTN_OK:
      return "ATTN_OK";
    case ATTN_ERR_INVALID_ARGUMENT:
      return "ATTN_ERR_INVALID_ARGUMENT";
    case ATTN_ERR_UNKNOWN_KERNEL:
      return "ATTN_ERR_UNKNOWN_KERNEL";
    case ATTN_ERR_MISSING_TENSOR:
      return "ATTN_ERR_MISSING_TENSOR";
    case ATTN_ERR_UNKNOWN_TENSOR:
      return "ATTN_ERR_UNKNOWN_TENSOR";
    case ATTN_ERR_NULL_DATA:
      return "ATTN_ERR_NULL_DATA";
    case ATTN_ERR_DTYPE:
      return "ATTN_ERR_DTYPE";
    case ATTN_ERR_RANK:
      return "ATTN_ERR_RANK";
    case ATTN_ERR_SHAPE:
      return "ATTN_ERR_SHAPE";
    case ATTN_ERR_STRIDE:
      return "ATTN_ERR_STRIDE";
    case ATTN_ERR_KERNEL_FAILED:
      return "ATTN_ERR_KERNEL_FAILED";
    case ATTN_ERR_LOAD:
      return "ATTN_ERR_LOAD";
    case ATTN_ERR_ABI_MISMATCH:
      return "ATTN_ERR_ABI_MISMATCH";
    case ATTN_ERR_UNSUPPORTED_CPU:
      return "ATTN_ERR_UNSUPPORTED_CPU";
    case ATTN_ERR_MANIFEST_MISMATCH:
      return "ATTN_ERR_MANIFEST_MISMATCH";
    case ATTN_ERR_INVALID_VALUE:
      return "ATTN_ERR_INVALID_VALUE";
    case ATTN_ERR_LIBRARY_INTEGRITY:
      return "ATTN_ERR_LIBRARY_INTEGRITY";
    case ATTN_ERR_NO_DEVICE:
      return "ATTN_ERR_NO_DEVICE";
    case ATTN_ERR_DEVICE_TENSOR:
      return "ATTN_ERR_DEVICE_TENSOR";
    case ATTN_ERR_ALIASED:
      return "ATTN_ERR_ALIASED";
  }
  return "ATTN_ERR_UNKNOWN_STATUS";
}

extern "C" int attn_runtime_abi_version(void) {
  return ATTN_ABI_VERSION;
}

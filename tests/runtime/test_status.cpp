// test_status.cpp: status and dtype names, the ABI version and the per-thread last-error message.
#include <doctest/doctest.h>

#include <string>
#include <thread>

#include "attn/runtime.h"

TEST_CASE("every status has its enum name") {
  CHECK(std::string(attn_status_name(ATTN_OK)) == "ATTN_OK");
  CHECK(std::string(attn_status_name(ATTN_ERR_SHAPE)) == "ATTN_ERR_SHAPE");
  CHECK(std::string(attn_status_name(ATTN_ERR_STRIDE)) == "ATTN_ERR_STRIDE");
  CHECK(std::string(attn_status_name(ATTN_ERR_MANIFEST_MISMATCH)) == "ATTN_ERR_MANIFEST_MISMATCH");
  CHECK(std::string(attn_status_name(ATTN_ERR_INVALID_VALUE)) == "ATTN_ERR_INVALID_VALUE");
  CHECK(std::string(attn_status_name(ATTN_ERR_LIBRARY_INTEGRITY)) == "ATTN_ERR_LIBRARY_INTEGRITY");
  CHECK(std::string(attn_status_name(ATTN_ERR_NO_DEVICE)) == "ATTN_ERR_NO_DEVICE");
  CHECK(std::string(attn_status_name(ATTN_ERR_ALIASED)) == "ATTN_ERR_ALIASED");
  for (int s = ATTN_OK; s <= ATTN_ERR_ALIASED; ++s) {
    CAPTURE(s);
    CHECK(std::string(attn_status_name(static_cast<attn_status>(s))).starts_with("ATTN_"));
  }
  CHECK(std::string(attn_status_name(static_cast<attn_status>(99))) == "ATTN_ERR_UNKNOWN_STATUS");
}

TEST_CASE("every dtype has its short name, and a value outside the enum its number") {
  CHECK(std::string(attn_dtype_name(ATTN_F32)) == "f32");
  CHECK(std::string(attn_dtype_name(ATTN_F16)) == "f16");
  CHECK(std::string(attn_dtype_name(ATTN_BF16)) == "bf16");
  CHECK(std::string(attn_dtype_name(ATTN_I32)) == "i32");
  CHECK(std::string(attn_dtype_name(ATTN_U8)) == "u8");
  CHECK(std::string(attn_dtype_name(ATTN_I8)) == "i8");
  CHECK(std::string(attn_dtype_name(static_cast<attn_dtype>(77))) == "dtype 77");
}

TEST_CASE("the runtime reports the abi version it was built with") {
  CHECK(attn_runtime_abi_version() == ATTN_ABI_VERSION);
}

TEST_CASE("the last error belongs to the thread that failed") {
  const attn_kernel *kernel = nullptr;
  CHECK(attn_find_kernel("no_such_kernel_for_status_test", &kernel) == ATTN_ERR_UNKNOWN_KERNEL);
  CHECK(std::string(attn_last_error()).find("no_such_kernel_for_status_test") != std::string::npos);
  std::string other_thread_message = "unset";
  std::thread([&] { other_thread_message = attn_last_error(); }).join();
  CHECK(other_thread_message.empty());
}

// opencl_app.h: the application's side of OpenCL in the device-tensor tests (its own context,
// queue and buffers), through the ICD loader by dlopen: no OpenCL headers needed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace attnc::test {

// One OpenCL context with a queue on the first device of the first platform; ok() is false (and
// why() says why) where there is none.
class OpenClApp {
 public:
  OpenClApp();
  ~OpenClApp();
  OpenClApp(const OpenClApp &) = delete;
  OpenClApp &operator=(const OpenClApp &) = delete;

  bool ok() const { return queue_ != nullptr; }
  const std::string &why() const { return why_; }
  void *context() const { return context_; }
  void *queue() const { return queue_; }

  // A buffer of `bytes` bytes holding a copy of host[0, bytes) (uninitialized where host is null);
  // null on failure.
  void *upload(const void *host, size_t bytes);
  // Copies buffer[0, bytes) to host, after everything queued; false on failure.
  bool download(void *buffer, void *host, size_t bytes);
  void release(void *buffer);

 private:
  void *library_ = nullptr, *context_ = nullptr, *queue_ = nullptr;
  std::string why_;
};

// One app for the whole test program, its context and queue given to attnc (attn_set_opencl_context)
// on first use, which must come before any kernel runs: Halide keeps each kernel's program in the
// context of its first call, and the runtime holds a process to that one. Fails the test (doctest
// REQUIRE) where there is no OpenCL.
OpenClApp &process_app();

}  // namespace attnc::test

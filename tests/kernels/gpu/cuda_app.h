// cuda_app.h: the application's side of CUDA in the device-tensor tests (device 0's primary context
// made current, a stream, device memory), through the driver API by dlopen: no CUDA headers needed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace attnc::test {

// ok() is false (and why() says why) without a driver or a device.
class CudaApp {
 public:
  CudaApp();
  ~CudaApp();
  CudaApp(const CudaApp &) = delete;
  CudaApp &operator=(const CudaApp &) = delete;

  bool ok() const { return context_ != nullptr; }
  const std::string &why() const { return why_; }
  void *context() const { return context_; }
  void *stream();  // created on first use; null on failure

  // Device memory holding a copy of host[0, bytes); null on failure.
  void *upload(const void *host, size_t bytes);
  // Copies device[0, bytes) to host once everything queued is done; false on failure.
  bool download(void *device, void *host, size_t bytes);
  void release(void *device);

 private:
  void *library_ = nullptr, *context_ = nullptr, *stream_ = nullptr;
  std::string why_;
};

}  // namespace attnc::test

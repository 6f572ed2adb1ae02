// device_call.h: runs a suite Call with some of its tensors in device memory of a test "app"
// (OpenClApp, CudaApp: upload / download / release), reading them back after the run.
#pragma once

#include <doctest/doctest.h>

#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "kernel_test_support.h"

namespace attnc::test {

// Bytes from a tensor's data() to the end of its trailing guard.
template <class T>
size_t span_bytes(const BasicTensor<T> &t) {
  int64_t last = 0;
  for (size_t d = 0; d < t.shape().size(); ++d) last += (t.shape()[d] - 1) * t.strides()[d];
  return static_cast<size_t>(last + 1 + BasicTensor<T>::guard) * sizeof(T);
}

// The call's tensors named in on_device go as device memory (the whole storage from data(),
// guards included) of kind `memory` (memory_override: another kind for some), the rest as host
// tensors; afterwards the float tensors are read back into the call, so the suites' checks apply.
template <class App>
struct DeviceCall {
  App &app;
  Call &call;
  attn_memory memory;
  // Another attn_memory value (an int: the refusal tests give values outside the enum too).
  std::map<std::string, int> memory_override = {};

  attn_status run(const attn_kernel *kernel, const std::set<std::string> &on_device) {
    std::map<std::string, void *> buffers;
    auto place = [&](const std::string &name, auto &t, attn_tensor c) {
      if (!on_device.count(name)) return c;
      void *buffer = app.upload(t.data(), span_bytes(t));
      REQUIRE(buffer != nullptr);
      buffers[name] = buffer;
      c.data = buffer;
      c.memory = memory;
      if (memory_override.count(name)) std::memcpy(&c.memory, &memory_override.at(name), sizeof(int));
      return c;
    };
    std::vector<attn_arg> args;
    for (auto &[name, t] : call.tensors) args.push_back({name.c_str(), place(name, t, t.c_tensor())});
    for (auto &[name, t] : call.index_tensors) args.push_back({name.c_str(), place(name, t, t.c_tensor())});
    for (auto &[name, t] : call.byte_tensors) args.push_back({name.c_str(), place(name, t, t.c_tensor())});
    const attn_status status = attn_run(kernel, args.data(), static_cast<int>(args.size()));
    for (auto &[name, buffer] : buffers) {
      if (call.tensors.count(name)) {
        Tensor &t = call.tensors.at(name);
        CHECK(app.download(buffer, t.data(), span_bytes(t)));
      }
      app.release(buffer);
    }
    return status;
  }
};

}  // namespace attnc::test

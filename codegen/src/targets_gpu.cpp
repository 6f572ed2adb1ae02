// GPU target sets and the device APIs a kernel library's runtime must carry.
#include "attnc/targets_gpu.h"

namespace attnc {

std::optional<std::string> gpu_named_target(const std::string &name) {
  if (name != "cuda" && name != "opencl") return std::nullopt;
  const Halide::Target host = Halide::get_host_target();
  const Halide::Target base(host.os, host.arch, host.bits);
  if (name == "cuda")
    return base.with_feature(Halide::Target::CUDA).with_feature(Halide::Target::CUDACapability86).to_string();
  return base.with_feature(Halide::Target::OpenCL).to_string();
}

Halide::Target with_gpu_runtimes(Halide::Target runtime, const std::vector<std::string> &targets) {
  for (const std::string &t : targets)
    for (Halide::Target::Feature api : {Halide::Target::CUDA, Halide::Target::OpenCL})
      if (Halide::Target(t).has_feature(api)) runtime = runtime.with_feature(api);
  return runtime;
}

}  // namespace attnc

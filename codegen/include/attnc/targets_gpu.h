// attnc/targets_gpu.h: the GPU target sets ("cuda", "opencl") and the Halide runtime their variants need.
#pragma once

#include <Halide.h>

#include <optional>
#include <string>
#include <vector>

namespace attnc {

// "cuda" or "opencl" as one Halide target: this host's baseline (its code only launches kernels
// and copies tensors) plus the GPU API; CUDA at cuda_capability_86, the highest Halide 21 offers,
// whose PTX the driver compiles for newer GPUs (sm_90 on the H100/H200). nullopt for other names.
std::optional<std::string> gpu_named_target(const std::string &name);

// runtime with the device APIs of every GPU target in targets ("host,cuda": CUDA's runtime too).
Halide::Target with_gpu_runtimes(Halide::Target runtime, const std::vector<std::string> &targets);

}  // namespace attnc

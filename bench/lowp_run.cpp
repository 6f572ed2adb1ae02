// lowp_run.cpp: times one attnc kernel whose tensors are bf16, f16 or f32, through the runtime's C ABI.
//
// The bench's other attnc rows go through attn-run, which cannot read bf16 .npy files yet (NumPy
// has no bf16 dtype). This driver reads the f32 files every peer reads, already rounded to the
// storage type by the harness, converts them exactly into the type each kernel argument declares,
// and hands the output back as f32, so the harness checks it as it checks any peer's.
//
// Usage: lowp_run LIB KERNEL_ID IN_DIR OUT.npy THREADS WARMUP RUNS
// Reads IN_DIR/NAME.npy for every input the kernel takes ([B,S,H,D] q, k, v; or the block's x,
// w_qkv, b_qkv, w_o, b_o), writes `out` as f32, prints {"median_ms": ...} as JSON.
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "attn/runtime.h"
#include "bf16_bits.h"
#include "npy_io.h"
#include "time_kernel.h"

namespace {

size_t element_bytes(attn_dtype dtype) {
  return dtype == ATTN_F16 || dtype == ATTN_BF16 ? 2 : 4;
}

// One kernel argument in its storage type; shape outermost first.
struct Tensor {
  attn_dtype dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

Tensor from_f32(const bench_npy::Array &array, attn_dtype dtype) {
  if (dtype != ATTN_F32 && dtype != ATTN_F16 && dtype != ATTN_BF16)
    throw std::runtime_error("an input of dtype " + std::to_string(dtype) + ": expected f32, f16 or bf16");
  Tensor t{dtype, array.shape, std::vector<uint8_t>(array.data.size() * element_bytes(dtype))};
  for (size_t i = 0; i < array.data.size(); ++i) {
    const float x = array.data[i];
    if (dtype == ATTN_F32) {
      std::memcpy(t.bytes.data() + 4 * i, &x, 4);
    } else {
      const uint16_t h =
          dtype == ATTN_BF16 ? bench_bf16::from_f32(x) : _cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT);
      std::memcpy(t.bytes.data() + 2 * i, &h, 2);
    }
  }
  return t;
}

bench_npy::Array to_f32(const Tensor &t) {
  bench_npy::Array array{t.shape, std::vector<float>(t.bytes.size() / element_bytes(t.dtype))};
  for (size_t i = 0; i < array.data.size(); ++i) {
    if (t.dtype == ATTN_F32) {
      std::memcpy(&array.data[i], t.bytes.data() + 4 * i, 4);
    } else {
      uint16_t h;
      std::memcpy(&h, t.bytes.data() + 2 * i, 2);
      array.data[i] = t.dtype == ATTN_BF16 ? bench_bf16::to_f32(h) : _cvtsh_ss(h);
    }
  }
  return array;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 8) {
    std::fprintf(stderr, "usage: lowp_run LIB KERNEL_ID IN_DIR OUT.npy THREADS WARMUP RUNS\n");
    return 2;
  }
  const std::string library_path = argv[1], kernel_id = argv[2], folder = argv[3], out_path = argv[4];
  const int threads = std::atoi(argv[5]), warmup = std::atoi(argv[6]), runs = std::atoi(argv[7]);
  attn_library *library = nullptr;
  try {
    bench_time::check(attn_library_open(library_path.c_str(), &library));
    const attn_kernel *kernel = nullptr;
    bench_time::check(attn_library_find_kernel(library, kernel_id.c_str(), &kernel));
    bench_time::check(attn_kernel_set_threads(kernel, threads));
    std::vector<attn_arg_info> infos(static_cast<size_t>(attn_kernel_arg_count(kernel)));
    for (size_t i = 0; i < infos.size(); ++i)
      bench_time::check(attn_kernel_arg(kernel, static_cast<int>(i), &infos[i]));
    std::vector<Tensor> tensors(infos.size());
    std::map<std::string, int64_t> sizes;  // runtime dim name -> size, as the inputs give them
    for (size_t i = 0; i < infos.size(); ++i) {
      if (infos[i].is_output) continue;
      tensors[i] = from_f32(bench_npy::read(folder + "/" + infos[i].name + ".npy"), infos[i].dtype);
      for (int d = 0; d < infos[i].rank && d < static_cast<int>(tensors[i].shape.size()); ++d)
        if (infos[i].dim_names[d] != nullptr) sizes.emplace(infos[i].dim_names[d], tensors[i].shape[d]);
    }
    size_t out_index = infos.size();
    for (size_t i = 0; i < infos.size(); ++i) {
      if (!infos[i].is_output) continue;
      if (std::string(infos[i].name) == "out") out_index = i;
      Tensor &t = tensors[i];
      t.dtype = infos[i].dtype;
      int64_t count = 1;
      for (int d = 0; d < infos[i].rank; ++d) {
        const int64_t size =
            infos[i].fixed_shape[d] > 0 ? infos[i].fixed_shape[d] : sizes.at(infos[i].dim_names[d]);
        t.shape.push_back(size);
        count *= size;
      }
      t.bytes.assign(static_cast<size_t>(count) * element_bytes(t.dtype), 0);
    }
    if (out_index == infos.size()) throw std::runtime_error("kernel '" + kernel_id + "' has no output 'out'");
    std::vector<attn_arg> args;
    for (size_t i = 0; i < infos.size(); ++i)
      args.push_back({infos[i].name,
                      {tensors[i].bytes.data(), tensors[i].dtype,
                       static_cast<int32_t>(tensors[i].shape.size()), tensors[i].shape.data(), nullptr}});
    const bench_time::Timing timing = bench_time::time_kernel(kernel, args, warmup, runs);
    bench_npy::write(out_path, to_f32(tensors[out_index]));
    std::printf(
        "{\"median_ms\": %.6f, \"min_ms\": %.6f, \"runs\": %d, \"threads\": %d, \"variant\": \"%s\"}\n",
        timing.median_ms, timing.min_ms, runs, threads, attn_kernel_selected_target(kernel));
  } catch (const std::exception &e) {
    std::fprintf(stderr, "lowp_run: %s\n", e.what());
    if (library != nullptr) attn_library_close(library);
    return 1;
  }
  attn_library_close(library);
  return 0;
}

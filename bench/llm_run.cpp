// llm_run.cpp: times one attnc kernel of issue 24 (KV cache, RoPE) through the runtime's C ABI.
//
// Usage: llm_run LIB KERNEL_ID IN_DIR OUT.npy THREADS WARMUP RUNS [CACHE_LEN [PAGE_SEED]]
// Reads IN_DIR/NAME.npy (float32) for every float input the kernel takes: q, k_new, v_new and
// the caches k_cache, v_cache as contiguous [B,Smax,KVH,D] arrays; q, k, v without a cache (k and
// v, when IN_DIR has none, are the caches with k_new, v_new written at CACHE_LEN: the same keys
// as the cache kernel's, for a cache-less kernel timed on the same step).
// The int32 inputs are built here: cache_seqlens = CACHE_LEN for every sequence, and for a
// paged kernel (one that takes block_table; P = k_cache's fixed page size) the caches are copied
// into B·ceil(Smax/P) pages in an order shuffled with PAGE_SEED, block_table naming them. Every
// call writes the same new tokens at the same positions, so repeated calls time one decode step.
// Quantized caches (kv_dtype=int8 or fp8_e4m3; contiguous only here) read their codes from
// k_cache.npy / v_cache.npy as int8 / uint8 and their scales from k_scale.npy / v_scale.npy
// (f32), as the harness quantized them; bf16 arguments read the f32 files (already rounded to
// bf16 by the harness) and convert them exactly, and a bf16 `out` comes back as f32.
// Writes `out` as f32 and prints {"median_ms": ...} as JSON.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "attn/runtime.h"
#include "bf16_bits.h"
#include "npy_io.h"
#include "time_kernel.h"

namespace {

// One kernel argument's storage: f32, i32, bf16 or one-byte elements, shape outermost first.
struct Tensor {
  attn_dtype dtype = ATTN_F32;
  std::vector<int64_t> shape;
  std::vector<float> f32;
  std::vector<int32_t> i32;
  std::vector<uint16_t> bf16;
  std::vector<uint8_t> bytes;  // int8 or uint8 codes
  void *data() {
    if (dtype == ATTN_I32) return i32.data();
    if (dtype == ATTN_BF16) return bf16.data();
    if (dtype == ATTN_I8 || dtype == ATTN_U8) return bytes.data();
    return f32.data();
  }
  // f32 elements converted to bf16 (exact for values the harness rounded to bf16).
  void to_bf16() {
    dtype = ATTN_BF16;
    bf16.resize(f32.size());
    for (size_t n = 0; n < f32.size(); ++n) bf16[n] = bench_bf16::from_f32(f32[n]);
    f32 = {};
  }
};

// A contiguous cache [B,Smax,KVH,D] as pages [B·ceil(Smax/P), P, KVH, D]: sequence b's page j
// is pages[order[b·per_sequence + j]]. Slots beyond Smax stay zero.
Tensor to_pages(const bench_npy::Array &cache, int64_t page_tokens, const std::vector<int32_t> &order) {
  const int64_t B = cache.shape[0], smax = cache.shape[1], row = cache.shape[2] * cache.shape[3];
  const int64_t per_sequence = (smax + page_tokens - 1) / page_tokens;
  Tensor t;
  t.shape = {B * per_sequence, page_tokens, cache.shape[2], cache.shape[3]};
  t.f32.assign(static_cast<size_t>(B * per_sequence * page_tokens * row), 0.0f);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = 0; j < per_sequence; ++j) {
      const int64_t tokens = std::min(page_tokens, smax - j * page_tokens);
      const float *from = cache.data.data() + (b * smax + j * page_tokens) * row;
      std::copy(from, from + tokens * row, t.f32.data() + order[b * per_sequence + j] * page_tokens * row);
    }
  return t;
}

// A cache-less kernel's k or v [B,Smax,KVH,D] for a folder that holds a cache call's inputs: the
// cache with the new tokens at cache_len.. (what the cache kernel attends over).
bench_npy::Array keys_after_call(const std::string &folder, const std::string &name, int64_t cache_len) {
  bench_npy::Array all = bench_npy::read(folder + "/" + name + "_cache.npy");
  const bench_npy::Array added = bench_npy::read(folder + "/" + name + "_new.npy");
  const int64_t B = all.shape[0], smax = all.shape[1], sq = added.shape[1], row = all.shape[2] * all.shape[3];
  if (cache_len + sq > smax) throw std::runtime_error("CACHE_LEN + Sq is beyond the cache");
  for (int64_t b = 0; b < B; ++b)
    std::copy(added.data.begin() + b * sq * row, added.data.begin() + (b + 1) * sq * row,
              all.data.begin() + (b * smax + cache_len) * row);
  return all;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 8 || argc > 10) {
    std::fprintf(stderr,
                 "usage: llm_run LIB KERNEL_ID IN_DIR OUT.npy THREADS WARMUP RUNS [CACHE_LEN [PAGE_SEED]]\n");
    return 2;
  }
  const std::string library_path = argv[1], kernel_id = argv[2], folder = argv[3], out_path = argv[4];
  const int threads = std::atoi(argv[5]), warmup = std::atoi(argv[6]), runs = std::atoi(argv[7]);
  const int32_t cache_len = argc > 8 ? std::atoi(argv[8]) : 0;
  const unsigned page_seed = argc > 9 ? static_cast<unsigned>(std::atoi(argv[9])) : 1;
  attn_library *library = nullptr;
  try {
    bench_time::check(attn_library_open(library_path.c_str(), &library));
    const attn_kernel *kernel = nullptr;
    bench_time::check(attn_library_find_kernel(library, kernel_id.c_str(), &kernel));
    bench_time::check(attn_kernel_set_threads(kernel, threads));
    std::vector<attn_arg_info> infos(static_cast<size_t>(attn_kernel_arg_count(kernel)));
    std::map<std::string, size_t> index;
    for (size_t i = 0; i < infos.size(); ++i) {
      bench_time::check(attn_kernel_arg(kernel, static_cast<int>(i), &infos[i]));
      index[infos[i].name] = i;
    }
    const bool paged = index.count("block_table") > 0;
    std::vector<Tensor> tensors(infos.size());
    std::map<std::string, int64_t> sizes;  // runtime dim name -> size, as the inputs give them
    auto note_sizes = [&](size_t i) {
      for (int d = 0; d < infos[i].rank && d < static_cast<int>(tensors[i].shape.size()); ++d)
        if (infos[i].dim_names[d] != nullptr) sizes.emplace(infos[i].dim_names[d], tensors[i].shape[d]);
    };
    int64_t batch = 0, smax = 0, page_tokens = 0;
    std::vector<int32_t> order;
    for (size_t i = 0; i < infos.size(); ++i) {
      const std::string name = infos[i].name;
      if (name == "block_table" || name == "cache_seqlens" || infos[i].is_output == 1) continue;
      if (infos[i].dtype == ATTN_I8 || infos[i].dtype == ATTN_U8) {
        if (paged) throw std::runtime_error("quantized caches: this driver times contiguous ones only");
        bench_npy::ByteArray codes = bench_npy::read_bytes(folder + "/" + name + ".npy",
                                                           infos[i].dtype == ATTN_I8 ? "'|i1'" : "'|u1'");
        if (name == "k_cache") batch = codes.shape[0], smax = codes.shape[1];
        tensors[i].dtype = infos[i].dtype;
        tensors[i].shape = codes.shape;
        tensors[i].bytes = std::move(codes.data);
        note_sizes(i);
        continue;
      }
      bench_npy::Array array = (name == "k" || name == "v") && !std::ifstream(folder + "/" + name + ".npy")
                                   ? keys_after_call(folder, name, cache_len)
                                   : bench_npy::read(folder + "/" + name + ".npy");
      if ((name == "k_cache" || name == "v_cache") && paged) {
        batch = array.shape[0];
        smax = array.shape[1];
        page_tokens = infos[i].fixed_shape[1];
        if (page_tokens <= 0) throw std::runtime_error("paged kernel whose k_cache has no fixed page size");
        const int64_t pages = batch * ((smax + page_tokens - 1) / page_tokens);
        if (order.empty()) {
          order.resize(static_cast<size_t>(pages));
          std::iota(order.begin(), order.end(), 0);
          std::shuffle(order.begin(), order.end(), std::mt19937(page_seed));
        }
        tensors[i] = to_pages(array, page_tokens, order);
      } else {
        if (name == "k_cache") batch = array.shape[0], smax = array.shape[1];
        tensors[i].shape = array.shape;
        tensors[i].f32 = std::move(array.data);
        note_sizes(i);
      }
      if (infos[i].dtype == ATTN_BF16) tensors[i].to_bf16();
    }
    if (index.count("cache_seqlens")) {
      Tensor &t = tensors[index["cache_seqlens"]];
      t.dtype = ATTN_I32;
      t.shape = {batch};
      t.i32.assign(static_cast<size_t>(batch), cache_len);
    }
    if (paged) {
      Tensor &t = tensors[index["block_table"]];
      const int64_t per_sequence = (smax + page_tokens - 1) / page_tokens;
      t.dtype = ATTN_I32;
      t.shape = {batch, per_sequence};
      t.i32 = order;
    }
    for (size_t i = 0; i < infos.size(); ++i) {
      if (!infos[i].is_output || !tensors[i].shape.empty()) continue;
      Tensor &t = tensors[i];
      int64_t count = 1;
      for (int d = 0; d < infos[i].rank; ++d) {
        const int64_t size =
            infos[i].fixed_shape[d] > 0 ? infos[i].fixed_shape[d] : sizes.at(infos[i].dim_names[d]);
        t.shape.push_back(size);
        count *= size;
      }
      t.f32.assign(static_cast<size_t>(count), 0.0f);
      if (infos[i].dtype == ATTN_BF16) t.to_bf16();
    }
    if (!index.count("out")) throw std::runtime_error("kernel '" + kernel_id + "' has no output 'out'");
    std::vector<attn_arg> args;
    for (size_t i = 0; i < infos.size(); ++i)
      args.push_back({infos[i].name,
                      {tensors[i].data(), tensors[i].dtype, static_cast<int32_t>(tensors[i].shape.size()),
                       tensors[i].shape.data(), nullptr}});
    const bench_time::Timing timing = bench_time::time_kernel(kernel, args, warmup, runs);
    const Tensor &out = tensors[index["out"]];
    std::vector<float> out_f32 = out.f32;
    if (out.dtype == ATTN_BF16)
      for (uint16_t h : out.bf16) out_f32.push_back(bench_bf16::to_f32(h));
    bench_npy::write(out_path, {out.shape, out_f32});
    std::printf(
        "{\"median_ms\": %.6f, \"min_ms\": %.6f, \"runs\": %d, \"threads\": %d, \"page_tokens\": %lld, "
        "\"variant\": \"%s\"}\n",
        timing.median_ms, timing.min_ms, runs, threads, static_cast<long long>(page_tokens),
        attn_kernel_selected_target(kernel));
  } catch (const std::exception &e) {
    std::fprintf(stderr, "llm_run: %s\n", e.what());
    if (library != nullptr) attn_library_close(library);
    return 1;
  }
  attn_library_close(library);
  return 0;
}

// bad_calls.h: a valid call of any kernel, built from its own argument declarations, and every way to
// spoil it (dtypes, ranks, shapes, strides, null, missing, unknown and aliased tensors, index and scale
// values out of range), for the suites that check "a refused call returns its status and writes nothing".
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "attn/runtime.h"

namespace attnc::test {

// Runtime sizes by dim name (B, Sq, Sk, S; B+1, total_q, Smax, max_pages, ... for the sequence
// kernels), all different so that a mix-up of two of them is a shape error.
using DimSizes = std::map<std::string, int64_t>;
// Sq = 5: the split-keys (decode) core where a kernel has one (Sq <= 8).
DimSizes decode_sizes();
// Sq = 11: the tiled core.
DimSizes prefill_sizes();

// Where a call's tensors live: the host, or device memory of an application (OpenCL buffers: an
// aliasing variant that points into another tensor's middle cannot be made there).
struct DevicePlacement {
  attn_memory memory;
  std::function<void *(const void *host, size_t bytes)> upload;  // null on failure
  std::function<bool(void *buffer, void *host, size_t bytes)> download;
  std::function<void(void *buffer)> release;
};

// One argument of a call, with storage to spare (4x) so that no bad variant can reach past it.
struct Arg {
  attn_arg_info info{};  // as the kernel declares it
  std::string name;
  attn_dtype dtype = ATTN_F32;  // as given (a variant may change it)
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // empty: pass null (row-major)
  std::vector<uint8_t> storage;
  bool null_data = false;
  bool null_name = false;
  std::vector<std::string> dim_labels;  // "dim 1 (Sq)", "dim 3 (64)"
  std::string data_of;                  // non-empty: data points into that argument's storage
  int64_t data_offset_bytes = 0;        // past the start of data_of's storage
  bool captured = false;                // a score_mod / mask_mod tensor (inputs=): any value is valid

  bool written() const { return info.is_output != 0; }  // an output or an in-out
  int64_t element_bytes() const;                        // of the declared dtype
  int64_t dense_elements() const;
};

// A valid call of a kernel (inputs small numbers, index inputs in range, outputs a sentinel), to be
// spoiled one way at a time.
struct BadCall {
  std::vector<Arg> args;
  std::vector<Arg> extra;  // arguments the kernel does not declare

  BadCall(const attn_kernel *kernel, const DimSizes &sizes);
  Arg &arg(const std::string &name);
  const Arg *find(const std::string &name) const;
  // placement null: host tensors. On the device, written tensors are read back after the call.
  attn_status run(const attn_kernel *kernel, const DevicePlacement *placement = nullptr);
  // Every written tensor's storage (spare included), in argument order.
  std::vector<std::vector<uint8_t>> written() const;
};

struct BadVariant {
  std::string what;
  std::function<void(BadCall &)> spoil;
  attn_status expected;
  std::string message_names;  // a part the message must contain ("" for none)
  bool host_only = false;     // points into another tensor's middle: not on a device
};

// Every way to spoil one tensor of the call, the call-wide ones, and the values the kernel's index
// and scale inputs must refuse (INVALID_VALUE). sizes: those the call was made with.
std::vector<BadVariant> bad_variants(const BadCall &good, const DimSizes &sizes);

// What check_bad_calls did, for the suites' summary lines.
struct BadCallCounts {
  int kernels = 0, refused = 0, values = 0;  // values: of the refused, INVALID_VALUE ones
};

// For one kernel at one set of sizes: the unspoiled call returns good_status (ATTN_OK: and writes
// every output element; else, as a CUDA kernel without a driver, nothing), then every bad variant
// returns its status (good_status instead of INVALID_VALUE when the kernel cannot run), says why,
// and leaves every output and in-out byte as it was. good_status ATTN_ERR_DEVICE_TENSOR (device
// tensors for a kernel that takes host tensors only): the unspoiled call is the refused one, and
// no variant is made. As doctest CHECKs.
void check_bad_calls(const attn_kernel *kernel, const DimSizes &sizes, BadCallCounts *counts,
                     const DevicePlacement *placement = nullptr, attn_status good_status = ATTN_OK);

}  // namespace attnc::test

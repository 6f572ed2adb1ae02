// run.cpp: runs a kernel on checked tensors and turns Halide's errors into statuses.
#include <string>
#include <string_view>
#include <vector>

#include "HalideRuntime.h"
#include "device_context.h"
#include "isa_limit.h"
#include "kernel_internal.h"
#include "status_internal.h"
#include "tensor_check.h"

using attn::detail::fail;

namespace {

// The part of a Halide error message worth showing: without the trailing newline Halide ends
// it with, and without the "Requirement Failed: (false) " a require() puts before its own
// message (its condition, simplified in the failing branch, always reads "false").
std::string useful_message(const char *message) {
  std::string text = message;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  constexpr std::string_view noise = "Requirement Failed: (false) ";
  if (text.starts_with(noise)) text.erase(0, noise.size());
  return text;
}

// Bytes from a buffer's first element to the end of its last (broadcast dims add nothing).
uint64_t buffer_span_bytes(const halide_buffer_t &buffer) {
  uint64_t span = 0;
  for (int d = 0; d < buffer.dimensions; ++d)
    if (buffer.dim[d].stride > 0)
      span += static_cast<uint64_t>(buffer.dim[d].extent - 1) * buffer.dim[d].stride;
  return (span + 1) * buffer.type.bytes();
}

// The call's GPU context, and every device tensor checked against it. Index and mask tensors
// (i32, u8) are read on the host by the pipelines (their values bound the key loops and are
// checked first): those given on the device are read back into host copies the call keeps.
attn_status prepare_device(const attn_kernel_desc &desc, attn::detail::CallBuffers *buffers, int variant,
                           attn_call_context *context) {
  using namespace attn::detail;
  const char *target = desc.variant_count > 0 ? desc.variants[variant].target : desc.target;
  const DeviceApi api = device_api_of(target);
  if (api == DeviceApi::none) return ATTN_OK;
  if (attn_status s = set_call_device_context(api, !buffers->device_args.empty(), context); s != ATTN_OK)
    return s;
  for (int i : buffers->device_args) {
    const halide_buffer_t &buffer = buffers->buffers[static_cast<size_t>(i)];
    if (attn_status s =
            check_device_tensor(api, *context, desc.args[i].name, reinterpret_cast<void *>(buffer.device),
                                buffer_span_bytes(buffer));
        s != ATTN_OK)
      return s;
  }
  // Only once every tensor passed: a refused call waits for no copy.
  for (int i : buffers->device_args) {
    if (desc.args[i].dtype != ATTN_I32 && desc.args[i].dtype != ATTN_U8) continue;
    halide_buffer_t &buffer = buffers->buffers[static_cast<size_t>(i)];
    const uint64_t bytes = buffer_span_bytes(buffer);
    std::vector<uint8_t> &copy = buffers->read_back.emplace_back(static_cast<size_t>(bytes));
    if (attn_status s = read_device_tensor(api, *context, desc.args[i].name,
                                           reinterpret_cast<void *>(buffer.device), bytes, copy.data());
        s != ATTN_OK)
      return s;
    buffer.device = 0;
    buffer.host = copy.data();
    buffer.set_host_dirty(true);
  }
  return ATTN_OK;
}

}  // namespace

extern "C" attn_status attn_run(const attn_kernel *kernel, const attn_arg *args, int arg_count) {
  if (kernel == nullptr || kernel->desc == nullptr) return fail(ATTN_ERR_INVALID_ARGUMENT, "kernel is null");
  const attn_kernel_desc &desc = *kernel->desc;
  if (arg_count < 0) {
    return fail(ATTN_ERR_INVALID_ARGUMENT, "kernel '%s': arg_count is %d, must be at least 0", desc.id,
                arg_count);
  }
  if (args == nullptr && arg_count > 0) {
    return fail(ATTN_ERR_INVALID_ARGUMENT, "kernel '%s': args is null but arg_count is %d", desc.id,
                arg_count);
  }
  attn::detail::CallBuffers buffers;
  if (attn_status s = attn::detail::check_call(desc, args, arg_count, &buffers); s != ATTN_OK) return s;

  int variant = 0;
  if (attn_status s = attn::detail::select_variant(*kernel, buffers.device_api, &variant); s != ATTN_OK)
    return s;

  attn_call_context context{};
  if (attn_status s = prepare_device(desc, &buffers, variant, &context); s != ATTN_OK) return s;
  const int result = desc.variant_count > 0 ? desc.run_variant(&context, buffers.pointers.data(), variant)
                                            : desc.run(&context, buffers.pointers.data());
  if (result == 0) return ATTN_OK;
  // Kernels check tensor values (key_lengths <= Sk, ...) with Halide require() before writing
  // any output: a failed one is the caller's value, not the kernel's fault.
  if (result == halide_error_code_requirement_failed) {
    if (context.has_error) {
      return fail(ATTN_ERR_INVALID_VALUE, "kernel '%s' refused a tensor value: %s", desc.id,
                  useful_message(context.message).c_str());
    }
    return fail(ATTN_ERR_INVALID_VALUE,
                "kernel '%s' refused a tensor value: a requirement failed (Halide error %d, no message)",
                desc.id, result);
  }
  if (context.has_error) {
    return fail(ATTN_ERR_KERNEL_FAILED, "kernel '%s' failed: %s", desc.id,
                useful_message(context.message).c_str());
  }
  return fail(ATTN_ERR_KERNEL_FAILED, "kernel '%s' failed: kernel returned Halide error %d", desc.id, result);
}

extern "C" attn_status attn_kernel_set_threads(const attn_kernel *kernel, int threads) {
  if (kernel == nullptr || kernel->desc == nullptr) return fail(ATTN_ERR_INVALID_ARGUMENT, "kernel is null");
  if (threads < 0 || threads > ATTN_MAX_THREADS) {
    return fail(ATTN_ERR_INVALID_ARGUMENT,
                "kernel '%s': threads is %d, must be 0 (one per core) to %d (the most a kernel's thread pool "
                "holds)",
                kernel->desc->id, threads, ATTN_MAX_THREADS);
  }
  // A kernel without its own pool (single-threaded schedules) has nothing to set.
  if (kernel->desc->set_num_threads != nullptr) kernel->desc->set_num_threads(threads);
  return ATTN_OK;
}

extern "C" attn_status attn_kernel_release_memory(const attn_kernel *kernel) {
  if (kernel == nullptr || kernel->desc == nullptr) return fail(ATTN_ERR_INVALID_ARGUMENT, "kernel is null");
  if (kernel->desc->release_memory != nullptr) kernel->desc->release_memory();
  return ATTN_OK;
}

extern "C" const char *attn_kernel_selected_target(const attn_kernel *kernel) {
  if (kernel == nullptr || kernel->desc == nullptr) return "";
  const attn_kernel_desc &desc = *kernel->desc;
  int variant = 0;
  if (attn::detail::select_variant(*kernel, attn::detail::DeviceApi::none, &variant) != ATTN_OK) return "";
  return desc.variant_count > 0 ? desc.variants[variant].target : desc.target;
}

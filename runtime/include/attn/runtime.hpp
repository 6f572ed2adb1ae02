// attn/runtime.hpp: a header-only C++ wrapper over the attnc runtime C ABI (no exceptions).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "attn/half.hpp"
#include "attn/runtime.h"

namespace attn::rt {

// The outcome of a call: a status code and, on failure, the runtime's message.
class Status {
 public:
  Status() = default;
  Status(attn_status code, std::string message) : code_(code), message_(std::move(message)) {}
  // The status of a C call that just returned code, with this thread's message on failure.
  static Status from(attn_status code) {
    return code == ATTN_OK ? Status() : Status(code, attn_last_error());
  }

  bool ok() const { return code_ == ATTN_OK; }
  explicit operator bool() const { return ok(); }
  attn_status code() const { return code_; }
  const char *name() const { return attn_status_name(code_); }
  const std::string &message() const { return message_; }

 private:
  attn_status code_ = ATTN_OK;
  std::string message_;
};

// A value or the status that explains its absence.
template <class T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}
  Result(Status status) : status_(std::move(status)) {}

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Status &status() const { return status_; }
  T &value() & { return *value_; }
  const T &value() const & { return *value_; }
  T &&value() && { return std::move(*value_); }
  T &operator*() & { return *value_; }
  const T &operator*() const & { return *value_; }
  T *operator->() { return &*value_; }
  const T *operator->() const { return &*value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

template <class T>
constexpr attn_dtype dtype_of();
template <>
constexpr attn_dtype dtype_of<float>() {
  return ATTN_F32;
}
template <>
constexpr attn_dtype dtype_of<f16>() {
  return ATTN_F16;
}
template <>
constexpr attn_dtype dtype_of<bf16>() {
  return ATTN_BF16;
}
template <>
constexpr attn_dtype dtype_of<int32_t>() {
  return ATTN_I32;
}
template <>
constexpr attn_dtype dtype_of<uint8_t>() {
  return ATTN_U8;
}
template <>
constexpr attn_dtype dtype_of<int8_t>() {
  return ATTN_I8;
}
template <>
constexpr attn_dtype dtype_of<uint64_t>() {
  return ATTN_U64;
}

// A view of caller-owned data with its own shape and strides (outermost first, in elements;
// empty strides: row-major contiguous).
struct Tensor {
  void *data = nullptr;
  attn_dtype dtype = ATTN_F32;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;

  Tensor() = default;
  // Any data with its dtype named, such as raw 16-bit patterns: Tensor(bits, ATTN_BF16, shape).
  // Inputs may be const: the runtime never writes through a tensor that is not a kernel output.
  Tensor(const void *data_, attn_dtype dtype_, std::vector<int64_t> shape_,
         std::vector<int64_t> strides_ = {})
      : data(const_cast<void *>(data_)),
        dtype(dtype_),
        shape(std::move(shape_)),
        strides(std::move(strides_)) {}
  // float, f16, bf16 (attn/half.hpp), int32_t or uint8_t data, the dtype taken from the type.
  template <class T>
  Tensor(T *data_, std::vector<int64_t> shape_, std::vector<int64_t> strides_ = {})
      : Tensor(const_cast<void *>(static_cast<const void *>(data_)), dtype_of<std::remove_const_t<T>>(),
               std::move(shape_), std::move(strides_)) {}

  int64_t element_count() const {
    int64_t count = 1;
    for (int64_t size : shape) count *= size;
    return count;
  }
  // Valid while this Tensor lives and its vectors are not changed.
  attn_tensor view() const {
    return attn_tensor{data, dtype, static_cast<int32_t>(shape.size()), shape.data(),
                       strides.empty() ? nullptr : strides.data()};
  }
};

// Broadcasting, as attn_arg_info in attn/runtime.h describes it.

// Whether declared dim `dim` of an argument may be given with size 1.
inline bool dim_broadcasts(const attn_arg_info &info, int dim) {
  return dim >= 0 && dim < 32 && ((info.broadcast_dims >> dim) & 1u) != 0;
}

// The fewest dims a caller may give: min_rank, but no fewer than the leading broadcast dims
// allow to leave out; the argument's rank when it does not broadcast.
inline int lowest_rank(const attn_arg_info &info) {
  int leading = 0;
  while (leading < info.rank && dim_broadcasts(info, leading)) ++leading;
  const int declared = info.min_rank > 0 && info.min_rank < info.rank ? info.min_rank : info.rank;
  return declared > info.rank - leading ? declared : info.rank - leading;
}

// Where a caller's tensor of `rank` dims sits: element j is the declared dim of caller dim j
// (outermost first); empty when the argument does not take that rank. Shapes align from the right,
// as NumPy and PyTorch broadcast them: a lower rank leaves out the outermost dims, which must
// broadcast (rank 3 of mask [B, H, Sq, Sk] is [H, Sq, Sk]).
inline std::vector<int> declared_dims(const attn_arg_info &info, int rank) {
  if (rank < lowest_rank(info) || rank > info.rank) return {};
  std::vector<int> declared;
  for (int d = info.rank - rank; d < info.rank; ++d) declared.push_back(d);
  return declared;
}

// A tensor passed by argument name: {"q", q_tensor}.
struct Arg {
  const char *name;
  const Tensor &tensor;
};

// A kernel handle; owned by the application's registry or by a Library that must outlive it.
class Kernel {
 public:
  explicit Kernel(const attn_kernel *handle) : handle_(handle) {}

  // A kernel linked into the application.
  static Result<Kernel> find(const char *id) {
    const attn_kernel *handle = nullptr;
    if (attn_status s = attn_find_kernel(id, &handle); s != ATTN_OK) return Status::from(s);
    return Kernel(handle);
  }
  static std::vector<Kernel> linked() {
    std::vector<Kernel> kernels;
    for (int i = 0; i < attn_kernel_count(); ++i) kernels.emplace_back(attn_kernel_at(i));
    return kernels;
  }

  const attn_kernel *handle() const { return handle_; }
  const char *id() const { return attn_kernel_id(handle_); }
  const char *spec() const { return attn_kernel_spec(handle_); }
  // Every variant's Halide target, comma-separated: the dispatch list (attn_kernel_target).
  const char *target() const { return attn_kernel_target(handle_); }
  // The variant a run would use now, under the CPU, ATTN_MAX_ISA and the device choice; "" when
  // none can run here, with the reason in attn_last_error() (attn_kernel_selected_target).
  const char *selected_target() const { return attn_kernel_selected_target(handle_); }
  std::vector<attn_arg_info> args() const {
    std::vector<attn_arg_info> infos(static_cast<size_t>(attn_kernel_arg_count(handle_)));
    for (size_t i = 0; i < infos.size(); ++i) attn_kernel_arg(handle_, static_cast<int>(i), &infos[i]);
    return infos;
  }
  Status set_threads(int threads) const { return Status::from(attn_kernel_set_threads(handle_, threads)); }
  // Frees the scratch blocks the kernel's cache holds between calls (attn_kernel_release_memory).
  Status release_memory() const { return Status::from(attn_kernel_release_memory(handle_)); }

 private:
  const attn_kernel *handle_;
};

// A shared kernel library, closed when the last owner goes away (move-only).
class Library {
 public:
  static Result<Library> open(const char *path) {
    attn_library *handle = nullptr;
    if (attn_status s = attn_library_open(path, &handle); s != ATTN_OK) return Status::from(s);
    return Library(handle);
  }
  // Without the manifest's SHA-256 check (attn_library_open_unverified).
  static Result<Library> open_unverified(const char *path) {
    attn_library *handle = nullptr;
    if (attn_status s = attn_library_open_unverified(path, &handle); s != ATTN_OK) return Status::from(s);
    return Library(handle);
  }

  Library(Library &&other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Library &operator=(Library &&other) noexcept {
    if (this != &other) {
      attn_library_close(handle_);
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  Library(const Library &) = delete;
  Library &operator=(const Library &) = delete;
  ~Library() { attn_library_close(handle_); }

  Result<Kernel> find(const char *id) const {
    const attn_kernel *kernel = nullptr;
    if (attn_status s = attn_library_find_kernel(handle_, id, &kernel); s != ATTN_OK) {
      return Status::from(s);
    }
    return Kernel(kernel);
  }
  std::vector<Kernel> kernels() const {
    std::vector<Kernel> list;
    for (int i = 0; i < attn_library_kernel_count(handle_); ++i) {
      list.emplace_back(attn_library_kernel_at(handle_, i));
    }
    return list;
  }
  const attn_library *handle() const { return handle_; }

 private:
  explicit Library(attn_library *handle) : handle_(handle) {}
  attn_library *handle_ = nullptr;
};

// Runs kernel on named tensors; on failure the outputs are untouched.
inline Status run(const Kernel &kernel, std::span<const Arg> args) {
  std::vector<attn_arg> c_args;
  c_args.reserve(args.size());
  for (const Arg &arg : args) c_args.push_back(attn_arg{arg.name, arg.tensor.view()});
  return Status::from(attn_run(kernel.handle(), c_args.data(), static_cast<int>(c_args.size())));
}
inline Status run(const Kernel &kernel, std::initializer_list<Arg> args) {
  return run(kernel, std::span<const Arg>(args.begin(), args.size()));
}

}  // namespace attn::rt

// tensor_check.cpp: validates tensors dim by dim and translates them to halide_buffer_t.
#include "tensor_check.h"

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>

#include "arg_dims.h"
#include "derived_sizes.h"
#include "device_context.h"
#include "layout_hint.h"
#include "status_internal.h"
#include "tensor_alias.h"

namespace {

using attn::detail::derived_size;
using attn::detail::DerivedSize;
using attn::detail::dim_broadcasts;
using attn::detail::dim_label;
using attn::detail::fail;
using attn::detail::map_caller_dims;

constexpr int64_t int32_max = INT32_MAX;

std::string arg_list(const attn_kernel_desc &desc) {
  std::string list;
  for (int i = 0; i < desc.arg_count; ++i) {
    if (i > 0) list += ", ";
    list += desc.args[i].name;
    if (desc.args[i].is_optional) list += " (optional)";
  }
  return list;
}

// A runtime size ("B", "Sq", ...) as the first tensor that gave it in full set it.
struct RuntimeSize {
  const char *name;
  int64_t value;
  const char *set_by;
};

struct Sizes {
  std::vector<RuntimeSize> entries;

  const RuntimeSize *find(const char *name) const {
    for (const RuntimeSize &entry : entries) {
      if (std::strcmp(entry.name, name) == 0) return &entry;
    }
    return nullptr;
  }
  void add(const char *name, int64_t value, const char *set_by) { entries.push_back({name, value, set_by}); }
};

// Caller dim j, declared dim d in messages: "dim 1 (Sq)"; "dim 1 (kernel dim 2)" when a lower
// rank moved it and it has no name.
std::string caller_dim_label(const attn_arg_info &info, int j, int d) {
  const char *name = info.dim_names[d];
  if (name != nullptr && name[0] != '\0') return "dim " + std::to_string(j) + " (" + name + ")";
  if (j == d) return "dim " + std::to_string(j);
  return "dim " + std::to_string(j) + " (kernel dim " + std::to_string(d) + ")";
}

// One tensor as the caller gave it, and where its dims sit among the kernel's declared ones.
struct Caller {
  const attn_arg_info &info;
  const attn_tensor &t;
  int declared[ATTN_MAX_RANK] = {};  // declared dim of caller dim j

  std::string label(int j) const { return caller_dim_label(info, j, declared[j]); }
};

// The buffer the kernel gets for one argument, in declared order (outermost first). A broadcast
// dim (given with size 1, or left out) gets stride 0 and, once every tensor is checked, its
// full extent.
struct ArgPlan {
  int64_t extent[ATTN_MAX_RANK] = {};
  int64_t stride[ATTN_MAX_RANK] = {};
  bool broadcast[ATTN_MAX_RANK] = {};
  int caller_dim[ATTN_MAX_RANK] = {};  // -1 where the caller left the dim out
};

const char *runtime_name(const attn_arg_info &info, int dim) {
  const char *name = info.dim_names[dim];
  return info.fixed_shape[dim] == 0 && name != nullptr && name[0] != '\0' ? name : nullptr;
}

attn_status check_names(const attn_kernel_desc &desc, const attn_arg *args, int arg_count,
                        const attn_arg **by_desc_index) {
  for (int i = 0; i < desc.arg_count; ++i) by_desc_index[i] = nullptr;
  for (int a = 0; a < arg_count; ++a) {
    const char *name = args[a].name;
    if (name == nullptr) {
      return fail(ATTN_ERR_UNKNOWN_TENSOR, "argument %d has a null name (kernel '%s' takes %s)", a, desc.id,
                  arg_list(desc).c_str());
    }
    int index = -1;
    for (int i = 0; i < desc.arg_count && index < 0; ++i) {
      if (std::strcmp(desc.args[i].name, name) == 0) index = i;
    }
    if (index < 0) {
      return fail(ATTN_ERR_UNKNOWN_TENSOR, "kernel '%s' takes no tensor '%s' (it takes %s)", desc.id, name,
                  arg_list(desc).c_str());
    }
    if (by_desc_index[index] != nullptr) {
      return fail(ATTN_ERR_UNKNOWN_TENSOR, "tensor '%s' is given twice (arguments %d and %d)", name,
                  static_cast<int>(by_desc_index[index] - args), a);
    }
    by_desc_index[index] = &args[a];
  }
  for (int i = 0; i < desc.arg_count; ++i) {
    if (by_desc_index[i] == nullptr && !desc.args[i].is_optional) {
      return fail(ATTN_ERR_MISSING_TENSOR, "tensor '%s' is missing (kernel '%s' takes %s)", desc.args[i].name,
                  desc.id, arg_list(desc).c_str());
    }
  }
  return ATTN_OK;
}

// A rank-0 argument (a scalar such as the run-time scale): given with rank 0, or as one element
// of rank 1; its shape and strides are not read at rank 0.
attn_status check_scalar(const attn_arg_info &info, const attn_tensor &t) {
  if (t.rank == 0) return ATTN_OK;
  if (t.rank != 1) {
    return fail(ATTN_ERR_RANK,
                "tensor '%s' has rank %d, kernel expects a scalar: rank 0, or rank 1 of shape [1]", info.name,
                t.rank);
  }
  if (t.shape == nullptr) return fail(ATTN_ERR_RANK, "tensor '%s' has a null shape", info.name);
  if (t.shape[0] != 1) {
    return fail(ATTN_ERR_SHAPE, "tensor '%s': dim 0 is %" PRId64 ", kernel expects 1 (a scalar)", info.name,
                t.shape[0]);
  }
  return ATTN_OK;
}

attn_status check_rank(Caller *caller) {
  const attn_arg_info &info = caller->info;
  const attn_tensor &t = caller->t;
  if (t.rank < 1 || t.rank > ATTN_MAX_RANK) {
    return fail(ATTN_ERR_RANK, "tensor '%s' has rank %d, valid ranks are 1..%d (kernel expects %d)",
                info.name, t.rank, ATTN_MAX_RANK, info.rank);
  }
  if (t.shape == nullptr) return fail(ATTN_ERR_RANK, "tensor '%s' has a null shape", info.name);
  return map_caller_dims(info, t.rank, caller->declared);
}

// Checks each given size against the kernel's fixed size or the runtime size earlier tensors
// set, and marks in plan the dims that broadcast. Dims that may broadcast are compared with
// runtime sizes later (check_broadcastable_sizes), once the tensors that must give them in full
// have set them.
attn_status check_shape(const Caller &caller, Sizes *sizes, ArgPlan *plan) {
  const attn_arg_info &info = caller.info;
  const attn_tensor &t = caller.t;
  const char *name = info.name;
  for (int d = 0; d < info.rank; ++d) {  // until the caller gives the dim
    plan->broadcast[d] = true;
    plan->caller_dim[d] = -1;
  }
  int64_t elements = 1;
  for (int j = 0; j < t.rank; ++j) {
    const int d = caller.declared[j];
    const int64_t size = t.shape[j];
    const std::string dim = caller.label(j);
    if (size < 1) {
      return fail(ATTN_ERR_SHAPE, "tensor '%s': %s is %" PRId64 ", sizes must be at least 1", name,
                  dim.c_str(), size);
    }
    if (size > int32_max) {
      return fail(ATTN_ERR_SHAPE, "tensor '%s': %s is %" PRId64 ", sizes must be at most %" PRId64, name,
                  dim.c_str(), size, int32_max);
    }
    const bool broadcasts = dim_broadcasts(info, d);
    plan->broadcast[d] = broadcasts && size == 1;
    plan->extent[d] = size;
    plan->caller_dim[d] = j;
    if (!plan->broadcast[d] && info.fixed_shape[d] > 0 && size != info.fixed_shape[d]) {
      return fail(ATTN_ERR_SHAPE, "tensor '%s': %s is %" PRId64 ", kernel expects %" PRId64 "%s%s", name,
                  dim.c_str(), size, info.fixed_shape[d], broadcasts ? " or 1 (broadcast)" : "",
                  attn::detail::head_major_hint(info, t).c_str());
    }
    const char *runtime = runtime_name(info, d);
    if (!broadcasts && runtime != nullptr) {
      if (const RuntimeSize *seen = sizes->find(runtime)) {
        if (seen->value != size) {
          return fail(ATTN_ERR_SHAPE, "tensor '%s': %s is %" PRId64 ", but tensor '%s' set %s to %" PRId64,
                      name, dim.c_str(), size, seen->set_by, runtime, seen->value);
        }
      } else {
        sizes->add(runtime, size, name);
      }
    }
    // Both factors are at most int32_max, so the product cannot overflow before the check.
    elements *= size;
    if (elements > int32_max) {
      return fail(ATTN_ERR_SHAPE,
                  "tensor '%s' has more than %" PRId64
                  " elements (counting up to %s), kernels "
                  "address at most %" PRId64,
                  name, int32_max, dim.c_str(), int32_max);
    }
  }
  return ATTN_OK;
}

// Fills strides (the caller's order, outermost first) with the caller's strides, or row-major
// ones when null.
attn_status check_strides(const Caller &caller, int64_t *strides) {
  const attn_tensor &t = caller.t;
  const char *name = caller.info.name;
  if (t.strides == nullptr) {
    int64_t stride = 1;
    for (int j = t.rank - 1; j >= 0; --j) {
      strides[j] = stride;
      stride *= t.shape[j];
    }
    return ATTN_OK;
  }
  for (int j = 0; j < t.rank; ++j) strides[j] = t.strides[j];
  const int inner = t.rank - 1;
  if (strides[inner] != 1) {
    return fail(ATTN_ERR_STRIDE,
                "tensor '%s': innermost %s has stride %" PRId64 ", kernel expects 1 (contiguous)", name,
                caller.label(inner).c_str(), strides[inner]);
  }
  int64_t span = 0;
  for (int j = 0; j < t.rank; ++j) {
    const std::string dim = caller.label(j);
    if (strides[j] < 0) {
      return fail(ATTN_ERR_STRIDE, "tensor '%s': %s has stride %" PRId64 ", strides must be at least 0", name,
                  dim.c_str(), strides[j]);
    }
    // Halide addresses buffers with 32-bit offsets: every extent * stride must fit.
    if (strides[j] > int32_max || t.shape[j] * strides[j] > int32_max) {
      return fail(ATTN_ERR_STRIDE,
                  "tensor '%s': %s has size %" PRId64 " and stride %" PRId64
                  ", their product must be at most %" PRId64,
                  name, dim.c_str(), t.shape[j], strides[j], int32_max);
    }
    span += (t.shape[j] - 1) * strides[j];
  }
  if (span >= int32_max) {
    return fail(ATTN_ERR_STRIDE, "tensor '%s' spans %" PRId64 " elements, kernels address at most %" PRId64,
                name, span + 1, int32_max);
  }
  return ATTN_OK;
}

// A dim that may broadcast but was given in full must match the size the other tensors set; it
// sets the size itself only where no tensor that must give the dim names it.
attn_status check_broadcastable_sizes(const attn_arg_info &info, const ArgPlan &plan, Sizes *sizes) {
  for (int d = 0; d < info.rank; ++d) {
    const char *runtime = runtime_name(info, d);
    if (!dim_broadcasts(info, d) || plan.broadcast[d] || runtime == nullptr) continue;
    const int64_t size = plan.extent[d];
    if (const RuntimeSize *seen = sizes->find(runtime)) {
      if (seen->value != size) {
        return fail(ATTN_ERR_SHAPE,
                    "tensor '%s': %s is %" PRId64 ", but tensor '%s' set %s to %" PRId64
                    "; kernel expects %" PRId64 " or 1 (broadcast)",
                    info.name, caller_dim_label(info, plan.caller_dim[d], d).c_str(), size, seen->set_by,
                    runtime, seen->value, seen->value);
      }
    } else {
      sizes->add(runtime, size, info.name);
    }
  }
  return ATTN_OK;
}

// Gives broadcast dims the size the other tensors set (the fixed size, else the runtime size,
// else 1 when only broadcast tensors name it). Halide checks that the product of a buffer's
// extents fits in int32, so a broadcast tensor is checked at its full size here.
attn_status resolve_broadcast(const attn_arg_info &info, const Sizes &sizes, ArgPlan *plan) {
  bool any = false;
  for (int d = 0; d < info.rank; ++d) {
    if (!plan->broadcast[d]) continue;
    any = true;
    const char *runtime = runtime_name(info, d);
    const RuntimeSize *seen = runtime != nullptr ? sizes.find(runtime) : nullptr;
    plan->extent[d] = info.fixed_shape[d] > 0 ? info.fixed_shape[d] : seen != nullptr ? seen->value : 1;
    plan->stride[d] = 0;
  }
  if (!any) return ATTN_OK;
  int64_t elements = 1;
  for (int d = 0; d < info.rank; ++d) {
    elements *= plan->extent[d];
    if (elements > int32_max) {
      return fail(ATTN_ERR_SHAPE,
                  "tensor '%s' broadcasts to more than %" PRId64
                  " elements (counting up to %s), kernels "
                  "address at most %" PRId64,
                  info.name, int32_max, dim_label(info, d).c_str(), int32_max);
    }
  }
  return ATTN_OK;
}

// An output must give every element its own address, or two results would race for one.
attn_status check_no_overlap(const attn_arg_info &info, const attn_tensor &t, const int64_t *strides) {
  int order[ATTN_MAX_RANK];
  int count = 0;
  for (int d = 0; d < t.rank; ++d) {
    if (t.shape[d] > 1) order[count++] = d;  // a size-1 dim never overlaps anything
  }
  std::stable_sort(order, order + count,
                   [&](int a, int b) { return strides[a] != strides[b] ? strides[a] < strides[b] : a > b; });
  if (count > 0 && strides[order[0]] == 0) {
    return fail(ATTN_ERR_STRIDE,
                "output tensor '%s' overlaps itself: %s has size %" PRId64
                " and stride 0; outputs need a distinct element for every index",
                info.name, dim_label(info, order[0]).c_str(), t.shape[order[0]]);
  }
  for (int i = 1; i < count; ++i) {
    const int inner = order[i - 1], outer = order[i];
    const int64_t needed = strides[inner] * t.shape[inner];
    if (strides[outer] < needed) {
      return fail(ATTN_ERR_STRIDE,
                  "output tensor '%s' overlaps itself: %s has stride %" PRId64 ", but %s has size %" PRId64
                  " and stride %" PRId64 ", so the next stride must be at least %" PRId64,
                  info.name, dim_label(info, outer).c_str(), strides[outer], dim_label(info, inner).c_str(),
                  t.shape[inner], strides[inner], needed);
    }
  }
  return ATTN_OK;
}

// A size named after another ("ceil(Sq/128)", a block mask's query blocks) must be what that
// one gives, once every tensor has set its sizes.
attn_status check_derived_sizes(const Sizes &sizes) {
  for (const RuntimeSize &entry : sizes.entries) {
    const std::optional<DerivedSize> rule = derived_size(entry.name);
    if (!rule) continue;
    const RuntimeSize *base = sizes.find(rule->base.c_str());
    if (base == nullptr || entry.value == rule->of(base->value)) continue;
    return fail(
        ATTN_ERR_SHAPE,
        "tensor '%s': %s is %" PRId64 ", but tensor '%s' set %s to %" PRId64 ", so kernel expects %" PRId64,
        entry.set_by, entry.name, entry.value, base->set_by, base->name, base->value, rule->of(base->value));
  }
  return ATTN_OK;
}

halide_type_t halide_type_of(attn_dtype dtype) {
  halide_type_t type;
  type.lanes = 1;
  switch (dtype) {
    case ATTN_F32:
      type.code = halide_type_float;
      type.bits = 32;
      break;
    case ATTN_F16:
      type.code = halide_type_float;
      type.bits = 16;
      break;
    case ATTN_BF16:
      type.code = halide_type_bfloat;
      type.bits = 16;
      break;
    case ATTN_I32:
      type.code = halide_type_int;
      type.bits = 32;
      break;
    case ATTN_U8:
      type.code = halide_type_uint;
      type.bits = 8;
      break;
    case ATTN_I8:
      type.code = halide_type_int;
      type.bits = 8;
      break;
    case ATTN_U64:
      type.code = halide_type_uint;
      type.bits = 64;
      break;
  }
  return type;
}

// Plan order is outermost first; Halide's dim[0] is the innermost.
void build_buffer(const attn_arg_info &info, const attn_tensor &t, const ArgPlan &plan,
                  halide_dimension_t *dims, halide_buffer_t *buffer) {
  *buffer = halide_buffer_t();
  buffer->type = halide_type_of(t.dtype);
  buffer->dimensions = info.rank;  // 0 for a scalar, whatever rank the caller gave it
  buffer->dim = dims;
  if (t.memory != ATTN_HOST) {
    // The entry wraps the handle for its variant's device API (attn/kernel_abi.h).
    buffer->device = reinterpret_cast<uint64_t>(t.data);
  } else {
    buffer->host = static_cast<uint8_t *>(t.data);
    // The data is on the host and newer than any device copy: a GPU variant copies inputs over.
    if (!info.is_output || info.is_output == ATTN_ARG_INOUT) buffer->set_host_dirty(true);
  }
  for (int h = 0; h < info.rank; ++h) {
    const int d = info.rank - 1 - h;
    dims[h] =
        halide_dimension_t(0, static_cast<int32_t>(plan.extent[d]), static_cast<int32_t>(plan.stride[d]));
  }
}

// A tensor's memory: a known kind, and for device tensors the API of every earlier device tensor
// (*api, set by the first) and an argument the kernel reads on the device.
attn_status check_memory(const attn_kernel_desc &desc, const attn_arg_info &info, const attn_tensor &t,
                         const std::vector<const attn_arg *> &given, int index,
                         attn::detail::DeviceApi *api) {
  using attn::detail::DeviceApi;
  using attn::detail::memory_api;
  using attn::detail::memory_text;
  // Read as an int: a C caller may store any value (an enum outside its range is undefined in C++).
  std::underlying_type_t<attn_memory> memory;
  std::memcpy(&memory, &t.memory, sizeof(memory));
  if (memory != ATTN_HOST && memory != ATTN_CUDA_DEVICE && memory != ATTN_OPENCL_BUFFER) {
    return fail(
        ATTN_ERR_DEVICE_TENSOR,
        "tensor '%s' has memory %d, not ATTN_HOST (0), ATTN_CUDA_DEVICE (1) or ATTN_OPENCL_BUFFER (2)",
        info.name, memory);
  }
  if (memory == ATTN_HOST) return ATTN_OK;
  if (info.rank == 0) {
    return fail(ATTN_ERR_DEVICE_TENSOR,
                "tensor '%s' is %s, but scalars are read on the host: pass a host tensor", info.name,
                memory_text(t.memory));
  }
  // Index tensors (key_lengths, segment ids, ...) and the mask bound the key loops, and their
  // values are checked, in the pipelines' host code: the runtime reads them back (run.cpp), so only
  // inputs can be device tensors.
  if ((info.dtype == ATTN_I32 || info.dtype == ATTN_U8) && info.is_output) {
    return fail(ATTN_ERR_DEVICE_TENSOR, "tensor '%s' is %s, but kernels write %s outputs on the host",
                info.name, memory_text(t.memory), info.dtype == ATTN_I32 ? "index" : "mask");
  }
  // Per-sequence kernels read these on the host to dispatch (emit_sequence.cpp).
  for (int a = 0; a < desc.arg_count; ++a) {
    const char *name = desc.args[a].name;
    if (std::strcmp(name, "cache_seqlens") == 0 || std::strcmp(name, "cu_seqlens_q") == 0) {
      return fail(ATTN_ERR_DEVICE_TENSOR,
                  "tensor '%s' is %s, but kernel '%s' reads '%s' on the host to run each sequence: "
                  "it takes host tensors only",
                  info.name, memory_text(t.memory), desc.id, name);
    }
  }
  const DeviceApi mine = memory_api(t.memory);
  if (*api != DeviceApi::none && *api != mine) {
    const char *first = "";
    for (int a = 0; a < index; ++a)
      if (given[a] != nullptr && given[a]->tensor.memory != ATTN_HOST) {
        first = desc.args[a].name;
        break;
      }
    return fail(ATTN_ERR_DEVICE_TENSOR,
                "tensor '%s' is %s, but tensor '%s' is %s: one call takes one GPU API", info.name,
                memory_text(t.memory), first,
                memory_text(*api == DeviceApi::cuda ? ATTN_CUDA_DEVICE : ATTN_OPENCL_BUFFER));
  }
  *api = mine;
  return ATTN_OK;
}

}  // namespace

namespace attn::detail {

attn_status check_call(const attn_kernel_desc &desc, const attn_arg *args, int arg_count, CallBuffers *out) {
  out->device_api = DeviceApi::none;
  out->device_args.clear();
  std::vector<const attn_arg *> given(static_cast<size_t>(desc.arg_count));
  if (attn_status s = check_names(desc, args, arg_count, given.data()); s != ATTN_OK) return s;

  std::vector<ArgPlan> plans(static_cast<size_t>(desc.arg_count));
  Sizes sizes;
  for (int i = 0; i < desc.arg_count; ++i) {
    const attn_arg_info &info = desc.args[i];
    if (given[i] == nullptr) continue;  // an optional input left out: its default, below
    const attn_tensor &t = given[i]->tensor;
    if (t.data == nullptr) return fail(ATTN_ERR_NULL_DATA, "tensor '%s' has a null data pointer", info.name);
    if (attn_status s = check_memory(desc, info, t, given, i, &out->device_api); s != ATTN_OK) return s;
    if (dtype_value(t.dtype) != dtype_value(info.dtype)) {
      return fail(ATTN_ERR_DTYPE, "tensor '%s' has dtype %s, kernel expects %s", info.name,
                  dtype_name(dtype_value(t.dtype)), dtype_name(info.dtype));
    }
    if (info.rank == 0) {
      if (attn_status s = check_scalar(info, t); s != ATTN_OK) return s;
      continue;
    }
    Caller caller{info, t};
    if (attn_status s = check_rank(&caller); s != ATTN_OK) return s;
    ArgPlan &plan = plans[static_cast<size_t>(i)];
    if (attn_status s = check_shape(caller, &sizes, &plan); s != ATTN_OK) return s;
    int64_t strides[ATTN_MAX_RANK];
    if (attn_status s = check_strides(caller, strides); s != ATTN_OK) return s;
    if (info.is_output) {
      // Outputs never broadcast (desc_is_well_formed), so caller and declared dims coincide.
      if (attn_status s = check_no_overlap(info, t, strides); s != ATTN_OK) return s;
    }
    for (int j = 0; j < t.rank; ++j) plan.stride[caller.declared[j]] = strides[j];
  }
  // Dims that may broadcast take sizes that tensors after them may set, so they come last.
  for (int i = 0; i < desc.arg_count; ++i) {
    if (given[i] == nullptr || desc.args[i].rank == 0) continue;
    const ArgPlan &plan = plans[static_cast<size_t>(i)];
    if (attn_status s = check_broadcastable_sizes(desc.args[i], plan, &sizes); s != ATTN_OK) return s;
  }
  for (int i = 0; i < desc.arg_count; ++i) {
    if (given[i] == nullptr || desc.args[i].rank == 0) continue;
    if (attn_status s = resolve_broadcast(desc.args[i], sizes, &plans[static_cast<size_t>(i)]);
        s != ATTN_OK) {
      return s;
    }
  }

  if (attn_status s = check_derived_sizes(sizes); s != ATTN_OK) return s;

  // Last: a tensor's span means something only once its shape and strides passed.
  if (attn_status s = check_no_aliasing(desc, given); s != ATTN_OK) return s;

  out->dims.assign(static_cast<size_t>(desc.arg_count) * ATTN_MAX_RANK, halide_dimension_t());
  out->buffers.assign(static_cast<size_t>(desc.arg_count), halide_buffer_t());
  out->pointers.assign(static_cast<size_t>(desc.arg_count), nullptr);
  out->defaults.assign(static_cast<size_t>(desc.arg_count), 0.0f);  // not resized below: stable
  for (int i = 0; i < desc.arg_count; ++i) {
    attn_tensor left_out{};
    if (given[i] == nullptr) {
      out->defaults[i] = static_cast<float>(desc.args[i].default_value);
      left_out = attn_tensor{&out->defaults[i], ATTN_F32, 0, nullptr, nullptr};
    }
    build_buffer(desc.args[i], given[i] != nullptr ? given[i]->tensor : left_out,
                 plans[static_cast<size_t>(i)], &out->dims[static_cast<size_t>(i) * ATTN_MAX_RANK],
                 &out->buffers[i]);
    out->pointers[i] = &out->buffers[i];
    if (given[i] != nullptr && given[i]->tensor.memory != ATTN_HOST) out->device_args.push_back(i);
  }
  return ATTN_OK;
}

}  // namespace attn::detail

// registry.cpp: kernels linked into the application, registered by their entries at load time.
#include <memory>
#include <mutex>
#include <string_view>

#include "isa_limit.h"
#include "kernel_internal.h"
#include "status_internal.h"

namespace {

struct Refused {
  std::string id;
  std::string message;
};

struct Registry {
  std::mutex mutex;
  std::vector<std::unique_ptr<attn_kernel>> kernels;  // registration order; handles stay put
  std::vector<Refused> refused;
};

// Entries register from static constructors, possibly before this file's statics exist, and
// may be looked up from destructors; a leaked function-local instance survives both orders.
Registry &registry() {
  static Registry *instance = new Registry;
  return *instance;
}

bool valid_dtype(const attn_dtype &dtype) {
  const int value = attn::detail::dtype_value(dtype);
  return value >= ATTN_F32 && value <= ATTN_I8;
}

const attn_kernel_desc *desc_of(const attn_kernel *kernel) {
  return kernel == nullptr ? nullptr : kernel->desc;
}

}  // namespace

namespace attn::detail {

bool desc_is_well_formed(const attn_kernel_desc &desc, std::string *why) {
  auto problem = [&](std::string text) {
    *why = std::move(text);
    return false;
  };
  if (desc.id == nullptr || desc.id[0] == '\0') return problem("it has no id");
  if (desc.spec == nullptr) return problem("it has no spec text");
  if (desc.target == nullptr) return problem("it has no target");
  if (desc.run == nullptr) return problem("it has no run entry");
  if (desc.variant_count < 0 ||
      (desc.variant_count > 0 && (desc.variants == nullptr || desc.run_variant == nullptr))) {
    return problem("its variant list is invalid (count " + std::to_string(desc.variant_count) + ")");
  }
  for (int v = 0; v < desc.variant_count; ++v) {
    if (desc.variants[v].target == nullptr || desc.variants[v].required_cpu_features == nullptr) {
      return problem("variant " + std::to_string(v) + " has no target or feature list");
    }
  }
  if (desc.arg_count < 0 || (desc.arg_count > 0 && desc.args == nullptr)) {
    return problem("its argument list is invalid (count " + std::to_string(desc.arg_count) + ")");
  }
  for (int i = 0; i < desc.arg_count; ++i) {
    const attn_arg_info &arg = desc.args[i];
    const std::string which = "argument " + std::to_string(i);
    if (arg.name == nullptr || arg.name[0] == '\0') return problem(which + " has no name");
    if (arg.rank < 0 || arg.rank > ATTN_MAX_RANK) {
      return problem(which + " ('" + arg.name + "') has rank " + std::to_string(arg.rank) +
                     ", valid ranks are 0.." + std::to_string(ATTN_MAX_RANK));
    }
    // The runtime hands a left-out optional input one f32 element (its default): only scalars.
    if (arg.is_optional != 0 &&
        (arg.rank != 0 || arg.is_output || attn::detail::dtype_value(arg.dtype) != ATTN_F32)) {
      return problem(which + " ('" + arg.name + "') is optional but not a rank-0 f32 input");
    }
    if (arg.rank == 0 && arg.is_output) {
      return problem(which + " ('" + arg.name + "') is a rank-0 output; outputs have rank 1 or more");
    }
    if (!valid_dtype(arg.dtype)) {
      return problem(which + " ('" + arg.name + "') has an unknown dtype " +
                     std::to_string(attn::detail::dtype_value(arg.dtype)));
    }
    for (int d = 0; d < arg.rank; ++d) {
      if (arg.fixed_shape[d] < 0) {
        return problem(which + " ('" + arg.name + "') has a negative size in dim " + std::to_string(d));
      }
    }
    if (arg.rank < 32 && (arg.broadcast_dims >> arg.rank) != 0) {
      return problem(which + " ('" + arg.name + "') has broadcast bits beyond its rank " +
                     std::to_string(arg.rank));
    }
    if (arg.min_rank < 0 || arg.min_rank > arg.rank) {
      return problem(which + " ('" + arg.name + "') has min_rank " + std::to_string(arg.min_rank) +
                     ", valid are 0 (exactly rank) to " + std::to_string(arg.rank));
    }
    // The runtime allocates nothing: an output must be given whole, one element per index.
    if (arg.is_output && (arg.broadcast_dims != 0 || (arg.min_rank != 0 && arg.min_rank != arg.rank))) {
      return problem(which + " ('" + arg.name + "') is an output that broadcasts; outputs never broadcast");
    }
    for (int j = 0; j < i; ++j) {
      if (std::string_view(desc.args[j].name) == arg.name) {
        return problem(std::string("argument name '") + arg.name + "' appears twice");
      }
    }
  }
  return true;
}

attn_kernel make_kernel_handle(const attn_kernel_desc *desc) {
  return attn_kernel{desc, cpu_variant_bits(*desc)};
}

attn_status unknown_kernel(const char *id, const std::vector<const attn_kernel *> &known, const char *where) {
  if (known.empty()) return fail(ATTN_ERR_UNKNOWN_KERNEL, "no kernel '%s': no kernels are %s", id, where);
  constexpr size_t listed_at_most = 10;
  std::string list;
  for (size_t i = 0; i < known.size() && i < listed_at_most; ++i) {
    if (i > 0) list += ", ";
    list += known[i]->desc->id;
  }
  if (known.size() > listed_at_most) {
    list += ", and " + std::to_string(known.size() - listed_at_most) + " more";
  }
  return fail(ATTN_ERR_UNKNOWN_KERNEL, "no kernel '%s' %s (known: %s)", id, where, list.c_str());
}

}  // namespace attn::detail

extern "C" void attn_register_kernel(const attn_kernel_desc *desc) {
  // Only abi_version and id may be read from a table of another ABI version.
  if (desc == nullptr || desc->id == nullptr) return;
  const char *id = desc->id;
  Registry &r = registry();
  std::lock_guard lock(r.mutex);
  for (const auto &kernel : r.kernels) {
    // The same entry registered twice (e.g. linked into two objects) is harmless; a second,
    // different table for an id already taken loses: the first registration wins.
    if (kernel->desc == desc || std::string_view(kernel->desc->id) == id) return;
  }
  if (desc->abi_version != ATTN_ABI_VERSION) {
    r.refused.push_back({id, "kernel '" + std::string(id) + "' was built for attnc abi version " +
                                 std::to_string(desc->abi_version) + ", this runtime supports " +
                                 std::to_string(ATTN_ABI_VERSION) + "; regenerate it"});
    return;
  }
  std::string why;
  if (!attn::detail::desc_is_well_formed(*desc, &why)) {
    r.refused.push_back({id, "kernel '" + std::string(id) + "' was refused: its table is malformed: " + why});
    return;
  }
  r.kernels.push_back(std::make_unique<attn_kernel>(attn::detail::make_kernel_handle(desc)));
}

extern "C" attn_status attn_find_kernel(const char *id, const attn_kernel **out) {
  if (out == nullptr) return attn::detail::fail(ATTN_ERR_INVALID_ARGUMENT, "out is null");
  *out = nullptr;
  if (id == nullptr) return attn::detail::fail(ATTN_ERR_INVALID_ARGUMENT, "kernel id is null");
  Registry &r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<const attn_kernel *> known;
  for (const auto &kernel : r.kernels) {
    if (std::string_view(kernel->desc->id) == id) {
      *out = kernel.get();
      return ATTN_OK;
    }
    known.push_back(kernel.get());
  }
  for (const Refused &refused : r.refused) {
    if (refused.id == id) return attn::detail::fail(ATTN_ERR_ABI_MISMATCH, "%s", refused.message.c_str());
  }
  return attn::detail::unknown_kernel(id, known, "linked into this application");
}

extern "C" int attn_kernel_count(void) {
  Registry &r = registry();
  std::lock_guard lock(r.mutex);
  return static_cast<int>(r.kernels.size());
}

extern "C" const attn_kernel *attn_kernel_at(int index) {
  Registry &r = registry();
  std::lock_guard lock(r.mutex);
  if (index < 0 || static_cast<size_t>(index) >= r.kernels.size()) return nullptr;
  return r.kernels[static_cast<size_t>(index)].get();
}

extern "C" const char *attn_kernel_id(const attn_kernel *kernel) {
  const attn_kernel_desc *desc = desc_of(kernel);
  return desc == nullptr ? "" : desc->id;
}

extern "C" const char *attn_kernel_spec(const attn_kernel *kernel) {
  const attn_kernel_desc *desc = desc_of(kernel);
  return desc == nullptr ? "" : desc->spec;
}

extern "C" const char *attn_kernel_target(const attn_kernel *kernel) {
  const attn_kernel_desc *desc = desc_of(kernel);
  return desc == nullptr ? "" : desc->target;
}

extern "C" int attn_kernel_arg_count(const attn_kernel *kernel) {
  const attn_kernel_desc *desc = desc_of(kernel);
  return desc == nullptr ? 0 : desc->arg_count;
}

extern "C" attn_status attn_kernel_arg(const attn_kernel *kernel, int index, attn_arg_info *out) {
  const attn_kernel_desc *desc = desc_of(kernel);
  if (desc == nullptr) return attn::detail::fail(ATTN_ERR_INVALID_ARGUMENT, "kernel is null");
  if (out == nullptr) return attn::detail::fail(ATTN_ERR_INVALID_ARGUMENT, "out is null");
  if (index < 0 || index >= desc->arg_count) {
    return attn::detail::fail(ATTN_ERR_INVALID_ARGUMENT,
                              "kernel '%s': argument index %d is out of range, valid are 0..%d", desc->id,
                              index, desc->arg_count - 1);
  }
  *out = desc->args[index];
  return ATTN_OK;
}

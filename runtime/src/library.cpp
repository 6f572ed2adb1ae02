// library.cpp: opens a shared kernel library and refuses it unless ABI, CPU and manifest match.
#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>

#include "cpu_features.h"
#include "json_reader.h"
#include "kernel_internal.h"
#include "status_internal.h"

using attn::detail::fail;
namespace json = attn::detail::json;

struct attn_library {
  void *handle = nullptr;
  std::string path;
  std::vector<attn_kernel> kernels;  // filled once by open; handles point into it

  ~attn_library() {
    if (handle != nullptr) dlclose(handle);
  }
};

namespace {

// "dir/libk.so" -> "dir/libk.json": the manifest attnc gen --shared writes beside the library.
std::string manifest_path(const std::string &library_path) {
  std::filesystem::path path(library_path);
  std::string name = path.filename().string();
  for (const std::string_view suffix : {".so", ".dylib", ".dll"}) {
    if (name.size() > suffix.size() && name.ends_with(suffix)) {
      name.resize(name.size() - suffix.size());
      return (path.parent_path() / (name + ".json")).string();
    }
  }
  return library_path + ".json";
}

const attn_kernel *find_in(const attn_library &library, std::string_view id) {
  for (const attn_kernel &kernel : library.kernels) {
    if (id == kernel.desc->id) return &kernel;
  }
  return nullptr;
}

std::vector<const attn_kernel *> handles(const attn_library &library) {
  std::vector<const attn_kernel *> list;
  for (const attn_kernel &kernel : library.kernels) list.push_back(&kernel);
  return list;
}

std::string quoted_ids(const attn_library &library) {
  std::string list;
  for (const attn_kernel &kernel : library.kernels) {
    if (!list.empty()) list += ", ";
    list += std::string("'") + kernel.desc->id + "'";
  }
  return list.empty() ? "none" : list;
}

// Reads the table the library exports and checks every kernel's ABI and shape.
attn_status read_table(attn_library *library) {
  const char *path = library->path.c_str();
  dlerror();
  void *symbol = dlsym(library->handle, ATTN_LIBRARY_TABLE_SYMBOL);
  if (symbol == nullptr) {
    return fail(ATTN_ERR_LOAD, "library '%s' is not an attnc kernel library: it has no symbol '%s'", path,
                ATTN_LIBRARY_TABLE_SYMBOL);
  }
  int count = 0, abi_version = 0;
  const attn_kernel_desc *const *table =
      reinterpret_cast<attn_library_table_fn>(symbol)(&count, &abi_version);
  if (abi_version != ATTN_ABI_VERSION) {
    return fail(ATTN_ERR_ABI_MISMATCH,
                "library '%s' was built for attnc abi version %d, this runtime supports %d; "
                "regenerate it with a matching attnc",
                path, abi_version, ATTN_ABI_VERSION);
  }
  if (count < 0 || (count > 0 && table == nullptr)) {
    return fail(ATTN_ERR_LOAD, "library '%s' has an invalid kernel table (%d kernels)", path, count);
  }
  for (int i = 0; i < count; ++i) {
    const attn_kernel_desc *desc = table[i];
    if (desc == nullptr) return fail(ATTN_ERR_LOAD, "library '%s': kernel %d of %d is null", path, i, count);
    const char *id = desc->id != nullptr ? desc->id : "?";
    if (desc->abi_version != ATTN_ABI_VERSION) {
      return fail(ATTN_ERR_ABI_MISMATCH,
                  "library '%s': kernel '%s' was built for attnc abi version %d, this runtime "
                  "supports %d",
                  path, id, desc->abi_version, ATTN_ABI_VERSION);
    }
    std::string why;
    if (!attn::detail::desc_is_well_formed(*desc, &why)) {
      return fail(ATTN_ERR_LOAD, "library '%s': kernel %d ('%s') is malformed: %s", path, i, id, why.c_str());
    }
    if (find_in(*library, desc->id) != nullptr) {
      return fail(ATTN_ERR_LOAD, "library '%s' holds two kernels with id '%s'", path, desc->id);
    }
    library->kernels.push_back(attn::detail::make_kernel_handle(desc));
  }
  return ATTN_OK;
}

attn_status check_cpu(const attn_library &library) {
  for (const attn_kernel &kernel : library.kernels) {
    std::string missing;
    if (!attn::detail::cpu_supports_all(kernel.desc->required_cpu_features, &missing)) {
      return fail(ATTN_ERR_UNSUPPORTED_CPU,
                  "library '%s': kernel '%s' needs cpu features this machine lacks: %s "
                  "(it needs: %s)",
                  library.path.c_str(), kernel.desc->id, missing.c_str(), kernel.desc->required_cpu_features);
    }
  }
  return ATTN_OK;
}

// One manifest argument entry against the table's: only the fields the manifest gives.
bool arg_matches(const json::Value &entry, const attn_arg_info &info, std::string *why) {
  if (const json::Value *name = entry.member("name"); name != nullptr && name->string != info.name) {
    *why = "is named '" + name->string + "' in the manifest";
    return false;
  }
  if (const json::Value *dtype = entry.member("dtype");
      dtype != nullptr && dtype->string != attn::detail::dtype_name(info.dtype)) {
    *why = "has dtype '" + dtype->string + "' in the manifest, " + attn::detail::dtype_name(info.dtype) +
           " in the library";
    return false;
  }
  if (const json::Value *output = entry.member("output"); output != nullptr &&
                                                          output->kind == json::Value::Kind::boolean &&
                                                          output->boolean != (info.is_output != 0)) {
    *why = std::string("is ") + (output->boolean ? "an output" : "an input") +
           " in the manifest but not in the library";
    return false;
  }
  if (const json::Value *shape = entry.member("shape"); shape != nullptr) {
    if (static_cast<int>(shape->items.size()) != info.rank) {
      *why = "has rank " + std::to_string(shape->items.size()) + " in the manifest, " +
             std::to_string(info.rank) + " in the library";
      return false;
    }
    for (int d = 0; d < info.rank; ++d) {
      const json::Value &dim = shape->items[static_cast<size_t>(d)];
      const bool same =
          dim.kind == json::Value::Kind::number
              ? static_cast<int64_t>(dim.number) == info.fixed_shape[d]
              : info.fixed_shape[d] == 0 && info.dim_names[d] != nullptr && dim.string == info.dim_names[d];
      if (!same) {
        *why = "differs in dim " + std::to_string(d) + " of its shape";
        return false;
      }
    }
  }
  // "broadcast": [0, 1] lists the dims whose bits are set in broadcast_dims.
  if (const json::Value *broadcast = entry.member("broadcast"); broadcast != nullptr) {
    uint32_t bits = 0;
    for (const json::Value &dim : broadcast->items) {
      if (dim.kind != json::Value::Kind::number || !(dim.number >= 0 && dim.number < 32)) {
        *why = "has a broadcast list in the manifest that is not dim indices";
        return false;
      }
      bits |= 1u << static_cast<int>(dim.number);
    }
    if (bits != info.broadcast_dims) {
      *why = "broadcasts other dims in the manifest than in the library";
      return false;
    }
  }
  if (const json::Value *min_rank = entry.member("min_rank");
      min_rank != nullptr &&
      (min_rank->kind != json::Value::Kind::number || min_rank->number != info.min_rank)) {
    *why = "has another min_rank in the manifest than the library's " + std::to_string(info.min_rank);
    return false;
  }
  return true;
}

attn_status check_manifest_kernel(const attn_library &library, const std::string &manifest,
                                  const json::Value &entry) {
  const char *path = library.path.c_str();
  const json::Value *id = entry.member("id");
  if (id == nullptr || id->kind != json::Value::Kind::string) {
    return fail(ATTN_ERR_MANIFEST_MISMATCH, "manifest '%s' lists a kernel without an id", manifest.c_str());
  }
  const attn_kernel *kernel = find_in(library, id->string);
  if (kernel == nullptr) {
    return fail(ATTN_ERR_MANIFEST_MISMATCH,
                "manifest '%s' lists kernel '%s', which library '%s' does not contain (it has %s)",
                manifest.c_str(), id->string.c_str(), path, quoted_ids(library).c_str());
  }
  const attn_kernel_desc &desc = *kernel->desc;
  for (const auto &[key, actual] : {std::pair{"spec", desc.spec}, std::pair{"target", desc.target}}) {
    const json::Value *text = entry.member(key);
    if (text == nullptr || text->kind != json::Value::Kind::string) {
      return fail(ATTN_ERR_MANIFEST_MISMATCH, "manifest '%s': kernel '%s' has no %s", manifest.c_str(),
                  desc.id, key);
    }
    if (text->string != actual) {
      return fail(ATTN_ERR_MANIFEST_MISMATCH, "manifest '%s': kernel '%s' has %s '%s', library '%s' has '%s'",
                  manifest.c_str(), desc.id, key, text->string.c_str(), path, actual);
    }
  }
  if (const json::Value *args = entry.member("args"); args != nullptr) {
    if (static_cast<int>(args->items.size()) != desc.arg_count) {
      return fail(ATTN_ERR_MANIFEST_MISMATCH,
                  "manifest '%s': kernel '%s' has %zu arguments, library '%s' has %d", manifest.c_str(),
                  desc.id, args->items.size(), path, desc.arg_count);
    }
    for (int i = 0; i < desc.arg_count; ++i) {
      std::string why;
      if (!arg_matches(args->items[static_cast<size_t>(i)], desc.args[i], &why)) {
        return fail(ATTN_ERR_MANIFEST_MISMATCH, "manifest '%s': kernel '%s': argument '%s' %s",
                    manifest.c_str(), desc.id, desc.args[i].name, why.c_str());
      }
    }
  }
  return ATTN_OK;
}

// The manifest is optional; when present its kernels must be exactly the library's.
attn_status check_manifest(const attn_library &library) {
  const std::string manifest = manifest_path(library.path);
  std::error_code ignored;
  if (!std::filesystem::exists(manifest, ignored)) return ATTN_OK;
  std::ifstream file(manifest, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  if (!file) return fail(ATTN_ERR_MANIFEST_MISMATCH, "cannot read manifest '%s'", manifest.c_str());
  const json::ParseResult parsed = json::parse(text.str());
  if (!parsed.ok) {
    return fail(ATTN_ERR_MANIFEST_MISMATCH, "manifest '%s' is not valid json: %s", manifest.c_str(),
                parsed.message.c_str());
  }
  const json::Value *kernels = parsed.value.member("kernels");
  if (kernels == nullptr || kernels->kind != json::Value::Kind::array) {
    return fail(ATTN_ERR_MANIFEST_MISMATCH, "manifest '%s' has no \"kernels\" list", manifest.c_str());
  }
  std::vector<std::string> listed;
  for (const json::Value &entry : kernels->items) {
    if (attn_status s = check_manifest_kernel(library, manifest, entry); s != ATTN_OK) return s;
    const std::string &id = entry.member("id")->string;
    if (std::find(listed.begin(), listed.end(), id) != listed.end()) {
      return fail(ATTN_ERR_MANIFEST_MISMATCH, "manifest '%s' lists kernel '%s' twice", manifest.c_str(),
                  id.c_str());
    }
    listed.push_back(id);
  }
  for (const attn_kernel &kernel : library.kernels) {
    if (std::find(listed.begin(), listed.end(), kernel.desc->id) == listed.end()) {
      return fail(ATTN_ERR_MANIFEST_MISMATCH,
                  "library '%s' has kernel '%s', which its manifest '%s' does not list", library.path.c_str(),
                  kernel.desc->id, manifest.c_str());
    }
  }
  return ATTN_OK;
}

}  // namespace

extern "C" attn_status attn_library_open(const char *path, attn_library **out) {
  if (out == nullptr) return fail(ATTN_ERR_INVALID_ARGUMENT, "out is null");
  *out = nullptr;
  if (path == nullptr) return fail(ATTN_ERR_INVALID_ARGUMENT, "library path is null");
  auto library = std::make_unique<attn_library>();
  library->path = path;
  // A bare file name means the file in the working folder, as any path does, not a search of
  // the loader's library path (which could find another build's library of the same name).
  const std::string load_path =
      library->path.find('/') == std::string::npos ? "./" + library->path : library->path;
  library->handle = dlopen(load_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library->handle == nullptr) {
    const char *reason = dlerror();
    return fail(ATTN_ERR_LOAD, "cannot open kernel library '%s': %s", path,
                reason != nullptr ? reason : "unknown dlopen error");
  }
  // On any refusal the unique_ptr closes the library again: nothing stays loaded.
  if (attn_status s = read_table(library.get()); s != ATTN_OK) return s;
  if (attn_status s = check_cpu(*library); s != ATTN_OK) return s;
  if (attn_status s = check_manifest(*library); s != ATTN_OK) return s;
  *out = library.release();
  return ATTN_OK;
}

extern "C" void attn_library_close(attn_library *library) {
  delete library;
}

extern "C" attn_status attn_library_find_kernel(const attn_library *library, const char *id,
                                                const attn_kernel **out) {
  if (out == nullptr) return fail(ATTN_ERR_INVALID_ARGUMENT, "out is null");
  *out = nullptr;
  if (library == nullptr) return fail(ATTN_ERR_INVALID_ARGUMENT, "library is null");
  if (id == nullptr) return fail(ATTN_ERR_INVALID_ARGUMENT, "kernel id is null");
  if ((*out = find_in(*library, id)) != nullptr) return ATTN_OK;
  const std::string where = "in library '" + library->path + "'";
  return attn::detail::unknown_kernel(id, handles(*library), where.c_str());
}

extern "C" int attn_library_kernel_count(const attn_library *library) {
  return library == nullptr ? 0 : static_cast<int>(library->kernels.size());
}

extern "C" const attn_kernel *attn_library_kernel_at(const attn_library *library, int index) {
  if (library == nullptr || index < 0 || static_cast<size_t>(index) >= library->kernels.size()) {
    return nullptr;
  }
  return &library->kernels[static_cast<size_t>(index)];
}

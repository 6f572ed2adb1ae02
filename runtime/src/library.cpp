// library.cpp: opens a shared kernel library and refuses it unless file, ABI, CPU and manifest match.
#include <dlfcn.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cpu_features.h"
#include "json_reader.h"
#include "kernel_internal.h"
#include "library_file.h"
#include "library_manifest.h"
#include "sha256.h"
#include "status_internal.h"

using attn::detail::fail;
namespace json = attn::detail::json;

struct attn_library {
  void *handle = nullptr;
  std::string path;
  // The descriptor the library was loaded through (/proc/self/fd/N names it to the loader).
  int fd = -1;
  std::vector<attn_kernel> kernels;  // filled once by open; handles point into it

  ~attn_library() {
    if (handle != nullptr) {
      // The scratch blocks the library's workspace cache holds go with it; dlclose alone would
      // leak them (the cache lives in the library, out of reach once it is unloaded).
      for (const attn_kernel &kernel : kernels) {
        if (kernel.desc->release_memory != nullptr) kernel.desc->release_memory();
      }
      dlclose(handle);
    }
    if (fd < 0) return;
    // The loader knows the library by the name /proc/self/fd/N and matches a later dlopen of that
    // name to it. While anyone else keeps it loaded (another open of the same file), keep N open
    // too, so that N is never reused for another file that a later open would mistake for it.
    const std::string name = "/proc/self/fd/" + std::to_string(fd);
    if (void *still = dlopen(name.c_str(), RTLD_LAZY | RTLD_NOLOAD); still != nullptr) {
      dlclose(still);
      return;
    }
    close(fd);
  }
};

namespace {

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

// Verified: the manifest must be there and name the file's SHA-256, checked before dlopen runs
// any of the library's code. Unverified: no hash, and a manifest only when one is there.
attn_status open_library(const char *path, bool verified, attn_library **out) {
  if (out == nullptr) return fail(ATTN_ERR_INVALID_ARGUMENT, "out is null");
  *out = nullptr;
  if (path == nullptr) return fail(ATTN_ERR_INVALID_ARGUMENT, "library path is null");
  auto library = std::make_unique<attn_library>();
  library->path = path;
  attn::detail::LibraryFile file;
  if (attn_status s = file.open(library->path); s != ATTN_OK) return s;

  const std::string manifest = attn::detail::manifest_path(library->path);
  json::Value document;
  bool missing = false;
  attn_status manifest_status = attn::detail::read_manifest(manifest, &document, &missing);
  const bool has_manifest = manifest_status == ATTN_OK;
  if (missing && verified) {
    return fail(ATTN_ERR_LIBRARY_INTEGRITY,
                "library '%s' has no manifest '%s' (attnc gen --shared writes it beside the library); "
                "without it the library cannot be verified",
                path, manifest.c_str());
  }
  if (!has_manifest && !missing) return manifest_status;
  if (verified) {
    std::string sha256;
    if (attn_status s = file.sha256(&sha256); s != ATTN_OK) return s;
    if (attn_status s = attn::detail::check_manifest_hash(document, manifest, library->path, sha256);
        s != ATTN_OK)
      return s;
  }

  // The descriptor checked is the file loaded: a file swapped at path in between is not read.
  library->handle = dlopen(file.load_path().c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library->handle == nullptr) {
    const char *reason = dlerror();
    return fail(ATTN_ERR_LOAD, "cannot load kernel library '%s': %s", path,
                reason != nullptr ? reason : "unknown dlopen error");
  }
  library->fd = file.release();
  // On any refusal the unique_ptr closes the library again: nothing stays loaded.
  if (attn_status s = read_table(library.get()); s != ATTN_OK) return s;
  if (attn_status s = check_cpu(*library); s != ATTN_OK) return s;
  if (has_manifest) {
    if (attn_status s =
            attn::detail::check_manifest_kernels(document, manifest, library->path, library->kernels);
        s != ATTN_OK)
      return s;
  }
  *out = library.release();
  return ATTN_OK;
}

}  // namespace

extern "C" attn_status attn_library_open(const char *path, attn_library **out) {
  return open_library(path, true, out);
}

extern "C" attn_status attn_library_open_unverified(const char *path, attn_library **out) {
  return open_library(path, false, out);
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

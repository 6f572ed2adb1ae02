// library_manifest.cpp: refuses a manifest that is not the library's own, field by field.
#include "library_manifest.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string_view>

#include "library_file.h"
#include "status_internal.h"

namespace attn::detail {
namespace {

using json::Value;

const attn_kernel *find_kernel(const std::vector<attn_kernel> &kernels, std::string_view id) {
  for (const attn_kernel &kernel : kernels) {
    if (id == kernel.desc->id) return &kernel;
  }
  return nullptr;
}

std::string quoted_ids(const std::vector<attn_kernel> &kernels) {
  std::string list;
  for (const attn_kernel &kernel : kernels) {
    if (!list.empty()) list += ", ";
    list += std::string("'") + kernel.desc->id + "'";
  }
  return list.empty() ? "none" : list;
}

bool is_string(const Value *value) {
  return value != nullptr && value->kind == Value::Kind::string;
}

// One manifest argument entry against the library's: every field must be there and agree.
bool arg_matches(const Value &entry, const attn_arg_info &info, std::string *why) {
  const Value *name = entry.member("name");
  if (!is_string(name) || name->string != info.name) {
    *why =
        is_string(name) ? "is named '" + name->string + "' in the manifest" : "has no name in the manifest";
    return false;
  }
  const Value *dtype = entry.member("dtype");
  if (!is_string(dtype) || dtype->string != dtype_name(dtype_value(info.dtype))) {
    *why = std::string("has dtype '") + (is_string(dtype) ? dtype->string : "none") + "' in the manifest, " +
           dtype_name(dtype_value(info.dtype)) + " in the library";
    return false;
  }
  const Value *output = entry.member("output");
  if (output == nullptr || output->kind != Value::Kind::boolean || output->boolean != (info.is_output != 0)) {
    *why = std::string("is ") + (info.is_output ? "an output" : "an input") +
           " in the library but not in the manifest";
    return false;
  }
  const Value *inout = entry.member("inout");
  const bool manifest_inout = inout != nullptr && inout->kind == Value::Kind::boolean && inout->boolean;
  if (manifest_inout != (info.is_output == ATTN_ARG_INOUT)) {
    *why = std::string("is ") + (manifest_inout ? "" : "not ") + "in-out in the manifest but " +
           (manifest_inout ? "not " : "") + "in the library";
    return false;
  }
  const Value *shape = entry.member("shape");
  if (shape == nullptr || shape->kind != Value::Kind::array ||
      static_cast<int>(shape->items.size()) != info.rank) {
    *why = "has rank " + (shape != nullptr ? std::to_string(shape->items.size()) : std::string("none")) +
           " in the manifest, " + std::to_string(info.rank) + " in the library";
    return false;
  }
  for (int d = 0; d < info.rank; ++d) {
    const Value &dim = shape->items[static_cast<size_t>(d)];
    const bool same = dim.kind == Value::Kind::number
                          ? dim.number == static_cast<double>(info.fixed_shape[d]) && info.fixed_shape[d] > 0
                          : dim.kind == Value::Kind::string && info.fixed_shape[d] == 0 &&
                                info.dim_names[d] != nullptr && dim.string == info.dim_names[d];
    if (!same) {
      *why = "differs in dim " + std::to_string(d) + " of its shape";
      return false;
    }
  }
  // "broadcast": [0, 1] lists the dims whose bits are set in broadcast_dims; none when absent.
  uint32_t bits = 0;
  if (const Value *broadcast = entry.member("broadcast"); broadcast != nullptr) {
    for (const Value &dim : broadcast->items) {
      if (dim.kind != Value::Kind::number || !(dim.number >= 0 && dim.number < 32) ||
          dim.number != static_cast<int>(dim.number)) {
        *why = "has a broadcast list in the manifest that is not dim indices";
        return false;
      }
      bits |= 1u << static_cast<int>(dim.number);
    }
  }
  if (bits != info.broadcast_dims) {
    *why = "broadcasts other dims in the manifest than in the library";
    return false;
  }
  const Value *min_rank = entry.member("min_rank");
  const bool min_rank_same = min_rank == nullptr
                                 ? info.min_rank == 0 || info.min_rank == info.rank
                                 : min_rank->kind == Value::Kind::number && min_rank->number == info.min_rank;
  if (!min_rank_same) {
    *why = "has another min_rank in the manifest than the library's " + std::to_string(info.min_rank);
    return false;
  }
  return true;
}

attn_status check_variants(const Value &entry, const attn_kernel_desc &desc, const std::string &path) {
  const Value *variants = entry.member("variants");
  const size_t listed =
      variants != nullptr && variants->kind == Value::Kind::array ? variants->items.size() : 0;
  if (static_cast<int64_t>(listed) != desc.variant_count) {
    return fail(ATTN_ERR_MANIFEST_MISMATCH,
                "manifest '%s': kernel '%s' lists %zu variants, the library has %d", path.c_str(), desc.id,
                listed, desc.variant_count);
  }
  for (int v = 0; v < desc.variant_count; ++v) {
    const Value &variant = variants->items[static_cast<size_t>(v)];
    const attn_kernel_variant &actual = desc.variants[v];
    const char *features = actual.required_cpu_features != nullptr ? actual.required_cpu_features : "";
    const Value *target = variant.member("target"), *needs = variant.member("required_cpu_features");
    if (!is_string(target) || target->string != actual.target || !is_string(needs) ||
        needs->string != features) {
      return fail(
          ATTN_ERR_MANIFEST_MISMATCH,
          "manifest '%s': kernel '%s': variant %d is not the library's (target '%s', cpu features '%s')",
          path.c_str(), desc.id, v, actual.target, features);
    }
  }
  return ATTN_OK;
}

attn_status check_kernel(const std::vector<attn_kernel> &kernels, const std::string &path,
                         const std::string &library_path, const Value &entry) {
  const Value *id = entry.member("id");
  if (!is_string(id)) {
    return fail(ATTN_ERR_MANIFEST_MISMATCH, "manifest '%s' lists a kernel without an id", path.c_str());
  }
  const attn_kernel *kernel = find_kernel(kernels, id->string);
  if (kernel == nullptr) {
    return fail(ATTN_ERR_MANIFEST_MISMATCH,
                "manifest '%s' lists kernel '%s', which library '%s' does not contain (it has %s)",
                path.c_str(), id->string.c_str(), library_path.c_str(), quoted_ids(kernels).c_str());
  }
  const attn_kernel_desc &desc = *kernel->desc;
  const char *features = desc.required_cpu_features != nullptr ? desc.required_cpu_features : "";
  for (const auto &[key, actual] : {std::pair{"spec", desc.spec}, std::pair{"target", desc.target},
                                    std::pair{"required_cpu_features", features}}) {
    const Value *text = entry.member(key);
    if (!is_string(text)) {
      return fail(ATTN_ERR_MANIFEST_MISMATCH, "manifest '%s': kernel '%s' has no %s", path.c_str(), desc.id,
                  key);
    }
    if (text->string != actual) {
      return fail(ATTN_ERR_MANIFEST_MISMATCH, "manifest '%s': kernel '%s' has %s '%s', library '%s' has '%s'",
                  path.c_str(), desc.id, key, text->string.c_str(), library_path.c_str(), actual);
    }
  }
  if (attn_status s = check_variants(entry, desc, path); s != ATTN_OK) return s;
  const Value *args = entry.member("args");
  if (args == nullptr || args->kind != Value::Kind::array) {
    return fail(ATTN_ERR_MANIFEST_MISMATCH, "manifest '%s': kernel '%s' has no \"args\" list", path.c_str(),
                desc.id);
  }
  if (static_cast<int64_t>(args->items.size()) != desc.arg_count) {
    return fail(ATTN_ERR_MANIFEST_MISMATCH,
                "manifest '%s': kernel '%s' has %zu arguments, library '%s' has %d", path.c_str(), desc.id,
                args->items.size(), library_path.c_str(), desc.arg_count);
  }
  for (int i = 0; i < desc.arg_count; ++i) {
    std::string why;
    if (!arg_matches(args->items[static_cast<size_t>(i)], desc.args[i], &why)) {
      return fail(ATTN_ERR_MANIFEST_MISMATCH, "manifest '%s': kernel '%s': argument '%s' %s", path.c_str(),
                  desc.id, desc.args[i].name, why.c_str());
    }
  }
  return ATTN_OK;
}

}  // namespace

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

attn_status read_manifest(const std::string &path, json::Value *out, bool *missing) {
  std::string text;
  if (attn_status s = read_regular_file(path, "manifest", largest_manifest_bytes, &text, missing);
      s != ATTN_OK)
    return s;
  json::ParseResult parsed = json::parse(text);
  if (!parsed.ok) {
    return fail(ATTN_ERR_MANIFEST_MISMATCH, "manifest '%s' is not valid json: %s", path.c_str(),
                parsed.message.c_str());
  }
  const Value *kernels = parsed.value.member("kernels");
  if (kernels == nullptr || kernels->kind != Value::Kind::array) {
    return fail(ATTN_ERR_MANIFEST_MISMATCH, "manifest '%s' has no \"kernels\" list", path.c_str());
  }
  *out = std::move(parsed.value);
  return ATTN_OK;
}

attn_status check_manifest_hash(const json::Value &manifest, const std::string &path,
                                const std::string &library_path, const std::string &sha256_hex) {
  const Value *recorded = manifest.member("library_sha256");
  if (!is_string(recorded)) {
    return fail(ATTN_ERR_LIBRARY_INTEGRITY,
                "manifest '%s' records no \"library_sha256\" for library '%s'; regenerate it with attnc gen "
                "--shared, or open the library unverified",
                path.c_str(), library_path.c_str());
  }
  if (recorded->string != sha256_hex) {
    return fail(
        ATTN_ERR_LIBRARY_INTEGRITY,
        "library '%s' has sha256 %s, its manifest '%s' records %s: the file is not the one attnc wrote",
        library_path.c_str(), sha256_hex.c_str(), path.c_str(), recorded->string.c_str());
  }
  return ATTN_OK;
}

attn_status check_manifest_kernels(const json::Value &manifest, const std::string &path,
                                   const std::string &library_path, const std::vector<attn_kernel> &kernels) {
  const Value *abi = manifest.member("abi_version");
  if (abi == nullptr || abi->kind != Value::Kind::number || abi->number != ATTN_ABI_VERSION) {
    char given[32] = "none";
    if (abi != nullptr)
      std::snprintf(given, sizeof(given), abi->kind == Value::Kind::number ? "%g" : "(not a number)",
                    abi->number);
    return fail(ATTN_ERR_MANIFEST_MISMATCH, "manifest '%s' has abi_version %s, library '%s' has %d",
                path.c_str(), given, library_path.c_str(), ATTN_ABI_VERSION);
  }
  std::vector<std::string> listed;
  for (const Value &entry : manifest.member("kernels")->items) {
    if (attn_status s = check_kernel(kernels, path, library_path, entry); s != ATTN_OK) return s;
    const std::string &id = entry.member("id")->string;
    if (std::find(listed.begin(), listed.end(), id) != listed.end()) {
      return fail(ATTN_ERR_MANIFEST_MISMATCH, "manifest '%s' lists kernel '%s' twice", path.c_str(),
                  id.c_str());
    }
    listed.push_back(id);
  }
  for (const attn_kernel &kernel : kernels) {
    if (std::find(listed.begin(), listed.end(), kernel.desc->id) == listed.end()) {
      return fail(ATTN_ERR_MANIFEST_MISMATCH,
                  "library '%s' has kernel '%s', which its manifest '%s' does not list", library_path.c_str(),
                  kernel.desc->id, path.c_str());
    }
  }
  return ATTN_OK;
}

}  // namespace attn::detail

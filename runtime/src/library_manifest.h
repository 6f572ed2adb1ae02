// library_manifest.h: a kernel library's JSON manifest: read, its hash, its kernels against the library's.
#pragma once

#include <string>
#include <vector>

#include "json_reader.h"
#include "kernel_internal.h"

namespace attn::detail {

// Manifests are a few KiB per kernel; anything far larger is not one.
inline constexpr uint64_t largest_manifest_bytes = 16u << 20;

// "dir/libk.so" -> "dir/libk.json": the manifest attnc gen --shared writes beside the library.
std::string manifest_path(const std::string &library_path);

// Reads and parses the manifest at path (a regular json file with a "kernels" list). missing is
// set when there is no file at path.
attn_status read_manifest(const std::string &path, json::Value *out, bool *missing);

// Whether the manifest's "library_sha256" is sha256_hex, the hash of the library file.
attn_status check_manifest_hash(const json::Value &manifest, const std::string &path,
                                const std::string &library_path, const std::string &sha256_hex);

// Whether the manifest describes exactly the library's kernels: its abi_version, every kernel's
// id, spec, target, required CPU features, variants and arguments (name, dtype, direction, shape,
// broadcast dims, min_rank), and no kernel more or less.
attn_status check_manifest_kernels(const json::Value &manifest, const std::string &path,
                                   const std::string &library_path, const std::vector<attn_kernel> &kernels);

}  // namespace attn::detail

// attnc/emit.h: the files attnc writes beside the Halide objects: entry source, header, manifest.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "attnc/arguments.h"

namespace attnc {

// The tiles of one variant: its main pipeline's, and a short-sequence pipeline's if it has one.
struct VariantTiles {
  std::string tiles;   // core_tiles_text of the main pipeline's tiles
  bool tuned = false;  // from a tuning file (then there is no short pipeline)
  int query_tile = 0, key_block = 0;
  std::string short_tiles;  // "" when there is no short pipeline
  int short_query_tile = 0, short_key_block = 0;
  bool packed = false;       // a packed pipeline (head rows copied): packed_min/max_keys
  std::string packed_tiles;  // its tiles: cpu_tiles_packed's, or the tuned ones
  bool blocks = false;       // whole-row spec: a block-core pipeline for Sk > blocks_past_keys
  int blocks_past_keys = 0;  // whole_row_max_keys, or whole_row_max_keys_bf16 (tile_config.h)
  std::string blocks_tiles;  // its tiles: cpu_tiles_blocks', or the tuned ones
  bool gpu = false;          // a CUDA or OpenCL variant: one pipeline (gpu_tiles()), outputs copied back
};

// One generated kernel, as the runtime and the manifest describe it.
struct KernelRecord {
  std::string id;
  std::string spec_text;
  std::vector<std::string> targets;               // most capable first; variant i is <id>_v<i>
  std::vector<std::string> variant_cpu_features;  // per target
  std::vector<VariantTiles> variant_tiles;        // per target
  std::string required_cpu_features;              // the least capable variant's
  std::vector<ArgSpec> args;
  attn::Spec spec{};  // resolved
  // runs_per_sequence specs: the per-sequence attention pipelines' arguments (q_arg, k_arg and the
  // pipelines' arity refer to these); empty otherwise.
  std::vector<ArgSpec> inner_args;
  // Core form: a second pipeline, <id>_split_keys_v<i>, runs when Sq <= split_keys_max_queries
  // (0: none), and a third, <id>_short_v<i>, where the variant has short tiles and they win for
  // the call's Sq x Sk (short_tiles_win), and a fourth, <id>_packed_v<i>, where the variant is
  // packed and runs_packed(Sk, B * heads) holds (tile_config.h), and a fifth, <id>_blocks_v<i>,
  // for Sk > blocks_past_keys where the variant's main pipeline is the whole-row core. The
  // entry reads Sq, Sk and B from the q and k buffers (args[q_arg], args[k_arg]; dims 2 and 3
  // in Halide order).
  int split_keys_max_queries = 0;
  int q_arg = -1, k_arg = -1;
  int heads = 0;  // core form: the packed pipeline's tasks are batch * heads
};

// C source defining one attn_kernel_desc per kernel. Compiled with ATTN_STATIC_REGISTRY, it
// registers them at load time; with ATTN_LIBRARY_TABLE, it exports attn_library_table_v1.
// The run_variant of a runs_per_sequence kernel: checks cache_seqlens / block_table / cu_seqlens,
// appends the new keys, then calls <id>_pipelines once per sequence (emit_sequence.cpp).
void write_sequence_run(std::ostringstream &o, const KernelRecord &k);

std::string entry_source(const std::vector<KernelRecord> &kernels, const std::string &basename);

// C header declaring <basename>_register_kernels() and including each kernel's Halide header.
std::string library_header(const std::vector<KernelRecord> &kernels, const std::string &basename);

// JSON manifest: ids, spec texts, targets, argument lists, attnc and Halide versions, and for a
// shared library the SHA-256 of its file (library_sha256, 64 hex digits; "" leaves it out), which
// attn_library_open checks before loading the library.
std::string manifest_json(const std::vector<KernelRecord> &kernels, const std::string &basename,
                          const std::string &library_sha256 = "");

// The runtime headers the entry source includes, so attnc can compile it on its own.
struct EmbeddedHeader {
  const char *path;  // relative to an include dir, e.g. "attn/runtime.h"
  const char *text;
};
const std::vector<EmbeddedHeader> &abi_headers();

}  // namespace attnc

// Writes the C entry source and the C header of a kernel library.
#include <cstdio>
#include <sstream>

#include "attnc/emit.h"
#include "attnc/emit_device.h"
#include "attnc/tile_config.h"

namespace attnc {
namespace {

std::string c_string(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string join(const std::vector<std::string> &items, const char *sep) {
  std::string out;
  for (const std::string &item : items) out += (out.empty() ? "" : sep) + item;
  return out;
}

// An array initializer's items; "0" for none (a rank-0 argument: C has no empty initializer).
std::string c_items(const std::vector<std::string> &items) {
  return items.empty() ? "0" : join(items, ", ");
}

// A double as a C literal that reads back the same f32 value.
std::string c_double(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.9g", value);
  std::string text = buffer;
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
  return text;
}

const char *dtype_enum(const std::string &dtype) {
  if (dtype == "f16") return "ATTN_F16";
  if (dtype == "bf16") return "ATTN_BF16";
  if (dtype == "i32") return "ATTN_I32";
  if (dtype == "u8") return "ATTN_U8";
  if (dtype == "i8") return "ATTN_I8";
  if (dtype == "u64") return "ATTN_U64";
  return "ATTN_F32";
}

void declare(std::ostringstream &o, const std::string &function, size_t arg_count) {
  o << "extern int " << function << "(void *";
  for (size_t i = 0; i < arg_count; ++i) o << ", struct halide_buffer_t *";
  o << ");\n";
}

void call(std::ostringstream &o, const std::string &function, size_t arg_count) {
  o << function << "(context";
  for (size_t i = 0; i < arg_count; ++i) o << ", (struct halide_buffer_t *)buffers[" << i << "]";
  o << ")";
}

void write_kernel(std::ostringstream &o, const KernelRecord &k, const std::string &basename) {
  const std::string &id = k.id;
  // The pipelines' arity: a per-sequence kernel's pipelines take their own arguments.
  const size_t n = k.inner_args.empty() ? k.args.size() : k.inner_args.size();
  const bool split = k.split_keys_max_queries > 0 && k.q_arg >= 0;
  bool any_short = false, any_packed = false, any_blocks = false;
  for (size_t v = 0; v < k.targets.size(); ++v) {
    const bool has_short = !k.variant_tiles[v].short_tiles.empty() && k.q_arg >= 0 && k.k_arg >= 0;
    const bool has_packed = k.variant_tiles[v].packed && k.q_arg >= 0 && k.k_arg >= 0;
    const bool has_blocks = k.variant_tiles[v].blocks && k.q_arg >= 0 && k.k_arg >= 0;
    any_short = any_short || has_short;
    any_packed = any_packed || has_packed;
    any_blocks = any_blocks || has_blocks;
    declare(o, id + "_v" + std::to_string(v), n);
    if (has_short) declare(o, id + "_short_v" + std::to_string(v), n);
    if (has_packed) declare(o, id + "_packed_v" + std::to_string(v), n);
    if (has_blocks) declare(o, id + "_blocks_v" + std::to_string(v), n);
    if (split) declare(o, id + "_split_keys_v" + std::to_string(v), n);
    if (k.spec.kv_cache != attn::KvCache::none)
      declare(o, id + "_append_v" + std::to_string(v), sequence_pipeline_args(k.spec, "append").size());
  }
  o << "\n";
  o << "static const attn_arg_info " << id << "_args[] = {\n";
  for (const ArgSpec &a : k.args) {
    std::vector<std::string> fixed, names;
    for (const ArgDim &d : a.dims) {
      fixed.push_back(std::to_string(d.fixed));
      names.push_back(d.symbol.empty() ? "0" : c_string(d.symbol));
    }
    o << "    {" << c_string(a.name) << ", " << dtype_enum(a.dtype) << ", " << a.dims.size() << ", "
      << (a.is_inout    ? 2
          : a.is_output ? 1
                        : 0)
      << ", {" << c_items(fixed) << "}, {" << c_items(names) << "}, " << a.broadcast_dims << "u, "
      << a.min_rank << ", " << (a.is_optional ? 1 : 0) << ", " << c_double(a.default_value) << "},\n";
  }
  o << "};\n\n";
  bool any_gpu = false;
  for (const VariantTiles &t : k.variant_tiles) any_gpu = any_gpu || t.gpu;
  if (any_gpu) {
    // Which of the pipelines' own arguments are outputs (a per-sequence kernel's are inner_args).
    const std::vector<ArgSpec> &called = k.inner_args.empty() ? k.args : k.inner_args;
    o << "static const unsigned char " << id << "_outputs[] = {";
    for (size_t a = 0; a < n; ++a) o << (a ? ", " : "") << (called[a].is_output ? 1 : 0);
    o << "};\n\n";
  }
  // GPU variants of f16/bf16 kernels declare those tensors as their bits (uint16, half_bits.h).
  const bool gpu_bits = any_gpu && k.spec.dtype != attn::DType::f32;
  if (gpu_bits) {
    o << "static const unsigned char " << id << "_bits[] = {";
    for (size_t a = 0; a < n; ++a)
      o << (a ? ", " : "") << (k.args[a].dtype == "f16" || k.args[a].dtype == "bf16");
    o << "};\n\n";
  }
  o << "static const attn_kernel_variant " << id << "_variants[] = {\n";
  for (size_t v = 0; v < k.targets.size(); ++v)
    o << "    {" << c_string(k.targets[v]) << ", " << c_string(k.variant_cpu_features[v]) << "},\n";
  o << "};\n\n";
  // The pipelines for one call's Sq and Sk (per sequence for a runs_per_sequence kernel).
  o << "static int " << id
    << "_pipelines(attn_call_context *context, void **buffers, int32_t variant, int32_t seq_q, int32_t "
       "seq_k) {\n"
    << "  (void)seq_q;\n  (void)seq_k;\n";
  if (any_gpu) o << "  int wrapped = 0;\n";
  if (any_packed)
    o << "  const int64_t tasks = (int64_t)attn_halide_extent(buffers[" << k.q_arg << "], 3) * " << k.heads
      << ";\n";
  if (split) o << "  const int split_keys = seq_q <= " << k.split_keys_max_queries << ";\n";
  o << "  switch (variant) {\n";
  for (size_t v = 0; v < k.targets.size(); ++v) {
    const VariantTiles &t = k.variant_tiles[v];
    const std::string suffix = "_v" + std::to_string(v);
    o << "    case " << v << ":\n";
    if (t.gpu) {
      // Device tensors wrapped first. Host outputs come back to the host before attn_run returns;
      // every device copy is freed (into Halide's reuse pool: attn_kernel_release_memory empties
      // it), device tensors detached.
      auto finish = [&](const std::string &function) {
        o << "attn_device_finish(context, buffers, " << n << ", " << id << "_outputs, ";
        call(o, function, n);
        o << ");\n";
      };
      // f16/bf16 GPU variants take those tensors as uint16 bits for the call; the caller's type
      // code (float (2) for f16, bfloat (4) for bf16) comes back afterwards, whatever happened.
      if (gpu_bits) o << "      attn_retype(buffers, " << n << ", " << id << "_bits, 1);\n";
      o << "      wrapped = attn_device_wrap(context, buffers, " << n << ", "
        << device_interface_call(k.targets[v]) << ");\n"
        << "      if (wrapped != 0)\n        wrapped = attn_device_finish(context, buffers, " << n << ", "
        << id << "_outputs, wrapped);\n";
      if (split) {
        o << "      else if (split_keys)\n        wrapped = ";
        finish(id + "_split_keys" + suffix);
      }
      o << "      else\n        wrapped = ";
      finish(id + suffix);
      if (gpu_bits)
        o << "      attn_retype(buffers, " << n << ", " << id << "_bits, "
          << (k.spec.dtype == attn::DType::bf16 ? 4 : 2) << ");\n";
      o << "      return wrapped;\n";
      continue;
    }
    if (split) {
      o << "      if (split_keys) return ";
      call(o, id + "_split_keys" + suffix, n);
      o << ";\n";
    }
    if (!t.short_tiles.empty() && k.q_arg >= 0 && k.k_arg >= 0) {
      // short_tiles_win() in C: fewer padded scores, after the default tiles' speedup.
      o << "      if (attn_padded(seq_q, " << t.short_query_tile << ") * attn_padded(seq_k, "
        << t.short_key_block << ") * " << default_tiles_speedup << " < attn_padded(seq_q, " << t.query_tile
        << ") * attn_padded(seq_k, " << t.key_block << "))\n        return ";
      call(o, id + "_short" + suffix, n);
      o << ";\n";
    }
    if (t.blocks && k.q_arg >= 0 && k.k_arg >= 0) {
      // Past blocks_past_keys the whole-row core streams its head's rows from L3 (tile_config.h).
      o << "      if (seq_k > " << t.blocks_past_keys << ") return ";
      call(o, id + "_blocks" + suffix, n);
      o << ";\n";
    }
    if (t.packed && k.q_arg >= 0 && k.k_arg >= 0) {
      // runs_packed() in C.
      o << "      if (seq_k <= " << packed_max_keys << " && ((seq_k >= " << packed_min_keys
        << " && tasks >= " << packed_min_tasks << ") || (seq_k >= " << packed_min_keys_many_tasks
        << " && tasks >= " << packed_many_tasks << "))) return ";
      call(o, id + "_packed" + suffix, n);
      o << ";\n";
    }
    o << "      return ";
    call(o, id + suffix, n);
    o << ";\n";
  }
  o << "  }\n"
    << "  attn_abi_record_error(context, \"no such variant\");\n"
    << "  return -1;\n}\n\n";
  if (!k.inner_args.empty()) {
    write_sequence_run(o, k);
  } else {
    o << "static int " << id
      << "_run_variant(attn_call_context *context, void **buffers, int32_t variant) {\n";
    if (k.q_arg >= 0 && k.k_arg >= 0) {
      o << "  return " << id << "_pipelines(context, buffers, variant, attn_halide_extent(buffers[" << k.q_arg
        << "], 2), attn_halide_extent(buffers[" << k.k_arg << "], 2));\n}\n\n";
    } else {
      o << "  return " << id << "_pipelines(context, buffers, variant, 0, 0);\n}\n\n";
    }
  }
  o << "static int " << id << "_run(attn_call_context *context, void **buffers) {\n"
    << "  return " << id << "_run_variant(context, buffers, " << k.targets.size() - 1 << ");\n}\n\n";
  o << "static const attn_kernel_desc " << id << "_desc = {\n"
    << "    ATTN_ABI_VERSION,\n"
    << "    " << c_string(id) << ",\n"
    << "    " << c_string(k.spec_text) << ",\n"
    << "    " << c_string(join(k.targets, ",")) << ",\n"
    << "    " << c_string(k.required_cpu_features) << ",\n"
    << "    " << k.args.size() << ",\n"
    << "    " << id << "_args,\n"
    << "    " << id << "_run,\n"
    << "    " << basename << "_set_num_threads,\n"
    << "    " << k.targets.size() << ",\n"
    << "    " << id << "_variants,\n"
    << "    " << id << "_run_variant,\n"
    << "    " << basename << "_release_memory,\n"
    << "};\n\n";
}

}  // namespace

std::string entry_source(const std::vector<KernelRecord> &kernels, const std::string &basename) {
  std::ostringstream o;
  const bool gpu = has_gpu_variant(kernels);
  o << "/* Generated by attnc: kernel entries of library '" << basename << "'. Do not edit. */\n"
    << "#include \"attn/kernel_abi.h\"\n"
    << "#include \"attn/workspace_cache.h\"\n"
    << "#include \"attn/kernel_views.h\"\n\n"
    << "struct halide_buffer_t;\n"
    << "typedef void (*attn_halide_error_handler)(void *, const char *);\n"
    << "extern attn_halide_error_handler halide_set_error_handler(attn_halide_error_handler);\n"
    << "extern int halide_set_num_threads(int);\n"
    << "typedef void *(*attn_halide_malloc)(void *, size_t);\n"
    << "typedef void (*attn_halide_free)(void *, void *);\n"
    << "extern attn_halide_malloc halide_set_custom_malloc(attn_halide_malloc);\n"
    << "extern attn_halide_free halide_set_custom_free(attn_halide_free);\n\n"
    << "/* The extent of one dim of a halide_buffer_t, read by the Halide runtime ABI's layout:\n"
    << " * device, device_interface, host, flags, type, dimensions, then dim. */\n"
    << "struct attn_halide_dim { int32_t min, extent, stride; uint32_t flags; };\n"
    << "struct attn_halide_buffer_view {\n"
    << "  uint64_t device; const void *device_interface; uint8_t *host; uint64_t flags;\n"
    << "  uint32_t type; int32_t dimensions; struct attn_halide_dim *dim; void *padding;\n"
    << "};\n"
    << "static int32_t attn_halide_extent(void *buffer, int d) {\n"
    << "  return ((const struct attn_halide_buffer_view *)buffer)->dim[d].extent;\n"
    << "}\n\n"
    << "/* Whole tiles of `tile` covering n (in 64-bit: n may be up to 2^31 - 1 keys). */\n"
    << "static inline double attn_padded(int32_t n, int32_t tile) {\n"
    << "  return (double)(((int64_t)n + tile - 1) / tile * tile);\n"
    << "}\n\n"
    << "static void " << basename << "_set_num_threads(int threads) { halide_set_num_threads(threads); }\n";
  if (gpu) write_device_support(o, kernels, basename);
  o << "static void " << basename << "_release_memory(void) {\n"
    << "  attn_workspace_release();\n";
  if (gpu) {
    o << "  /* Turning reuse off hands every pooled device allocation back; then on again. */\n"
      << "  halide_reuse_device_allocations(0, 0);\n"
      << "  halide_reuse_device_allocations(0, 1);\n";
  }
  o << "}\n\n"
    // Once, at load, not in every call: a call setting them while another thread's kernel reads
    // them is a data race (TSan, tests/concurrency). Every entry installs the same functions.
    << "/* The Halide runtime's error handler and allocator (the scratch-block cache). */\n"
    << "__attribute__((constructor)) static void " << basename << "_install_halide_hooks(void) {\n"
    << "  halide_set_error_handler(attn_abi_record_error);\n"
    << "  halide_set_custom_malloc(attn_workspace_malloc);\n"
    << "  halide_set_custom_free(attn_workspace_free);\n";
  if (gpu) write_device_install(o, kernels, basename);
  o << "}\n\n";
  for (const KernelRecord &k : kernels) write_kernel(o, k, basename);
  o << "static const attn_kernel_desc *const " << basename << "_table[] = {\n";
  for (const KernelRecord &k : kernels) o << "    &" << k.id << "_desc,\n";
  o << "};\n\n";
  // A shared library hands its table to the loader instead; it must not need the registry.
  o << "#if !defined(ATTN_LIBRARY_TABLE)\n"
    << "void " << basename << "_register_kernels(void) {\n"
    << "  for (unsigned i = 0; i < sizeof(" << basename << "_table) / sizeof(" << basename
    << "_table[0]); ++i)\n"
    << "    attn_register_kernel(" << basename << "_table[i]);\n"
    << "}\n"
    << "#endif\n\n"
    << "#if defined(ATTN_STATIC_REGISTRY)\n"
    << "__attribute__((constructor)) static void " << basename << "_register_at_load(void) { " << basename
    << "_register_kernels(); }\n"
    << "#endif\n\n"
    << "#if defined(ATTN_LIBRARY_TABLE)\n"
    << "__attribute__((visibility(\"default\"))) const attn_kernel_desc *const *attn_library_table_v1(int "
       "*count, "
       "int *abi_version) {\n"
    << "  *count = (int)(sizeof(" << basename << "_table) / sizeof(" << basename << "_table[0]));\n"
    << "  *abi_version = ATTN_ABI_VERSION;\n"
    << "  return " << basename << "_table;\n"
    << "}\n"
    << "#endif\n";
  return o.str();
}

std::string library_header(const std::vector<KernelRecord> &kernels, const std::string &basename) {
  std::ostringstream o;
  o << "/* Generated by attnc: kernel library '" << basename << "'. Call kernels through attn/runtime.h. */\n"
    << "#ifndef ATTNC_LIBRARY_" << basename << "_H\n#define ATTNC_LIBRARY_" << basename << "_H\n\n"
    << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
    << "/* Registers this library's kernels with the runtime. Needed only where the library's entry\n"
    << " * object was not linked whole (attn_add_kernels links it whole and registers at load). */\n"
    << "void " << basename << "_register_kernels(void);\n\n";
  o << "/* Kernel ids: */\n";
  for (const KernelRecord &k : kernels) o << "/*   " << k.id << ": " << k.spec_text << " */\n";
  o << "\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n";
  return o.str();
}

}  // namespace attnc

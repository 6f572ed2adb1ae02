// Writes the JSON manifest of a kernel library.
#include <Halide.h>

#include <sstream>

#include "attn/runtime.h"
#include "attn/spec_text.h"
#include "attn/validate.h"
#include "attnc/core_algorithm.h"
#include "attnc/emit.h"
#include "attnc/schedule_gpu.h"
#include "attnc/tile_config.h"

#ifndef ATTNC_VERSION
#define ATTNC_VERSION "unknown"
#endif

namespace attnc {
namespace {

std::string json_string(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// A float as JSON: 9 significant digits, enough for the f32 value to read back exactly.
std::string json_number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.9g", value);
  return buffer;
}

// How a variant computes: the arithmetic its storage type gets on its target.
std::string compute_path(const std::string &spec_text, const std::string &target_text) {
  const attn::ParseResult parsed = attn::parse_spec(spec_text);
  if (!parsed.ok) return "unknown";
  const attn::Spec spec = attn::resolve(parsed.spec);
  const Halide::Target target(target_text);
  if (spec.dtype != attn::DType::f32 && runs_on_gpu(target))
    return std::string(attn::dtype_name(spec.dtype)) +
           " read and written as bits, converted to and from fp32 by integer operations in the GPU "
           "kernels, fp32 arithmetic";
  switch (spec.dtype) {
    case attn::DType::f16:
      if (target.arch == Halide::Target::ARM) return "f16 converted to fp32 (fcvtl), fp32 arithmetic";
      return target.has_feature(Halide::Target::F16C) ? "f16 converted to fp32 (F16C), fp32 arithmetic"
                                                       : "f16 converted to fp32 in software, fp32 arithmetic";
    case attn::DType::bf16:
      if (amx_tiles(target) && spec.form == attn::Form::block)
        return "bf16 AMX tiles (tdpbf16ps) with fp32 sums in the q/k/v projections that fit them; the "
               "core and the output projection on fp32 activations";
      if (amx_tiles(target) && whole_row_core(spec) && amx_row_core(spec))
        return "bf16 AMX tiles (tdpbf16ps) with fp32 sums for QK^T and P.V in the whole-row core (prefill up "
               "to " +
               std::to_string(whole_row_max_keys_bf16) +
               " keys; mask edges and partial key blocks in vdpbf16ps pairs); elsewhere bf16 converted to "
               "fp32";
      if (bf16_dot_products(target) && spec.form == attn::Form::block)
        return "bf16 dot products (vdpbf16ps) with fp32 sums in the q/k/v projections; the core and "
               "the output projection on fp32 activations";
      if (bf16_dot_products(target) && whole_row_core(spec))
        return "bf16 dot products (vdpbf16ps) with fp32 sums in the whole-row core (prefill up to " +
               std::to_string(whole_row_max_keys_bf16) + " keys); elsewhere bf16 converted to fp32";
      return "bf16 converted to fp32, fp32 arithmetic";
    default:
      return "fp32";
  }
}

}  // namespace

std::string manifest_json(const std::vector<KernelRecord> &kernels, const std::string &basename,
                          const std::string &library_sha256) {
  std::ostringstream o;
  o << "{\n  \"library\": " << json_string(basename) << ",\n";
  if (!library_sha256.empty()) o << "  \"library_sha256\": " << json_string(library_sha256) << ",\n";
  o << "  \"attnc_version\": " << json_string(ATTNC_VERSION) << ",\n"
    << "  \"halide_version\": \"" << HALIDE_VERSION_MAJOR << "." << HALIDE_VERSION_MINOR << "."
    << HALIDE_VERSION_PATCH << "\",\n"
    << "  \"abi_version\": " << ATTN_ABI_VERSION << ",\n"
    << "  \"kernels\": [";
  for (size_t n = 0; n < kernels.size(); ++n) {
    const KernelRecord &k = kernels[n];
    std::string targets;
    for (const std::string &t : k.targets) targets += (targets.empty() ? "" : ",") + t;
    o << (n ? "," : "") << "\n    {\n"
      << "      \"id\": " << json_string(k.id) << ",\n"
      << "      \"spec\": " << json_string(k.spec_text) << ",\n"
      << "      \"target\": " << json_string(targets) << ",\n"
      << "      \"required_cpu_features\": " << json_string(k.required_cpu_features) << ",\n"
      << "      \"variants\": [";
    for (size_t v = 0; v < k.targets.size(); ++v) {
      o << (v ? "," : "") << "\n        {\"target\": " << json_string(k.targets[v])
        << ", \"required_cpu_features\": " << json_string(k.variant_cpu_features[v])
        << ", \"tiles\": " << json_string(k.variant_tiles[v].tiles)
        << ", \"tuned\": " << (k.variant_tiles[v].tuned ? "true" : "false")
        << ", \"compute\": " << json_string(compute_path(k.spec_text, k.targets[v]));
      if (!k.variant_tiles[v].short_tiles.empty())
        o << ", \"short_tiles\": " << json_string(k.variant_tiles[v].short_tiles);
      if (k.variant_tiles[v].blocks)
        o << ", \"block_core_past_keys\": " << k.variant_tiles[v].blocks_past_keys
          << ", \"blocks_tiles\": " << json_string(k.variant_tiles[v].blocks_tiles);
      if (k.variant_tiles[v].packed)
        o << ", \"packed_keys\": [" << packed_min_keys << ", " << packed_max_keys
          << "], \"packed_min_tasks\": " << packed_min_tasks << ", \"packed_keys_many_tasks\": ["
          << packed_min_keys_many_tasks << ", " << packed_max_keys
          << "], \"packed_many_tasks\": " << packed_many_tasks
          << ", \"packed_tiles\": " << json_string(k.variant_tiles[v].packed_tiles);
      o << "}";
    }
    o << "\n      ],\n"
      << "      \"args\": [";
    for (size_t a = 0; a < k.args.size(); ++a) {
      const ArgSpec &arg = k.args[a];
      o << (a ? "," : "") << "\n        {\"name\": " << json_string(arg.name)
        << ", \"dtype\": " << json_string(arg.dtype)
        << ", \"output\": " << (arg.is_output || arg.is_inout ? "true" : "false")
        << (arg.is_inout ? ", \"inout\": true" : "") << ", \"shape\": [";
      for (size_t d = 0; d < arg.dims.size(); ++d) {
        o << (d ? ", " : "");
        if (arg.dims[d].fixed > 0) {
          o << arg.dims[d].fixed;
        } else {
          o << json_string(arg.dims[d].symbol);
        }
      }
      o << "]";
      if (arg.broadcast_dims != 0) {
        o << ", \"broadcast\": [";
        bool first = true;
        for (size_t d = 0; d < arg.dims.size(); ++d) {
          if (!(arg.broadcast_dims >> d & 1u)) continue;
          o << (first ? "" : ", ") << d;
          first = false;
        }
        o << "], \"min_rank\": " << arg.min_rank;
      }
      if (arg.is_optional) o << ", \"optional\": true, \"default\": " << json_number(arg.default_value);
      o << "}";
    }
    o << "\n      ]\n    }";
  }
  o << "\n  ]\n}\n";
  return o.str();
}

}  // namespace attnc

// Drives Halide's generator machinery for each spec, then writes and links attnc's own files.
#include "attnc/compile.h"

#include <Halide.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "attn/kernel_id.h"
#include "attn/spec_text.h"
#include "attn/validate.h"
#include "attnc/arguments.h"
#include "attnc/core_algorithm.h"
#include "attnc/emit.h"
#include "attnc/generator.h"
#include "attnc/schedule_gpu.h"
#include "attnc/targets_gpu.h"
#include "attnc/staging_dir.h"
#include "attnc/targets.h"
#include "attnc/targets_arm.h"
#include "attnc/tile_config.h"
#include "sha256.h"

namespace attnc {
namespace {

namespace fs = std::filesystem;

bool is_identifier(const std::string &s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

bool write_file(const fs::path &path, const std::string &text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  return static_cast<bool>(out);
}

// The SHA-256 of a file's bytes, by the same code the runtime checks it with.
bool file_sha256(const fs::path &path, std::string *hex) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  attn::detail::Sha256 hash;
  std::vector<char> chunk(1 << 16);
  while (in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || in.gcount() > 0)
    hash.update(chunk.data(), static_cast<size_t>(in.gcount()));
  if (in.bad()) return false;
  *hex = attn::detail::hex_digest(hash.digest());
  return true;
}

std::string quote(const std::string &s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs a shell command; on failure returns false with its output in `log`.
bool run_command(const std::string &command, std::string *log) {
  const std::string full = command + " 2>&1";
  FILE *pipe = popen(full.c_str(), "r");
  if (!pipe) {
    *log = "could not start: " + command;
    return false;
  }
  char buf[4096];
  std::string output;
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) output.append(buf, n);
  const int status = pclose(pipe);
  if (status != 0) {
    *log = "command failed: " + command + "\n" + output;
    return false;
  }
  return true;
}

// The entry's C compiler: the one given, else the cross compiler a foreign target needs
// (targets_arm.h), else $CC or cc.
std::string c_compiler(const GenerateOptions &o, const std::string &target) {
  if (!o.cc.empty()) return o.cc;
  if (std::string cross = cross_c_compiler(target); !cross.empty()) return cross;
  if (const char *cc = std::getenv("CC"); cc && *cc) return cc;
  return "cc";
}

// The archiver that knows the target's object format (GNU ar for this machine's own).
std::string archiver(const std::string &target) {
  const std::string cross = cross_archiver(target);
  return cross.empty() ? "ar" : cross;
}

Halide::Target kernel_target(const std::string &t) {
  return Halide::Target(t).with_feature(Halide::Target::NoRuntime).with_feature(Halide::Target::UserContext);
}

// A runtime compatible with every variant: the fallback (last, least capable) target's.
Halide::Target runtime_target(const std::vector<std::string> &targets) {
  return with_gpu_runtimes(Halide::Target(targets.back()).with_feature(Halide::Target::UserContext), targets);
}

bool merge_archives(const std::vector<fs::path> &parts, const fs::path &out, const std::string &ar,
                    std::string *log) {
  // An ar MRI script takes the members of every part into one archive.
  const fs::path script = out.string() + ".mri";
  std::ostringstream mri;
  mri << "create " << out.string() << "\n";
  for (const fs::path &p : parts) mri << "addlib " << p.string() << "\n";
  mri << "save\nend\n";
  if (!write_file(script, mri.str())) {
    *log = "cannot write " + script.string();
    return false;
  }
  fs::remove(out);
  const bool ok = run_command(ar + " -M < " + quote(script.string()), log);
  fs::remove(script);
  return ok;
}

// Everything generate_library does, writing into `staging` only after every spec is read.
GenerateResult generate_into_staging(const GenerateOptions &o, std::chrono::steady_clock::time_point start) {
  GenerateResult result;
  if (!is_identifier(o.basename)) {
    result.message = "basename '" + o.basename + "' must be a C identifier";
    return result;
  }
  if (o.specs.empty()) {
    result.message = "no spec given";
    return result;
  }
  const TargetList targets = expand_targets(o.targets);
  if (!targets.ok) {
    result.message = targets.message;
    return result;
  }
  // Every invalid spec is named, not only the first: a list of specs is fixed in one go.
  std::string invalid;
  for (size_t n = 0; n < o.specs.size(); ++n) {
    const attn::ParseResult parsed = attn::parse_spec(o.specs[n]);
    if (!parsed.ok)
      invalid += (invalid.empty() ? "" : "\n") + ("spec " + std::to_string(n + 1) + " ('" + o.specs[n] + "'): ") +
                 parsed.message;
  }
  if (!invalid.empty()) {
    result.message = invalid;
    return result;
  }
  // Without a C compiler for the target (arm64-osx here) the entry stays source, for the
  // application's own build to compile, and nothing can be linked.
  const bool entry_compiler = !o.cc.empty() || has_c_compiler_for(targets.targets.back());
  if (o.shared && !entry_compiler) {
    result.message = "--shared for " + targets.targets.back() +
                     " needs a linker for that system, and this machine has none: generate without "
                     "--shared and build the entry source with the application there, or give --cc";
    return result;
  }
  std::vector<KernelRecord> kernels;
  std::set<std::string> seen;
  for (size_t n = 0; n < o.specs.size(); ++n) {
    const attn::ParseResult parsed = attn::parse_spec(o.specs[n]);
    const attn::Spec spec = attn::resolve(parsed.spec);
    KernelRecord k;
    k.id = attn::kernel_id(spec);
    if (!seen.insert(k.id).second) continue;
    k.spec_text = attn::to_string(spec);
    for (const std::string &t : targets.targets)
      if (amx_variant_pays(spec, t, targets.targets)) k.targets.push_back(t);
    for (const std::string &t : k.targets) {
      if (runs_on_gpu(Halide::Target(t))) {
        // One pipeline, the GPU block core at gpu_tiles() (CPU tunings do not apply); its host
        // code is the baseline's.
        k.variant_cpu_features.push_back(required_cpu_features(t));
        VariantTiles gpu;
        gpu.gpu = true;
        k.variant_tiles.push_back(gpu);
        continue;
      }
      k.variant_cpu_features.push_back(required_cpu_features(t));
      const VectorUnit unit = target_vector_unit(t);
      const int lanes = unit.lanes;
      CpuTiles tiles = cpu_tiles(spec, unit);
      const TileOverride *tuned = find_override(o.tile_overrides, k.id, lanes);
      if (tuned != nullptr) {
        std::string error;
        if (!apply_tiles_text(tuned->tiles, &tiles, &error) || !(error = tile_problem(spec, tiles)).empty()) {
          result.message = "kernel " + k.id + ": tuned tiles '" + tuned->tiles + "' for " +
                           std::to_string(lanes) + " lanes: " + error;
          return result;
        }
      }
      VariantTiles v;
      v.tiles = core_tiles_text(tiles);
      v.tuned = tuned != nullptr;
      v.query_tile = tiles.query_tile;
      v.key_block = tiles.key_block;
      // Tuned tiles serve every shape: the user measured them for theirs.
      const CpuTiles short_tiles = cpu_tiles_short(spec, unit);
      if (spec.form == attn::Form::core && !whole_row_core(spec) && !v.tuned && short_tiles.query_tile > 0 &&
          core_tiles_text(short_tiles) != v.tiles) {
        v.short_tiles = core_tiles_text(short_tiles);
        v.short_query_tile = short_tiles.query_tile;
        v.short_key_block = short_tiles.key_block;
      }
      v.blocks = whole_row_core(spec);
      if (v.blocks) v.blocks_tiles = v.tuned ? v.tiles : core_tiles_text(cpu_tiles_blocks(spec, unit));
      v.blocks_past_keys =
          whole_rows_in_bf16(spec, Halide::Target(t)) ? whole_row_max_keys_bf16 : whole_row_max_keys;
      v.packed = packs_head_rows(spec);
      if (v.packed) v.packed_tiles = v.tuned ? v.tiles : core_tiles_text(cpu_tiles_packed(spec, unit));
      // A backward kernel is one pipeline for every shape (pipeline_backward.h), as the block-mask
      // pass is (pipeline_block_mask.h).
      if (spec.backward_pass || spec.block_mask == attn::BlockMask::pass) {
        v.short_tiles.clear();
        v.blocks = v.packed = false;
      }
      k.variant_tiles.push_back(v);
    }
    k.required_cpu_features = k.variant_cpu_features.back();
    k.args = kernel_arguments(spec);
    k.spec = spec;
    if (runs_per_sequence(spec)) {
      // The entry calls the attention per sequence, with its own Sq and Sk (emit_sequence.cpp).
      k.inner_args = sequence_pipeline_args(spec, spec.kv_cache == attn::KvCache::paged ? "paged" : "attend");
      k.q_arg = 0;
      k.k_arg = 1;
    }
    if (spec.form == attn::Form::core && !runs_per_sequence(spec)) {
      for (size_t a = 0; a < k.args.size(); ++a)
        if (k.args[a].name == "q")
          k.q_arg = static_cast<int>(a);
        else if (k.args[a].name == "k")
          k.k_arg = static_cast<int>(a);
    }
    if (spec.form == attn::Form::core) {
      // The same threshold for every target: the tile sizes' own (AVX2 and AVX-512 agree).
      // A block mask is read by the block core only (packs_head_rows), not by split keys.
      k.split_keys_max_queries = spec.backward_pass || spec.block_mask != attn::BlockMask::none
                                     ? 0
                                     : cpu_tiles(spec, 8).split_keys_max_queries;
      k.heads = spec.heads;
    }
    kernels.push_back(std::move(k));
  }

  // Every file is written into a staging directory inside the output directory and moved into
  // place at the end, so a run that fails (or is killed) leaves the output directory as it was.
  std::error_code ec;
  fs::create_directories(o.out_dir, ec);
  if (ec) {
    result.message = "cannot create output directory '" + o.out_dir + "': " + ec.message();
    return result;
  }
  StagingDir staging(o.out_dir);
  if (!staging.ok()) {
    result.message = staging.error();
    return result;
  }
  const fs::path dir = staging.path();
  // The paths reported: where each file will be once published.
  std::vector<std::string> written;
  auto published = [&](const fs::path &staged) {
    written.push_back((fs::path(o.out_dir) / staged.lexically_relative(dir)).string());
  };

  std::vector<fs::path> archives;
  for (const KernelRecord &k : kernels) {
    // Per variant: the main pipeline, the short-sequence one, the packed one, the block core for
    // long keys (whole-row specs), the decode one.
    // One Halide function per target rather than Halide's multitarget wrapper: that wrapper
    // caches its first choice, and the runtime must be able to pick (attn_set_max_isa).
    for (size_t v = 0; v < k.targets.size(); ++v) {
      const VariantTiles &tiles = k.variant_tiles[v];
      struct Pipeline {
        std::string name, core_path, tiles, role = "attend";
      };
      const std::string suffix = "_v" + std::to_string(v);
      const std::string role = k.spec.kv_cache == attn::KvCache::paged ? "paged" : "attend";
      std::vector<Pipeline> pipelines = {{k.id + suffix, "tiles", tiles.tuned ? tiles.tiles : "", role}};
      if (!tiles.short_tiles.empty())
        pipelines.push_back({k.id + "_short" + suffix, "tiles", tiles.short_tiles, role});
      if (tiles.packed) pipelines.push_back({k.id + "_packed" + suffix, "packed", tiles.packed_tiles, role});
      if (tiles.blocks) pipelines.push_back({k.id + "_blocks" + suffix, "blocks", tiles.blocks_tiles, role});
      if (k.split_keys_max_queries > 0)
        pipelines.push_back({k.id + "_split_keys" + suffix, "split_keys", "", role});
      if (k.spec.kv_cache != attn::KvCache::none)
        pipelines.push_back({k.id + "_append" + suffix, "tiles", "", "append"});
      for (const Pipeline &p : pipelines) {
        Halide::Internal::ExecuteGeneratorArgs args;
        args.output_dir = dir.string();
        // No per-variant C header: the entry declares each variant itself, and the library's one
        // header is the only one a user sees.
        args.output_types = {Halide::OutputFileType::static_library};
        if (o.emit_stmt) args.output_types.insert(Halide::OutputFileType::stmt);
        if (o.emit_assembly) args.output_types.insert(Halide::OutputFileType::assembly);
        args.targets = {kernel_target(k.targets[v])};
        args.generator_name = "attn_kernel";
        args.function_name = p.name;
        args.file_base_name = o.basename + "_" + p.name;
        args.create_generator = [](const std::string &, const Halide::GeneratorContext &context) {
          return create_attention_generator(context);
        };
        args.generator_params = {{"spec", k.spec_text}, {"core_path", p.core_path}};
        if (runs_per_sequence(k.spec)) args.generator_params["role"] = p.role;
        if (!p.tiles.empty()) args.generator_params["tiles"] = p.tiles;
        try {
          Halide::Internal::execute_generator(args);
        } catch (const Halide::Error &e) {
          result.message = "kernel " + p.name + " (" + k.targets[v] + "): Halide failed: " + e.what();
          return result;
        }
        archives.push_back(dir / (args.file_base_name + ".a"));
      }
    }
    result.ids.push_back(k.id);
    if (o.verbose)
      std::fprintf(stderr, "attnc: generated %s for %zu target(s)\n", k.id.c_str(), k.targets.size());
  }

  const fs::path archive = dir / (o.basename + ".a");
  if (!merge_archives(archives, archive, archiver(targets.targets.back()), &result.message)) return result;
  for (const fs::path &p : archives) fs::remove(p);
  published(archive);

  const fs::path entry = dir / (o.basename + "_entry.c");
  const fs::path header = dir / (o.basename + ".h");
  const fs::path manifest = dir / (o.basename + ".json");
  if (!write_file(entry, entry_source(kernels, o.basename)) ||
      !write_file(header, library_header(kernels, o.basename)) ||
      !write_file(manifest, manifest_json(kernels, o.basename))) {
    result.message = "cannot write into '" + dir.string() + "'";
    return result;
  }
  for (const fs::path &p : {entry, header, manifest}) published(p);

  const fs::path runtime = dir / (o.basename + "_runtime.a");
  if (o.emit_runtime || o.shared) {
    try {
      Halide::compile_standalone_runtime({{Halide::OutputFileType::static_library, runtime.string()}},
                                         runtime_target(targets.targets));
    } catch (const Halide::Error &e) {
      result.message = std::string("Halide runtime: ") + e.what();
      return result;
    }
    published(runtime);
  }

  if ((o.compile_entry || o.shared) && !entry_compiler)
    std::fprintf(stderr, "attnc: no C compiler for %s here: %s is left as source\n",
                 targets.targets.back().c_str(), entry.filename().c_str());
  if ((o.compile_entry || o.shared) && entry_compiler) {
    const fs::path include = dir / "include";
    for (const EmbeddedHeader &h : abi_headers()) {
      fs::create_directories((include / h.path).parent_path());
      if (!write_file(include / h.path, h.text)) {
        result.message = "cannot write '" + (include / h.path).string() + "'";
        return result;
      }
    }
    const fs::path object = dir / (o.basename + "_entry.o");
    const std::string cc = c_compiler(o, targets.targets.back());
    std::string flags = " -O2 -fPIC -fvisibility=hidden -I" + quote(include.string());
    flags += o.shared ? " -DATTN_LIBRARY_TABLE" : " -DATTN_STATIC_REGISTRY";
    if (!run_command(cc + flags + " -c " + quote(entry.string()) + " -o " + quote(object.string()),
                     &result.message))
      return result;
    if (o.shared) {
      const fs::path so = dir / (o.basename + ".so");
      const std::string link = cc + " -shared -o " + quote(so.string()) + " " + quote(object.string()) +
                               " -Wl,--whole-archive " + quote(archive.string()) +
                               " -Wl,--no-whole-archive " + quote(runtime.string()) + " -lpthread -ldl -lm";
      if (!run_command(link, &result.message)) return result;
      // The manifest records the linked file's hash: attn_library_open refuses any other file.
      std::string sha256;
      if (!file_sha256(so, &sha256) || !write_file(manifest, manifest_json(kernels, o.basename, sha256))) {
        result.message = "cannot hash '" + so.string() + "' into its manifest '" + manifest.string() + "'";
        return result;
      }
      published(so);
    } else if (!run_command(archiver(targets.targets.back()) + " r " + quote(archive.string()) + " " + quote(object.string()),
                            &result.message)) {
      return result;
    }
    fs::remove(object);
  }
  if (!staging.commit(&result.message)) return result;
  result.files = written;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.ok = true;
  return result;
}

}  // namespace

GenerateResult generate_library(const GenerateOptions &o) {
  const auto start = std::chrono::steady_clock::now();
  try {
    return generate_into_staging(o, start);
  } catch (const std::exception &e) {  // bad_alloc, filesystem_error: the staging directory is gone
    GenerateResult result;
    result.message = std::string("generation failed: ") + e.what();
    return result;
  }
}

GenerateResult generate_runtime(const std::string &target_spec, const std::string &out_file) {
  GenerateResult result;
  const TargetList targets = expand_targets(target_spec);
  if (!targets.ok) {
    result.message = targets.message;
    return result;
  }
  const fs::path out(out_file);
  std::error_code ec;
  if (!out.has_filename() || fs::is_directory(out, ec)) {
    result.message =
        "runtime output '" + out_file + "' is a directory; expected a file name such as DIR/runtime.a";
    return result;
  }
  const fs::path parent = out.has_parent_path() ? out.parent_path() : fs::path(".");
  fs::create_directories(parent, ec);
  if (ec) {
    result.message = "cannot create output directory '" + parent.string() + "': " + ec.message();
    return result;
  }
  StagingDir staging(parent);  // as in generate_library: no half-written FILE.a on failure
  if (!staging.ok()) {
    result.message = staging.error();
    return result;
  }
  try {
    Halide::compile_standalone_runtime(
        {{Halide::OutputFileType::static_library, (staging.path() / out.filename()).string()}},
        runtime_target(targets.targets));
  } catch (const Halide::Error &e) {
    result.message = std::string("Halide runtime: ") + e.what();
    return result;
  }
  if (!staging.commit(&result.message)) return result;
  result.files.push_back(out_file);
  result.ok = true;
  return result;
}

}  // namespace attnc

// attnc/compile.h: spec texts + targets -> a kernel library on disk (what `attnc gen` does).
#pragma once

#include <string>
#include <vector>

#include "attnc/tuning.h"

namespace attnc {

struct GenerateOptions {
  std::vector<std::string> specs;  // text forms; equal ids are generated once
  std::string targets = "host";    // see expand_targets()
  std::string out_dir;
  std::string basename;        // a C identifier; files are <basename>.a/.so/.h/.json/_entry.c
  bool shared = false;         // also link <basename>.so (kernels + entry + Halide runtime)
  bool emit_runtime = true;    // write <basename>_runtime.a (one per application)
  bool compile_entry = true;   // compile the entry into <basename>.a (needs a C compiler)
  std::string cc;              // C compiler; default: the cross compiler of a foreign target, $CC or "cc"
  bool emit_stmt = false;      // also write Halide's lowered statement (<basename>_<id>.stmt)
  bool emit_assembly = false;  // also write the generated assembly (<basename>_<id>.s)
  bool verbose = false;
  // Tile sizes per (kernel id, lanes) that replace the defaults (attnc gen --tuning FILE).
  std::vector<TileOverride> tile_overrides;
};

struct GenerateResult {
  bool ok = false;
  std::string message;
  std::vector<std::string> ids;
  std::vector<std::string> files;
  double seconds = 0;
};

GenerateResult generate_library(const GenerateOptions &options);

// Only the Halide runtime, for the dispatch set `targets`: <out_file> (a static library).
GenerateResult generate_runtime(const std::string &targets, const std::string &out_file);

}  // namespace attnc

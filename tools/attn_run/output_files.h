// output_files.h: attn-run's output files: every path checked before the run, then all written or none.
#pragma once

#include <string>
#include <vector>

#include "npy.h"

namespace attn::run_tool {

struct OutputFile {
  std::string name;  // the kernel's output argument
  std::string path;
};

// Refuses, naming the output and its path, a path whose folder does not exist or cannot be
// written, a path that is a folder, and two outputs naming one file (compared canonically,
// so "a.npy" and "./a.npy" are the same file).
bool check_output_paths(const std::vector<OutputFile> &outputs, std::string *error);

// Writes arrays[i] to outputs[i].path: each to a temporary file in its own folder first, then,
// once every one is written, renamed into place. On a failure the temporary files are removed
// and no output file is touched.
bool write_outputs_atomically(const std::vector<OutputFile> &outputs,
                              const std::vector<const npy::Array *> &arrays, std::string *error);

}  // namespace attn::run_tool

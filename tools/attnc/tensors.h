// tensors.h: `attnc tensors`, the tensors a spec's kernel takes, or docs/DSL.md's table of them all.
#pragma once

namespace attnc::tool {

// argv[2..]: the tensors command's arguments. Returns the process exit code.
int run_tensors(int argc, char **argv);

}  // namespace attnc::tool

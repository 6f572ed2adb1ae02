// attnc/tensor_table.h: docs/DSL.md's table of every kernel family's tensors, from kernel_arguments.
#pragma once

#include <string>

namespace attnc {

// Markdown: per kernel family (core, block, cross-attention block, contiguous and paged KV cache,
// varlen), each tensor kernel_arguments gives it, with its shape (fixed sizes by their labels),
// dtype, direction and the spec setting that adds it. `attnc tensors --markdown` prints it and
// tests/codegen/tensors_doc.cmake checks that docs/DSL.md holds it unchanged.
std::string tensor_table_markdown();

}  // namespace attnc

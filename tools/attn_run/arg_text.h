// arg_text.h: one kernel argument as `attn-run --list` prints it ("q f32 [B, Sq, 2, 16]").
#pragma once

#include <string>

#include "attn/runtime.h"

namespace attn::run_tool {

// "[B, Sq, 2, 4]": fixed sizes as numbers, run-time sizes by name; a dim that broadcasts reads "B|1".
std::string shape_text(const attn_arg_info &info);

// "mask u8 [B|1, 2|1, Sq, Sk] (min rank 2)", then " (output)" or " (in-out)", and for an optional
// input " (optional, default 0.125000)". attnc tensors --spec prints the same from the generator's
// table, so that the two can be compared (tests/codegen/tensors_doc.cmake).
std::string arg_text(const attn_arg_info &info);

}  // namespace attn::run_tool

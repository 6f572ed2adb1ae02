// arg_text.cpp: the --list form of one kernel argument.
#include "arg_text.h"

#include "attn/runtime.hpp"

namespace attn::run_tool {

std::string shape_text(const attn_arg_info &info) {
  std::string text = "[";
  for (int d = 0; d < info.rank; ++d) {
    if (d > 0) text += ", ";
    text += info.fixed_shape[d] > 0        ? std::to_string(info.fixed_shape[d])
            : info.dim_names[d] != nullptr ? info.dim_names[d]
                                           : "?";
    if (attn::rt::dim_broadcasts(info, d)) text += "|1";
  }
  return text + "]";
}

std::string arg_text(const attn_arg_info &info) {
  const int lowest = attn::rt::lowest_rank(info);
  std::string text = std::string(info.name) + " " + attn_dtype_name(info.dtype) + " " + shape_text(info);
  if (lowest < info.rank) text += " (min rank " + std::to_string(lowest) + ")";
  text += info.is_output == ATTN_ARG_INOUT ? " (in-out)" : info.is_output ? " (output)" : "";
  if (info.is_optional) text += " (optional, default " + std::to_string(info.default_value) + ")";
  return text;
}

}  // namespace attn::run_tool

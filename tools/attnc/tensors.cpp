// tensors.cpp: `attnc tensors --spec TEXT` lists a kernel's arguments as `attn-run --list` does,
// from the generator's own table; `attnc tensors --markdown` prints docs/DSL.md's tensor table.
#include "tensors.h"

#include <cstdio>
#include <string>
#include <vector>

#include "arg_text.h"
#include "attn/kernel_id.h"
#include "attn/runtime.h"
#include "attn/spec_text.h"
#include "attn/validate.h"
#include "attnc/arguments.h"
#include "attnc/tensor_table.h"
#include "command_line.h"

namespace attnc::tool {
namespace {

const char *usage =
    "usage: attnc tensors --spec TEXT\n"
    "       attnc tensors --markdown\n"
    "--spec: the kernel id, then every tensor the spec's kernel takes, in order, as `attn-run LIB\n"
    "--list` prints them (name, dtype, shape outermost first, output or in-out).\n"
    "--markdown: every kernel family's tensors with shape, dtype, direction and the setting that adds\n"
    "them: the table in docs/DSL.md (Tensors), generated from the same code as the kernels.\n";

int usage_error(const std::string &message) {
  std::fprintf(stderr, "attnc: %s\n%s", message.c_str(), usage);
  return 2;
}

attn_dtype dtype_of(const std::string &name) {
  for (attn_dtype d : {ATTN_F32, ATTN_F16, ATTN_BF16, ATTN_I32, ATTN_U8, ATTN_I8, ATTN_U64}) {
    if (name == attn_dtype_name(d)) return d;
  }
  return ATTN_F32;  // kernel_arguments gives only the names above
}

// The runtime's view of one argument; its strings point into `a`, which must outlive it.
attn_arg_info arg_info(const ArgSpec &a) {
  attn_arg_info info{};
  info.name = a.name.c_str();
  info.dtype = dtype_of(a.dtype);
  info.rank = static_cast<int32_t>(a.dims.size());
  info.is_output = a.is_inout ? ATTN_ARG_INOUT : a.is_output ? 1 : 0;
  for (size_t d = 0; d < a.dims.size() && d < ATTN_MAX_RANK; ++d) {
    info.fixed_shape[d] = a.dims[d].fixed;
    info.dim_names[d] = a.dims[d].symbol.c_str();
  }
  info.broadcast_dims = a.broadcast_dims;
  info.min_rank = a.min_rank;
  info.is_optional = a.is_optional ? 1 : 0;
  info.default_value = a.default_value;
  return info;
}

}  // namespace

int run_tensors(int argc, char **argv) {
  const CommandLine line = parse_command_line(argc, argv, 2, {"--spec"}, {"--markdown"});
  if (line.help) return std::fputs(usage, stdout), 0;
  if (!line.error.empty()) return usage_error(line.error);
  std::string text, error;
  if (!line.single("--spec", &text, &error)) return usage_error(error);
  if (line.has("--markdown") == line.has("--spec"))
    return usage_error("tensors takes one of --spec TEXT and --markdown");
  if (line.has("--markdown")) return std::fputs(tensor_table_markdown().c_str(), stdout), 0;
  const attn::ParseResult parsed = attn::parse_spec(text);
  if (!parsed.ok) {
    std::fprintf(stderr, "attnc: %s\n", parsed.message.c_str());
    return 1;
  }
  const std::vector<ArgSpec> args = kernel_arguments(attn::resolve(parsed.spec));
  std::printf("%s\n", attn::kernel_id(parsed.spec).c_str());
  const char *label = "  args:   ";
  for (const ArgSpec &a : args) {
    std::printf("%s%s\n", label, attn::run_tool::arg_text(arg_info(a)).c_str());
    label = "          ";
  }
  return 0;
}

}  // namespace attnc::tool

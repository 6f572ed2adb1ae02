// Derives the kernel's argument list from a resolved spec.
#include "attnc/arguments.h"

namespace attnc {
namespace {
ArgDim sym(const char *name) { return ArgDim{0, name}; }
ArgDim fix(int64_t n) { return ArgDim{n, {}}; }
ArgSpec tensor(std::string name, std::vector<ArgDim> dims, bool output = false) {
  ArgSpec a;
  a.name = std::move(name);
  a.dims = std::move(dims);
  a.is_output = output;
  return a;
}
}  // namespace

std::vector<ArgSpec> kernel_arguments(const attn::Spec &s) {
  const int64_t h = s.heads, kvh = s.kv_heads, d = s.head_dim, dv = s.head_dim_v, m = s.d_model;
  std::vector<ArgSpec> args;
  if (s.form == attn::Form::core) {
    args.push_back(tensor("q", {sym("B"), sym("Sq"), fix(h), fix(d)}));
    args.push_back(tensor("k", {sym("B"), sym("Sk"), fix(kvh), fix(d)}));
    args.push_back(tensor("v", {sym("B"), sym("Sk"), fix(kvh), fix(dv)}));
    args.push_back(tensor("out", {sym("B"), sym("Sq"), fix(h), fix(dv)}, true));
    return args;
  }
  args.push_back(tensor("x", {sym("B"), sym("S"), fix(m)}));
  if (s.qkv == attn::Qkv::fused) {
    const int64_t rows = h * d + kvh * d + kvh * dv;
    args.push_back(tensor("w_qkv", {fix(rows), fix(m)}));
    if (s.proj_bias) args.push_back(tensor("b_qkv", {fix(rows)}));
  } else {
    args.push_back(tensor("w_q", {fix(h * d), fix(m)}));
    args.push_back(tensor("w_k", {fix(kvh * d), fix(m)}));
    args.push_back(tensor("w_v", {fix(kvh * dv), fix(m)}));
    if (s.proj_bias) {
      args.push_back(tensor("b_q", {fix(h * d)}));
      args.push_back(tensor("b_k", {fix(kvh * d)}));
      args.push_back(tensor("b_v", {fix(kvh * dv)}));
    }
  }
  args.push_back(tensor("w_o", {fix(m), fix(h * dv)}));
  if (s.proj_bias) args.push_back(tensor("b_o", {fix(m)}));
  args.push_back(tensor("out", {sym("B"), sym("S"), fix(m)}, true));
  return args;
}

}  // namespace attnc

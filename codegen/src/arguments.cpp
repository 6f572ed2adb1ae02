// Derives the kernel's argument list from a resolved spec.
#include "attnc/arguments.h"

namespace attnc {
namespace {
ArgDim sym(const char *name) { return ArgDim{0, name}; }
ArgDim fix(int64_t n) { return ArgDim{n, {}}; }
ArgSpec tensor(std::string name, std::vector<ArgDim> dims, bool output = false, std::string dtype = "f32") {
  ArgSpec a;
  a.name = std::move(name);
  a.dims = std::move(dims);
  a.is_output = output;
  a.dtype = std::move(dtype);
  return a;
}

// [B, H, Sq, Sk] with B and H broadcastable: [Sq,Sk], [B,Sq,Sk] and [B,H,Sq,Sk] all work.
ArgSpec score_shaped(std::string name, std::string dtype, int64_t heads, const char *sq, const char *sk) {
  ArgSpec a = tensor(std::move(name), {sym("B"), fix(heads), sym(sq), sym(sk)}, false, std::move(dtype));
  a.broadcast_dims = 0x3;
  a.min_rank = 2;
  return a;
}

// The runtime inputs of masks and modifiers, then the outputs, shared by both forms.
void append_mask_inputs(const attn::Spec &s, const char *sq, const char *sk, std::vector<ArgSpec> &args) {
  if (s.mask.uses(attn::MaskOp::padding)) args.push_back(tensor("key_lengths", {sym("B")}, false, "i32"));
  if (s.mask.uses(attn::MaskOp::prefix)) args.push_back(tensor("prefix_lengths", {sym("B")}, false, "i32"));
  if (s.mask.uses(attn::MaskOp::document)) {
    args.push_back(tensor("segment_ids_q", {sym("B"), sym(sq)}, false, "i32"));
    args.push_back(tensor("segment_ids_k", {sym("B"), sym(sk)}, false, "i32"));
  }
  if (s.mask.uses(attn::MaskOp::tensor)) args.push_back(score_shaped("mask", "u8", s.heads, sq, sk));
  if (s.alibi) args.push_back(tensor("alibi_slopes", {fix(s.heads)}));
  if (s.score_bias) args.push_back(score_shaped("score_bias", "f32", s.heads, sq, sk));
}
}  // namespace

std::vector<ArgSpec> kernel_arguments(const attn::Spec &s) {
  const int64_t h = s.heads, kvh = s.kv_heads, d = s.head_dim, dv = s.head_dim_v, m = s.d_model;
  std::vector<ArgSpec> args;
  if (s.form == attn::Form::core) {
    args.push_back(tensor("q", {sym("B"), sym("Sq"), fix(h), fix(d)}));
    args.push_back(tensor("k", {sym("B"), sym("Sk"), fix(kvh), fix(d)}));
    args.push_back(tensor("v", {sym("B"), sym("Sk"), fix(kvh), fix(dv)}));
    append_mask_inputs(s, "Sq", "Sk", args);
    args.push_back(tensor("out", {sym("B"), sym("Sq"), fix(h), fix(dv)}, true));
    if (s.lse) args.push_back(tensor("lse", {sym("B"), sym("Sq"), fix(h)}, true));
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
  append_mask_inputs(s, "S", "S", args);
  args.push_back(tensor("out", {sym("B"), sym("S"), fix(m)}, true));
  if (s.lse) args.push_back(tensor("lse", {sym("B"), sym("S"), fix(h)}, true));
  return args;
}

}  // namespace attnc

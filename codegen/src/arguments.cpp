// Derives the kernel's argument list from a resolved spec.
#include "attnc/arguments.h"

namespace attnc {
namespace {
ArgDim sym(const char *name) { return ArgDim{0, name}; }
// A fixed size, with the label error messages use for it ("H", "D", "d_model", ...).
ArgDim fix(int64_t n, const char *label) { return ArgDim{n, label}; }
ArgSpec tensor(std::string name, std::vector<ArgDim> dims, bool output = false, std::string dtype = "f32") {
  ArgSpec a;
  a.name = std::move(name);
  a.dims = std::move(dims);
  a.is_output = output;
  a.dtype = std::move(dtype);
  return a;
}

// [B, H, Sq, Sk] with B and H broadcastable, aligned from the right as in NumPy: [Sq,Sk],
// [H,Sq,Sk], [B,H,Sq,Sk] and size-1 B or H ([B,1,Sq,Sk] per batch) all work.
ArgSpec score_shaped(std::string name, std::string dtype, int64_t heads, const char *sq, const char *sk) {
  ArgSpec a = tensor(std::move(name), {sym("B"), fix(heads, "H"), sym(sq), sym(sk)}, false, std::move(dtype));
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
  if (s.alibi) args.push_back(tensor("alibi_slopes", {fix(s.heads, "H")}));
  if (s.score_bias) args.push_back(score_shaped("score_bias", "f32", s.heads, sq, sk));
  if (s.runtime_scale) {
    // A scalar the caller may leave out: the kernel then reads the spec's scale.
    ArgSpec scale = tensor("scale", {});
    scale.is_optional = true;
    scale.default_value = s.scale;
    args.push_back(scale);
  }
}
}  // namespace

std::vector<ArgSpec> kernel_arguments(const attn::Spec &s) {
  // The float tensors in the spec's storage type; lse, masks and index inputs keep theirs.
  const std::string t = attn::dtype_name(s.dtype);
  const int64_t h = s.heads, kvh = s.kv_heads, d = s.head_dim, dv = s.head_dim_v, m = s.d_model;
  std::vector<ArgSpec> args;
  if (s.form == attn::Form::core) {
    args.push_back(tensor("q", {sym("B"), sym("Sq"), fix(h, "H"), fix(d, "D")}, false, t));
    args.push_back(tensor("k", {sym("B"), sym("Sk"), fix(kvh, "KVH"), fix(d, "D")}, false, t));
    args.push_back(tensor("v", {sym("B"), sym("Sk"), fix(kvh, "KVH"), fix(dv, "Dv")}, false, t));
    append_mask_inputs(s, "Sq", "Sk", args);
    args.push_back(tensor("out", {sym("B"), sym("Sq"), fix(h, "H"), fix(dv, "Dv")}, true, t));
    if (s.lse) args.push_back(tensor("lse", {sym("B"), sym("Sq"), fix(h, "H")}, true));
    return args;
  }
  // Self-attention: one length S. Cross-attention: queries from x [B,Sq,d_model], keys and values
  // from x_kv [B,Sk,d_model].
  const char *sq = s.cross_attention ? "Sq" : "S", *sk = s.cross_attention ? "Sk" : "S";
  args.push_back(tensor("x", {sym("B"), sym(sq), fix(m, "d_model")}, false, t));
  if (s.cross_attention) args.push_back(tensor("x_kv", {sym("B"), sym(sk), fix(m, "d_model")}, false, t));
  if (s.qkv == attn::Qkv::fused) {
    const int64_t rows = h * d + kvh * d + kvh * dv;
    args.push_back(tensor("w_qkv", {fix(rows, "(H+KVH)*D+KVH*Dv"), fix(m, "d_model")}, false, t));
    if (s.proj_bias) args.push_back(tensor("b_qkv", {fix(rows, "(H+KVH)*D+KVH*Dv")}, false, t));
  } else {
    args.push_back(tensor("w_q", {fix(h * d, "H*D"), fix(m, "d_model")}, false, t));
    args.push_back(tensor("w_k", {fix(kvh * d, "KVH*D"), fix(m, "d_model")}, false, t));
    args.push_back(tensor("w_v", {fix(kvh * dv, "KVH*Dv"), fix(m, "d_model")}, false, t));
    if (s.proj_bias) {
      args.push_back(tensor("b_q", {fix(h * d, "H*D")}, false, t));
      args.push_back(tensor("b_k", {fix(kvh * d, "KVH*D")}, false, t));
      args.push_back(tensor("b_v", {fix(kvh * dv, "KVH*Dv")}, false, t));
    }
  }
  args.push_back(tensor("w_o", {fix(m, "d_model"), fix(h * dv, "H*Dv")}, false, t));
  if (s.proj_bias) args.push_back(tensor("b_o", {fix(m, "d_model")}, false, t));
  append_mask_inputs(s, sq, sk, args);
  args.push_back(tensor("out", {sym("B"), sym(sq), fix(m, "d_model")}, true, t));
  if (s.lse) args.push_back(tensor("lse", {sym("B"), sym(sq), fix(h, "H")}, true));
  return args;
}

}  // namespace attnc

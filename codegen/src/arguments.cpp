// Derives the kernel's argument list from a resolved spec.
#include "attnc/arguments.h"

#include <cstring>

#include "attn/validate.h"

namespace attnc {
namespace {
ArgDim sym(const char *name) {
  return ArgDim{0, name};
}
// A fixed size, with the label error messages use for it ("H", "D", "d_model", ...).
ArgDim fix(int64_t n, const char *label) {
  return ArgDim{n, label};
}
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

// The tensors score_mod / mask_mod capture (inputs=, issue 34), as declared: B, Sq, Sk run-time
// sizes, H and KVH the spec's, integers fixed.
void append_captured_inputs(const attn::Spec &s, const char *sq, const char *sk, std::vector<ArgSpec> &args) {
  constexpr const char *dtypes[] = {"f32", "i32", "u8"};
  for (int t = 0; t < s.captured.count; ++t) {
    const attn::CapturedInput &c = s.captured.items[t];
    std::vector<ArgDim> dims;
    for (int d = 0; d < c.rank; ++d) {
      switch (c.dims[d]) {
        case attn::dim::B:
          dims.push_back(sym("B"));
          break;
        case attn::dim::Sq:
          dims.push_back(sym(sq));
          break;
        case attn::dim::Sk:
          dims.push_back(sym(sk));
          break;
        case attn::dim::H:
          dims.push_back(fix(s.heads, "H"));
          break;
        case attn::dim::KVH:
          dims.push_back(fix(s.kv_heads, "KVH"));
          break;
        default:
          dims.push_back(ArgDim{c.dims[d], std::to_string(c.dims[d])});
          break;
      }
    }
    args.push_back(tensor(std::string(c.name, strnlen(c.name, attn::max_input_name)), dims, false,
                          dtypes[static_cast<int>(c.dtype)]));
  }
}

// The run-time block mask (issue 34, docs/DSL.md "Block masks"): [B, H, ceil(Sq/128),
// ceil(Sk/128)] u8. The attention kernel's input broadcasts B and H like the mask tensor; the
// pass's output has B (H) only where the mask_mod reads b (h or kvh), else a fixed 1.
ArgSpec block_mask_arg(const attn::Spec &s, bool output) {
  const std::string rows = "ceil(Sq/" + std::to_string(attn::block_mask_rows) + ")";
  const std::string keys = "ceil(Sk/" + std::to_string(attn::block_mask_keys) + ")";
  if (!output) {
    ArgSpec a =
        tensor("block_mask", {sym("B"), fix(s.heads, "H"), ArgDim{0, rows}, ArgDim{0, keys}}, false, "u8");
    a.broadcast_dims = 0x3;
    a.min_rank = 2;
    return a;
  }
  const bool per_batch = s.mask_mod.uses_var(attn::ExprVar::b);
  const bool per_head = s.mask_mod.uses_var(attn::ExprVar::h) || s.mask_mod.uses_var(attn::ExprVar::kvh);
  return tensor("block_mask",
                {per_batch ? sym("B") : fix(1, "1"), per_head ? fix(s.heads, "H") : fix(1, "1"),
                 ArgDim{0, rows}, ArgDim{0, keys}},
                true, "u8");
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
  append_captured_inputs(s, sq, sk, args);
  if (s.block_mask == attn::BlockMask::input) args.push_back(block_mask_arg(s, false));
  if (s.runtime_scale) {
    // A scalar the caller may leave out: the kernel then reads the spec's scale.
    ArgSpec scale = tensor("scale", {});
    scale.is_optional = true;
    scale.default_value = s.scale;
    args.push_back(scale);
  }
  if (s.has_dropout) {
    // Dropout's Philox key and counter offset (docs/DSL.md "Dropout"): scalars, rank 0 or [1].
    args.push_back(tensor("seed", {}, false, "u64"));
    args.push_back(tensor("offset", {}, false, "u64"));
  }
}
}  // namespace

namespace {
// The caches' element type: the spec's dtype, int8 codes ("i8") or e4m3 bytes ("u8").
std::string cache_dtype(const attn::Spec &s) {
  return s.kv_dtype == attn::KvDType::int8       ? "i8"
         : s.kv_dtype == attn::KvDType::fp8_e4m3 ? "u8"
                                                 : attn::dtype_name(s.dtype);
}

// k_scale, v_scale after the caches: int8, one f32 per cached token and KV head (in-out, shaped
// `token_dims`: the cache's dims without head_dim); fp8_e4m3, scalar f32 inputs; else none.
void append_cache_scales(const attn::Spec &s, const std::vector<ArgDim> &token_dims,
                         std::vector<ArgSpec> &args) {
  for (const char *name : {"k_scale", "v_scale"}) {
    if (s.kv_dtype == attn::KvDType::int8) {
      args.push_back(tensor(name, token_dims));
      args.back().is_inout = true;
    } else if (s.kv_dtype == attn::KvDType::fp8_e4m3) {
      args.push_back(tensor(name, {}));
    }
  }
}

// The issue-24 core forms: a KV cache (contiguous or paged) or the varlen layout.
std::vector<ArgSpec> sequence_arguments(const attn::Spec &s) {
  const std::string t = attn::dtype_name(s.dtype);
  const int64_t h = s.heads, kvh = s.kv_heads, d = s.head_dim, dv = s.head_dim_v;
  std::vector<ArgSpec> args;
  if (s.layout == attn::Layout::varlen) {
    args.push_back(tensor("q", {sym("total_q"), fix(h, "H"), fix(d, "D")}, false, t));
    args.push_back(tensor("k", {sym("total_k"), fix(kvh, "KVH"), fix(d, "D")}, false, t));
    args.push_back(tensor("v", {sym("total_k"), fix(kvh, "KVH"), fix(dv, "Dv")}, false, t));
    args.push_back(tensor("cu_seqlens_q", {sym("B+1")}, false, "i32"));
    args.push_back(tensor("cu_seqlens_k", {sym("B+1")}, false, "i32"));
    append_mask_inputs(s, "Sq", "Sk", args);
    if (s.backward_pass) {
      // As the dense backward's, packed: out, dout and lse in, dq, dk and dv out.
      args.push_back(tensor("out", {sym("total_q"), fix(h, "H"), fix(dv, "Dv")}, false, t));
      args.push_back(tensor("dout", {sym("total_q"), fix(h, "H"), fix(dv, "Dv")}, false, t));
      args.push_back(tensor("lse", {sym("total_q"), fix(h, "H")}));
      args.push_back(tensor("dq", {sym("total_q"), fix(h, "H"), fix(d, "D")}, true, t));
      args.push_back(tensor("dk", {sym("total_k"), fix(kvh, "KVH"), fix(d, "D")}, true, t));
      args.push_back(tensor("dv", {sym("total_k"), fix(kvh, "KVH"), fix(dv, "Dv")}, true, t));
      return args;
    }
    args.push_back(tensor("out", {sym("total_q"), fix(h, "H"), fix(dv, "Dv")}, true, t));
    if (s.lse) args.push_back(tensor("lse", {sym("total_q"), fix(h, "H")}, true));
    return args;
  }
  args.push_back(tensor("q", {sym("B"), sym("Sq"), fix(h, "H"), fix(d, "D")}, false, t));
  args.push_back(tensor("k_new", {sym("B"), sym("Sq"), fix(kvh, "KVH"), fix(d, "D")}, false, t));
  args.push_back(tensor("v_new", {sym("B"), sym("Sq"), fix(kvh, "KVH"), fix(dv, "Dv")}, false, t));
  const bool paged = s.kv_cache == attn::KvCache::paged;
  const ArgDim outer = paged ? sym("num_pages") : sym("B"),
               slots = paged ? fix(s.page_size, "P") : sym("Smax");
  const std::string codes = cache_dtype(s);
  args.push_back(tensor("k_cache", {outer, slots, fix(kvh, "KVH"), fix(d, "D")}, false, codes));
  args.push_back(tensor("v_cache", {outer, slots, fix(kvh, "KVH"), fix(dv, "Dv")}, false, codes));
  args[args.size() - 2].is_inout = args[args.size() - 1].is_inout = true;
  append_cache_scales(s, {outer, slots, fix(kvh, "KVH")}, args);
  if (paged) args.push_back(tensor("block_table", {sym("B"), sym("max_pages")}, false, "i32"));
  args.push_back(tensor("cache_seqlens", {sym("B")}, false, "i32"));
  append_mask_inputs(s, "Sq", "Sk", args);
  args.push_back(tensor("out", {sym("B"), sym("Sq"), fix(h, "H"), fix(dv, "Dv")}, true, t));
  if (s.lse) args.push_back(tensor("lse", {sym("B"), sym("Sq"), fix(h, "H")}, true));
  return args;
}
}  // namespace

bool runs_per_sequence(const attn::Spec &s) {
  return s.kv_cache != attn::KvCache::none || s.layout == attn::Layout::varlen;
}

attn::Spec sequence_spec(const attn::Spec &resolved) {
  attn::Spec s = resolved;
  s.kv_cache = attn::KvCache::none;
  s.page_size = 0;
  s.layout = attn::Layout::dense;
  return s;
}

std::vector<ArgSpec> sequence_pipeline_args(const attn::Spec &s, const std::string &role) {
  const std::string t = attn::dtype_name(s.dtype);
  const int64_t kvh = s.kv_heads, d = s.head_dim, dv = s.head_dim_v;
  const std::string codes = cache_dtype(s);
  if (role == "append") {
    std::vector<ArgSpec> args = {
        tensor("k_new", {sym("B"), sym("n"), fix(kvh, "KVH"), fix(d, "D")}, false, t),
        tensor("v_new", {sym("B"), sym("n"), fix(kvh, "KVH"), fix(dv, "Dv")}, false, t)};
    if (s.kv_dtype == attn::KvDType::fp8_e4m3) append_cache_scales(s, {}, args);
    args.push_back(tensor("k_slots", {sym("B"), sym("n"), fix(kvh, "KVH"), fix(d, "D")}, true, codes));
    args.push_back(tensor("v_slots", {sym("B"), sym("n"), fix(kvh, "KVH"), fix(dv, "Dv")}, true, codes));
    if (s.kv_dtype == attn::KvDType::int8) {
      // The slots' scales [B, n, KVH], written beside their codes.
      args.push_back(tensor("k_slot_scales", {sym("B"), sym("n"), fix(kvh, "KVH")}, true));
      args.push_back(tensor("v_slot_scales", {sym("B"), sym("n"), fix(kvh, "KVH")}, true));
    }
    return args;
  }
  std::vector<ArgSpec> args = kernel_arguments(sequence_spec(s));
  if (role != "paged") {
    // k and v are views of the caches: their codes, then their scales.
    args[1].dtype = args[2].dtype = codes;
    std::vector<ArgSpec> scales;
    append_cache_scales(s, {sym("B"), sym("Sk"), fix(kvh, "KVH")}, scales);
    for (ArgSpec &scale : scales) scale.is_inout = false;
    args.insert(args.begin() + 3, scales.begin(), scales.end());
    return args;
  }
  // q, then the whole paged cache, this sequence's row of block_table and its cache_seqlens.
  std::vector<ArgSpec> paged = {args[0]};
  paged.push_back(tensor("k_cache", {sym("num_pages"), fix(s.page_size, "P"), fix(kvh, "KVH"), fix(d, "D")},
                         false, codes));
  paged.push_back(tensor("v_cache", {sym("num_pages"), fix(s.page_size, "P"), fix(kvh, "KVH"), fix(dv, "Dv")},
                         false, codes));
  std::vector<ArgSpec> scales;
  append_cache_scales(s, {sym("num_pages"), fix(s.page_size, "P"), fix(kvh, "KVH")}, scales);
  for (ArgSpec &scale : scales) scale.is_inout = false;
  paged.insert(paged.end(), scales.begin(), scales.end());
  paged.push_back(tensor("block_table", {sym("B"), sym("max_pages")}, false, "i32"));
  // Only its extent is read: Lk, the sequence's keys after this call (the entry passes a stride-0
  // view), as Halide's reductions take data-dependent extents from buffer shapes only.
  paged.push_back(tensor("key_count", {sym("Sk")}, false, "i32"));
  paged.insert(paged.end(), args.begin() + 3, args.end());
  return paged;
}

std::vector<ArgSpec> kernel_arguments(const attn::Spec &s) {
  // The float tensors in the spec's storage type; lse, masks and index inputs keep theirs.
  const std::string t = attn::dtype_name(s.dtype);
  const int64_t h = s.heads, kvh = s.kv_heads, d = s.head_dim, dv = s.head_dim_v, m = s.d_model;
  std::vector<ArgSpec> args;
  if (runs_per_sequence(s)) return sequence_arguments(s);
  if (s.block_mask == attn::BlockMask::pass) {
    // The pass: q and k give Sq, Sk and B (their data is never read), the captured tensors the
    // mask_mod reads; out the block mask.
    args.push_back(tensor("q", {sym("B"), sym("Sq"), fix(h, "H"), fix(d, "D")}, false, t));
    args.push_back(tensor("k", {sym("B"), sym("Sk"), fix(kvh, "KVH"), fix(d, "D")}, false, t));
    append_captured_inputs(s, "Sq", "Sk", args);
    args.push_back(block_mask_arg(s, true));
    return args;
  }
  if (s.form == attn::Form::core) {
    args.push_back(tensor("q", {sym("B"), sym("Sq"), fix(h, "H"), fix(d, "D")}, false, t));
    args.push_back(tensor("k", {sym("B"), sym("Sk"), fix(kvh, "KVH"), fix(d, "D")}, false, t));
    args.push_back(tensor("v", {sym("B"), sym("Sk"), fix(kvh, "KVH"), fix(dv, "Dv")}, false, t));
    append_mask_inputs(s, "Sq", "Sk", args);
    if (s.backward_pass) {
      // The forward's out and lse, the loss's gradient by out; the gradients by q, k and v.
      args.push_back(tensor("out", {sym("B"), sym("Sq"), fix(h, "H"), fix(dv, "Dv")}, false, t));
      args.push_back(tensor("dout", {sym("B"), sym("Sq"), fix(h, "H"), fix(dv, "Dv")}, false, t));
      args.push_back(tensor("lse", {sym("B"), sym("Sq"), fix(h, "H")}));
      args.push_back(tensor("dq", {sym("B"), sym("Sq"), fix(h, "H"), fix(d, "D")}, true, t));
      args.push_back(tensor("dk", {sym("B"), sym("Sk"), fix(kvh, "KVH"), fix(d, "D")}, true, t));
      args.push_back(tensor("dv", {sym("B"), sym("Sk"), fix(kvh, "KVH"), fix(dv, "Dv")}, true, t));
      if (s.score_bias_grad)
        args.push_back(tensor("dscore_bias", {sym("B"), fix(h, "H"), sym("Sq"), sym("Sk")}, true));
      return args;
    }
    args.push_back(tensor("out", {sym("B"), sym("Sq"), fix(h, "H"), fix(dv, "Dv")}, true, t));
    if (s.lse) args.push_back(tensor("lse", {sym("B"), sym("Sq"), fix(h, "H")}, true));
    if (s.probs) args.push_back(tensor("probs", {sym("B"), fix(h, "H"), sym("Sq"), sym("Sk")}, true));
    return args;
  }
  // Self-attention: one length S. Cross-attention: queries from x [B,Sq,d_model], keys and values
  // from x_kv [B,Sk,d_model].
  const char *sq = s.cross_attention ? "Sq" : "S", *sk = s.cross_attention ? "Sk" : "S";
  args.push_back(tensor("x", {sym("B"), sym(sq), fix(m, "d_model")}, false, t));
  if (s.cross_attention) args.push_back(tensor("x_kv", {sym("B"), sym(sk), fix(m, "d_model")}, false, t));
  const bool grouped = s.group_count > 0;
  const int64_t qw = attn::query_width(s), kw = attn::key_width(s), vw = attn::value_width(s);
  const int64_t ow = attn::attended_width(s);
  const char *q_label = grouped ? "sum of H_g*D_g" : "H*D";
  const char *k_label = grouped ? "sum of KVH_g*D_g" : "KVH*D";
  const char *v_label = grouped ? "sum of KVH_g*D_g" : "KVH*Dv";
  const char *o_label = grouped ? "sum of H_g*D_g" : "H*Dv";
  if (s.qkv == attn::Qkv::fused) {
    const int64_t rows = qw + kw + vw;
    const char *label = grouped ? "q, k, v parts of every group" : "(H+KVH)*D+KVH*Dv";
    args.push_back(tensor("w_qkv", {fix(rows, label), fix(m, "d_model")}, false, t));
    if (s.proj_bias) args.push_back(tensor("b_qkv", {fix(rows, label)}, false, t));
  } else {
    args.push_back(tensor("w_q", {fix(qw, q_label), fix(m, "d_model")}, false, t));
    args.push_back(tensor("w_k", {fix(kw, k_label), fix(m, "d_model")}, false, t));
    args.push_back(tensor("w_v", {fix(vw, v_label), fix(m, "d_model")}, false, t));
    if (s.proj_bias) {
      args.push_back(tensor("b_q", {fix(qw, q_label)}, false, t));
      args.push_back(tensor("b_k", {fix(kw, k_label)}, false, t));
      args.push_back(tensor("b_v", {fix(vw, v_label)}, false, t));
    }
  }
  args.push_back(tensor("w_o", {fix(m, "d_model"), fix(ow, o_label)}, false, t));
  if (s.proj_bias) args.push_back(tensor("b_o", {fix(m, "d_model")}, false, t));
  append_mask_inputs(s, sq, sk, args);
  args.push_back(tensor("out", {sym("B"), sym(sq), fix(m, "d_model")}, true, t));
  if (s.lse) args.push_back(tensor("lse", {sym("B"), sym(sq), fix(h, "H")}, true));
  if (s.probs) args.push_back(tensor("probs", {sym("B"), fix(h, "H"), sym(sq), sym(sk)}, true));
  return args;
}

}  // namespace attnc

// attn/spec.h: the attnc spec, a constexpr value describing one attention kernel (no Halide here).
#pragma once

#include <cstdint>
#include <initializer_list>

#include "attn/expr.h"
#include "attn/mask.h"

namespace attn {

// core: q, k, v given. block: x -> projections -> heads -> core -> merge -> output projection.
enum class Form : uint8_t { core, block };
// separate: w_q, w_k, w_v. fused: one w_qkv whose rows are all q heads, then k heads, then v heads.
enum class Qkv : uint8_t { separate, fused };
// Storage type of the float tensors (q/k/v/x/weights/biases/out). Scores, softmax and every
// accumulation are fp32 whatever it is; lse and the mask/index inputs keep their own types.
enum class DType : uint8_t { f32, f16, bf16 };
// Where query row i sits among the keys, for every positional term (window, causal, global,
// random, ALiBi's distance): bottom_right at q' = i + Lk - Sq (FlashAttention 2.1+, decode and
// chunked prefill), top_left at q' = i (PyTorch's is_causal, FlashAttention before 2.1).
enum class Align : uint8_t { bottom_right, top_left };
// The core form's KV cache (FlashAttention's flash_attn_with_kvcache): the new keys k_new/v_new
// are written at positions cache_seqlens[b].. of k_cache/v_cache, then every cached key is
// attended. contiguous: k_cache [B, Smax, KVH, D]; paged: k_cache [num_pages, page_size, KVH, D]
// and block_table [B, max_pages] (docs/DSL.md).
enum class KvCache : uint8_t { none, contiguous, paged };
// What a KV cache holds (issue 37; docs/DSL.md, "Quantized KV caches"). same: the spec's dtype.
// int8: int8 codes, and f32 scales k_scale/v_scale per cached token and KV head (in-out, written
// by the append: max |x| / 127). fp8_e4m3: OCP E4M3 ("e4m3fn") bytes as uint8, and scalar f32
// scales k_scale/v_scale that the caller gives. q, k_new, v_new and out keep dtype.
enum class KvDType : uint8_t { same, int8, fp8_e4m3 };
// Rotary embeddings applied to q and the new keys in the kernel: neox pairs element i with
// i + rope_dim / 2 (GPT-NeoX, Llama in Hugging Face form), interleaved pairs 2i with 2i + 1 (GPT-J).
enum class Rope : uint8_t { none, neox, interleaved };
// dense: [B, S, H, D] tensors; varlen: sequences packed without padding, q [total_q, H, D] and
// k/v [total_k, KVH, D] with cu_seqlens_q / cu_seqlens_k [B + 1] (FlashAttention's varlen).
enum class Layout : uint8_t { dense, varlen };
// The run-time block mask of a tensor-dependent mask_mod (issue 34; docs/DSL.md "Block masks"):
// input, the attention kernel takes a block_mask input [B|1, H|1, ceil(Sq/128), ceil(Sk/128)] u8
// (0 empty, 1 partial, 2 full) and skips its empty blocks; pass, the kernel is the pass that
// computes that tensor from the captured tensors (FlexAttention's create_block_mask).
enum class BlockMask : uint8_t { none, input, pass };
// The block mask's blocks: query rows and keys per block.
inline constexpr int32_t block_mask_rows = 128;
inline constexpr int32_t block_mask_keys = 128;

// One group of heads of one size (block form, Spec::with_head_groups): `heads` query heads of
// `head_dim` (keys and values alike), sharing `kv_heads` k/v heads of the same size (0: heads).
struct HeadGroup {
  int32_t heads = 0;
  int32_t head_dim = 0;
  int32_t kv_heads = 0;  // 0: heads. heads / kv_heads query heads of the group share one k/v head
};
// A Spec holds at most this many head groups (fixed arrays keep it a structural literal type).
inline constexpr int max_head_groups = 4;

// A Spec is a structural literal type so that it can be a template argument (see check.h).
// Fields left at 0 / false take the documented defaults when resolved (resolve.h).
struct Spec {
  char name[32]{};      // user label, [A-Za-z0-9_-], not part of the kernel id
  int32_t d_model = 0;  // model width; 0: heads * head_dim (core form only)
  int32_t heads = 0;
  int32_t kv_heads = 0;    // 0: heads. heads / kv_heads query heads share one k/v head
  int32_t head_dim = 0;    // 0: d_model / heads
  int32_t head_dim_v = 0;  // 0: head_dim
  Form form = Form::core;
  Qkv qkv = Qkv::separate;
  bool proj_bias = false;
  Mask mask{};
  DType dtype = DType::f32;
  bool has_scale = false;
  float scale = 0.0f;  // used when has_scale; default 1 / sqrt(head_dim)
  // > 0: structural mask terms (window, causal, global, random) keep whole blocks of this many
  // query and key positions, kept when the term keeps any pair in the two blocks.
  int32_t mask_block = 0;
  // Score modifiers, applied after the scale in this order: softcap, alibi, score_bias.
  bool has_softcap = false;
  float softcap = 0.0f;     // s = softcap * tanh(s / softcap)
  bool alibi = false;       // runtime alibi_slopes [H] f32: s -= slope_h * |q' - k|
  bool score_bias = false;  // runtime score_bias f32, shaped and broadcast like the mask tensor
  bool lse = false;         // also output lse [B,Sq,H]: log-sum-exp of the kept scores, -inf if none
  // Also output probs [B,H,Sq,Sk] f32: the softmax after masking and modifiers (0 where masked),
  // for inspection; B·H·Sq·Sk floats, the one output that grows with Sq·Sk.
  bool probs = false;
  Align align = Align::bottom_right;
  // Block form, heads of several sizes: group_count > 0 groups, heads and dims from them
  // (heads = the sum; head_dim and head_dim_v = the widest group's), a scale per group.
  int32_t group_count = 0;
  HeadGroup head_groups[max_head_groups]{};
  KvCache kv_cache = KvCache::none;
  int32_t page_size = 0;  // paged: tokens per page (P)
  KvDType kv_dtype = KvDType::same;  // a cache's storage (KvDType); kv_cache contiguous or paged only
  Rope rope = Rope::none;
  float rope_theta = 0.0f;  // 0: 10000
  int32_t rope_dim = 0;     // rotated elements of each head (even, <= head_dim); 0: head_dim
  Layout layout = Layout::dense;
  // Also takes the scale at run time: an optional scalar input `scale` (f32, rank 0 or [1]); a
  // call that leaves it out gets `scale` above (1 / sqrt(head_dim) when unset).
  bool runtime_scale = false;
  // Block form: keys and values come from a second input x_kv [B,Sk,d_model] (encoder-decoder
  // attention); queries and the output stay x's [B,Sq,d_model].
  bool cross_attention = false;
  // backward=true: the backward kernel of the same spec's forward (issue 33): inputs the forward's
  // plus out, dout [B,Sq,H,Dv] and the forward's lse [B,Sq,H]; outputs dq, dk, dv, shaped like q, k
  // and v (a shared KV head's gradients summed over its query heads). The core form only.
  bool backward_pass = false;
  // dscore_bias=true (a backward spec with score_bias=tensor): also output dscore_bias
  // [B,H,Sq,Sk] f32, the gradient by the score_bias tensor at full shape (0 where masked).
  bool score_bias_grad = false;
  // Attention dropout (issue 33): kept probabilities scaled by 1 / (1 - dropout), after masking,
  // before P.V, with the keep bits from Philox 4x32-10 keyed by the run-time inputs seed and offset
  // (uint64) at (b, h, query row, key): docs/DSL.md "Dropout" gives the bit rule. 0 <= dropout < 1.
  bool has_dropout = false;
  float dropout = 0.0f;
  // Issue 34: a user score function (after the scale, before softcap), a user mask ANDed with
  // `mask`, and the tensors they capture, each a kernel input (attn/expr.h, docs/DSL.md).
  ExprTree score_mod{};
  ExprTree mask_mod{};
  CapturedInputs captured{};
  BlockMask block_mask = BlockMask::none;  // needs a mask_mod (BlockMask)
  // Set when a setter saw an out-of-range value; reported by validate() and check<>().
  int32_t bad_value_field = 0;  // a SpecProblem code, 0 when none
  int32_t bad_value = 0;

  constexpr Spec named(const char *label) const {
    Spec s = *this;
    int i = 0;
    for (; label[i] != '\0' && i < 31; ++i) s.name[i] = label[i];
    for (; i < 32; ++i) s.name[i] = '\0';
    return s;
  }
  constexpr Spec with_d_model(int32_t v) const { return set_dim(&Spec::d_model, v, 1); }
  constexpr Spec with_heads(int32_t v) const { return set_dim(&Spec::heads, v, 2); }
  constexpr Spec with_kv_heads(int32_t v) const { return set_dim(&Spec::kv_heads, v, 3); }
  constexpr Spec with_head_dim(int32_t v) const { return set_dim(&Spec::head_dim, v, 4); }
  constexpr Spec with_head_dim_v(int32_t v) const { return set_dim(&Spec::head_dim_v, v, 5); }
  // .with_head_groups({{4, 128}, {8, 64}}): 4 heads of 128 then 8 of 64 (with GQA: {4, 128, 2}).
  // More than max_head_groups groups, or none, is recorded and rejected by validation.
  constexpr Spec with_head_groups(std::initializer_list<HeadGroup> groups) const {
    Spec s = *this;
    const int32_t n = static_cast<int32_t>(groups.size());
    s.group_count = n < max_head_groups ? n : max_head_groups;
    int g = 0;
    for (const HeadGroup &group : groups) {
      if (g < max_head_groups) s.head_groups[g] = group;
      ++g;
    }
    for (; g < max_head_groups; ++g) s.head_groups[g] = HeadGroup{};
    if ((n < 1 || n > max_head_groups) && s.bad_value_field == 0) {
      s.bad_value_field = 64;  // SpecProblem::head_group_count_invalid
      s.bad_value = n;
    }
    return s;
  }
  constexpr Spec core() const { return set_form(Form::core); }
  constexpr Spec block() const { return set_form(Form::block); }
  constexpr Spec fused_qkv() const {
    Spec s = *this;
    s.qkv = Qkv::fused;
    return s;
  }
  constexpr Spec separate_qkv() const {
    Spec s = *this;
    s.qkv = Qkv::separate;
    return s;
  }
  constexpr Spec with_proj_bias(bool on = true) const { return set_flag(&Spec::proj_bias, on); }
  constexpr Spec with_mask(Mask m) const {
    Spec s = *this;
    s.mask = m;
    return s;
  }
  constexpr Spec causal() const { return with_mask(attn::causal()); }
  constexpr Spec with_align(Align a) const {
    Spec s = *this;
    s.align = a;
    return s;
  }
  constexpr Spec with_dtype(DType t) const {
    Spec s = *this;
    s.dtype = t;
    return s;
  }
  // Negative or zero scales are recorded and rejected by validation (a NaN fails v > 0 too).
  constexpr Spec with_scale(float v) const {
    Spec s = *this;
    s.has_scale = true;
    s.scale = v;
    return s;
  }
  constexpr Spec with_mask_block(int32_t v) const { return set_dim(&Spec::mask_block, v, 20); }
  // Softcaps of zero or below are recorded and rejected by validation.
  constexpr Spec with_softcap(float v) const {
    Spec s = *this;
    s.has_softcap = true;
    s.softcap = v;
    return s;
  }
  constexpr Spec with_alibi(bool on = true) const { return set_flag(&Spec::alibi, on); }
  constexpr Spec with_score_bias(bool on = true) const { return set_flag(&Spec::score_bias, on); }
  constexpr Spec with_lse(bool on = true) const { return set_flag(&Spec::lse, on); }
  // with_kv_cache(KvCache::contiguous), or with_kv_cache(KvCache::paged, 16) for 16-token pages.
  constexpr Spec with_kv_cache(KvCache c, int32_t page_size = 0) const {
    Spec s = *this;
    s.kv_cache = c;
    s.page_size = page_size;
    return s;
  }
  // with_kv_dtype(KvDType::int8): an int8 cache with per-token scales (validation: a kv_cache only).
  constexpr Spec with_kv_dtype(KvDType t) const {
    Spec s = *this;
    s.kv_dtype = t;
    return s;
  }
  // theta 0 and dim 0 take the defaults (10000, head_dim); validation checks the rest.
  constexpr Spec with_rope(Rope r, float theta = 0.0f, int32_t dim = 0) const {
    Spec s = *this;
    s.rope = r;
    s.rope_theta = theta;
    s.rope_dim = dim;
    return s;
  }
  constexpr Spec with_layout(Layout l) const {
    Spec s = *this;
    s.layout = l;
    return s;
  }
  constexpr Spec with_probs(bool on = true) const { return set_flag(&Spec::probs, on); }
  constexpr Spec with_runtime_scale(bool on = true) const { return set_flag(&Spec::runtime_scale, on); }
  // The block form only (validation refuses it on a core spec).
  constexpr Spec with_cross_attention(bool on = true) const { return set_flag(&Spec::cross_attention, on); }
  // The backward kernel of this spec (backward_pass).
  constexpr Spec backward(bool on = true) const { return set_flag(&Spec::backward_pass, on); }
  // Dropout with probability p (0 <= p < 1; validation refuses other values, NaN included).
  constexpr Spec with_dropout(float p) const {
    Spec s = *this;
    s.has_dropout = true;
    s.dropout = p;
    return s;
  }
  // The attention kernel reading a block_mask input (BlockMask::input), or its pass (::pass).
  constexpr Spec with_block_mask(BlockMask m = BlockMask::input) const {
    Spec s = *this;
    s.block_mask = m;
    return s;
  }
  // A backward spec's gradient by its score_bias tensor as an output too (score_bias_grad).
  constexpr Spec with_score_bias_grad(bool on = true) const { return set_flag(&Spec::score_bias_grad, on); }
  // .with_score_mod(attn::expr::s + attn::expr::tensor("rel")(h, q - k + 63)); mask_mod alike.
  constexpr Spec with_score_mod(const ExprTree &e) const {
    Spec s = *this;
    s.score_mod = e;
    return s;
  }
  constexpr Spec with_mask_mod(const ExprTree &e) const {
    Spec s = *this;
    s.mask_mod = e;
    return s;
  }
  // .with_input("rel", InputDType::f32, {dim::H, 127}): a captured tensor [H, 127].
  constexpr Spec with_input(const char *name, InputDType dtype, std::initializer_list<int32_t> dims) const {
    Spec s = *this;
    if (s.captured.count == limits::max_captured_inputs) {
      s.captured.overflow = true;
      return s;
    }
    CapturedInput &c = s.captured.items[s.captured.count++];
    int n = 0;
    for (; name[n] != '\0' && n < max_input_name - 1; ++n) c.name[n] = name[n];
    if (name[n] != '\0') c.name[0] = '\0';  // too long: rejected as an invalid name
    c.dtype = dtype;
    c.rank = static_cast<int32_t>(dims.size());
    int d = 0;
    for (const int32_t v : dims) {
      if (d < max_input_rank) c.dims[d] = v;
      ++d;
    }
    if (c.rank > max_input_rank) c.rank = max_input_rank + 1;
    return s;
  }

 private:
  constexpr Spec set_dim(int32_t Spec::*field, int32_t v, int32_t code) const {
    Spec s = *this;
    s.*field = v;
    if (v <= 0 && s.bad_value_field == 0) {
      s.bad_value_field = code;
      s.bad_value = v;
    }
    return s;
  }
  constexpr Spec set_flag(bool Spec::*field, bool on) const {
    Spec s = *this;
    s.*field = on;
    return s;
  }
  constexpr Spec set_form(Form f) const {
    Spec s = *this;
    s.form = f;
    return s;
  }
};

// "f32", "f16" or "bf16": the spelling of the text form, kernel ids and manifests.
constexpr const char *dtype_name(DType t) {
  return t == DType::f16 ? "f16" : t == DType::bf16 ? "bf16" : "f32";
}

// "same", "int8" or "fp8_e4m3": the spelling of the text form (kv_dtype=...).
constexpr const char *kv_dtype_name(KvDType t) {
  return t == KvDType::int8 ? "int8" : t == KvDType::fp8_e4m3 ? "fp8_e4m3" : "same";
}

// The starting point of the fluent DSL: attn::attention().with_d_model(768).with_heads(12)...
constexpr Spec attention() {
  return Spec{};
}

}  // namespace attn

// kernel_id.cpp: the kernel id, derived from the resolved spec in this one place.
#include "attn/kernel_id.h"

#include <bit>
#include <cstdint>
#include <cstdio>
#include <string>

#include "attn/expr_text.h"
#include "attn/validate.h"

namespace attn {
namespace {

constexpr size_t max_id_length = 120;
constexpr size_t hashed_prefix_length = 100;

// Negative values only occur in invalid specs, but even then the id stays a C identifier.
std::string number(int32_t v) {
  if (v < 0) return "neg" + std::to_string(-static_cast<int64_t>(v));
  return std::to_string(v);
}

// -1 (unbounded) reads "inf".
std::string bound_slug(int32_t b) {
  return b == -1 ? "inf" : number(b);
}

// Each term's slug is one word without '_', so prefix notation needs no parentheses:
// window(128,0) & (causal | window(4,4)) -> "and_win128x0_or_causal_win4x4".
std::string term_slug(const MaskNode &n) {
  switch (n.op) {
    case MaskOp::window:
      if (n.left == -1 && n.right == 0) return "causal";
      return "win" + bound_slug(n.left) + "x" + bound_slug(n.right);
    case MaskOp::global_tokens:
      return "glob" + number(n.tokens);
    case MaskOp::random_blocks:
      return "rnd" + number(n.block) + "x" + number(n.blocks) + "s" + std::to_string(n.seed);
    case MaskOp::padding:
      return "pad";
    case MaskOp::prefix:
      return "prefix";
    case MaskOp::document:
      return "doc";
    case MaskOp::tensor:
      return "tensor";
    case MaskOp::both:
    case MaskOp::either:
      break;
  }
  return "badterm";
}

void mask_slug_node(const Mask &m, int index, std::string &out) {
  const MaskNode &n = m.nodes[index];
  if (!is_operator(n.op)) {
    out += term_slug(n);
    return;
  }
  out += n.op == MaskOp::both ? "and" : "or";
  for (const int child : {static_cast<int>(n.lhs), static_cast<int>(n.rhs)}) {
    out += '_';
    if (child >= 0 && child < index)
      mask_slug_node(m, child, out);
    else
      out += "badnode";
  }
}

// "" for no mask, "_causal", or "_" and the prefix-notation slug.
std::string mask_slug(const Mask &m) {
  if (m.empty()) return "";
  std::string out = "_";
  mask_slug_node(m, m.root(), out);
  return out;
}

uint64_t fnv1a_64(const std::string &text) {
  uint64_t h = 14695981039346656037ull;
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

// The scale is part of the id only when it changes the kernel: an explicit, non-default value.
bool scale_differs_from_default(const Spec &resolved) {
  if (!resolved.has_scale) return false;
  Spec plain = resolved;
  plain.has_scale = false;
  return std::bit_cast<uint32_t>(resolve(plain).scale) != std::bit_cast<uint32_t>(resolved.scale);
}

std::string hex(uint64_t v, int digits) {
  char buffer[24];
  std::snprintf(buffer, sizeof(buffer), "%0*llx", digits, static_cast<unsigned long long>(v));
  return buffer;
}

}  // namespace

std::string kernel_id(const Spec &spec) {
  const Spec s = resolve(spec);
  const bool block = s.form == Form::block;
  std::string id = block ? "attn_block" : "attn_core";
  if (block) id += "_m" + number(s.d_model);
  if (s.group_count > 0) {
    // One part per head group: "_g4x128_g8x64kv2" (kv heads where they differ from the heads).
    for (int g = 0; g < s.group_count && g < max_head_groups; ++g) {
      const HeadGroup &group = s.head_groups[g];
      id += "_g" + number(group.heads) + "x" + number(group.head_dim);
      if (group.kv_heads != group.heads) id += "kv" + number(group.kv_heads);
    }
  } else {
    id += "_h" + number(s.heads) + "_kv" + number(s.kv_heads) + "_d" + number(s.head_dim);
    if (s.head_dim_v != s.head_dim) id += "_dv" + number(s.head_dim_v);
  }
  id += std::string("_") + dtype_name(s.dtype);
  id += mask_slug(s.mask);
  if (s.align == Align::top_left) id += "_tl";
  if (s.mask_block > 0) id += "_mb" + number(s.mask_block);
  if (block) {
    id += s.qkv == Qkv::fused ? "_fused" : "_sep";
    if (s.proj_bias) id += "_bias";
  }
  if (scale_differs_from_default(s)) id += "_s" + hex(std::bit_cast<uint32_t>(s.scale), 8);
  // Parts for the newer fields appear only when set, so the ids of older specs stay as they were.
  if (s.has_softcap) id += "_cap" + hex(std::bit_cast<uint32_t>(s.softcap), 8);
  if (s.alibi) id += "_alibi";
  if (s.score_bias) id += "_bias_t";
  if (s.lse) id += "_lse";
  if (s.kv_cache == KvCache::contiguous) id += "_kvc";
  if (s.kv_cache == KvCache::paged) id += "_kvp" + number(s.page_size);
  if (s.kv_dtype == KvDType::int8) id += "_kvi8";
  if (s.kv_dtype == KvDType::fp8_e4m3) id += "_kvfp8";
  if (s.rope != Rope::none) {
    id += (s.rope == Rope::neox ? "_ropen" : "_ropei") + number(s.rope_dim);
    if (s.rope_theta != 10000.0f) id += "_th" + hex(std::bit_cast<uint32_t>(s.rope_theta), 8);
  }
  if (s.layout == Layout::varlen) id += "_varlen";
  if (s.probs) id += "_probs";
  if (s.runtime_scale) id += "_rs";
  if (s.cross_attention) id += "_cross";
  if (s.backward_pass) id += "_bwd";
  if (s.score_bias_grad) id += "_dbias";
  if (s.has_dropout) id += "_drop" + hex(std::bit_cast<uint32_t>(s.dropout), 8);
  // Issue 34: each expression and the inputs by a hash of their canonical text, so the C++ DSL
  // and the text form of one expression give one id.
  if (s.captured.count > 0) id += "_in" + hex(fnv1a_64(to_string(s.captured)) & 0xffffffffull, 8);
  if (!s.score_mod.empty()) id += "_smod" + hex(fnv1a_64(to_string(s.score_mod)) & 0xffffffffffffull, 12);
  if (!s.mask_mod.empty()) id += "_mmod" + hex(fnv1a_64(to_string(s.mask_mod)) & 0xffffffffffffull, 12);
  if (s.block_mask == BlockMask::input) id += "_bm";
  if (s.block_mask == BlockMask::pass) id += "_bmpass";
  if (id.size() > max_id_length) id = id.substr(0, hashed_prefix_length) + "_" + hex(fnv1a_64(id), 16);
  return id;
}

}  // namespace attn

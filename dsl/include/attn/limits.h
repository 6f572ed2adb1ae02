// attn/limits.h: the largest value each spec field may take, far above any real model, chosen so
// that nothing derived from a valid spec overflows int32 (in the DSL, in codegen, or in Halide).
#pragma once

#include <cstdint>

namespace attn::limits {

// heads and kv_heads. The largest published models use 128 query heads.
inline constexpr int32_t max_heads = 4096;
// head_dim and head_dim_v. Published models use at most 256.
inline constexpr int32_t max_head_dim = 1024;
// d_model, and the widths heads * head_dim and heads * head_dim_v (the merged q and out rows).
// Published models stay at or below 16384.
inline constexpr int32_t max_d_model = 65536;
// Block form: the largest projection weight (w_q, w_qkv or w_o) holds at most this many f32
// elements (2 GiB). The kernel keeps a packed copy of it, and Halide allocates at most 2^31 - 1
// bytes: d_model=23296 heads=32 form=block failed in gen ("Allocation size should be a positive
// number"), d_model=23168 (536,756,224 elements) built.
inline constexpr int64_t max_weight_elements = INT32_MAX / 4;
// Window bounds, global(G), random(BS,...) and mask_block: positions up to 2^24 (16M tokens). Every
// position codegen derives from them (q' - L, q' + R, a block's last key, ceil(Lk / BS) * BS) then
// stays below Sk + 2^26, far from 2^31 for any sequence a kernel can address.
inline constexpr int32_t max_positions = 1 << 24;
// random(BS,N,SEED): N, summed over every random term of a mask. Each draw is one hash per key in
// the generated code; 16 draws keep `attnc gen` in seconds (64 took over a minute).
inline constexpr int32_t max_random_draws = 16;
// scale, softcap and rope_theta stay below this (just under FLT_MAX), so that a kernel's fp32
// products and reciprocals of them stay finite.
inline constexpr float max_float_value = 3.0e38f;
// Elements in one tensor a kernel takes (the runtime refuses more): Halide addresses buffers with
// 32-bit offsets. A page of a paged KV cache must fit.
inline constexpr int64_t max_tensor_elements = INT32_MAX;
// The text form: bytes in one spec or mask text, and parentheses nested in a mask.
inline constexpr int64_t max_text_bytes = 64 * 1024;
inline constexpr int32_t max_mask_depth = 64;

// score_mod / mask_mod (issue 34): nodes in one expression, parentheses and calls nested in its
// text, bytes of its text, and captured tensors (`inputs=`) per spec. Each node is one Halide Expr
// per score; 128 (operand indices fit int8) keep a kernel's per-score work bounded and leave room
// for the test suite's kernels, which each hold several random expressions behind a select.
inline constexpr int32_t max_expr_nodes = 128;
inline constexpr int32_t max_expr_depth = 32;
inline constexpr int32_t max_expr_text_bytes = 4096;
inline constexpr int32_t max_captured_inputs = 4;

}  // namespace attn::limits

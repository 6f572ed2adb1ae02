// attnc/arguments.h: the tensors a kernel takes, derived from its spec (the public contract).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/spec.h"

namespace attnc {

// One dimension: a size fixed by the spec, or a runtime size named "B", "Sq", "Sk" or "S".
struct ArgDim {
  int64_t fixed = 0;   // > 0 when fixed
  std::string symbol;  // the runtime size's name; for a fixed size, its label ("H", "D", ...)
};

// Shapes are outermost first, as the caller sees them; the innermost dim is contiguous.
struct ArgSpec {
  std::string name;
  std::string dtype = "f32";  // f32, i32, u8
  bool is_output = false;
  bool is_inout = false;  // given by the caller and written by the kernel (k_cache, v_cache)
  std::vector<ArgDim> dims;
  uint32_t broadcast_dims = 0;  // bit i (outermost = 0): the caller may give size 1
  int min_rank = 0;             // fewest dims a caller may give (0: exactly all)
  bool is_optional = false;     // a rank-0 f32 input the caller may leave out
  double default_value = 0.0;   // what the kernel reads then
};

// core:  q [B,Sq,H,D], k [B,Sk,KVH,D], v [B,Sk,KVH,Dv] -> out [B,Sq,H,Dv]
// block: x [B,S,d_model], w_q/w_k/w_v or w_qkv, b_* when proj_bias, w_o, b_o -> out [B,S,d_model];
// with cross_attention x [B,Sq,d_model] and x_kv [B,Sk,d_model] -> out [B,Sq,d_model]
// then, as the mask and modifiers need them: key_lengths [B], prefix_lengths [B],
// segment_ids_q [B,Sq], segment_ids_k [B,Sk], mask [B,H,Sq,Sk] u8, alibi_slopes [H],
// score_bias [B,H,Sq,Sk] (B and H broadcast); scale [] f32, optional, with runtime_scale; and
// the output lse [B,Sq,H] when asked for.
// With kv_cache (issue 24): q, k_new [B,Sq,KVH,D], v_new [B,Sq,KVH,Dv], k_cache and v_cache
// (in-out: [B,Smax,KVH,D|Dv], or paged [num_pages,P,KVH,D|Dv] then block_table [B,max_pages]),
// cache_seqlens [B]. layout=varlen: q [total_q,H,D], k/v [total_k,KVH,D|Dv], cu_seqlens_q and
// cu_seqlens_k [B+1], out [total_q,H,Dv], lse [total_q,H]. probs=true adds the output probs
// [B,H,Sq,Sk] f32 (block form: Sq = Sk = S).
// backward=true (core form): q, k, v, mask inputs, then the inputs out and dout [B,Sq,H,Dv] and lse
// [B,Sq,H], and the outputs dq [B,Sq,H,D], dk [B,Sk,KVH,D], dv [B,Sk,KVH,Dv]; with layout=varlen
// the same packed ([total_q, ...] and [total_k, ...]).
std::vector<ArgSpec> kernel_arguments(const attn::Spec &resolved);

// A kernel with a KV cache or the varlen layout runs its attention one sequence at a time: its
// entry calls pipelines whose arguments differ from the public ones (sequence_pipeline_args).
bool runs_per_sequence(const attn::Spec &resolved);
// The spec of those per-sequence attention pipelines: kv_cache and layout dropped, rope kept.
attn::Spec sequence_spec(const attn::Spec &resolved);
// The arguments of one per-sequence pipeline, by role: "attend" (q, k, v [1,S,..] and the
// modifiers: kernel_arguments(sequence_spec)), "paged" (q, k_cache, v_cache, block_table [1,
// max_pages], key_count [Lk] (only its extent is read), modifiers, out, lse) or "append" (k_new, v_new
// [1,n,KVH,D|Dv] in, k_slots, v_slots out: the cache's slots, their token dim starting at the tokens'
// position).
std::vector<ArgSpec> sequence_pipeline_args(const attn::Spec &resolved, const std::string &role);

}  // namespace attnc

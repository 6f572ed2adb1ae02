// attnc/pipeline_sequence.h: the per-sequence family (KV caches, varlen): cache appends and cache-order keys.
#pragma once

#include "attnc/core_algorithm.h"
#include "attnc/pipeline_context.h"

namespace attnc {

// The "append" role: the cache's new slots, k_new rotated at its tokens' positions (the token
// dim's coordinates, which start at cache_seqlens[b] + the first token), v_new as given, both in
// the cache's dtype: outputs k_slots and v_slots (kv_dtype=int8: also k_slot_scales, v_slot_scales).
PipelineOutputs build_cache_append(const PipelineContext &ctx);

// A cache tensor's values as f32 (inline): `codes` converted, or with kv_dtype int8 or fp8_e4m3
// decoded and multiplied by the input `scale` (k_scale / v_scale).
Halide::Func cache_values(const PipelineContext &ctx, const std::string &codes, const std::string &scale);

// Keys in cache order into in.k / in.v: this sequence's pages through its block_table row (the
// "paged" role, with in.seq_k from key_count's extent), else k itself; with rope and no cache,
// every key rotated once per call at its position j, by `angles` (rope_angles) if defined.
void sequence_keys(const PipelineContext &ctx, CoreInputs &in, const Halide::Func &angles = {});

}  // namespace attnc

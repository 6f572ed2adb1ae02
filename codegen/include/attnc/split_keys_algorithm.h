// attnc/split_keys_algorithm.h: the core for few queries and many keys (decode): key chunks in
// parallel, each a partial softmax, combined by their maxima (log-sum-exp).
#pragma once

#include <Halide.h>

#include <vector>

#include "attn/spec.h"
#include "attnc/core_algorithm.h"

namespace attnc {

// Per (chunk, query, head, batch), a task computes the chunk's max, sum and unnormalized P.V;
// the output combines the chunks of each query. Extra memory: O(Sq * Sk / chunk_keys * Dv).
struct SplitKeysFuncs {
  Halide::Var dv{"dv"}, lane{"lane"}, key{"key"}, c{"c"}, i{"i"}, h{"h"}, b{"b"};
  Halide::RDom over_head_vectors;  // head_dim / lanes vectors of q . k
  Halide::RDom over_lanes;         // the lanes of one q . k, summed
  Halide::RDom over_chunk;         // keys of a chunk, trimmed to keys < Sk and the mask's key hull
  Halide::RDom over_chunks;        // chunks of one query
  Halide::RDom over_group;         // keys of one PV key group
  Halide::RDom over_groups;        // key groups of a chunk, trimmed like over_chunk
  Halide::Func query;              // query(d, i, h, b): q * scale
  // A cache stored in 8 or 16 bits (kv_dtype int8 / fp8_e4m3, dtype bf16 / f16): its K and V rows
  // decoded to f32 once per KV head and key group (or chunk: CpuTiles::split_keys_stage_chunk), for
  // every query head of the group to read (keys(d, g, j, b), values(dv, g, j, b)); for f32 storage
  // copied so only with stage_rows, else undefined (the heads read the rows in place).
  Halide::Func keys, values;
  Halide::Parameter key_source, value_source;  // CoreInputs::k_stored, v_stored: prefetched
  Halide::Func dot_lanes;                      // dot_lanes(lane, key, c, i, h, b): q . k, per lane
  Halide::Func scores;                         // scores(key, c, i, h, b): q . k
  Halide::Func logits;                         // logits(key, c, i, h, b): after the modifiers
  // With reduce_lanes > 1 (CPU): the chunk's max and sum first per lane, lane l over keys
  // l, l + reduce_lanes, ... (vectorized), then over the lanes; undefined otherwise.
  Halide::RDom over_rows;           // rows of reduce_lanes keys, trimmed like over_groups
  Halide::RDom over_reduce_lanes;   // the lanes of lane_max / lane_sum
  Halide::Func lane_max, lane_sum;  // lane_max(lane, c, i, h, b), lane_sum(lane, c, i, h, b)
  Halide::Func chunk_max;           // chunk_max(c, i, h, b): max kept logit, or no_key_score
  Halide::Func probs;               // probs(key, c, i, h, b): exp(logit - chunk_max), 0 if masked
  Halide::Func chunk_sum;           // chunk_sum(c, i, h, b)
  // pv_probs(key, c, i, h, b): what P.V multiplies: probs times dropout's keep factor (from the
  // words in `dropout`) where the spec drops, else probs itself.
  Halide::Func pv_probs;
  DropoutWords dropout;
  Halide::Func group_pv;   // group_pv(dv, g, c, i, h, b): probs . v over key group g
  Halide::Func chunk_pv;   // chunk_pv(dv, c, i, h, b): sum of the chunk's group_pv
  Halide::Func partial;    // partial(dv, c, i, h, b) = {chunk_max, chunk_sum, chunk_pv}
  Halide::Func total_max;  // total_max(i, h, b): max over chunks
  Halide::Func combined;   // combined(dv, i, h, b) = {sum, acc} rescaled to total_max
  Halide::Func out;        // out(dv, h, i, b), or {out, lse} as CoreFuncs::out
  std::vector<Halide::Func> value_checks;
  bool has_modifiers = false;
  bool with_lse = false;
  int heads = 0;        // h's extent
  int query_group = 1;  // query heads per KV head: h reads K and V of KV head h / query_group
};

// lanes divides head_dim; group_keys and reduce_lanes divide chunk_keys. stage_rows: keys and
// values defined for f32 storage too.
SplitKeysFuncs define_split_keys(const CoreInputs &in, const attn::Spec &resolved, int chunk_keys,
                                 int group_keys, int lanes, int reduce_lanes = 1, bool stage_rows = false);

}  // namespace attnc

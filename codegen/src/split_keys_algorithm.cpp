// The split-keys core: chunks of keys as independent partial softmaxes, combined per query.
#include "attnc/split_keys_algorithm.h"

#include <limits>

#include "attnc/mask_lowering.h"
#include "attnc/score_terms.h"

namespace attnc {

using Halide::Expr;
using Halide::Func;
using Halide::RDom;

SplitKeysFuncs define_split_keys(const CoreInputs &unchecked, const attn::Spec &s, int chunk_keys,
                                 int group_keys, int lanes, int reduce_lanes, bool stage_rows) {
  SplitKeysFuncs f;
  const CoreInputs in = with_checked_lengths(unchecked, &f.value_checks);
  const Halide::Var &dv = f.dv, &lane = f.lane, &key = f.key, &c = f.c, &i = f.i, &h = f.h, &b = f.b;
  const int group = s.heads / s.kv_heads;
  f.heads = s.heads;
  f.query_group = group;
  const Expr seq_q = in.seq_q, seq_k = in.seq_k;
  const Expr no_key = Expr(no_key_score);
  const bool padded = s.mask.uses(attn::MaskOp::padding);
  auto key_length = [&](const Expr &batch) { return padded ? in.masks.key_lengths(batch) : seq_k; };
  auto key_pos = [&](const Expr &chunk, const Expr &k) { return chunk * chunk_keys + k; };
  // Keys past seq_k (a partial last chunk) read the last key and are masked out.
  auto key_row = [&](const Expr &chunk, const Expr &k) { return Halide::min(key_pos(chunk, k), seq_k - 1); };
  const Expr query_pos = i + first_query_position(s.align, key_length(b), seq_q);
  auto kept = [&](const Expr &chunk, const Expr &k) {
    const MaskPoint point{query_pos, key_row(chunk, k), i, h, b, key_length(b)};
    return key_pos(chunk, k) < seq_k && lower_mask(s.mask, s.mask_block, point, in.masks);
  };

  f.over_head_vectors = RDom(0, s.head_dim / lanes, "over_head_vectors");
  f.over_lanes = RDom(0, lanes, "over_lanes");
  f.over_chunk = RDom(0, chunk_keys, "over_chunk");
  f.over_chunks = RDom(0, (seq_k + chunk_keys - 1) / chunk_keys, "over_chunks");
  f.over_group = RDom(0, group_keys, "over_group");
  f.over_groups = RDom(0, chunk_keys / group_keys, "over_groups");
  f.over_rows = RDom(0, chunk_keys / reduce_lanes, "over_rows");
  f.over_reduce_lanes = RDom(0, reduce_lanes, "over_reduce_lanes");
  const Expr rk = f.over_chunk.x, rg = f.over_groups.x, rr = f.over_rows.x;

  // Only keys < Sk inside the hull of the spans the mask may keep for any of the queries; the
  // predicate reads the length inputs directly so Halide lifts it into the loop bounds.
  const Expr first_query =
      first_query_position(s.align, padded ? unchecked.masks.key_lengths(b) : seq_k, seq_q);
  const KeySpans spans =
      key_spans(s.mask, s.mask_block, first_query, first_query + seq_q - 1, b, seq_k, unchecked.masks);
  // A run of `count` keys from `first` (a key, a P.V key group, a row of lanes) is visited when
  // any of its keys is.
  auto visited = [&](const Expr &first, int count) {
    Expr visit = first < seq_k;
    if (spans.bounded) {
      const KeySpan hull = span_hull(spans.spans);
      visit = visit && first + (count - 1) >= hull.first && first <= hull.last;
    }
    return visit;
  };
  f.over_chunk.where(visited(key_pos(c, rk), 1));
  f.over_groups.where(visited(key_pos(c, rg * group_keys), group_keys));
  f.over_rows.where(visited(key_pos(c, rr * reduce_lanes), reduce_lanes));

  f.query = Func("query");
  const Halide::Var d("d");
  f.query(d, i, h, b) = in.q(d, h, i, b) * score_scale(s, in);
  f.key_source = in.k_stored;
  f.value_source = in.v_stored;
  Func k = in.k, v = in.v;
  if (s.kv_dtype != attn::KvDType::same || s.dtype != attn::DType::f32 || stage_rows) {
    const Halide::Var g("g"), j("j");
    f.keys = Func("decoded_keys");
    f.values = Func("decoded_values");
    f.keys(d, g, j, b) = in.k(d, g, j, b);
    f.values(d, g, j, b) = in.v(d, g, j, b);
    k = f.keys;
    v = f.values;
  }

  // q . k with lanes along head_dim: each lane sums every lanes-th product, then the lanes add.
  const Expr rd = f.over_head_vectors.x * lanes + lane;
  f.dot_lanes = Func("dot_lanes");
  f.dot_lanes(lane, key, c, i, h, b) = 0.0f;
  f.dot_lanes(lane, key, c, i, h, b) += f.query(rd, i, h, b) * k(rd, h / group, key_row(c, key), b);
  f.scores = Func("scores");
  f.scores(key, c, i, h, b) = 0.0f;
  f.scores(key, c, i, h, b) += f.dot_lanes(f.over_lanes.x, key, c, i, h, b);

  f.has_modifiers = s.has_softcap || s.alibi || s.score_bias || !s.score_mod.empty();
  f.logits = Func("logits");
  const ScorePoint point{query_pos, key_pos(c, key), key_row(c, key), i, h, b};
  f.logits(key, c, i, h, b) = modified_logit(s, in, f.scores(key, c, i, h, b), point);

  f.chunk_max = Func("chunk_max");
  f.chunk_max(c, i, h, b) = no_key;
  if (reduce_lanes > 1) {
    // Keys of a visited row outside the hull or past Sk are not kept (and read a valid row).
    const Expr row_key = rr * reduce_lanes + lane;
    f.lane_max = Func("lane_max");
    f.lane_max(lane, c, i, h, b) = no_key;
    f.lane_max(lane, c, i, h, b) =
        sticky_max(f.lane_max(lane, c, i, h, b),
                   Halide::select(kept(c, row_key), f.logits(row_key, c, i, h, b), no_key));
    f.chunk_max(c, i, h, b) =
        sticky_max(f.chunk_max(c, i, h, b), f.lane_max(f.over_reduce_lanes.x, c, i, h, b));
  } else {
    f.chunk_max(c, i, h, b) =
        sticky_max(f.chunk_max(c, i, h, b), Halide::select(kept(c, rk), f.logits(rk, c, i, h, b), no_key));
  }

  f.probs = Func("probs");
  f.probs(key, c, i, h, b) =
      Halide::select(kept(c, key), softmax_exp(f.logits(key, c, i, h, b) - f.chunk_max(c, i, h, b)), 0.0f);

  f.chunk_sum = Func("chunk_sum");
  f.chunk_sum(c, i, h, b) = 0.0f;
  if (reduce_lanes > 1) {
    f.lane_sum = Func("lane_sum");
    f.lane_sum(lane, c, i, h, b) = 0.0f;
    f.lane_sum(lane, c, i, h, b) += f.probs(rr * reduce_lanes + lane, c, i, h, b);
    f.chunk_sum(c, i, h, b) += f.lane_sum(f.over_reduce_lanes.x, c, i, h, b);
  } else {
    f.chunk_sum(c, i, h, b) += f.probs(rk, c, i, h, b);
  }
  // Dropout scales what P.V multiplies, not the sums: kept probabilities grow by 1 / (1 - p).
  f.pv_probs = f.probs;
  if (in.dropout.on()) {
    f.dropout = define_dropout_words("dropout_words", in.dropout);
    f.pv_probs = Func("pv_probs");
    f.pv_probs(key, c, i, h, b) =
        f.probs(key, c, i, h, b) * dropout_factor(in.dropout, f.dropout, key_pos(c, key), i, h, b);
  }

  // P.V in two levels: a group's sum stays in registers across its keys (the schedule), so the
  // chunk's accumulator is read and written once per group rather than once per key. Keys of a
  // visited group outside the hull or past Sk have probs 0 (and read a valid row).
  const Halide::Var g("g");
  const Expr group_key = g * group_keys + f.over_group.x;
  f.group_pv = Func("group_pv");
  f.group_pv(dv, g, c, i, h, b) = 0.0f;
  f.group_pv(dv, g, c, i, h, b) += masked_product(kept(c, group_key), f.pv_probs(group_key, c, i, h, b),
                                                  v(dv, h / group, key_row(c, group_key), b));
  f.chunk_pv = Func("chunk_pv");
  f.chunk_pv(dv, c, i, h, b) = 0.0f;
  f.chunk_pv(dv, c, i, h, b) += f.group_pv(dv, rg, c, i, h, b);

  f.partial = Func("partial");
  f.partial(dv, c, i, h, b) =
      Halide::Tuple(f.chunk_max(c, i, h, b), f.chunk_sum(c, i, h, b), f.chunk_pv(dv, c, i, h, b));

  // Combine: every chunk's sum and P.V rescaled by exp(chunk max - max over chunks). A chunk
  // with no kept key has sum 0 and P.V 0, whatever its factor.
  const Expr rc = f.over_chunks.x;
  f.total_max = Func("total_max");
  f.total_max(i, h, b) = no_key;
  f.total_max(i, h, b) = sticky_max(f.total_max(i, h, b), f.partial(0, rc, i, h, b)[0]);
  const Expr factor = softmax_exp(f.partial(0, rc, i, h, b)[0] - f.total_max(i, h, b));
  f.combined = Func("combined");
  f.combined(dv, i, h, b) = Halide::Tuple(0.0f, 0.0f);
  f.combined(dv, i, h, b) =
      Halide::Tuple(f.combined(dv, i, h, b)[0] + f.partial(0, rc, i, h, b)[1] * factor,
                    f.combined(dv, i, h, b)[1] + f.partial(dv, rc, i, h, b)[2] * factor);

  // A query with no kept key gives zeros, never NaN; its lse is -inf.
  f.with_lse = s.lse;
  f.out = Func("attention");
  define_core_output(f.out, {dv, h, i, b}, f.total_max(i, h, b), f.combined(dv, i, h, b)[0],
                     f.combined(dv, i, h, b)[1], s.lse, in.to_out);
  return f;
}

}  // namespace attnc

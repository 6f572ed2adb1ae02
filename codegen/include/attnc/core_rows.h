// attnc/core_rows.h: the attention core with a whole-row softmax per query tile (no running rescale).
#pragma once

#include <Halide.h>

#include <vector>

#include "attn/spec.h"
#include "attnc/core_algorithm.h"
#include "attnc/tile_config.h"

namespace attnc {

// Every stage of the whole-row core, named for the schedule. A query tile first computes its
// scores against every key it may keep (query_tile x Sk floats: 128 KiB at Sk = 1024), then the
// row max over all of them, the exp against that max, the row sums and P.V over all the keys, so
// there is no running max, no rescale of the output sums per key block and no per-block buffers
// of P.V sums; a P.V register block accumulates over the whole key range. Every prefill pipeline
// of a spec with whole_row_core() (tile_config.h) runs this core: the packed one on copies of
// the task's K and V rows, the main one reading them in place.
struct RowsFuncs {
  Halide::Var dv{"dv"}, d{"d"}, key{"key"}, i{"i"}, row{"row"}, tile{"tile"}, h{"h"}, b{"b"};
  Halide::Var group_row{"group_row"}, pv_group{"pv_group"};  // row = pv_group * pv_rows + group_row
  Halide::RDom over_head_dim;                                // d in [0, head_dim)
  Halide::RDom over_keys;  // keys [0, Sk), trimmed by a predicate to the tile's hull
  // Keys [0, Sk), trimmed to what one pv_group of rows may keep, in up to three intervals
  // (pv_key_intervals); row_pv has one update per interval.
  std::vector<Halide::RDom> over_group_keys;
  // With bf16 dot products: (x: pair element, y: d pair) for QK^T; and for each update of row_pv
  // over key pairs (PvKeyInterval::pairs), its RDom's x is the pair element and y the key pair.
  bool bf16_dot = false;
  Halide::Var pair{"pair"}, dim_pair{"dim_pair"}, key_pair{"key_pair"};
  Halide::RDom over_dim_pairs;
  std::vector<bool> group_keys_in_pairs;  // per update of row_pv
  // QK^T on AMX tiles (in.amx_tiles, head_dim a multiple of 32, query_tile of 16): scores sums
  // over_head_dim with k as the tiles' rows and q in pairs (Halide's tiled matmul pattern).
  bool amx_scores = false;
  // P.V on AMX tiles too (with amx_scores and pv_rows of 16): over the whole blocks of 32 keys
  // that every row of a P.V group keeps, pv_tile(group_row, dv, pv_group, tile, h, b) sums
  // values_t (v transposed: keys contiguous) times prob_pairs; row_pv starts from those sums
  // and adds the group's other keys as without tiles.
  bool amx_values = false;
  Halide::Func values_t;  // values_t(key, dv, h, b) = v(dv, h / group, clamp(key, 0, Sk - 1), b), bf16
  Halide::Func pv_tile;
  Halide::RDom over_key_blocks;  // (x: key in block, y: block of 32 keys)
  Halide::Func
      query_pairs;  // query_pairs(pair, row, dim_pair, tile, h, b): q's bf16 elements 2 dim_pair + pair
  Halide::Func
      value_pairs;  // value_pairs(pair, dv, key_pair, h, b): v's bf16 rows 2 key_pair + pair, interleaved
  Halide::Func
      prob_pairs;  // prob_pairs(pair, row, key_pair, tile, h, b) = bf16(probs(row, 2 key_pair + pair))
  Halide::Func query_tile;  // query_tile(row, d, tile, h, b): scaled q, transposed, clamped
  // rope specs: rope_query(d, row, tile, h, b), the tile's q rows rotated before their transpose
  // (with head_dim the vector: the angles and partners read whole vectors); else undefined.
  Halide::Func rope_query;
  int rope_half = 0;         // rope_half_block (rope.h): how rope_query splits d
  int keys_rope_half = 0;    // CoreInputs::keys_rope_half: how head_keys splits d
  Halide::Func head_keys;    // head_keys(d, key, h, b) = k(d, h / group, min(key, Sk - 1), b)
  Halide::Func head_values;  // head_values(dv, key, h, b) = v(dv, h / group, min(key, Sk - 1), b)
  Halide::Func scores;       // scores(row, key, tile, h, b): scaled q . k (+ the mask, no modifiers)
  Halide::Func logits;       // logits(row, key, tile, h, b): after modifiers; masked_score if masked
  Halide::Func row_max;      // row_max(row, tile, h, b): max(no_key_score, kept logits)
  Halide::Func probs;        // probs(row, key, tile, h, b) = exp(logit - row_max)
  Halide::Func row_sum;      // row_sum(row, tile, h, b)
  // pv_probs(row, key, tile, h, b): what P.V multiplies: probs, times dropout's keep factor where
  // the spec drops (from the words in `dropout`), else probs itself.
  Halide::Func pv_probs;
  DropoutWords dropout;
  Halide::Func row_pv;                     // row_pv(dv, group_row, pv_group, tile, h, b): probs . v
  Halide::Expr seq_k;                      // storage bounds of the per-tile rows are Sk + score_rows
  std::vector<Halide::Func> value_checks;  // length inputs against [0, Sk], before any write
  bool has_modifiers = false;
  bool with_lse = false;
  Halide::Func out;  // out(dv, h, i, b); with lse a Tuple {out, lse} (lse repeated along dv)
};

// pv_rows divides query_tile. A mask whose kept keys form several spans is computed over their
// hull (whole_row_core() takes no such mask). With in.q_bf16 defined (and head_dim even) QK^T
// and P.V multiply bf16 pairs into fp32 sums: the scale applies to the scores, and the
// probabilities of the keys that every row of a P.V register block keeps are rounded to bf16
// (the keys at a mask's edges, and an odd key at a span's end, are multiplied in fp32).
RowsFuncs define_core_rows(const CoreInputs &in, const attn::Spec &resolved, int query_tile, int pv_rows);

// Tasks and register blocks as schedule_core_cpu's; with tiles.pack_head_rows each task first
// copies its head's K and V rows contiguous.
void schedule_core_rows_cpu(RowsFuncs &f, const CpuTiles &t);

}  // namespace attnc

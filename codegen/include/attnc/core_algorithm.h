// attnc/core_algorithm.h: the attention core as a Halide algorithm (what is computed, no schedule).
#pragma once

#include <Halide.h>

#include <functional>
#include <vector>

#include "attn/spec.h"
#include "attnc/dropout.h"
#include "attnc/expr_lowering.h"
#include "attnc/mask_lowering.h"

namespace attnc {

// Inputs as Halide sees them, innermost dim first:
//   q(d, h, i, b), k(d, g, j, b), v(dv, g, j, b) with g the kv head; i < seq_q, j < seq_k.
// Modifier inputs (undefined when unused): alibi_slopes(h), score_bias(j, i, h, b).
struct CoreInputs {
  Halide::Func q, k, v;
  Halide::Expr seq_q, seq_k;
  MaskInputs masks;
  Halide::Func alibi_slopes, score_bias;
  // The tensors a score_mod / mask_mod captures (inputs=), by name.
  CapturedTensors captured;
  // The run-time scale (runtime_scale): scale(), no dims, f32; undefined: the spec's constant.
  Halide::Func scale;
  // out as stored, from its f32 value: rounded to the spec's dtype (to nearest even); unset, f32.
  // lse stays f32.
  std::function<Halide::Expr(const Halide::Expr &)> to_out;
  // bf16 specs on targets with bf16 dot products (bf16_dot_products): q, k, v as stored, for the
  // cores that multiply them in pairs (vdpbf16ps); undefined otherwise.
  Halide::Func q_bf16, k_bf16, v_bf16;
  // With q_bf16: the target multiplies bf16 on AMX tiles (amx_tiles), for the cores that can.
  bool amx_tiles = false;
  // Dropout's seed, offset and probability (dropout.h); seed undefined: none.
  DropoutInputs dropout;
  // K and V as stored, read in key order with nothing between (a contiguous cache, or no cache
  // and no rope): what a schedule may prefetch ahead of its reads; undefined otherwise (paged).
  Halide::Parameter k_stored, v_stored;
  // in.k rotates inline (rope without a cache, in the pipelines that copy K rows per task): the
  // copies vectorize as vectorize_rotated (rope.h) does with this half block.
  int keys_rope_half = 0;
  // Prepended to the name of every Func the core defines, so that several cores (the block
  // form's head groups) can live in one pipeline, which needs its Funcs' names unique.
  std::string name_prefix;
};

// Whether a target multiplies bf16 pairs into fp32 sums in one instruction (AVX-512 BF16:
// vdpbf16ps on Zen 4/5 and Sapphire Rapids and later).
bool bf16_dot_products(const Halide::Target &target);

// Whether a target multiplies bf16 matrices on AMX tiles (tdpbf16ps: 16x16 fp32 sums over 32
// products each, Sapphire Rapids and later): Halide's AVX512_SapphireRapids feature.
bool amx_tiles(const Halide::Target &target);

// Whether a bf16 spec's whole-row core may multiply in bf16 on the target (pairs or AMX tiles):
// its calls stay on that core up to whole_row_max_keys_bf16 keys (tile_config.h).
bool whole_rows_in_bf16(const attn::Spec &resolved, const Halide::Target &target);

// The per-key-block stages of one sweep over key blocks. A mask whose kept keys form several
// spans (window | global, say) gets one sweep per span, each an update of the state with its
// own trimmed block loop, so the blocks between the spans are never computed.
struct BlockSweep {
  // (.x: output dim dv, .y: key block of this span; an RDom predicate trims the blocks). dv is
  // a reduction variable so the update may read the per-row max and sum at one fixed dv.
  // With value_columns (the GPU's state) only .x, the key block: the update is pure in dv.
  Halide::RDom over_blocks;
  Halide::Func key_penalty;  // key_penalty(key, kb): 0, or masked_score past seq_k (whole blocks only)
  Halide::Func scores;       // scores(row, key, tile, h, b, kb): scaled q . k, one key block
  Halide::Func logits;       // logits(row, key, tile, h, b, kb): after modifiers; masked_score if masked
  Halide::Func block_max;    // block_max(row, tile, h, b, kb): max(no_key_score, logits)
  Halide::Func probs;        // probs(row, key, tile, h, b, kb): exp(logit - block_max), 0 if masked
  Halide::Func block_sum;    // block_sum(row, tile, h, b, kb)
  // Keys in one key block that one pv_group of rows may keep, in up to three intervals
  // (pv_key_intervals); block_pv has one update per interval.
  std::vector<Halide::RDom> over_group_block;
  // pv_probs(row, key, tile, h, b, kb): the probabilities P.V multiplies: probs, times dropout's
  // keep factor (0 or 1 / (1 - p)) from `dropout`'s words where the spec drops (else probs itself).
  Halide::Func pv_probs;
  DropoutWords dropout;
  // block_pv(dv, group_row, pv_group, tile, h, b, kb): probs . v over the block for query row
  // pv_group * pv_rows + group_row; each group of rows goes over the keys it may keep only.
  Halide::Func block_pv;
};

// Every stage, named for the schedule. Keys come in blocks of key_block; per query row the
// state keeps the running max, running sum and the unnormalized output (flash-style), so no
// [Sq x Sk] score matrix ever exists.
struct CoreFuncs {
  // Queries are split into tiles in the algorithm itself (query = tile * query_tile + row) so
  // every per-tile stage has constant extents that the schedule can unroll.
  Halide::Var dv{"dv"}, d{"d"}, key{"key"}, i{"i"}, row{"row"}, tile{"tile"}, h{"h"}, b{"b"}, kb{"kb"};
  Halide::Var group_row{"group_row"}, pv_group{"pv_group"};  // row = pv_group * pv_rows + group_row
  Halide::RDom over_head_dim;                                // d in [0, head_dim)
  Halide::RDom over_block;                                   // keys in one key block that the tile may keep
  // Queries are the innermost (vector) dim of the per-block stages: one broadcast key element
  // feeds a vector of queries, and the softmax's max and sum stay vertical (no shuffles).
  Halide::Func query_tile;  // query_tile(row, d, tile, h, b): scaled q, transposed, clamped
  // rope specs: rope_query(d, row, tile, h, b), the tile's q rows rotated before their transpose
  // (with head_dim the vector: the angles and partners read whole vectors); else undefined.
  Halide::Func rope_query;
  int rope_half = 0;       // rope_half_block (rope.h): how rope_query splits d
  int keys_rope_half = 0;  // CoreInputs::keys_rope_half: how head_keys splits d
  // One head's K and V rows, contiguous: [B, S, H, D] puts a head's rows H * D apart.
  // Keys past seq_k read the last key (clamped here, so a copy of the rows pads whole blocks).
  Halide::Func head_keys;          // head_keys(d, key, h, b) = k(d, h / group, min(key, Sk - 1), b)
  Halide::Func head_values;        // head_values(dv, key, h, b) = v(dv, h / group, min(key, Sk - 1), b)
  std::vector<BlockSweep> sweeps;  // state update s sweeps sweeps[s]
  // Length inputs checked against [0, Sk] before anything is written (Halide require()).
  std::vector<Halide::Func> value_checks;
  bool has_modifiers = false;  // modifiers on the scores (softcap, alibi, bias)
  // state(dv, row, tile, h, b) = {running_max, running_sum, acc}. With value_columns n > 0 (the
  // GPU's) instead state(column_group, row, tile, h, b) = {running_max, running_sum, acc_0 ..
  // acc_{n-1}}, acc_j for dv = column_group * n + j: the row's max and sum apart from any dv, so
  // the update is pure in column_group and row (one GPU thread each, its state in registers).
  Halide::Func state;
  Halide::Var column_group{"column_group"};
  int value_columns = 0;
  // out(dv, h, i, b); with lse, a Tuple {out, lse} (lse repeated along dv, read at dv = 0).
  Halide::Func out;
  bool with_lse = false;
};

// The running max of a row that has seen no kept key yet.
constexpr float no_key_score = -1.0e30f;
// The logit of a masked key: below no_key_score, so masked - max <= -1e30 and its exp is 0.
constexpr float masked_score = -2.0e30f;

// pv_rows divides query_tile: the rows of a PV register block, which skip keys they cannot keep.
// value_columns 0: the state per dv (the CPU's); else it divides head_dim_v and the state holds
// that many value columns per element (the GPU's, see CoreFuncs::state). Everything else is the same.
CoreFuncs define_core(const CoreInputs &in, const attn::Spec &resolved, int key_block, int query_tile,
                      int pv_rows, int value_columns = 0);

// The keys a group of pv_rows query rows may keep, the first at key position group_first: the
// hull of its spans (the tile's spans must be bounded). It narrows with the rows, so it lies
// inside the tile's hull; both cores trim their P.V register blocks to it.
KeySpan pv_group_hull(const attn::Spec &resolved, const Halide::Expr &group_first, int pv_rows,
                      const Halide::Expr &batch, const Halide::Expr &seq_k, const MaskInputs &masks);

// out(dv, h, i, b) from a query row's max, sum of exps and unnormalized P.V: total / sum, and
// with lse a Tuple {out, lse}. A row with no kept key (sum 0) gives zeros, never NaN; its lse is
// -inf. A row whose max is not finite (a kept logit was NaN or +inf: sticky_max) gives NaN.
// out is stored through to_out (CoreInputs::to_out; unset: f32).
void define_core_output(Halide::Func out, const std::vector<Halide::Var> &args, const Halide::Expr &max,
                        const Halide::Expr &sum, const Halide::Expr &total, bool lse,
                        const std::function<Halide::Expr(const Halide::Expr &)> &to_out);

// max(running, x) that turns NaN when x is NaN and then stays NaN (Halide's max, a compare and a
// select under fast-math, drops a NaN x and forgets a NaN running max at the next key). The
// cores take their row maxima with it, so a NaN or +inf logit of a kept key reaches the output.
Halide::Expr sticky_max(const Halide::Expr &running, const Halide::Expr &x);

// One key interval of a P.V register block's rows: [first, last] in key positions, and whether
// its keys need the mask's select (some row of the group may not keep them).
struct PvKeyInterval {
  Halide::Expr first, last;
  bool select = false;
  bool pairs = false;  // first and last count key pairs (2 kp, 2 kp + 1): bf16 dot products
};

// For bf16 dot products: each plain interval becomes the key pairs inside it and its odd keys at
// either end (each then a select interval: at most one key, kept or masked per row). A partition
// of the same keys; select intervals pass through.
std::vector<PvKeyInterval> pair_intervals(const std::vector<PvKeyInterval> &intervals);

// The keys [lo, hi] that a P.V group reads (its hull), in at most three intervals: without a
// mask one, plain; else the keys every row of the group keeps (plain products: no select in the
// FMA loop) and the hull's keys before and after them (masked_product per key).
std::vector<PvKeyInterval> pv_key_intervals(const attn::Spec &resolved, const Halide::Expr &group_first,
                                            int pv_rows, const Halide::Expr &lo, const Halide::Expr &hi,
                                            const Halide::Expr &batch, const Halide::Expr &seq_k,
                                            const MaskInputs &masks);

// logit where keep holds, else masked_score: whatever logit holds (a masked key's k may be NaN,
// and NaN plus a penalty is NaN). Bitwise, not a select: Halide would trim the bounds of the
// scores to the kept keys through a select's condition (a ragged region per register block).
Halide::Expr masked_logit(const Halide::Expr &keep, const Halide::Expr &logit);

// value * probability for a P.V sum: 0 where the key is masked, whatever value holds (0 * NaN
// would be NaN: a masked key's v, garbage in a cache slot, must never reach an output).
Halide::Expr masked_product(const Halide::Expr &keep, const Halide::Expr &probability,
                            const Halide::Expr &value);

// exp for x <= 0 (all the softmax needs): relative error below 2.5e-7 + 8e-8 |x| against exp
// in double (tests/codegen/softmax_exp_test), exactly 0 below -87.
Halide::Expr softmax_exp(const Halide::Expr &x);
// 2^t for t <= 0, the same polynomial: exactly 0 below -125.5.
Halide::Expr softmax_exp2(const Halide::Expr &t);
constexpr float log2_e = 1.44269504f;

}  // namespace attnc

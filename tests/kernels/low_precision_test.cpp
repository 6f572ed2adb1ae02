// f16 and bf16 storage (issue 20) against the fp64 reference on the same rounded inputs: every mask
// term and modifier, both forms, GQA/MQA, Dv != D, odd lengths, lse, rows with no kept key, the
// split-keys and packed pipelines, and inputs near the dtype's largest values. The pass rule
// (low_precision.h) is relative to a naive fp32 computation's error, so it holds as well for
// kernels that compute in bf16 where the target has bf16 dot products.
#include "low_precision.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_support.h"
#include "low_precision_specs.h"

namespace {

using namespace attnc::test;

struct LowPrecisionCase {
  std::string spec;
  int batch, seq_q, seq_k;  // the block form: seq_q = seq_k = S
  MaskShape mask_shape;     // how mask and score_bias are given
  bool padded;              // outer strides larger than dense
};

std::ostream &operator<<(std::ostream &os, const LowPrecisionCase &c) {
  return os << "{\"" << c.spec << "\", B=" << c.batch << ", Sq=" << c.seq_q << ", Sk=" << c.seq_k << ", mask "
            << c.mask_shape << (c.padded ? ", padded strides}" : ", dense}");
}

// Changes a call's f32 inputs before they are rounded (large values, masks that remove every key).
using Adjust = std::function<void(const attn::Spec &, Call &, std::mt19937 &)>;

LowPrecisionRun run_case(const LowPrecisionCase &c, const Adjust &adjust = {}) {
  const attn::Spec spec = parse(c.spec);
  const attn_kernel *kernel = find_kernel(spec);
  REQUIRE(kernel != nullptr);
  std::mt19937 rng(static_cast<unsigned>(c.batch * 1000003 + c.seq_q * 1009 + c.seq_k * 7 + c.spec.size()));
  Call call = make_call(spec, c.batch, c.seq_q, c.seq_k, c.padded, rng);
  add_runtime_inputs(spec, call, c.batch, c.seq_q, c.seq_k, c.padded, c.mask_shape, rng);
  if (adjust) adjust(spec, call, rng);
  return run_low_precision(spec, kernel, call);
}

void check_case(const LowPrecisionCase &c, const Adjust &adjust = {}) {
  CAPTURE(c);
  const LowPrecisionRun run = run_case(c, adjust);
  check_low_precision(parse(c.spec), run);
}

bool is_core(const char *spec) {
  return parse(spec).form == attn::Form::core;
}

constexpr MaskShape shapes[] = {MaskShape::sq_sk, MaskShape::h_sq_sk, MaskShape::b_h_sq_sk,
                                MaskShape::one_h_sq_sk, MaskShape::b_one_sq_sk};

TEST_CASE("the low-precision specs are the linked kernels") {
  check_spec_list(low_precision_spec_list_drift(), "low_precision_specs.h");
}

// The instruction-set caps to run the suite under: none (this machine's best variant) and each
// cap that selects another variant of the bf16 kernels on this CPU: on x86 "avx512" (the Skylake
// class variant, bf16 converted to fp32, where the best one multiplies bf16 pairs or AMX tiles)
// and "avx2"; on AArch64 "neon" (the baseline beside the Armv8.2 variant). Under a cap, only the
// specs whose kernels have a variant for it run.
std::vector<const char *> isa_caps() {
  std::vector<const char *> caps = {nullptr};
  const attn_kernel *kernel = find_kernel(parse(low_precision_specs[0]));
  REQUIRE(kernel != nullptr);
  std::vector<std::string> selected = {attn_kernel_selected_target(kernel)};
#if defined(__aarch64__)
  const char *const candidates[] = {"neon"};
#else
  const char *const candidates[] = {"avx512", "avx2"};
#endif
  for (const char *cap : candidates) {
    REQUIRE(attn_set_max_isa(cap) == ATTN_OK);
    const std::string target = attn_kernel_selected_target(kernel);
    if (!target.empty() && std::find(selected.begin(), selected.end(), target) == selected.end()) {
      caps.push_back(cap);
      selected.push_back(target);
    }
  }
  REQUIRE(attn_set_max_isa(nullptr) == ATTN_OK);
  MESSAGE("variants run: ", [&] {
    std::string all;
    for (const std::string &t : selected) all += (all.empty() ? "" : "; ") + t;
    return all;
  }());
#if defined(__x86_64__)
  if (std::none_of(selected.begin(), selected.end(),
                   [](const std::string &t) { return t.find("sapphirerapids") != std::string::npos; }))
    MESSAGE(
        "skipped: the AMX (bf16 tiles) variant, which runs only on a CPU with AMX (lscpu: amx_bf16) "
        "whose kernels were built for it; this run has none");
#endif
  return caps;
}

// Runs check for every spec that has a variant under each cap in isa_caps().
void for_each_variant(const std::function<void(const char *spec)> &check) {
  for (const char *cap : isa_caps()) {
    CAPTURE(std::string(cap ? cap : "none"));
    REQUIRE(attn_set_max_isa(cap) == ATTN_OK);
    for (const char *spec : low_precision_specs) {
      const std::string targets = attn_kernel_target(find_kernel(parse(spec)));
      if (cap != nullptr && targets.find(",") == std::string::npos) continue;  // one variant only
      check(spec);
    }
    REQUIRE(attn_set_max_isa(nullptr) == ATTN_OK);
  }
}

TEST_CASE("f16 and bf16 kernels match the fp64 reference on the rounded inputs") {
  struct Lengths {
    int seq_q, seq_k;
  };
  // Odd lengths around the tiles, Sq != Sk both ways, and one square ragged tile.
  constexpr Lengths core_lengths[] = {{7, 33}, {33, 7}, {129, 33}, {33, 129}, {129, 129}, {1, 7}};
  constexpr int block_lengths[] = {1, 7, 33, 129};
  int n = 0, cases = 0;
  for_each_variant([&](const char *spec) {
    if (is_core(spec)) {
      for (const Lengths &l : core_lengths)
        check_case({spec, 1 + n % 3, l.seq_q, l.seq_k, shapes[n % 5], n++ % 2 == 1}), ++cases;
    } else {
      for (int seq : block_lengths)
        check_case({spec, 1 + n % 3, seq, seq, shapes[n % 5], n++ % 2 == 1}), ++cases;
    }
  });
  MESSAGE(cases, " cases");
}

TEST_CASE("split keys: a few queries against many keys") {
  // Sq <= 8 runs the split-keys core (256-key chunks); Sq = 9 the tiled core next to it.
  int n = 0;
  for (const char *spec : low_precision_specs) {
    if (!is_core(spec)) continue;
    for (int seq_q : {1, 3, 8, 9})
      for (int seq_k : {257, 700}) check_case({spec, 1 + n % 3, seq_q, seq_k, shapes[n % 5], n++ % 2 == 0});
  }
}

TEST_CASE("long keys: the packed pipeline and the block core over many key blocks") {
  for_each_variant([](const char *spec) {
    if (!is_core(spec)) return;
    // heads=8 specs pack from Sk >= 1024 with B * heads >= 8 tasks (tile_config.h); the others
    // (global, window, random) run the block core over many key blocks at the same lengths.
    check_case({spec, 1, 33, 1030, MaskShape::sq_sk, false});
    check_case({spec, 2, 129, 1024, MaskShape::b_one_sq_sk, true});
  });
}

TEST_CASE("out rounds to nearest even: ties between two adjacent dtype values") {
  // q = 0 gives every kept key the score 0 and the weight 1, so with two keys whose v are
  // adjacent values of the dtype, the odd one first, out = (v0 + v1) / 2 is exact in fp32 (in
  // any summation order, and with bf16 probabilities too) and falls halfway between them: only
  // rounding to nearest even gives the even one, in every element.
  const Adjust ties = [](const attn::Spec &spec, Call &call, std::mt19937 &rng) {
    call.tensors.at("q").fill(0.0f);
    Tensor &v = call.tensors.at("v");
    const int64_t keys = v.shape()[1], row = v.shape()[2] * v.shape()[3];      // kv heads x Dv
    const uint16_t exponent_low = spec.dtype == attn::DType::bf16 ? 120 : 10;  // ~2^-7 (f16: 2^-5)
    for (int64_t b = 0; b < v.shape()[0]; ++b)
      for (int64_t e = 0; e < row; ++e) {
        const uint16_t exponent = static_cast<uint16_t>(exponent_low + rng() % 12);
        const uint16_t odd = spec.dtype == attn::DType::bf16
                                 ? static_cast<uint16_t>((exponent << 7) | (rng() & 0x7e) | 1)
                                 : static_cast<uint16_t>((exponent << 10) | (rng() & 0x3fe) | 1);
        const uint16_t sign = rng() % 2 ? 0x8000 : 0;
        v.logical((b * keys + 0) * row + e) = from_bits(spec.dtype, sign | odd);
        v.logical((b * keys + 1) * row + e) = from_bits(spec.dtype, sign | (odd + 1));
      }
  };
  int64_t ties_checked = 0;
  for (const char *text : low_precision_specs) {
    const attn::Spec spec = parse(text);
    // The window / random spec: no modifier, and both keys kept for every row.
    if (spec.form != attn::Form::core || !spec.mask.uses(attn::MaskOp::random_blocks)) continue;
    for (int seq_q : {1, 2}) {  // the split-keys and the tiled core
      const LowPrecisionCase c{text, 2, seq_q, 2, MaskShape::sq_sk, seq_q == 2};
      CAPTURE(c);
      const LowPrecisionRun run = run_case(c, ties);
      check_low_precision(spec, run);
      int64_t not_ties = 0, not_even = 0;
      for (size_t n = 0; n < run.out.size(); ++n) {
        const float exact = static_cast<float>(run.expected.exact[n]);  // exact in float
        not_ties += round_to(spec.dtype, exact) == exact;
        not_even += run.out[n] != round_to(spec.dtype, exact) || (to_bits(spec.dtype, run.out[n]) & 1) != 0;
      }
      CHECK(not_ties == 0);
      CHECK(not_even == 0);
      ties_checked += static_cast<int64_t>(run.out.size());
    }
  }
  CHECK(ties_checked > 0);
}

// Counts the rows (b, i, h) the reference gives no kept key, and the non-zero out elements of
// those rows in the core form (the block form projects them through w_o and b_o).
struct MaskedRows {
  int64_t rows = 0, nonzero = 0;
};
MaskedRows masked_rows(const attn::Spec &spec, const LowPrecisionRun &run) {
  MaskedRows m;
  for (size_t row = 0; row < run.expected.exact_lse.size(); ++row) {
    if (!std::isinf(run.expected.exact_lse[row])) continue;
    ++m.rows;
    if (spec.form != attn::Form::core) continue;
    for (int64_t e = 0; e < spec.head_dim_v; ++e)
      m.nonzero += run.out[row * spec.head_dim_v + static_cast<size_t>(e)] != 0.0f;  // NaN counts too
  }
  return m;
}

TEST_CASE("rows with no kept key give exact zeros and lse -inf") {
  const Adjust no_keys = [](const attn::Spec &, Call &call, std::mt19937 &) {
    if (call.index_tensors.count("key_lengths")) call.index_tensors.at("key_lengths").fill(0);
    if (call.byte_tensors.count("mask")) call.byte_tensors.at("mask").fill(0);
  };
  for (const char *text : low_precision_specs) {
    const attn::Spec spec = parse(text);
    const bool runtime_mask = spec.mask.uses(attn::MaskOp::padding) || spec.mask.uses(attn::MaskOp::tensor);
    if (!runtime_mask) continue;
    const bool core = spec.form == attn::Form::core;
    for (int seq_q : {3, 33}) {
      // key_lengths 0 or an all-zero mask tensor: only a window or global keys or'ed in can keep
      // a row.
      const LowPrecisionCase c{text, 2, seq_q, core ? 65 : seq_q, MaskShape::b_h_sq_sk, seq_q == 33};
      CAPTURE(c);
      const LowPrecisionRun run = run_case(c, no_keys);
      check_low_precision(spec, run);
      const MaskedRows m = masked_rows(spec, run);
      CHECK(m.nonzero == 0);
      if (!spec.mask.uses(attn::MaskOp::global_tokens) && !spec.mask.uses(attn::MaskOp::window))
        CHECK(m.rows == int64_t{c.batch} * c.seq_q * spec.heads);
    }
  }
  // Bottom-right alignment puts rows i < Sq - Lk before every key, where no window (nor, for
  // those rows, random blocks) reaches: the key blocks skipped by structure, not by values.
  int64_t structural_rows = 0;
  for (const char *text : low_precision_specs) {
    const attn::Spec spec = parse(text);
    if (spec.form != attn::Form::core) continue;
    const LowPrecisionCase c{text, 3, 129, 17, MaskShape::sq_sk, true};
    CAPTURE(c);
    const LowPrecisionRun run = run_case(c);
    check_low_precision(spec, run);
    const MaskedRows m = masked_rows(spec, run);
    CHECK(m.nonzero == 0);
    structural_rows += m.rows;
  }
  CHECK(structural_rows > 0);
}

TEST_CASE("NaN in the k and v of keys past the key length reaches no output") {
  // Key lengths 37 and 64 of Sk = 100: the kept keys end inside a block of 32 keys (the AMX
  // tiles' P.V step) and at a block's end, and every masked key's k and v hold NaN.
  const Adjust nan_past_length = [](const attn::Spec &, Call &call, std::mt19937 &) {
    IndexTensor &lengths = call.index_tensors.at("key_lengths");
    lengths.logical(0) = 37;
    lengths.logical(1) = 64;
    for (const char *name : {"k", "v"}) {
      Tensor &t = call.tensors.at(name);  // [B, Sk, kv_heads, D]
      const int64_t per_key = t.shape()[2] * t.shape()[3], per_batch = t.shape()[1] * per_key;
      for (int64_t n = 0; n < t.elements(); ++n)
        if ((n % per_batch) / per_key >= lengths.logical(n / per_batch)) t.logical(n) = NAN;
    }
  };
  int specs = 0;
  for (const char *text : low_precision_specs) {
    const attn::Spec spec = parse(text);
    // Global tokens keep keys whatever the length: their NaN would rightly reach the outputs.
    if (spec.form != attn::Form::core || !spec.mask.uses(attn::MaskOp::padding) ||
        spec.mask.uses(attn::MaskOp::global_tokens))
      continue;
    const LowPrecisionCase c{text, 2, 70, 100, MaskShape::sq_sk, false};
    CAPTURE(c);
    check_low_precision(spec, run_case(c, nan_past_length));  // no NaN in out, within the pass rule
    ++specs;
  }
  CHECK(specs > 0);
}

// Each logical element of the named f32 input, from value(row, column) of its [rows, columns] view
// (column 0 for rank 1; the innermost dim is the column otherwise).
void fill(Call &call, const std::string &name, const std::function<float(int64_t, int64_t)> &value) {
  auto it = call.tensors.find(name);
  if (it == call.tensors.end()) return;
  Tensor &t = it->second;
  const int64_t columns = t.shape().size() == 1 ? 1 : t.shape().back();
  for (int64_t n = 0; n < t.elements(); ++n) t.logical(n) = value(n / columns, n % columns);
}

// Inputs near the largest finite values of a dtype: 65504 (f16), about 3.39e38 (bf16).
struct Magnitudes {
  float q_k;            // core: q and k uniform in [-q_k, q_k]: scores up to 1e5 (f16) or 1e37 (bf16)
  float v_low, v_high;  // core: |v| uniform in [v_low, v_high], random sign
  float scale;          // block: x in [scale, 2 scale] (see large_block_inputs)
};
Magnitudes magnitudes(attn::DType dtype) {
  // The block form's v, about 36 scale^2, is kept below FLT_MAX / Sk: the fp32 sum of
  // exp(s - max) v over a row's keys (the naive result's, and a flash kernel's accumulator)
  // overflows beyond it even where the normalized output would fit.
  if (dtype == attn::DType::bf16) return {1e18f, 1e38f, 3e38f, 1e17f};
  return {200.0f, 55000.0f, 64000.0f, 1.0f};
}

// Core form: q and k make huge scores (softmax all but one-hot, where exp underflows to 0), v sits
// near the dtype's largest value. out is a convex combination of v, so it never overflows: every
// element must be finite, within the pass rule. The one-hot weights also keep the unnormalized
// fp32 sum of v finite (with v near bf16's largest value, two keys of equal weight overflow it:
// an fp32 limit, which the naive result shares, not a rounding one).
void large_core_inputs(const attn::Spec &spec, Call &call, std::mt19937 &rng) {
  const Magnitudes m = magnitudes(spec.dtype);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  fill(call, "q", [&](int64_t, int64_t) { return m.q_k * (2 * unit(rng) - 1); });
  fill(call, "k", [&](int64_t, int64_t) { return m.q_k * (2 * unit(rng) - 1); });
  fill(call, "v", [&](int64_t, int64_t) {
    const float magnitude = m.v_low + (m.v_high - m.v_low) * unit(rng);
    return unit(rng) < 0.5f ? -magnitude : magnitude;
  });
}

// Block form, built so that out overflows the dtype in some columns and not in others, whatever
// the order of the sums: x in [s, 2s] and v's weights in [s/2, s] (s = scale) make every v
// positive, about 36 s^2 (d_model 32); q and k weights in [-1/(2s), 1/(2s)] keep scores small.
// Row m of w_o is sign_m * 10^(m % 8 - 4) * [0.5, 1], so out[m] is one-signed, about
// 864 s^2 10^(m % 8 - 4): the rows with 10^(m % 8 - 4) >= 100 exceed the dtype's range (f16:
// 86400, bf16: 8.6e38) by more than 15% and must be ±inf; the others stay 3x below it and must
// be finite and within the pass rule. fp32 sums of one-signed terms overflow only when the
// exact value does, so the naive result agrees.
void large_block_inputs(const attn::Spec &spec, Call &call, std::mt19937 &rng) {
  const float s = magnitudes(spec.dtype).scale;
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  const int64_t q_rows = int64_t{spec.heads} * spec.head_dim, k_rows = int64_t{spec.kv_heads} * spec.head_dim;
  auto projection = [&](const std::string &name, int64_t row, bool bias) -> float {
    const bool v_row =
        name == "w_v" || name == "b_v" || ((name == "w_qkv" || name == "b_qkv") && row >= q_rows + k_rows);
    if (v_row) return bias ? s * s * unit(rng) : s * (0.5f + 0.5f * unit(rng));
    return bias ? 0.1f * (unit(rng) - 0.5f) : (unit(rng) - 0.5f) / s;
  };
  fill(call, "x", [&](int64_t, int64_t) { return s * (1 + unit(rng)); });
  for (const char *w : {"w_q", "w_k", "w_v", "w_qkv"})
    fill(call, w, [&](int64_t row, int64_t) { return projection(w, row, false); });
  for (const char *b : {"b_q", "b_k", "b_v", "b_qkv"})
    fill(call, b, [&](int64_t row, int64_t) { return projection(b, row, true); });
  fill(call, "w_o", [&](int64_t row, int64_t) {
    const float magnitude = std::pow(10.0f, static_cast<float>(row % 8 - 4)) * (0.5f + 0.5f * unit(rng));
    return row % 16 < 8 ? magnitude : -magnitude;
  });
  fill(call, "b_o", [&](int64_t, int64_t) { return unit(rng) - 0.5f; });
}

TEST_CASE("large magnitudes: no NaN, and out overflows to ±inf exactly where the dtype does") {
  for (const char *text : low_precision_specs) {
    const attn::Spec spec = parse(text);
    const bool core = spec.form == attn::Form::core;
    // One core spec without softcap (a capped score spreads the weights, and an unnormalized
    // sum of v near bf16's largest value would overflow fp32 in the naive result too) and one
    // block spec with biases, per dtype.
    const bool chosen = core ? spec.mask.uses(attn::MaskOp::global_tokens) : spec.proj_bias;
    if (!chosen) continue;
    const Adjust adjust = core ? Adjust(large_core_inputs) : Adjust(large_block_inputs);
    const std::vector<LowPrecisionCase> cases =
        core ? std::vector<LowPrecisionCase>{{text, 3, 33, 129, MaskShape::sq_sk, false},
                                             {text, 2, 3, 700, MaskShape::sq_sk, true}}
             : std::vector<LowPrecisionCase>{{text, 3, 33, 33, MaskShape::sq_sk, false},
                                             {text, 1, 129, 129, MaskShape::sq_sk, true}};
    for (const LowPrecisionCase &c : cases) {
      CAPTURE(c);
      const LowPrecisionRun run = run_case(c, adjust);
      check_low_precision(spec, run);
      // The cases' own premise: fp32 arithmetic gives a finite answer wherever the exact value
      // fits the dtype (so a NaN or inf there is the kernel's).
      int64_t naive_not_finite = 0, overflowed = 0, finite = 0;
      for (size_t n = 0; n < run.out.size(); ++n) {
        const bool fits = std::isfinite(run.exact_saturated[n]);
        naive_not_finite += fits && !std::isfinite(run.expected.naive[n]);
        overflowed += !fits;
        finite += fits;
      }
      CHECK(naive_not_finite == 0);
      CHECK(finite > 0);
      if (core)
        CHECK(overflowed == 0);
      else
        CHECK(overflowed > 0);
    }
  }
}

}  // namespace

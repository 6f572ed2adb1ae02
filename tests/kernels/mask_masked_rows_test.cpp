// Rows whose every key a mask removes (an all-zero mask tensor, key_lengths 0, a window before the
// first key) give zeros, never NaN, and lse -inf; the other rows stay right.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_support.h"
#include "mask_specs.h"

namespace {

using namespace attnc::test;

struct Setup {
  std::string spec;
  int batch, seq_q, seq_k;
  MaskShape mask_shape = MaskShape::b_h_sq_sk;
};

// Runs the call after prepare() has set its runtime inputs; checks it against the reference, that
// every row the reference masks is exactly 0 (core form) with lse -inf, and returns how many rows
// (batch, query, head) were masked.
template <class Prepare>
int64_t check_masked_rows(const Setup &s, Prepare prepare) {
  const attn::Spec spec = parse(s.spec);
  const attn_kernel *kernel = find_kernel(spec);
  REQUIRE(kernel != nullptr);
  std::mt19937 rng(static_cast<unsigned>(s.seq_q * 31 + s.seq_k));
  const bool core = spec.form == attn::Form::core;
  Call call = core ? make_core_call(spec, s.batch, s.seq_q, s.seq_k, s.seq_k % 2 == 1, rng)
                   : make_block_call(spec, s.batch, s.seq_q, false, rng);
  add_runtime_inputs(spec, call, s.batch, s.seq_q, s.seq_k, s.seq_k % 2 == 1, s.mask_shape, rng);
  prepare(call);
  const attn_status status = call.run(kernel);
  INFO("attn_run: ", status_name(status), ": ", last_error());
  REQUIRE(status == ATTN_OK);
  const Expected expected = expected_result(spec, call);
  const Tensor &out = call.tensors.at("out");

  int64_t masked = 0, nonzero = 0;
  for (size_t row = 0; row < expected.exact_lse.size(); ++row) {
    if (!std::isinf(expected.exact_lse[row])) continue;
    ++masked;
    if (!core) continue;  // the block form projects the zero rows out through w_o and b_o
    for (int64_t e = 0; e < spec.head_dim_v; ++e)
      nonzero += out.logical(static_cast<int64_t>(row) * spec.head_dim_v + e) != 0.0f;  // NaN too
  }
  CHECK(nonzero == 0);
  const Comparison result = compare(out, expected);
  CAPTURE(result);
  CHECK(result.nan_count == 0);
  CHECK(result.pass());
  if (spec.lse) {
    const LseComparison lse = compare_lse(call.tensors.at("lse"), expected);
    CAPTURE(lse);
    CHECK(lse.masked_rows == masked);
    CHECK(lse.pass());
  }
  return masked;
}

TEST_CASE("an all-zero mask tensor masks every row") {
  for (const char *spec : {"heads=2 head_dim=16 mask=tensor lse=true", "heads=2 head_dim=32 mask=tensor",
                           "heads=2 head_dim=16 mask=tensor&causal",
                           "d_model=32 heads=2 form=block mask=tensor&causal mask_block=8"})
    for (MaskShape shape : {MaskShape::sq_sk, MaskShape::h_sq_sk, MaskShape::b_h_sq_sk}) {
      const Setup s{spec, 2, 65, parse(spec).form == attn::Form::core ? 17 : 65, shape};
      CAPTURE(s.spec);
      CAPTURE(shape);
      const int64_t masked = check_masked_rows(s, [](Call &call) { call.byte_tensors.at("mask").fill(0); });
      CHECK(masked == int64_t{s.batch} * s.seq_q * 2);
    }
}

TEST_CASE("key_lengths 0 masks its batch entry; the others stay right") {
  for (const char *spec :
       {"heads=2 head_dim=16 mask=(window(8,8)|global(4))&padding",
        "heads=2 head_dim=32 mask=(window(8,8)|global(4))&padding lse=true",
        "heads=2 head_dim=16 mask=causal&padding softcap=2 alibi=true score_bias=tensor lse=true",
        "heads=2 head_dim=32 mask=padding", "heads=2 head_dim=16 mask=random(8,2,3)&padding",
        "d_model=32 heads=2 form=block mask=padding",
        "d_model=64 heads=2 form=block mask=(window(8,8)|global(4))&padding lse=true"}) {
    const bool core = parse(spec).form == attn::Form::core;
    const Setup s{spec, 3, 33, core ? 129 : 33};
    CAPTURE(s.spec);
    SUBCASE("every batch entry") {
      const int64_t masked =
          check_masked_rows(s, [](Call &call) { call.index_tensors.at("key_lengths").fill(0); });
      CHECK(masked == int64_t{s.batch} * s.seq_q * 2);
    }
    SUBCASE("the middle one") {
      const int64_t masked = check_masked_rows(s, [&](Call &call) {
        IndexTensor &lengths = call.index_tensors.at("key_lengths");
        lengths.logical(0) = s.seq_k;
        lengths.logical(1) = 0;
        lengths.logical(2) = s.seq_k / 2;
      });
      CHECK(masked >= int64_t{s.seq_q} * 2);
    }
  }
}

TEST_CASE("rows before every key: causal and window(2,0) with Sq > Sk") {
  // Bottom-right alignment puts rows i < Sq - Lk before key 0, where no window reaches.
  for (const Setup &s :
       {Setup{"heads=2 head_dim=16 mask=window(2,0) lse=true", 2, 300, 17},
        Setup{"heads=2 head_dim=16 mask=window(2,0) lse=true", 1, 65, 1},
        Setup{"heads=1 head_dim=32 mask=causal", 3, 129, 64},
        Setup{"heads=2 head_dim=16 mask=causal&padding softcap=2 alibi=true score_bias=tensor lse=true", 3,
              129, 65},
        Setup{"heads=2 head_dim=16 mask=tensor&causal", 2, 127, 63},
        Setup{"heads=2 head_dim=16 mask=causal mask_block=16", 1, 200, 40}}) {
    CAPTURE(s.spec);
    CAPTURE(s.seq_q);
    CAPTURE(s.seq_k);
    const int64_t masked = check_masked_rows(s, [](Call &) {});
    CHECK(masked > 0);
  }
}

}  // namespace

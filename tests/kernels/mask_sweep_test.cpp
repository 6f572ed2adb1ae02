// Mask terms, compositions, mask_block, score modifiers and lse against the fp64 reference, with
// random runtime inputs (key and prefix lengths, segment ids, mask tensors of every accepted shape).
#include <doctest/doctest.h>

#include <iterator>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_support.h"
#include "mask_specs.h"

namespace {

using namespace attnc::test;

struct MaskCase {
  std::string spec;
  int batch;
  int seq_q;
  int seq_k;             // the block form: seq_q = seq_k = S
  MaskShape mask_shape;  // how mask and score_bias are given
  bool padded;           // outer strides larger than dense
  float q_gain = 1.0f;   // q (core) scaled up: large scores, where softcap bites
};

std::ostream &operator<<(std::ostream &os, const MaskCase &c) {
  os << "{\"" << c.spec << "\", B=" << c.batch << ", Sq=" << c.seq_q << ", Sk=" << c.seq_k << ", mask "
     << c.mask_shape << (c.padded ? ", padded strides" : ", dense");
  if (c.q_gain != 1.0f) os << ", q x" << c.q_gain;
  return os << "}";
}

constexpr MaskShape shapes[] = {MaskShape::sq_sk, MaskShape::h_sq_sk, MaskShape::b_h_sq_sk,
                                MaskShape::one_h_sq_sk, MaskShape::b_one_sq_sk};

// (Sq, Sk) around the CPU tiles, both ways round; each spec takes ten in a row, starting where the
// previous spec left off, so every spec sees Sq < Sk, Sq > Sk and Sq = Sk.
struct Lengths {
  int seq_q, seq_k;
};
constexpr Lengths core_lengths[] = {{1, 1},     {17, 63}, {65, 17},  {63, 129}, {129, 127}, {127, 65},
                                    {1, 129},   {129, 1}, {17, 17},  {65, 65},  {127, 129}, {63, 1},
                                    {129, 129}, {1, 17},  {65, 127}, {17, 1}};
constexpr int block_lengths[] = {1, 17, 63, 65, 127, 129};

// Long sequences, for a few specs only (the reference is quadratic).
const MaskCase long_cases[] = {
    {"heads=2 head_dim=16 mask=(window(8,8)|global(4))&padding", 2, 1000, 1000, MaskShape::sq_sk, false},
    {"heads=2 head_dim=16 mask=random(16,2,42)&causal", 1, 1000, 1000, MaskShape::sq_sk, true},
    {"heads=2 head_dim=32 mask=document&causal", 1, 1000, 1000, MaskShape::sq_sk, false},
    {"heads=2 head_dim=16 mask=tensor&causal", 1, 1000, 129, MaskShape::b_h_sq_sk, false},
    {"heads=2 head_dim=32 mask=window(16,0)&padding", 3, 17, 1000, MaskShape::sq_sk, true},
    {"heads=2 head_dim=16 mask=causal mask_block=16", 1, 129, 1000, MaskShape::sq_sk, false},
    {"heads=2 head_dim=16 mask=(window(16,16)|global(4))&padding mask_block=16", 3, 1000, 1000,
     MaskShape::sq_sk, false},
    {"heads=2 head_dim=16 mask=(window(3,3)|global(2)|random(8,1,7))&padding", 3, 1000, 1000,
     MaskShape::sq_sk, true},
    {"heads=2 head_dim=16 mask=window(8,0)|random(6,2,5) mask_block=8", 1, 1000, 1000, MaskShape::sq_sk,
     false},
    {"heads=2 head_dim=16 mask=(causal|prefix)&padding", 3, 1000, 1000, MaskShape::sq_sk, false},
    {"heads=2 head_dim=16 mask=global(4)", 1, 1000, 65, MaskShape::sq_sk, false},
    {"d_model=32 heads=2 form=block qkv=fused proj_bias=true mask=causal|prefix", 2, 1000, 1000,
     MaskShape::sq_sk, false},
    {"heads=2 kv_heads=1 head_dim=16 mask=(window(16,0)|global(2))&tensor mask_block=8 softcap=3 alibi=true "
     "score_bias=tensor lse=true",
     1, 1000, 1000, MaskShape::h_sq_sk, false},
    {"d_model=64 heads=2 form=block mask=(window(8,8)|global(4))&padding lse=true", 2, 1000, 1000,
     MaskShape::sq_sk, true},
    // A bare window over many key blocks: both edges of the visited blocks trimmed.
    {"heads=2 head_dim=16 mask=window(5,3)", 2, 1000, 1000, MaskShape::sq_sk, false},
    // Sk >= packed_min_keys, B x heads >= packed_min_tasks: the packed pipeline under masks that
    // read most keys.
    {"heads=2 head_dim=16 mask=(causal|prefix)&padding", 4, 1000, 1040, MaskShape::sq_sk, false},
    {"heads=2 head_dim=32 mask=document&causal", 4, 300, 1100, MaskShape::sq_sk, true},
    {"heads=2 head_dim=16 mask=tensor&causal", 4, 200, 1100, MaskShape::b_h_sq_sk, false},
    {"heads=2 kv_heads=1 head_dim=16 mask=causal&padding", 4, 1030, 1030, MaskShape::sq_sk, true},
    // The packed core's modifiers and lse (its logits stage, its row max as the lse's base).
    {"heads=2 head_dim=16 mask=causal&padding softcap=2 alibi=true score_bias=tensor lse=true", 4, 1030, 1030,
     MaskShape::b_one_sq_sk, false},
    // Top-left alignment on the packed pipeline, and with Sq > Sk (rows past Sk see every key).
    {"heads=2 head_dim=16 mask=causal align=top_left", 4, 1000, 1040, MaskShape::sq_sk, false},
    {"heads=2 head_dim=16 mask=causal align=top_left", 2, 300, 129, MaskShape::sq_sk, true},
    {"heads=2 kv_heads=1 head_dim=16 mask=(window(4,2)|global(2))&padding align=top_left alibi=true lse=true",
     3, 1000, 700, MaskShape::sq_sk, false},
};

// Large scores for the softcap specs (a cap of 1.5 .. 3 against scores in the tens).
const MaskCase large_score_cases[] = {
    {"heads=2 head_dim=16 mask=none softcap=1.5 scale=0.5", 2, 65, 129, MaskShape::sq_sk, false, 8.0f},
    {"heads=2 head_dim=16 mask=causal&padding softcap=2 alibi=true score_bias=tensor lse=true", 3, 129, 97,
     MaskShape::b_one_sq_sk, true, 8.0f},
    {"heads=2 kv_heads=1 head_dim=16 mask=(window(16,0)|global(2))&tensor mask_block=8 softcap=3 alibi=true "
     "score_bias=tensor lse=true",
     2, 127, 65, MaskShape::one_h_sq_sk, true, 8.0f},
};

// The one table: ten cases per spec, B, mask shape and layout rotating; then the long and
// large-score cases.
std::vector<MaskCase> mask_cases() {
  std::vector<MaskCase> cases;
  int n = 0;
  for (const char *spec : mask_specs) {
    const bool block = parse(spec).form == attn::Form::block;
    for (int j = 0; j < 10; ++j, ++n) {
      MaskCase c{spec, 1 + n % 3, 0, 0, shapes[n % 5], n % 4 == 1};
      if (block) {
        c.seq_q = c.seq_k = block_lengths[n % std::size(block_lengths)];
      } else {
        const Lengths l = core_lengths[n % std::size(core_lengths)];
        c.seq_q = l.seq_q;
        c.seq_k = l.seq_k;
      }
      cases.push_back(c);
    }
  }
  cases.insert(cases.end(), std::begin(long_cases), std::end(long_cases));
  cases.insert(cases.end(), std::begin(large_score_cases), std::end(large_score_cases));
  return cases;
}

void check_case(const MaskCase &c) {
  CAPTURE(c);
  const attn::Spec spec = parse(c.spec);
  const attn_kernel *kernel = find_kernel(spec);
  REQUIRE(kernel != nullptr);
  std::mt19937 rng(static_cast<unsigned>(c.batch * 1000003 + c.seq_q * 1009 + c.seq_k * 7 + c.spec.size()));
  const bool core = spec.form == attn::Form::core;
  Call call = make_call(spec, c.batch, c.seq_q, c.seq_k, c.padded, rng);
  if (core && c.q_gain != 1.0f) {
    Tensor &q = call.tensors.at("q");
    for (int64_t n = 0; n < q.elements(); ++n) q.logical(n) *= c.q_gain;
  }
  add_runtime_inputs(spec, call, c.batch, c.seq_q, c.seq_k, c.padded, c.mask_shape, rng);
  run_and_check(spec, kernel, call);
}

TEST_CASE("the mask specs are the linked kernels") {
  check_spec_list(mask_spec_list_drift(), "mask_specs.h");
}

TEST_CASE("masked and modified kernels match the fp64 reference, lse included") {
  const std::vector<MaskCase> cases = mask_cases();
  for (const MaskCase &c : cases) check_case(c);
  MESSAGE(cases.size(), " cases");
}

}  // namespace

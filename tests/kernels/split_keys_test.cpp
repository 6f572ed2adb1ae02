// The split-keys core (Sq <= 8, decode) against the fp64 reference: every linked core spec, Sq on
// both sides of the switch to the tiled core (8 and 9), Sk around the 256-key chunks.
// Built twice: with the sweep kernels (SPLIT_KEYS_MASK_SPECS=0) and with the mask kernels (1).
#include <doctest/doctest.h>

#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_support.h"
#if SPLIT_KEYS_MASK_SPECS
#include "mask_specs.h"
#else
#include "sweep_specs.h"
#endif

namespace {

using namespace attnc::test;

#if SPLIT_KEYS_MASK_SPECS
const auto &linked_specs = mask_specs;
#else
const auto &linked_specs = core_specs;
#endif

constexpr int query_lengths[] = {1, 2, 3, 8, 9};
constexpr int key_lengths[] = {1, 7, 255, 256, 257, 700};
constexpr MaskShape shapes[] = {MaskShape::sq_sk, MaskShape::h_sq_sk, MaskShape::b_h_sq_sk,
                                MaskShape::one_h_sq_sk, MaskShape::b_one_sq_sk};

struct DecodeCase {
  std::string spec;
  int batch, seq_q, seq_k;
  bool padded;
  MaskShape mask_shape;
};

std::ostream &operator<<(std::ostream &os, const DecodeCase &c) {
  return os << "{\"" << c.spec << "\", B=" << c.batch << ", Sq=" << c.seq_q << ", Sk=" << c.seq_k << ", mask "
            << c.mask_shape << (c.padded ? ", padded layout}" : "}");
}

void check_case(const DecodeCase &c) {
  CAPTURE(c);
  const attn::Spec spec = parse(c.spec);
  const attn_kernel *kernel = find_kernel(spec);
  REQUIRE(kernel != nullptr);
  std::mt19937 rng(static_cast<unsigned>(c.batch * 7919 + c.seq_q * 104729 + c.seq_k * 13 + c.spec.size()));
  Call call = make_core_call(spec, c.batch, c.seq_q, c.seq_k, c.padded, rng);
  add_runtime_inputs(spec, call, c.batch, c.seq_q, c.seq_k, c.padded, c.mask_shape, rng);
  run_and_check(spec, kernel, call);
}

TEST_CASE("split-keys core: few queries against many keys, every linked core spec") {
  int n = 0, checked = 0;
  for (const char *text : linked_specs) {
    if (parse(text).form != attn::Form::core) continue;
    for (int seq_q : query_lengths)
      for (int seq_k : key_lengths) {
        ++n;
        check_case({text, 1 + n % 3, seq_q, seq_k, n % 4 == 1, shapes[n % 5]});
        ++checked;
      }
  }
  CHECK(checked >= 10 * static_cast<int>(std::size(query_lengths) * std::size(key_lengths)));
}

}  // namespace

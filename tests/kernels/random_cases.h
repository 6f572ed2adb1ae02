// random_cases.h: the randomized sweep's cases, each drawn from (seed, index) alone so any one can be rerun.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "kernel_test_support.h"
#include "random_inputs.h"
#include "random_layout.h"

namespace attnc::test {

// The kind of shape a case draws, named by the pipeline it mostly reaches (the generated entry picks
// per call): few queries (split-key decode), many keys over many (batch, head) tasks (packed keys),
// plain prefill sizes, or keys on both sides of the whole-row core's limit (16384).
enum class Regime { tiny, decode, prefill, square, long_keys, very_long_keys };
std::ostream &operator<<(std::ostream &os, Regime regime);

struct RandomCase {
  uint64_t sweep_seed = 0;  // SWEEP_SEED
  int index = 0;            // the case's number in the sweep
  std::string spec;
  Regime regime = Regime::tiny;
  int batch = 1;
  int seq_q = 1;
  int seq_k = 1;                  // the block form: seq_q = seq_k = S
  MaskShape mask_shape{};         // mask and score_bias: always rank 4, B and/or H possibly 1
  Layout layout = Layout::dense;  // of activations and outputs; the other tensors padded unless dense
  float q_gain = 1.0f;            // q (core) scaled: large scores, where softcap and the running max bite
  InputStyle inputs;              // how lengths, segment ids and the mask tensor are drawn
  int threads = 0;                // attn_kernel_set_threads (0: one per core)
  uint32_t values_seed = 0;       // q/k/v or x and weights, then the runtime inputs
};
// Everything to read and rerun the case (SWEEP_SEED / SWEEP_FIRST / SWEEP_CASES=1).
std::ostream &operator<<(std::ostream &os, const RandomCase &c);

// Most (batch x heads x Sq x Sk) pairs a case may have: the fp64 reference is quadratic.
constexpr int64_t max_case_pairs = 1'500'000;

// The case `index` of the sweep `sweep_seed`: spec specs[index % specs.size()], the rest random.
RandomCase draw_case(const std::vector<std::string> &specs, uint64_t sweep_seed, int index);

// The sweep's settings from the environment (SWEEP_CASES, SWEEP_SEED, SWEEP_FIRST), with these
// defaults where unset: `make test` runs the defaults, `make sweep` sets them.
struct SweepSettings {
  int cases = 0;  // per target
  uint64_t seed = 0;
  int first = 0;  // the first case index (to rerun one case: SWEEP_FIRST=i SWEEP_CASES=1)
};
SweepSettings sweep_settings(int default_cases, uint64_t default_seed);

}  // namespace attnc::test

// random_cases.cpp: drawing the randomized sweep's cases and reading its settings.
#include "random_cases.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <stdexcept>

namespace attnc::test {

std::ostream &operator<<(std::ostream &os, Regime regime) {
  switch (regime) {
    case Regime::tiny:
      return os << "tiny";
    case Regime::decode:
      return os << "decode";
    case Regime::prefill:
      return os << "prefill";
    case Regime::square:
      return os << "square";
    case Regime::long_keys:
      return os << "long keys";
    case Regime::very_long_keys:
      return os << "very long keys";
  }
  return os;
}

std::ostream &operator<<(std::ostream &os, const RandomCase &c) {
  os << "{case " << c.index << " of SWEEP_SEED=" << c.sweep_seed << ": \"" << c.spec << "\", " << c.regime
     << ", B=" << c.batch << ", Sq=" << c.seq_q << ", Sk=" << c.seq_k << ", mask/bias " << c.mask_shape
     << ", " << c.layout;
  if (c.q_gain != 1.0f) os << ", q x" << c.q_gain;
  if (c.threads != 0) os << ", " << c.threads << " threads";
  return os << ", " << c.inputs << ", values seed " << c.values_seed << "; rerun: SWEEP_SEED=" << c.sweep_seed
            << " SWEEP_FIRST=" << c.index << " SWEEP_CASES=1}";
}

namespace {

using Rng = std::mt19937_64;

int uniform(Rng &rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}

// Odd sizes half the time: they leave partial query tiles, key blocks and vectors.
int size_in(Rng &rng, int lo, int hi) {
  int n = uniform(rng, lo, hi);
  if (uniform(rng, 0, 1) == 1) n |= 1;
  return std::min(n, hi);
}

// Long keys reach the packed whole-row pipeline only with this many (batch, head) tasks.
constexpr int packed_min_tasks = 8;

void draw_core_shape(Rng &rng, int heads, RandomCase &c) {
  c.batch = uniform(rng, 1, 4);
  switch (c.regime) {
    case Regime::tiny:
      c.seq_q = size_in(rng, 1, 40);
      c.seq_k = size_in(rng, 1, 40);
      break;
    case Regime::decode:  // Sq <= 8: key chunks in parallel, each a partial softmax
      c.seq_q = uniform(rng, 1, 8);
      c.seq_k = size_in(rng, 1, 3000);
      break;
    case Regime::prefill:  // Sq != Sk mostly: bottom-right alignment, rows with no kept key
      c.seq_q = size_in(rng, 1, 300);
      c.seq_k = size_in(rng, 1, 300);
      break;
    case Regime::square:
      c.seq_q = c.seq_k = size_in(rng, 1, 400);
      break;
    case Regime::long_keys:  // Sk >= 1024 over >= 8 tasks: each head's keys packed first
      c.batch = std::max(c.batch, (packed_min_tasks + heads - 1) / heads);
      c.seq_q = size_in(rng, 9, 100);
      c.seq_k = size_in(rng, 1024, 1800);
      break;
    case Regime::very_long_keys:
      c.seq_q = size_in(rng, 1, 40);
      c.seq_k = size_in(rng, 15000, 17500);
      break;
  }
  // Within the reference's budget: fewer queries first, then fewer batches.
  auto pairs = [&] { return int64_t{c.batch} * heads * c.seq_q * c.seq_k; };
  if (pairs() > max_case_pairs)
    c.seq_q = static_cast<int>(std::max<int64_t>(1, max_case_pairs / (int64_t{c.batch} * heads * c.seq_k)));
  while (pairs() > max_case_pairs && c.batch > 1) --c.batch;
}

void draw_block_shape(Rng &rng, int heads, RandomCase &c) {
  c.batch = uniform(rng, 1, 3);
  int seq = 1;
  switch (c.regime) {
    case Regime::tiny:
      seq = size_in(rng, 1, 40);
      break;
    case Regime::decode:
      seq = uniform(rng, 1, 8);
      break;
    case Regime::prefill:
    case Regime::square:
      seq = size_in(rng, 1, 300);
      break;
    case Regime::long_keys:
    case Regime::very_long_keys:
      seq = size_in(rng, 300, 800);
      break;
  }
  const int64_t per_batch = int64_t{heads} * seq * seq;
  if (per_batch * c.batch > max_case_pairs)
    c.batch = static_cast<int>(std::max<int64_t>(1, max_case_pairs / per_batch));
  if (per_batch > max_case_pairs) seq = static_cast<int>(std::sqrt(double(max_case_pairs) / heads));
  c.seq_q = c.seq_k = seq;
}

}  // namespace

RandomCase draw_case(const std::vector<std::string> &specs, uint64_t sweep_seed, int index) {
  if (specs.empty()) throw std::invalid_argument("draw_case: no specs");
  std::seed_seq seq{static_cast<uint32_t>(sweep_seed), static_cast<uint32_t>(sweep_seed >> 32),
                    static_cast<uint32_t>(index)};
  Rng rng(seq);
  RandomCase c;
  c.sweep_seed = sweep_seed;
  c.index = index;
  c.spec = specs[static_cast<size_t>(index) % specs.size()];
  const attn::Spec spec = parse(c.spec);

  // Weights (percent): tiny 20, decode 25, prefill 22, square 13, long keys 15, very long keys 5.
  const int r = uniform(rng, 0, 99);
  c.regime = r < 20   ? Regime::tiny
             : r < 45 ? Regime::decode
             : r < 67 ? Regime::prefill
             : r < 80 ? Regime::square
             : r < 95 ? Regime::long_keys
                      : Regime::very_long_keys;
  if (spec.form == attn::Form::core)
    draw_core_shape(rng, spec.heads, c);
  else
    draw_block_shape(rng, spec.heads, c);

  // Rank 4 only: how rank-3 masks broadcast is being changed (issue 21).
  constexpr MaskShape rank4[] = {MaskShape::b_h_sq_sk, MaskShape::one_h_sq_sk, MaskShape::b_one_sq_sk};
  c.mask_shape = rank4[uniform(rng, 0, 2)];
  constexpr Layout layouts[] = {Layout::dense, Layout::padded, Layout::heads_outer, Layout::batch_broadcast};
  c.layout = layouts[uniform(rng, 0, 3)];
  if (spec.form == attn::Form::core && uniform(rng, 0, 4) == 0)
    c.q_gain = static_cast<float>(uniform(rng, 3, 8));
  c.inputs = draw_input_style(rng);
  constexpr int thread_counts[] = {0, 0, 1, 2, 3};
  c.threads = thread_counts[uniform(rng, 0, 4)];
  c.values_seed = static_cast<uint32_t>(rng());
  return c;
}

SweepSettings sweep_settings(int default_cases, uint64_t default_seed) {
  auto read = [](const char *name, long long fallback) {
    const char *text = std::getenv(name);
    if (text == nullptr || *text == '\0') return fallback;
    char *end = nullptr;
    const long long value = std::strtoll(text, &end, 10);
    if (*end != '\0' || value < 0)
      throw std::invalid_argument(std::string(name) + " must be a non-negative integer (got '" + text + "')");
    return value;
  };
  SweepSettings s;
  s.cases = static_cast<int>(read("SWEEP_CASES", default_cases));
  s.seed = static_cast<uint64_t>(read("SWEEP_SEED", static_cast<long long>(default_seed)));
  s.first = static_cast<int>(read("SWEEP_FIRST", 0));
  return s;
}

}  // namespace attnc::test

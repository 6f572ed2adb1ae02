// concurrency_cases.cpp: the calls of the concurrency suites; specs as in CMakeLists.txt.
#include "concurrency_cases.h"

#include <doctest/doctest.h>

#include <ostream>
#include <random>

namespace attnc::test {

std::ostream &operator<<(std::ostream &os, const RunCase &c) {
  return os << "'" << c.spec_text << "' B=" << c.batch << " Sq=" << c.seq_q << " Sk=" << c.seq_k << " ("
            << c.why << ")";
}

const RunCase &dispatch_case() {
  static const RunCase c{"heads=2 kv_heads=1 head_dim=32 mask=causal", 2, 200, 200, "dispatch set"};
  return c;
}

const std::vector<RunCase> &native_cases() {
  static const std::vector<RunCase> cases{
      {"heads=4 kv_heads=2 head_dim=64 mask=causal", 2, 1024, 1024, "whole-row, packed K/V copies"},
      {"heads=4 kv_heads=2 head_dim=64 mask=causal", 1, 4, 3000, "split keys (decode)"},
      {"heads=4 kv_heads=2 head_dim=64 mask=causal", 1, 77, 130, "whole-row, short"},
      {"heads=2 head_dim=16 mask=window(8,0)", 3, 500, 500, "blocked core, skipped blocks"},
      {"heads=2 head_dim=32 mask=padding", 3, 100, 300, "runtime key lengths"},
      {"d_model=64 heads=2 form=block qkv=fused proj_bias=true mask=causal", 2, 130, 130, "block form"},
  };
  return cases;
}

PreparedCase prepare(const RunCase &c, unsigned seed) {
  PreparedCase prepared{c, nullptr, {}};
  const attn::Spec spec = parse(c.spec_text);
  prepared.kernel = find_kernel(spec);
  std::mt19937 rng(seed);
  if (spec.form == attn::Form::core) {
    prepared.call = make_core_call(spec, c.batch, c.seq_q, c.seq_k, false, rng);
    add_runtime_inputs(spec, prepared.call, c.batch, c.seq_q, c.seq_k, false, MaskShape::b_one_sq_sk, rng);
  } else {
    prepared.call = make_block_call(spec, c.batch, c.seq_q, false, rng);
    add_runtime_inputs(spec, prepared.call, c.batch, c.seq_q, c.seq_q, false, MaskShape::b_one_sq_sk, rng);
  }
  return prepared;
}

attn_status run_fresh(const attn_kernel *kernel, Call &call) {
  for (const char *output : {"out", "lse"}) {
    const auto found = call.tensors.find(output);
    if (found != call.tensors.end()) found->second.fill(output_sentinel);
  }
  return call.run(kernel);
}

const std::vector<std::string> &isa_limits() {
  static const std::vector<std::string> limits{"avx512", "avx2", "avx", "sse41", "x86-64", ""};
  return limits;
}

RuntimeDefaults::~RuntimeDefaults() {
  attn_set_max_isa(nullptr);
  if (attn_kernel_count() > 0) attn_kernel_set_threads(attn_kernel_at(0), 0);
}

}  // namespace attnc::test

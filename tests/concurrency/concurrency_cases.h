// concurrency_cases.h: the calls the concurrency and determinism suites run, one per pipeline.
#pragma once

#include <string>
#include <vector>

#include "kernel_test_support.h"

namespace attnc::test {

// A spec and the sizes of one call of it (seq_k is ignored by the block form: S = seq_q).
struct RunCase {
  const char *spec_text;
  int batch, seq_q, seq_k;
  const char *why;  // the pipeline or path the sizes pick
};
std::ostream &operator<<(std::ostream &os, const RunCase &c);

// The case of the dispatch kernel (several ISA variants), then one per native pipeline.
const RunCase &dispatch_case();
const std::vector<RunCase> &native_cases();

// A case's kernel and random inputs (seeded), its out at the sentinel.
struct PreparedCase {
  RunCase run_case;
  const attn_kernel *kernel = nullptr;
  Call call;
};
PreparedCase prepare(const RunCase &c, unsigned seed);

// Sets every output of the call back to the sentinel, runs it, and returns its status.
attn_status run_fresh(const attn_kernel *kernel, Call &call);

// The ISA limits attn_set_max_isa takes, most capable first, "" (none) last.
const std::vector<std::string> &isa_limits();

// Restores the thread count and the ISA limit when a test ends, passed or not.
struct RuntimeDefaults {
  RuntimeDefaults() = default;
  RuntimeDefaults(const RuntimeDefaults &) = delete;
  RuntimeDefaults &operator=(const RuntimeDefaults &) = delete;
  ~RuntimeDefaults();
};

}  // namespace attnc::test

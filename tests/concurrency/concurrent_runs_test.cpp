// Threads calling attn_run at once get what one thread gets, bit for bit, while other threads
// change the ISA limit and release the kernels' scratch memory under them.
#include <doctest/doctest.h>

#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "concurrency_cases.h"

namespace {

using namespace attnc::test;

constexpr int thread_count = 8;

// What one thread alone gets from a case under each ISA limit: an output (status OK) or a refusal
// (ATTN_ERR_UNSUPPORTED_CPU: no variant of a native kernel is left under the limit).
struct SerialOutcomes {
  PreparedCase prepared;
  std::vector<Tensor> outputs;  // distinct bit patterns only
  bool may_be_refused = false;
};

SerialOutcomes serial_outcomes(const RunCase &c, unsigned seed, const std::vector<std::string> &limits) {
  SerialOutcomes serial{prepare(c, seed), {}, false};
  for (const std::string &limit : limits) {
    CAPTURE(limit);
    REQUIRE(attn_set_max_isa(limit.c_str()) == ATTN_OK);
    const attn_status status = run_fresh(serial.prepared.kernel, serial.prepared.call);
    if (status == ATTN_ERR_UNSUPPORTED_CPU) {
      serial.may_be_refused = true;
      continue;
    }
    REQUIRE_MESSAGE(status == ATTN_OK, status_name(status), ": ", last_error());
    const Tensor &out = serial.prepared.call.tensors.at("out");
    bool known = false;
    for (const Tensor &seen : serial.outputs) known = known || differing_elements(seen, out) == 0;
    if (!known) serial.outputs.push_back(out);
  }
  REQUIRE(attn_set_max_isa(nullptr) == ATTN_OK);
  REQUIRE(!serial.outputs.empty());
  return serial;
}

// What one worker thread saw; checked on the main thread (doctest asserts stay there).
struct WorkerReport {
  int runs = 0, refused = 0, problems = 0;
  std::string first_problem;
};

struct Interleaving {
  bool change_isa = false;      // sometimes set a random ISA limit before a run
  bool release_memory = false;  // sometimes release a random kernel's scratch blocks before a run
};

void worker(int index, int rounds, const std::vector<SerialOutcomes> &cases, Interleaving interleaving,
            WorkerReport &report) {
  std::mt19937 rng(1000u + static_cast<unsigned>(index));
  std::vector<Call> calls;  // this thread's own tensors, at other addresses than the serial ones
  for (const SerialOutcomes &c : cases) calls.push_back(c.prepared.call);
  auto problem = [&](const std::string &what) {
    if (report.problems++ == 0) report.first_problem = what;
  };
  for (int round = 0; round < rounds; ++round) {
    const size_t pick = static_cast<size_t>(index + round) % cases.size();
    const SerialOutcomes &expected = cases[pick];
    const int action = static_cast<int>(rng() % 4);
    if (interleaving.change_isa && action == 0) {
      const std::string &limit = isa_limits()[rng() % isa_limits().size()];
      if (attn_set_max_isa(limit.c_str()) != ATTN_OK) problem("attn_set_max_isa(\"" + limit + "\") failed");
    }
    if (interleaving.release_memory && action == 1) {
      const attn_kernel *kernel = cases[rng() % cases.size()].prepared.kernel;
      if (attn_kernel_release_memory(kernel) != ATTN_OK) problem("attn_kernel_release_memory failed");
    }
    Call &call = calls[pick];
    const attn_status status = run_fresh(expected.prepared.kernel, call);
    ++report.runs;
    std::ostringstream where;
    where << expected.prepared.run_case << ", thread " << index << ", round " << round << ": ";
    const Tensor &out = call.tensors.at("out");
    if (status == ATTN_ERR_UNSUPPORTED_CPU && expected.may_be_refused) {
      ++report.refused;
      if (!out.all_padding()) problem(where.str() + "refused, but the output was written");
      continue;
    }
    if (status != ATTN_OK) {
      problem(where.str() + status_name(status) + ": " + last_error());
      continue;
    }
    bool matches = false;
    for (const Tensor &serial : expected.outputs) matches = matches || differing_elements(serial, out) == 0;
    if (!matches) problem(where.str() + "the output differs from every serial run's");
  }
}

void run_workers(const std::vector<SerialOutcomes> &cases, int rounds, Interleaving interleaving) {
  std::vector<WorkerReport> reports(thread_count);
  {
    std::vector<std::thread> threads;
    for (int t = 0; t < thread_count; ++t)
      threads.emplace_back(worker, t, rounds, std::cref(cases), interleaving, std::ref(reports[t]));
    for (std::thread &thread : threads) thread.join();
  }
  REQUIRE(attn_set_max_isa(nullptr) == ATTN_OK);
  int runs = 0, refused = 0;
  for (int t = 0; t < thread_count; ++t) {
    CAPTURE(t);
    CAPTURE(reports[t].first_problem);
    CHECK(reports[t].problems == 0);
    runs += reports[t].runs;
    refused += reports[t].refused;
  }
  CHECK(runs == thread_count * rounds);
  MESSAGE(runs, " concurrent runs, ", refused, " refused under an ISA limit");

  // Afterwards every case still gives its serial output.
  for (const SerialOutcomes &c : cases) {
    CAPTURE(c.prepared.run_case);
    Call call = c.prepared.call;
    REQUIRE(run_fresh(c.prepared.kernel, call) == ATTN_OK);
    CHECK(differing_elements(c.outputs.front(), call.tensors.at("out")) == 0);
  }
}

TEST_CASE("eight threads on one kernel get the serial output, bit for bit, while its memory is released") {
  RuntimeDefaults defaults;
  // One kernel, three paths of it at once: whole-row with packed copies, split keys, short rows.
  std::vector<SerialOutcomes> cases;
  const std::string one_kernel = native_cases().front().spec_text;
  for (const RunCase &c : native_cases())
    if (c.spec_text == one_kernel) cases.push_back(serial_outcomes(c, 7, {""}));
  REQUIRE(cases.size() >= 3);
  run_workers(cases, 6, Interleaving{false, true});
}

TEST_CASE("eight threads on several kernels get serial outputs while the ISA limit and memory change") {
  RuntimeDefaults defaults;
  std::vector<SerialOutcomes> cases;
  cases.push_back(serial_outcomes(dispatch_case(), 11, isa_limits()));
  // The dispatch kernel always has a variant, whatever the limit; different ones may round differently.
  CHECK(!cases.back().may_be_refused);
  MESSAGE("the dispatch kernel's variants give ", cases.back().outputs.size(), " different outputs");
  unsigned seed = 12;
  for (const RunCase &c : native_cases()) cases.push_back(serial_outcomes(c, seed++, isa_limits()));
  run_workers(cases, 2 * static_cast<int>(cases.size()), Interleaving{true, true});
}

}  // namespace

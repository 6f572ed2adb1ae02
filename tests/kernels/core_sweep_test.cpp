// The core form against the fp64 reference: every sweep spec over batch, query and key lengths.
#include <doctest/doctest.h>

#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_support.h"
#include "sweep_specs.h"

namespace {

using namespace attnc::test;

struct CoreCase {
  std::string spec;
  int batch;
  int seq_q;
  int seq_k;
  bool padded;  // outer strides larger than dense
};

std::ostream &operator<<(std::ostream &os, const CoreCase &c) {
  return os << "{\"" << c.spec << "\", B=" << c.batch << ", Sq=" << c.seq_q << ", Sk=" << c.seq_k
            << (c.padded ? ", padded strides}" : ", dense}");
}

// Lengths around the CPU tiles (queries 16 / 32, keys 48 / 64) and their edges.
constexpr int lengths[] = {1, 2, 17, 48, 63, 64, 65, 97, 127, 129};

// Long sequences, where they are cheap for the reference: small heads, decode, chunked prefill,
// and more queries than keys (whole rows masked under causal and windowed masks).
const CoreCase long_cases[] = {
    {"heads=2 head_dim=16 mask=none", 3, 1000, 1000, false},
    {"heads=2 head_dim=16 mask=none", 1, 17, 1000, true},
    {"heads=2 head_dim=16 mask=none", 2, 1000, 2, false},
    {"heads=2 head_dim=16 mask=causal", 1, 1000, 1000, false},
    {"heads=2 head_dim=16 mask=causal", 2, 1, 1000, true},
    {"heads=2 head_dim=16 mask=causal", 1, 129, 1000, false},
    {"heads=2 head_dim=16 mask=causal", 1, 1000, 129, true},
    {"heads=2 head_dim=32 mask=none", 1, 1000, 1000, true},
    {"heads=2 head_dim=128 mask=causal", 1, 1000, 1000, false},
    {"heads=3 head_dim=80 mask=none", 2, 1, 1000, false},
    {"heads=3 head_dim=80 mask=none", 1, 1000, 17, true},
    {"heads=4 kv_heads=2 head_dim=64 mask=causal", 1, 1000, 1000, false},
    {"heads=4 kv_heads=1 head_dim=32 mask=none", 1, 1000, 1000, true},
    {"heads=3 kv_heads=1 head_dim=32 mask=causal", 1, 65, 1000, false},
    // Decode with 4 query heads a KV head: the split-keys core copies each 256-key chunk's f32 rows
    // before its q . k (AVX-512), the last chunk partial.
    {"heads=4 kv_heads=1 head_dim=32 mask=none", 2, 1, 1000, true},
    {"heads=4 kv_heads=1 head_dim=32 mask=none", 1, 8, 777, false},
    {"heads=2 head_dim=32 mask=window(16,0)", 2, 1000, 1000, false},
    {"heads=2 head_dim=32 mask=window(16,0)", 1, 64, 1000, true},
    {"heads=4 kv_heads=2 head_dim=32 mask=window(4,4)|causal", 1, 1000, 1000, false},
    {"heads=4 kv_heads=2 head_dim=32 mask=window(4,4)|causal", 1, 1000, 65, true},
    {"heads=2 head_dim=16 mask=window(2,0)", 1, 1000, 1000, true},
    {"heads=2 head_dim=16 mask=(window(16,0)|window(0,3))&window(4,-1)", 1, 1000, 1000, true},
    {"heads=2 head_dim=16 mask=(window(16,0)|window(0,3))&window(4,-1)", 2, 1000, 127, false},
    // Sk >= packed_min_keys (1024) and B x heads >= packed_min_tasks (8): the packed pipeline,
    // each task reading its head's K and V rows from contiguous copies (GQA: the shared kv
    // head's); fewer tasks and windows keep the main one.
    {"heads=2 head_dim=16 mask=none", 4, 1000, 1031, false},
    {"heads=2 head_dim=16 mask=none", 4, 1024, 1024, true},
    {"heads=2 head_dim=16 mask=causal", 1, 1100, 1100, true},
    {"heads=2 head_dim=16 mask=causal", 4, 97, 1500, false},
    {"heads=2 head_dim=128 mask=causal", 1, 1000, 1025, false},
    {"heads=4 kv_heads=2 head_dim=64 mask=causal", 2, 1000, 1057, true},
    {"heads=4 kv_heads=1 head_dim=32 mask=none", 2, 999, 1500, false},
    {"heads=3 kv_heads=1 head_dim=32 mask=causal", 3, 65, 1030, true},
    {"heads=4 kv_heads=2 head_dim=32 mask=window(4,4)|causal", 2, 1100, 1100, false},
    // More queries than keys: the first Sq - Sk rows of the packed (whole-row) core keep no key.
    {"heads=2 head_dim=16 mask=causal", 4, 1300, 1030, false},
    // From packed_min_keys_many_tasks (512) keys with packed_many_tasks (32) tasks or more;
    // 30 tasks keep the main pipeline.
    {"heads=4 kv_heads=2 head_dim=16 mask=none", 8, 600, 517, true},
    {"heads=4 kv_heads=2 head_dim=64 mask=causal", 8, 513, 513, false},
    {"heads=3 kv_heads=1 head_dim=32 mask=causal", 10, 100, 700, false},
    // The last Sk of the whole-row core (whole_row_max_keys), and past it: the block core on
    // copied head rows (GQA and fewer queries than keys among them).
    {"heads=2 head_dim=16 mask=causal", 4, 150, 2048, true},
    {"heads=2 head_dim=16 mask=none", 4, 150, 2049, false},
    {"heads=4 kv_heads=2 head_dim=64 mask=causal", 2, 300, 2101, false},
    // The same with one task (never packed).
    {"heads=2 head_dim=16 mask=causal", 1, 70, 16400, true},
};

// The one table: every spec over every (Sq, Sk) pair of lengths, batch and padding rotating so
// each spec sees B = 1, 2, 3 and both layouts; then the long cases.
std::vector<CoreCase> core_cases() {
  std::vector<CoreCase> cases;
  int spec_index = 0;
  for (const char *spec : core_specs) {
    int n = spec_index++;
    for (int seq_q : lengths)
      for (int seq_k : lengths) {
        cases.push_back({spec, 1 + n % 3, seq_q, seq_k, n % 4 == 1});
        ++n;
      }
  }
  cases.insert(cases.end(), std::begin(long_cases), std::end(long_cases));
  // 1000 against every length, both ways round, for a causal and a windowed mask (small heads).
  for (const char *spec : {"heads=2 head_dim=16 mask=causal", "heads=2 head_dim=16 mask=window(2,0)"}) {
    int n = 0;
    for (int length : lengths) {
      cases.push_back({spec, 1 + n % 2, 1000, length, n % 3 == 0});
      cases.push_back({spec, 1, length, 1000, n % 3 == 1});
      ++n;
    }
  }
  return cases;
}

void check_case(const CoreCase &c, float q_gain = 1.0f) {
  CAPTURE(c);
  const attn::Spec spec = parse(c.spec);
  const attn_kernel *kernel = find_kernel(spec);
  REQUIRE(kernel != nullptr);
  std::mt19937 rng(static_cast<unsigned>(c.batch * 1000003 + c.seq_q * 1009 + c.seq_k));
  Call call = make_core_call(spec, c.batch, c.seq_q, c.seq_k, c.padded, rng);
  if (q_gain != 1.0f) {
    Tensor &q = call.tensors.at("q");
    for (int64_t n = 0; n < q.elements(); ++n) q.logical(n) *= q_gain;
  }
  const attn_status status = call.run(kernel);
  INFO("attn_run: ", status_name(status), ": ", last_error());
  REQUIRE(status == ATTN_OK);
  const Comparison result = compare(call.tensors.at("out"), expected_result(spec, call));
  CAPTURE(result);
  CHECK(result.pass());
}

TEST_CASE("the sweep specs are the linked kernels") {
  check_spec_list(spec_list_drift(), "sweep_specs.h");
}

TEST_CASE("core kernels match the fp64 reference") {
  for (const CoreCase &c : core_cases()) check_case(c);
}

TEST_CASE("core kernels keep large scores finite and accurate") {
  // q scaled up: scores in the tens, where an unguarded exp overflows and the softmax is nearly
  // one-hot.
  for (const char *spec : core_specs) {
    check_case({spec, 2, 65, 129, false}, 16.0f);
    check_case({spec, 1, 129, 97, true}, 16.0f);
  }
}

}  // namespace

// The randomized differential sweep: random (spec, shape, layout, inputs) cases against the fp64
// reference with the kernel suites' pass rule, on this machine's variant and on the AVX2 variant.
// `make test` runs a fixed-seed share (label sweep); `make sweep` runs SWEEP_CASES per target.
#include <doctest/doctest.h>

#include <chrono>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "random_cases.h"
#include "random_sweep_specs.h"

namespace {

using namespace attnc::test;

// The share `make test` runs: 500 cases per target, about 15-25 s each on the 2-core build machine.
constexpr int default_cases_per_target = 500;
constexpr uint64_t default_seed = 20261204;

struct Verdict {
  bool ran = false;  // attn_run returned ATTN_OK
  bool pass = false;
};

// Runs one case and checks it (doctest CHECKs, with the case captured).
Verdict check_case(const RandomCase &c) {
  CAPTURE(c);
  const attn::Spec spec = parse(c.spec);
  const attn_kernel *kernel = find_kernel(spec);
  REQUIRE(kernel != nullptr);
  std::mt19937 rng(c.values_seed);
  const bool padded = padded_rest(c.layout);
  Call call = make_call(spec, c.batch, c.seq_q, c.seq_k, padded, rng);
  if (c.q_gain != 1.0f) {
    Tensor &q = call.tensors.at("q");
    for (int64_t n = 0; n < q.elements(); ++n) q.logical(n) *= c.q_gain;
  }
  add_runtime_inputs(spec, call, c.batch, c.seq_q, c.seq_k, padded, c.mask_shape, rng);
  apply_input_style(c.inputs, call, rng);
  apply_layout(c.layout, call);

  Verdict verdict;
  REQUIRE(attn_kernel_set_threads(kernel, c.threads) == ATTN_OK);
  const attn_status status = call.run(kernel);
  attn_kernel_set_threads(kernel, 0);
  INFO("attn_run: ", status_name(status), ": ", last_error());
  CHECK(status == ATTN_OK);
  if (status != ATTN_OK) return verdict;
  verdict.ran = true;
  const Expected expected = expected_result(spec, call);
  const Comparison out = compare(call.tensors.at("out"), expected);
  CAPTURE(out);
  CHECK(out.pass());
  verdict.pass = out.pass();
  if (spec.lse) {
    const LseComparison lse = compare_lse(call.tensors.at("lse"), expected);
    CAPTURE(lse);
    CHECK(lse.pass());
    verdict.pass = verdict.pass && lse.pass();
  }
  return verdict;
}

// Runs the sweep's cases over these specs and reports counts, failures and time.
void run_sweep(const char *target_name, const std::vector<std::string> &specs) {
  const SweepSettings settings = sweep_settings(default_cases_per_target, default_seed);
  const auto start = std::chrono::steady_clock::now();
  std::map<std::string, int> by_regime;
  int failures = 0, errors = 0;
  std::vector<int> failed;
  for (int i = settings.first; i < settings.first + settings.cases; ++i) {
    const RandomCase c = draw_case(specs, settings.seed, i);
    std::ostringstream regime;
    regime << c.regime;
    ++by_regime[regime.str()];
    const Verdict v = check_case(c);
    if (!v.ran) ++errors;
    if (!v.pass) {
      ++failures;
      failed.push_back(i);
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::ostringstream summary;
  summary << target_name << ": " << settings.cases << " cases (SWEEP_SEED=" << settings.seed << ", first "
          << settings.first << ") over " << specs.size() << " specs in " << seconds << " s; ";
  for (const auto &[regime, n] : by_regime) summary << regime << " " << n << ", ";
  summary << failures << " failed (" << errors << " run errors)";
  if (!failed.empty()) {
    summary << ": cases";
    for (int i : failed) summary << ' ' << i;
  }
  MESSAGE(summary.str());
}

// Caps the instruction set for the scope, removing the cap after.
struct MaxIsa {
  explicit MaxIsa(const char *isa) { REQUIRE(attn_set_max_isa(isa) == ATTN_OK); }
  ~MaxIsa() { attn_set_max_isa(nullptr); }
};

TEST_CASE("the sweep's spec lists are the linked kernels") {
  check_spec_list(spec_list_drift(all_linked_specs()), "random_sweep_specs.h and the suites' spec headers");
}

#if !ATTNC_ARM_SWEEP  // the AArch64 tree links none of the specs these two name
// Whether `out` of a call passes against the reference of `reference_spec`.
bool out_passes(const attn::Spec &reference_spec, const Call &call) {
  return compare(call.tensors.at("out"), expected_result(reference_spec, call)).pass();
}

TEST_CASE("the sweep's check rejects a kernel that computes another mask") {
  std::mt19937 rng(7);
  SUBCASE("a causal kernel judged as unmasked") {
    const attn::Spec causal = parse("heads=2 head_dim=16 mask=causal");
    Call call = make_core_call(causal, 2, 33, 33, true, rng);
    REQUIRE(call.run(find_kernel(causal)) == ATTN_OK);
    CHECK(out_passes(causal, call));
    CHECK_FALSE(out_passes(parse("heads=2 head_dim=16 mask=none"), call));
  }
  SUBCASE("a key length one off") {
    const attn::Spec spec = parse("heads=2 kv_heads=1 head_dim=16 mask=causal&padding");
    Call call = make_core_call(spec, 2, 5, 40, false, rng);
    add_runtime_inputs(spec, call, 2, 5, 40, false, MaskShape::b_h_sq_sk, rng);
    IndexTensor &lengths = call.index_tensors.at("key_lengths");
    lengths.logical(0) = lengths.logical(1) = 30;
    REQUIRE(call.run(find_kernel(spec)) == ATTN_OK);
    CHECK(out_passes(spec, call));
    lengths.logical(1) = 31;
    CHECK_FALSE(out_passes(spec, call));
  }
}

TEST_CASE("the sweep's layouts permute and broadcast what they say, and such calls run") {
  std::mt19937 rng(11);
  const attn::Spec spec = parse("heads=4 kv_heads=2 head_dim=16 mask=none");
  SUBCASE("heads outer") {
    Call call = make_core_call(spec, 2, 9, 13, true, rng);
    apply_layout(Layout::heads_outer, call);
    for (const char *name : {"q", "k", "v", "out"}) {
      CAPTURE(name);
      const std::vector<int64_t> &strides = call.tensors.at(name).strides();
      CHECK(strides[2] > strides[1]);  // a head's rows lie together
      CHECK(strides[0] > strides[2]);
      CHECK(strides[3] == 1);
    }
    REQUIRE(call.run(find_kernel(spec)) == ATTN_OK);
    CHECK(out_passes(spec, call));
  }
  SUBCASE("batch broadcast") {
    Call call = make_core_call(spec, 3, 9, 13, true, rng);
    apply_layout(Layout::batch_broadcast, call);
    CHECK(call.tensors.at("k").strides()[0] == 0);
    CHECK(call.tensors.at("v").strides()[0] == 0);
    CHECK(call.tensors.at("q").strides()[0] > 0);
    REQUIRE(call.run(find_kernel(spec)) == ATTN_OK);
    CHECK(out_passes(spec, call));
  }
}

#endif

TEST_CASE("random cases match the fp64 reference: this machine's variant, every linked spec") {
  attn_set_max_isa(nullptr);
  const attn_kernel *kernel = find_kernel(parse(random_sweep_specs[0]));
  REQUIRE(kernel != nullptr);
  MESSAGE("the two-variant kernels run ", std::string(attn_kernel_selected_target(kernel)));
  run_sweep("this machine's variant", all_linked_specs());
}

// The two-variant kernels' second variant and the cap that selects it: AVX2 on x86, baseline NEON
// (no dot product, no fp16 arithmetic) on AArch64.
#if defined(__aarch64__)
constexpr const char *second_isa = "neon";
bool is_second_variant(const std::string &target) {
  return target.find("arm_dot_prod") == std::string::npos;
}
#else
constexpr const char *second_isa = "avx2";
bool is_second_variant(const std::string &target) {
  return target.find("avx2") != std::string::npos && target.find("avx512") == std::string::npos;
}
#endif

TEST_CASE(
    "random cases match the fp64 reference: the second variant (AVX2, or NEON), the two-variant specs") {
  const attn_kernel *kernel = find_kernel(parse(random_sweep_specs[0]));
  REQUIRE(kernel != nullptr);
  const std::string variants = attn_kernel_target(kernel);
  if (variants.find(',') == std::string::npos) {
    MESSAGE("skipped: the sweep kernels have one variant (", variants, ")");
    return;
  }
  MaxIsa cap(second_isa);
  const std::string selected = attn_kernel_selected_target(kernel);
  CAPTURE(variants);
  CAPTURE(selected);
  if (selected.empty()) {
    MESSAGE("skipped: this CPU runs no variant at or below ", second_isa, " of ", variants);
    return;
  }
  REQUIRE(is_second_variant(selected));
  run_sweep(second_isa, {std::begin(random_sweep_specs), std::end(random_sweep_specs)});
}

}  // namespace

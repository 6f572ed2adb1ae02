// kernel_test_support.h: padded tensors, kernel lookup, reference runs and the pass rule of the kernel
// suites.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "attn/runtime.h"
#include "attn/spec.h"
#include "reference.h"

namespace attnc::test {

// A tensor of rank 1..4 (f32, i32, u8, or f16 / bf16 bits) that owns its storage. Padded tensors get outer
// strides larger than dense (the innermost dim stays contiguous); their padding holds a sentinel a kernel
// must neither read (NaN for float inputs) nor write (a number for outputs).
template <class T>
class BasicTensor {
 public:
  BasicTensor() = default;
  BasicTensor(std::vector<int64_t> shape, bool padded, T padding_value);
  // Given strides (in elements, outermost first, the innermost 1): any non-negative outer strides,
  // a permuted dim order or 0 (every index of that dim the same elements) included.
  BasicTensor(std::vector<int64_t> shape, std::vector<int64_t> strides, T padding_value);

  const std::vector<int64_t> &shape() const { return shape_; }
  const std::vector<int64_t> &strides() const { return strides_; }
  int64_t elements() const;  // logical elements, padding excluded
  T *data() { return storage_.data() + guard; }

  // Sentinel elements before and after the tensor, padded or not, to catch writes past its ends.
  static constexpr int64_t guard = 8;

  // The storage offset of the n-th logical element in row-major order.
  int64_t offset(int64_t n) const;
  T &logical(int64_t n) { return storage_[static_cast<size_t>(offset(n))]; }
  T logical(int64_t n) const { return storage_[static_cast<size_t>(offset(n))]; }

  void fill_normal(std::mt19937 &rng, float stddev = 1.0f);
  void fill_uniform(std::mt19937 &rng, float bound);  // uniform in [-bound, bound]
  void fill(T value);                                 // every logical element
  // Whether every padding element still holds the padding value, bit for bit.
  bool padding_intact() const;
  // Whether every element, padding and guards included, holds the padding value, bit for bit.
  bool all_padding() const;

  reference::View<T> view() const;
  attn_tensor c_tensor();                  // points into this object: keep it alive and unmoved while used
  attn_tensor c_tensor(attn_dtype dtype);  // as another dtype of T's size (f16 or bf16 bits)

 private:
  std::vector<int64_t> shape_, strides_;
  std::vector<T> storage_;
  T padding_value_{};
};

using Tensor = BasicTensor<float>;
using IndexTensor = BasicTensor<int32_t>;
using ByteTensor = BasicTensor<uint8_t>;
using BitsTensor = BasicTensor<uint16_t>;  // f16 or bf16, as bits (low_precision.h)

extern template class BasicTensor<float>;
extern template class BasicTensor<int32_t>;
extern template class BasicTensor<uint8_t>;
extern template class BasicTensor<uint16_t>;

// The runtime's strings as std::string: doctest prints a const char * as a pointer.
std::string last_error();
std::string status_name(attn_status status);

// The spec of a spec text; fails the test (REQUIRE) when it does not parse.
attn::Spec parse(const std::string &spec_text);
// The linked kernel of a spec, or null (the test fails, naming the id).
const attn_kernel *find_kernel(const attn::Spec &spec);
// The spec's scale in double: its own, or 1 / sqrt(head_dim).
double scale_of(const attn::Spec &resolved);

// The instruction-set caps that select each variant a kernel has on this CPU, for
// attn_set_max_isa: null (the best) and the baseline ("avx2" on x86, "neon" on AArch64) where that
// selects another variant. Prints which variants run.
std::vector<const char *> variant_caps(const attn_kernel *kernel);

// Every tensor of one call, by argument name.
struct Call {
  std::map<std::string, Tensor> tensors;             // f32: q, k, v, x, weights, out, lse, ...
  std::map<std::string, IndexTensor> index_tensors;  // i32: key_lengths, segment ids, ...
  std::map<std::string, ByteTensor> byte_tensors;    // u8: mask, fp8_e4m3 cache bytes
  std::map<std::string, ByteTensor> int8_tensors;    // i8 (as bytes): kv_dtype=int8 cache codes
  std::map<std::string, BitsTensor> bits_tensors;    // f16 / bf16: q, k, v, x, weights, out
  attn_dtype bits_dtype = ATTN_F16;                  // bits_tensors' dtype: ATTN_F16 or ATTN_BF16
  std::map<std::string, float> scalars;              // rank-0 f32: a run-time scale
  std::map<std::string, uint64_t> u64_scalars;       // rank-0 u64: dropout's seed and offset
  attn_status run(const attn_kernel *kernel);        // passes every tensor, names as keys
};

// The sentinel every output element (padding included) holds before a run.
constexpr float output_sentinel = -777.0f;

// Inputs for a core spec with normal q, k, v; out and lse when the spec has it (sentinel everywhere).
Call make_core_call(const attn::Spec &resolved, int batch, int seq_q, int seq_k, bool padded,
                    std::mt19937 &rng);
// Inputs for a block spec: x uniform[-1, 1], weights and biases uniform[-1/sqrt(fan_in), 1/sqrt(fan_in)].
Call make_block_call(const attn::Spec &resolved, int batch, int seq, bool padded, std::mt19937 &rng);
// The same with x_kv [B, seq_kv, d_model] as well for cross-attention (cross=true; seq_kv is unused
// otherwise).
Call make_block_call(const attn::Spec &resolved, int batch, int seq, int seq_kv, bool padded,
                     std::mt19937 &rng);

// make_core_call or make_block_call, by the spec's form (the block form: S = seq_q, and seq_k the
// length of x_kv under cross-attention, else unused).
Call make_call(const attn::Spec &resolved, int batch, int seq_q, int seq_k, bool padded, std::mt19937 &rng);

// How a call gives the mask-shaped tensors (mask, score_bias): [Sq,Sk], [H,Sq,Sk] (aligned from the
// right, as NumPy broadcasts), [B,H,Sq,Sk], or rank 4 with a size-1 B or H.
enum class MaskShape { sq_sk, h_sq_sk, b_h_sq_sk, one_h_sq_sk, b_one_sq_sk };
std::ostream &operator<<(std::ostream &os, MaskShape shape);

// Adds the runtime inputs the spec uses, random: key_lengths in [0, Sk] (batch 1 gets Sk and batch 2
// gets 0 when there are that many), prefix_lengths in [0, Sk], sorted segment ids of up to 4
// documents, a uint8 mask keeping about 70% of pairs (with values 1..255), alibi slopes in
// [0.01, 0.5] and score_bias uniform in [-2, 2], dropout's seed and offset (any 64-bit values).
// seq_q = seq_k = S for the block form.
void add_runtime_inputs(const attn::Spec &resolved, Call &call, int batch, int seq_q, int seq_k, bool padded,
                        MaskShape mask_shape, std::mt19937 &rng);

// The fp64 reference and the naive fp32 result (out, lse [B,Sq,H] and probs [B,H,Sq,Sk]) for a
// call made by make_core_call / make_block_call (+ add_runtime_inputs); with the call's "scale" (a
// run-time scale, in scalars or as a [1] tensor) where it has one, else the spec's.
struct Expected {
  std::vector<double> exact;
  std::vector<float> naive;
  std::vector<double> exact_lse;
  std::vector<float> naive_lse;
  std::vector<double> exact_probs;  // when the spec has probs
  std::vector<float> naive_probs;
};
Expected expected_result(const attn::Spec &resolved, const Call &call);
// The reference's options for a call: the spec's mask and modifiers, the call's run-time inputs
// and scale (views into the call: keep it alive while they are used).
reference::Options reference_options(const attn::Spec &resolved, const Call &call);
// The probabilities as the expected result, for compare() (its pass rule, applied to probs).
Expected probs_expected(const Expected &expected);

// The pass rule: max|out - exact| <= 2 max|naive - exact| + 1e-5, no NaN in out, padding untouched.
struct Comparison {
  double kernel_error = 0;  // max |out - exact|
  double naive_error = 0;   // max |naive - exact|
  int64_t worst = -1;       // logical index of the kernel's largest error
  double worst_got = 0, worst_exact = 0;
  int64_t nan_count = 0;
  bool padding_intact = true;
  double bound() const { return 2 * naive_error + 1e-5; }
  bool pass() const { return nan_count == 0 && padding_intact && kernel_error <= bound(); }
};
Comparison compare(const Tensor &out, const Expected &expected);
// Logical elements whose bits differ between two tensors of the same shape (0: bit-identical).
int64_t differing_elements(const Tensor &a, const Tensor &b);
std::ostream &operator<<(std::ostream &os, const Comparison &c);

// The lse pass rule: the same -inf rows as the reference, no NaN, finite values within
// 2 max|naive - exact| + 1e-5 (over the finite rows), padding untouched.
struct LseComparison {
  int64_t rows = 0, masked_rows = 0;  // masked: -inf in the reference
  int64_t inf_mismatches = 0;         // -inf in one of lse and the reference only
  int64_t first_mismatch = -1;
  double kernel_error = 0, naive_error = 0;
  int64_t worst = -1;
  double worst_got = 0, worst_exact = 0;
  int64_t nan_count = 0;
  bool padding_intact = true;
  double bound() const { return 2 * naive_error + 1e-5; }
  bool pass() const {
    return nan_count == 0 && inf_mismatches == 0 && padding_intact && kernel_error <= bound();
  }
};
LseComparison compare_lse(const Tensor &lse, const Expected &expected);
std::ostream &operator<<(std::ostream &os, const LseComparison &c);

// Elementwise, for results that may hold NaN or Inf: NaN where the reference has NaN, the same
// infinity where it has one, and the pass rule over the elements finite in both the reference and
// the result (naive error over those where the naive result is finite too).
struct NonfiniteComparison {
  int64_t nan_mismatches = 0, inf_mismatches = 0, finite = 0, first_mismatch = -1;
  double kernel_error = 0, naive_error = 0;
  int64_t worst = -1;  // logical index of the largest finite error
  double worst_got = 0, worst_exact = 0;
  double bound() const { return 2 * naive_error + 1e-5; }
  bool pass() const { return nan_mismatches == 0 && inf_mismatches == 0 && kernel_error <= bound(); }
};
std::ostream &operator<<(std::ostream &os, const NonfiniteComparison &c);

// got(n): the result's n-th logical element, as double.
template <class Got>
NonfiniteComparison compare_nonfinite(Got got, const std::vector<double> &exact,
                                      const std::vector<float> &naive) {
  NonfiniteComparison c;
  for (size_t n = 0; n < exact.size(); ++n) {
    const double want = exact[n], value = got(static_cast<int64_t>(n));
    const bool nan_bad = std::isnan(want) != std::isnan(value);
    const bool inf_bad = std::isinf(want) != std::isinf(value) || (std::isinf(want) && want != value);
    c.nan_mismatches += nan_bad;
    c.inf_mismatches += !nan_bad && inf_bad;
    if ((nan_bad || inf_bad) && c.first_mismatch < 0) c.first_mismatch = static_cast<int64_t>(n);
    if (!std::isfinite(want) || !std::isfinite(value)) continue;
    ++c.finite;
    if (const double error = std::abs(value - want); error > c.kernel_error || c.worst < 0) {
      c.kernel_error = error;
      c.worst = static_cast<int64_t>(n);
      c.worst_got = value;
      c.worst_exact = want;
    }
    if (std::isfinite(naive[n])) c.naive_error = std::max(c.naive_error, std::abs(naive[n] - want));
  }
  return c;
}

// Runs the call (it must succeed) and checks out, and lse and probs when the spec has them, against the
// reference with the pass rules above, as doctest CHECKs (the caller's CAPTUREs show on failure).
void run_and_check(const attn::Spec &resolved, const attn_kernel *kernel, Call &call);
// Checks a call's lse (when the spec has one) against the reference under compare_nonfinite's rule.
void check_lse_nonfinite(const attn::Spec &resolved, const Call &call, const Expected &expected);
// Checks out (and lse) of a call that ran against the reference under compare_nonfinite's rule,
// out's padding untouched: for inputs holding NaN or Inf. Returns out's finite elements.
int64_t check_nonfinite(const attn::Spec &resolved, const Call &call, const Expected &expected);
// Runs the call (it must succeed), then check_nonfinite.
int64_t run_and_check_nonfinite(const attn::Spec &resolved, const attn_kernel *kernel, Call &call);

// A call's batch and sequence lengths, as suites list the shapes they run.
struct CallShape {
  int batch, seq_q, seq_k;
};
std::ostream &operator<<(std::ostream &os, const CallShape &s);

// The ids of the listed specs that are not linked, and of the linked kernels not listed: both empty
// when a suite's spec list and its CMake list agree.
struct SpecListDrift {
  std::vector<std::string> missing, unlisted;
};
SpecListDrift spec_list_drift(const std::vector<std::string> &spec_texts);
// CHECKs that a suite's list (list_name: where it lives) and its linked kernels agree, naming each
// id on one side only.
void check_spec_list(const SpecListDrift &drift, const std::string &list_name);

// The query rows i < seq_q whose every key the spec's mask removes (the same for every batch and head);
// masks of windows only.
std::vector<int> fully_masked_queries(const attn::Spec &resolved, int seq_q, int seq_k);

}  // namespace attnc::test

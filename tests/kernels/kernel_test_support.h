// kernel_test_support.h: padded tensors, kernel lookup, reference runs and the pass rule of the kernel
// suites.
#pragma once

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

// A float tensor of rank 1..4 that owns its storage. Padded tensors get outer strides larger than
// dense (head_dim stays contiguous); their padding holds a sentinel a kernel must neither read
// (NaN for inputs) nor write (a number for outputs).
class Tensor {
 public:
  Tensor() = default;
  Tensor(std::vector<int64_t> shape, bool padded, float padding_value);

  const std::vector<int64_t> &shape() const { return shape_; }
  const std::vector<int64_t> &strides() const { return strides_; }
  int64_t elements() const;  // logical elements, padding excluded
  float *data() { return storage_.data() + guard; }

  // Sentinel elements before and after the tensor, padded or not, to catch writes past its ends.
  static constexpr int64_t guard = 8;

  // The storage offset of the n-th logical element in row-major order.
  int64_t offset(int64_t n) const;
  float &logical(int64_t n) { return storage_[static_cast<size_t>(offset(n))]; }
  float logical(int64_t n) const { return storage_[static_cast<size_t>(offset(n))]; }

  void fill_normal(std::mt19937 &rng, float stddev = 1.0f);
  void fill_uniform(std::mt19937 &rng, float bound);  // uniform in [-bound, bound]
  void fill(float value);                             // every logical element
  // Whether every padding element still holds the padding value, bit for bit.
  bool padding_intact() const;

  reference::TensorView view() const;
  attn_tensor c_tensor();  // points into this object: keep it alive and unmoved while used

 private:
  std::vector<int64_t> shape_, strides_;
  std::vector<float> storage_;
  float padding_value_ = 0.0f;
};

// The runtime's strings as std::string: doctest prints a const char * as a pointer.
std::string last_error();
std::string status_name(attn_status status);

// The spec of a spec text; fails the test (REQUIRE) when it does not parse.
attn::Spec parse(const std::string &spec_text);
// The linked kernel of a spec, or null (the test fails, naming the id).
const attn_kernel *find_kernel(const attn::Spec &spec);
// The spec's scale in double: its own, or 1 / sqrt(head_dim).
double scale_of(const attn::Spec &resolved);

// Every tensor of one call, by argument name.
struct Call {
  std::map<std::string, Tensor> tensors;
  attn_status run(const attn_kernel *kernel);  // passes every tensor, names as keys
};

// Inputs for a core spec with normal q, k, v; out (-777 everywhere, padding included).
Call make_core_call(const attn::Spec &resolved, int batch, int seq_q, int seq_k, bool padded,
                    std::mt19937 &rng);
// Inputs for a block spec: x uniform[-1, 1], weights and biases uniform[-1/sqrt(fan_in), 1/sqrt(fan_in)].
Call make_block_call(const attn::Spec &resolved, int batch, int seq, bool padded, std::mt19937 &rng);

// The fp64 reference and the naive fp32 result for a call made by make_core_call / make_block_call.
struct Expected {
  std::vector<double> exact;
  std::vector<float> naive;
};
Expected expected_result(const attn::Spec &resolved, const Call &call);

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
std::ostream &operator<<(std::ostream &os, const Comparison &c);

// The query rows i < seq_q whose every key the spec's mask removes (the same for every batch and head).
std::vector<int> fully_masked_queries(const attn::Spec &resolved, int seq_q, int seq_k);

}  // namespace attnc::test

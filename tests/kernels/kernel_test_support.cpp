// kernel_test_support.cpp: tensors, calls and comparisons shared by the kernel suites.
#include "kernel_test_support.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "attn/kernel_id.h"
#include "attn/spec_text.h"
#include "attn/validate.h"

namespace attnc::test {

namespace {
constexpr float output_sentinel = -777.0f;

bool same_bits(float a, float b) {
  return std::memcmp(&a, &b, sizeof(float)) == 0;
}
}  // namespace

Tensor::Tensor(std::vector<int64_t> shape, bool padded, float padding_value)
    : shape_(std::move(shape)), strides_(shape_.size()), padding_value_(padding_value) {
  if (shape_.empty() || shape_.size() > 4) throw std::invalid_argument("Tensor: rank must be 1..4");
  const int rank = static_cast<int>(shape_.size());
  int64_t stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    // Padded: dim d's stride exceeds dense by 3, 5, 7 ... elements going outward; the innermost is 1.
    const int64_t pad = padded && d < rank - 1 ? 2 * (rank - 1 - d) + 1 : 0;
    strides_[d] = stride + (d < rank - 1 ? pad : 0);
    stride = strides_[d] * shape_[d];
  }
  storage_.assign(static_cast<size_t>(stride + 2 * guard), padding_value);
}

int64_t Tensor::elements() const {
  int64_t n = 1;
  for (int64_t s : shape_) n *= s;
  return n;
}

int64_t Tensor::offset(int64_t n) const {
  int64_t offset = guard;
  for (int d = static_cast<int>(shape_.size()) - 1; d >= 0; --d) {
    offset += (n % shape_[d]) * strides_[d];
    n /= shape_[d];
  }
  return offset;
}

void Tensor::fill_normal(std::mt19937 &rng, float stddev) {
  std::normal_distribution<float> dist(0.0f, stddev);
  for (int64_t n = 0; n < elements(); ++n) logical(n) = dist(rng);
}

void Tensor::fill_uniform(std::mt19937 &rng, float bound) {
  std::uniform_real_distribution<float> dist(-bound, bound);
  for (int64_t n = 0; n < elements(); ++n) logical(n) = dist(rng);
}

void Tensor::fill(float value) {
  for (int64_t n = 0; n < elements(); ++n) logical(n) = value;
}

bool Tensor::padding_intact() const {
  std::vector<char> is_logical(storage_.size(), 0);
  for (int64_t n = 0; n < elements(); ++n) is_logical[static_cast<size_t>(offset(n))] = 1;
  for (size_t i = 0; i < storage_.size(); ++i)
    if (!is_logical[i] && !same_bits(storage_[i], padding_value_)) return false;
  return true;
}

reference::TensorView Tensor::view() const {
  reference::TensorView v;
  v.data = storage_.data() + guard;
  v.rank = static_cast<int>(shape_.size());
  for (int d = 0; d < v.rank; ++d) {
    v.shape[d] = shape_[d];
    v.strides[d] = strides_[d];
  }
  return v;
}

attn_tensor Tensor::c_tensor() {
  return attn_tensor{data(), ATTN_F32, static_cast<int32_t>(shape_.size()), shape_.data(), strides_.data()};
}

std::string last_error() {
  return attn_last_error();
}
std::string status_name(attn_status status) {
  return attn_status_name(status);
}

attn::Spec parse(const std::string &spec_text) {
  const attn::ParseResult parsed = attn::parse_spec(spec_text);
  INFO("spec: ", spec_text, " -> ", parsed.message);
  REQUIRE(parsed.ok);
  return attn::resolve(parsed.spec);
}

const attn_kernel *find_kernel(const attn::Spec &spec) {
  const std::string id = attn::kernel_id(spec);
  const attn_kernel *kernel = nullptr;
  const attn_status status = attn_find_kernel(id.c_str(), &kernel);
  INFO("kernel ", id, ": ", last_error());
  CHECK(status == ATTN_OK);
  return status == ATTN_OK ? kernel : nullptr;
}

double scale_of(const attn::Spec &s) {
  return s.has_scale ? static_cast<double>(s.scale) : reference::default_scale(s.head_dim);
}

attn_status Call::run(const attn_kernel *kernel) {
  std::vector<attn_arg> args;
  for (auto &[name, tensor] : tensors) args.push_back(attn_arg{name.c_str(), tensor.c_tensor()});
  return attn_run(kernel, args.data(), static_cast<int>(args.size()));
}

Call make_core_call(const attn::Spec &s, int batch, int seq_q, int seq_k, bool padded, std::mt19937 &rng) {
  Call call;
  auto input = [&](const char *name, std::vector<int64_t> shape) {
    Tensor t(std::move(shape), padded, NAN);
    t.fill_normal(rng);
    call.tensors.emplace(name, std::move(t));
  };
  input("q", {batch, seq_q, s.heads, s.head_dim});
  input("k", {batch, seq_k, s.kv_heads, s.head_dim});
  input("v", {batch, seq_k, s.kv_heads, s.head_dim_v});
  call.tensors.emplace("out", Tensor({batch, seq_q, s.heads, s.head_dim_v}, padded, output_sentinel));
  return call;
}

Call make_block_call(const attn::Spec &s, int batch, int seq, bool padded, std::mt19937 &rng) {
  Call call;
  auto input = [&](const std::string &name, std::vector<int64_t> shape, float bound) {
    Tensor t(std::move(shape), padded, NAN);
    t.fill_uniform(rng, bound);
    call.tensors.emplace(name, std::move(t));
  };
  const int64_t m = s.d_model, q_rows = int64_t{s.heads} * s.head_dim,
                k_rows = int64_t{s.kv_heads} * s.head_dim, v_rows = int64_t{s.kv_heads} * s.head_dim_v,
                merged = int64_t{s.heads} * s.head_dim_v;
  const float in_bound = 1.0f / std::sqrt(static_cast<float>(m));
  const float out_bound = 1.0f / std::sqrt(static_cast<float>(merged));
  input("x", {batch, seq, m}, 1.0f);
  if (s.qkv == attn::Qkv::fused) {
    input("w_qkv", {q_rows + k_rows + v_rows, m}, in_bound);
    if (s.proj_bias) input("b_qkv", {q_rows + k_rows + v_rows}, in_bound);
  } else {
    input("w_q", {q_rows, m}, in_bound);
    input("w_k", {k_rows, m}, in_bound);
    input("w_v", {v_rows, m}, in_bound);
    if (s.proj_bias) {
      input("b_q", {q_rows}, in_bound);
      input("b_k", {k_rows}, in_bound);
      input("b_v", {v_rows}, in_bound);
    }
  }
  input("w_o", {m, merged}, out_bound);
  if (s.proj_bias) input("b_o", {m}, out_bound);
  call.tensors.emplace("out", Tensor({batch, seq, m}, padded, output_sentinel));
  return call;
}

Expected expected_result(const attn::Spec &s, const Call &call) {
  auto view = [&](const char *name) {
    auto it = call.tensors.find(name);
    return it == call.tensors.end() ? reference::TensorView{} : it->second.view();
  };
  const double scale = scale_of(s);
  Expected e;
  if (s.form == attn::Form::core) {
    e.exact = reference::core_reference(view("q"), view("k"), view("v"), scale, s.mask);
    e.naive = reference::core_naive_f32(view("q"), view("k"), view("v"), static_cast<float>(scale), s.mask);
    return e;
  }
  reference::BlockWeights w;
  w.w_q = view("w_q");
  w.w_k = view("w_k");
  w.w_v = view("w_v");
  w.w_qkv = view("w_qkv");
  w.b_q = view("b_q");
  w.b_k = view("b_k");
  w.b_v = view("b_v");
  w.b_qkv = view("b_qkv");
  w.w_o = view("w_o");
  w.b_o = view("b_o");
  const reference::BlockShape shape{s.heads, s.kv_heads, s.head_dim, s.head_dim_v};
  e.exact = reference::block_reference(view("x"), w, shape, scale, s.mask);
  e.naive = reference::block_naive_f32(view("x"), w, shape, static_cast<float>(scale), s.mask);
  return e;
}

Comparison compare(const Tensor &out, const Expected &expected) {
  Comparison c;
  REQUIRE(static_cast<size_t>(out.elements()) == expected.exact.size());
  REQUIRE(expected.naive.size() == expected.exact.size());
  for (int64_t n = 0; n < out.elements(); ++n) {
    const double got = out.logical(n), exact = expected.exact[static_cast<size_t>(n)];
    auto record = [&](double error) {
      c.kernel_error = error;
      c.worst = n;
      c.worst_got = got;
      c.worst_exact = exact;
    };
    if (std::isnan(got)) {
      if (c.nan_count++ == 0) record(INFINITY);
    } else if (const double error = std::abs(got - exact); error > c.kernel_error || c.worst < 0) {
      record(error);
    }
    c.naive_error = std::max(c.naive_error, std::abs(double(expected.naive[static_cast<size_t>(n)]) - exact));
  }
  c.padding_intact = out.padding_intact();
  return c;
}

std::ostream &operator<<(std::ostream &os, const Comparison &c) {
  return os << "{kernel error " << c.kernel_error << " (bound " << c.bound() << ", naive fp32 error "
            << c.naive_error << "), worst element " << c.worst << ": got " << c.worst_got << ", exact "
            << c.worst_exact << ", NaNs " << c.nan_count << ", padding "
            << (c.padding_intact ? "intact" : "WRITTEN") << "}";
}

std::vector<int> fully_masked_queries(const attn::Spec &s, int seq_q, int seq_k) {
  std::vector<int> rows;
  for (int i = 0; i < seq_q; ++i) {
    const int64_t q_pos = int64_t{i} + seq_k - seq_q;
    bool any = false;
    for (int64_t k = 0; k < seq_k && !any; ++k) any = reference::keeps(s.mask, q_pos, k);
    if (!any) rows.push_back(i);
  }
  return rows;
}

}  // namespace attnc::test

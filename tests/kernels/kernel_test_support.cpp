// kernel_test_support.cpp: tensors, calls and comparisons shared by the kernel suites.
#include "kernel_test_support.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "attn/kernel_id.h"
#include "attn/spec_text.h"
#include "attn/validate.h"
#include "expr_inputs.h"

namespace attnc::test {

namespace {

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

template <class T>
constexpr attn_dtype dtype_of() {
  if constexpr (std::is_same_v<T, float>) return ATTN_F32;
  if constexpr (std::is_same_v<T, int32_t>) return ATTN_I32;
  if constexpr (std::is_same_v<T, uint16_t>) return ATTN_F16;  // or ATTN_BF16: c_tensor(dtype)
  return ATTN_U8;
}

}  // namespace

template <class T>
BasicTensor<T>::BasicTensor(std::vector<int64_t> shape, bool padded, T padding_value)
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

template <class T>
BasicTensor<T>::BasicTensor(std::vector<int64_t> shape, std::vector<int64_t> strides, T padding_value)
    : shape_(std::move(shape)), strides_(std::move(strides)), padding_value_(padding_value) {
  if (shape_.empty() || shape_.size() > 4) throw std::invalid_argument("Tensor: rank must be 1..4");
  if (strides_.size() != shape_.size() || strides_.back() != 1)
    throw std::invalid_argument("Tensor: one stride per dim, the innermost 1");
  int64_t last = 0;  // the largest offset of a logical element
  for (size_t d = 0; d < shape_.size(); ++d) {
    if (shape_[d] < 1 || strides_[d] < 0) throw std::invalid_argument("Tensor: sizes >= 1, strides >= 0");
    last += (shape_[d] - 1) * strides_[d];
  }
  storage_.assign(static_cast<size_t>(last + 1 + 2 * guard), padding_value);
}

template <class T>
int64_t BasicTensor<T>::elements() const {
  int64_t n = 1;
  for (int64_t s : shape_) n *= s;
  return n;
}

template <class T>
int64_t BasicTensor<T>::offset(int64_t n) const {
  int64_t offset = guard;
  for (int d = static_cast<int>(shape_.size()) - 1; d >= 0; --d) {
    offset += (n % shape_[d]) * strides_[d];
    n /= shape_[d];
  }
  return offset;
}

template <class T>
void BasicTensor<T>::fill_normal(std::mt19937 &rng, float stddev) {
  std::normal_distribution<float> dist(0.0f, stddev);
  for (int64_t n = 0; n < elements(); ++n) logical(n) = static_cast<T>(dist(rng));
}

template <class T>
void BasicTensor<T>::fill_uniform(std::mt19937 &rng, float bound) {
  std::uniform_real_distribution<float> dist(-bound, bound);
  for (int64_t n = 0; n < elements(); ++n) logical(n) = static_cast<T>(dist(rng));
}

template <class T>
void BasicTensor<T>::fill(T value) {
  for (int64_t n = 0; n < elements(); ++n) logical(n) = value;
}

template <class T>
bool BasicTensor<T>::padding_intact() const {
  std::vector<char> is_logical(storage_.size(), 0);
  for (int64_t n = 0; n < elements(); ++n) is_logical[static_cast<size_t>(offset(n))] = 1;
  for (size_t i = 0; i < storage_.size(); ++i)
    if (!is_logical[i] && !same_bits(storage_[i], padding_value_)) return false;
  return true;
}

template <class T>
bool BasicTensor<T>::all_padding() const {
  for (const T &x : storage_)
    if (!same_bits(x, padding_value_)) return false;
  return true;
}

template <class T>
reference::View<T> BasicTensor<T>::view() const {
  reference::View<T> v;
  v.data = storage_.data() + guard;
  v.rank = static_cast<int>(shape_.size());
  for (int d = 0; d < v.rank; ++d) {
    v.shape[d] = shape_[d];
    v.strides[d] = strides_[d];
  }
  return v;
}

template <class T>
attn_tensor BasicTensor<T>::c_tensor() {
  return c_tensor(dtype_of<T>());
}

template <class T>
attn_tensor BasicTensor<T>::c_tensor(attn_dtype dtype) {
  return attn_tensor{data(), dtype, static_cast<int32_t>(shape_.size()), shape_.data(), strides_.data()};
}

template class BasicTensor<float>;
template class BasicTensor<int32_t>;
template class BasicTensor<uint8_t>;
template class BasicTensor<uint16_t>;

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

std::vector<const char *> variant_caps(const attn_kernel *kernel) {
#if defined(__aarch64__)
  const char *const baseline = "neon";
#else
  const char *const baseline = "avx2";
#endif
  std::vector<const char *> caps = {nullptr};
  REQUIRE(kernel != nullptr);
  const std::string best = attn_kernel_selected_target(kernel);
  REQUIRE(attn_set_max_isa(baseline) == ATTN_OK);
  const std::string capped = attn_kernel_selected_target(kernel);
  REQUIRE(attn_set_max_isa(nullptr) == ATTN_OK);
  if (!capped.empty() && capped != best) caps.push_back(baseline);
  MESSAGE("variants run: ", best, (caps.size() > 1 ? "; " + capped : std::string()));
  return caps;
}

attn_status Call::run(const attn_kernel *kernel) {
  std::vector<attn_arg> args;
  for (auto &[name, tensor] : tensors) args.push_back(attn_arg{name.c_str(), tensor.c_tensor()});
  for (auto &[name, tensor] : index_tensors) args.push_back(attn_arg{name.c_str(), tensor.c_tensor()});
  for (auto &[name, tensor] : byte_tensors) args.push_back(attn_arg{name.c_str(), tensor.c_tensor()});
  for (auto &[name, tensor] : int8_tensors) args.push_back(attn_arg{name.c_str(), tensor.c_tensor(ATTN_I8)});
  for (auto &[name, tensor] : bits_tensors)
    args.push_back(attn_arg{name.c_str(), tensor.c_tensor(bits_dtype)});
  for (auto &[name, value] : scalars)
    args.push_back(attn_arg{name.c_str(), {&value, ATTN_F32, 0, nullptr, nullptr}});
  for (auto &[name, value] : u64_scalars)
    args.push_back(attn_arg{name.c_str(), {&value, ATTN_U64, 0, nullptr, nullptr}});
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
  if (s.lse) call.tensors.emplace("lse", Tensor({batch, seq_q, s.heads}, padded, output_sentinel));
  if (s.probs) call.tensors.emplace("probs", Tensor({batch, s.heads, seq_q, seq_k}, padded, output_sentinel));
  return call;
}

Call make_block_call(const attn::Spec &s, int batch, int seq, bool padded, std::mt19937 &rng) {
  return make_block_call(s, batch, seq, seq, padded, rng);
}

Call make_block_call(const attn::Spec &s, int batch, int seq, int seq_kv, bool padded, std::mt19937 &rng) {
  Call call;
  auto input = [&](const std::string &name, std::vector<int64_t> shape, float bound) {
    Tensor t(std::move(shape), padded, NAN);
    t.fill_uniform(rng, bound);
    call.tensors.emplace(name, std::move(t));
  };
  // Summed over the head groups where the spec has them.
  const int64_t m = s.d_model, q_rows = attn::query_width(s), k_rows = attn::key_width(s),
                v_rows = attn::value_width(s), merged = attn::attended_width(s);
  const float in_bound = 1.0f / std::sqrt(static_cast<float>(m));
  const float out_bound = 1.0f / std::sqrt(static_cast<float>(merged));
  input("x", {batch, seq, m}, 1.0f);
  if (s.cross_attention) input("x_kv", {batch, seq_kv, m}, 1.0f);
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
  if (s.lse) call.tensors.emplace("lse", Tensor({batch, seq, s.heads}, padded, output_sentinel));
  if (s.probs) call.tensors.emplace("probs", Tensor({batch, s.heads, seq, seq}, padded, output_sentinel));
  return call;
}

Call make_call(const attn::Spec &s, int batch, int seq_q, int seq_k, bool padded, std::mt19937 &rng) {
  return s.form == attn::Form::core ? make_core_call(s, batch, seq_q, seq_k, padded, rng)
                                    : make_block_call(s, batch, seq_q, seq_k, padded, rng);
}

std::ostream &operator<<(std::ostream &os, MaskShape shape) {
  switch (shape) {
    case MaskShape::sq_sk:
      return os << "[Sq,Sk]";
    case MaskShape::h_sq_sk:
      return os << "[H,Sq,Sk]";
    case MaskShape::b_h_sq_sk:
      return os << "[B,H,Sq,Sk]";
    case MaskShape::one_h_sq_sk:
      return os << "[1,H,Sq,Sk]";
    case MaskShape::b_one_sq_sk:
      return os << "[B,1,Sq,Sk]";
  }
  return os;
}

namespace {
std::vector<int64_t> mask_dims(MaskShape shape, int64_t batch, int64_t heads, int64_t seq_q, int64_t seq_k) {
  switch (shape) {
    case MaskShape::sq_sk:
      return {seq_q, seq_k};
    case MaskShape::h_sq_sk:
      return {heads, seq_q, seq_k};
    case MaskShape::b_h_sq_sk:
      return {batch, heads, seq_q, seq_k};
    case MaskShape::one_h_sq_sk:
      return {1, heads, seq_q, seq_k};
    case MaskShape::b_one_sq_sk:
      return {batch, 1, seq_q, seq_k};
  }
  return {};
}

// Sorted ids in [0, documents): runs of equal ids, as packed documents give.
void fill_sorted_ids(IndexTensor &t, int64_t batch, int64_t seq, int documents, std::mt19937 &rng) {
  std::uniform_int_distribution<int> id(0, documents - 1);
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<int32_t> ids(static_cast<size_t>(seq));
    for (int32_t &x : ids) x = id(rng);
    std::sort(ids.begin(), ids.end());
    for (int64_t i = 0; i < seq; ++i) t.logical(b * seq + i) = ids[static_cast<size_t>(i)];
  }
}
}  // namespace

void add_runtime_inputs(const attn::Spec &s, Call &call, int batch, int seq_q, int seq_k, bool padded,
                        MaskShape mask_shape, std::mt19937 &rng) {
  constexpr int32_t unread = -12345;  // padding of integer inputs: out of every valid range
  auto lengths = [&](const char *name, bool pin_ends) {
    IndexTensor t({batch}, padded, unread);
    std::uniform_int_distribution<int32_t> length(0, seq_k);
    for (int b = 0; b < batch; ++b) t.logical(b) = length(rng);
    if (pin_ends && batch > 1) t.logical(1) = seq_k;
    if (pin_ends && batch > 2) t.logical(2) = 0;
    call.index_tensors.emplace(name, std::move(t));
  };
  if (s.mask.uses(attn::MaskOp::padding)) lengths("key_lengths", true);
  if (s.mask.uses(attn::MaskOp::prefix)) lengths("prefix_lengths", false);
  if (s.mask.uses(attn::MaskOp::document)) {
    const int documents = 1 + static_cast<int>(rng() % 4);
    IndexTensor q({batch, seq_q}, padded, unread), k({batch, seq_k}, padded, unread);
    fill_sorted_ids(q, batch, seq_q, documents, rng);
    fill_sorted_ids(k, batch, seq_k, documents, rng);
    call.index_tensors.emplace("segment_ids_q", std::move(q));
    call.index_tensors.emplace("segment_ids_k", std::move(k));
  }
  const std::vector<int64_t> dims = mask_dims(mask_shape, batch, s.heads, seq_q, seq_k);
  if (s.mask.uses(attn::MaskOp::tensor)) {
    // Padding 1: a kernel reading it would keep a pair the reference drops.
    ByteTensor t(dims, padded, 1);
    std::uniform_int_distribution<int> value(1, 255);
    std::bernoulli_distribution keep(0.7);
    for (int64_t n = 0; n < t.elements(); ++n)
      t.logical(n) = keep(rng) ? static_cast<uint8_t>(value(rng)) : 0;
    call.byte_tensors.emplace("mask", std::move(t));
  }
  if (s.alibi) {
    Tensor t({s.heads}, padded, NAN);
    std::uniform_real_distribution<float> slope(0.01f, 0.5f);
    for (int64_t h = 0; h < s.heads; ++h) t.logical(h) = slope(rng);
    call.tensors.emplace("alibi_slopes", std::move(t));
  }
  if (s.score_bias) {
    Tensor t(dims, padded, NAN);
    t.fill_uniform(rng, 2.0f);
    call.tensors.emplace("score_bias", std::move(t));
  }
  if (s.has_dropout) {
    call.u64_scalars["seed"] = (uint64_t{rng()} << 32) | rng();
    call.u64_scalars["offset"] = (uint64_t{rng()} << 32) | rng();
  }
  add_captured_inputs(s, call, batch, seq_q, seq_k, padded, rng);
}

reference::Options reference_options(const attn::Spec &s, const Call &call) {
  auto view = [&](const char *name) {
    auto it = call.tensors.find(name);
    return it == call.tensors.end() ? reference::TensorView{} : it->second.view();
  };
  auto index_view = [&](const char *name) {
    auto it = call.index_tensors.find(name);
    return it == call.index_tensors.end() ? reference::IndexView{} : it->second.view();
  };
  reference::Options o;
  o.scale = scale_of(s);
  // A run-time scale the call gives (runtime_scale: rank 0 or one element) replaces the spec's.
  if (auto it = call.tensors.find("scale"); it != call.tensors.end()) o.scale = it->second.logical(0);
  if (auto it = call.scalars.find("scale"); it != call.scalars.end()) o.scale = it->second;
  o.mask = s.mask;
  o.mask_block = s.mask_block;
  o.softcap = s.has_softcap ? static_cast<double>(s.softcap) : 0.0;
  o.alibi = s.alibi;
  o.score_bias = s.score_bias;
  o.top_left = s.align == attn::Align::top_left;
  o.probs = s.probs;
  o.inputs.key_lengths = index_view("key_lengths");
  o.inputs.prefix_lengths = index_view("prefix_lengths");
  o.inputs.segment_ids_q = index_view("segment_ids_q");
  o.inputs.segment_ids_k = index_view("segment_ids_k");
  if (auto it = call.byte_tensors.find("mask"); it != call.byte_tensors.end())
    o.inputs.mask = it->second.view();
  o.inputs.alibi_slopes = view("alibi_slopes");
  o.inputs.score_bias = view("score_bias");
  if (s.has_dropout) {
    o.dropout.on = true;
    o.dropout.p = s.dropout;
    o.dropout.seed = call.u64_scalars.at("seed");
    o.dropout.offset = call.u64_scalars.at("offset");
  }
  add_expr_reference(o, s, call);
  return o;
}

Expected expected_result(const attn::Spec &s, const Call &call) {
  auto view = [&](const char *name) {
    auto it = call.tensors.find(name);
    return it == call.tensors.end() ? reference::TensorView{} : it->second.view();
  };
  const reference::Options o = reference_options(s, call);
  Expected e;
  auto take = [&e](reference::Result<double> exact, reference::Result<float> naive) {
    e.exact = std::move(exact.out);
    e.exact_lse = std::move(exact.lse);
    e.naive = std::move(naive.out);
    e.naive_lse = std::move(naive.lse);
    e.exact_probs = std::move(exact.probs);
    e.naive_probs = std::move(naive.probs);
  };
  if (s.form == attn::Form::core) {
    take(reference::core_reference(view("q"), view("k"), view("v"), o),
         reference::core_naive_f32(view("q"), view("k"), view("v"), o));
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
  if (s.group_count > 0) {
    std::vector<reference::HeadGroupShape> groups;
    for (int g = 0; g < s.group_count; ++g) {
      const attn::HeadGroup &group = s.head_groups[g];
      const double scale =
          s.has_scale ? static_cast<double>(s.scale) : reference::default_scale(group.head_dim);
      groups.push_back({group.heads, attn::group_kv_heads(group), group.head_dim, scale});
    }
    take(reference::block_groups_reference(view("x"), w, groups, o),
         reference::block_groups_naive_f32(view("x"), w, groups, o));
    return e;
  }
  const reference::BlockShape shape{s.heads, s.kv_heads, s.head_dim, s.head_dim_v};
  if (s.cross_attention) {
    take(reference::block_cross_reference(view("x"), view("x_kv"), w, shape, o),
         reference::block_cross_naive_f32(view("x"), view("x_kv"), w, shape, o));
    return e;
  }
  take(reference::block_reference(view("x"), w, shape, o),
       reference::block_naive_f32(view("x"), w, shape, o));
  return e;
}

int64_t differing_elements(const Tensor &a, const Tensor &b) {
  REQUIRE(a.elements() == b.elements());
  int64_t differing = 0;
  for (int64_t n = 0; n < a.elements(); ++n) differing += !same_bits(a.logical(n), b.logical(n));
  return differing;
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

LseComparison compare_lse(const Tensor &lse, const Expected &expected) {
  LseComparison c;
  REQUIRE(static_cast<size_t>(lse.elements()) == expected.exact_lse.size());
  REQUIRE(expected.naive_lse.size() == expected.exact_lse.size());
  c.rows = lse.elements();
  for (int64_t n = 0; n < c.rows; ++n) {
    const double got = lse.logical(n), exact = expected.exact_lse[static_cast<size_t>(n)];
    const bool exact_masked = std::isinf(exact) && exact < 0, got_masked = std::isinf(got) && got < 0;
    c.masked_rows += exact_masked;
    if (std::isnan(got)) {
      ++c.nan_count;
      continue;
    }
    if (exact_masked != got_masked) {
      if (c.inf_mismatches++ == 0) c.first_mismatch = n;
      continue;
    }
    if (exact_masked) continue;
    const double error = std::isfinite(got) ? std::abs(got - exact) : INFINITY;
    if (error > c.kernel_error || c.worst < 0) {
      c.kernel_error = error;
      c.worst = n;
      c.worst_got = got;
      c.worst_exact = exact;
    }
    c.naive_error =
        std::max(c.naive_error, std::abs(double(expected.naive_lse[static_cast<size_t>(n)]) - exact));
  }
  c.padding_intact = lse.padding_intact();
  return c;
}

std::ostream &operator<<(std::ostream &os, const LseComparison &c) {
  return os << "{lse: " << c.masked_rows << " of " << c.rows << " rows -inf in the reference, "
            << c.inf_mismatches << " -inf mismatches (first " << c.first_mismatch << "), error "
            << c.kernel_error << " (bound " << c.bound() << ", naive fp32 error " << c.naive_error
            << "), worst row " << c.worst << ": got " << c.worst_got << ", exact " << c.worst_exact
            << ", NaNs " << c.nan_count << ", padding " << (c.padding_intact ? "intact" : "WRITTEN") << "}";
}

std::ostream &operator<<(std::ostream &os, const NonfiniteComparison &c) {
  return os << "{nan mismatches " << c.nan_mismatches << ", inf mismatches " << c.inf_mismatches
            << " (first at " << c.first_mismatch << "), finite " << c.finite << ", error " << c.kernel_error
            << " against a bound of " << c.bound() << " (naive error " << c.naive_error << "), worst element "
            << c.worst << ": got " << c.worst_got << ", exact " << c.worst_exact << "}";
}

SpecListDrift spec_list_drift(const std::vector<std::string> &spec_texts) {
  std::vector<std::string> listed;
  for (const std::string &spec : spec_texts) listed.push_back(attn::kernel_id(parse(spec)));
  SpecListDrift drift;
  for (const std::string &id : listed) {
    const attn_kernel *kernel = nullptr;
    if (attn_find_kernel(id.c_str(), &kernel) != ATTN_OK) drift.missing.push_back(id);
  }
  for (int i = 0; i < attn_kernel_count(); ++i) {
    const std::string id = attn_kernel_id(attn_kernel_at(i));
    if (std::find(listed.begin(), listed.end(), id) == listed.end()) drift.unlisted.push_back(id);
  }
  return drift;
}

void check_spec_list(const SpecListDrift &drift, const std::string &list_name) {
  CHECK_MESSAGE(drift.missing.empty(), "listed in ", list_name, ", not linked: ", drift.missing.size());
  for (const std::string &id : drift.missing) MESSAGE("not linked: ", id);
  CHECK_MESSAGE(drift.unlisted.empty(), "linked, not in ", list_name, ": ", drift.unlisted.size());
  for (const std::string &id : drift.unlisted) MESSAGE("not listed: ", id);
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

void run_and_check(const attn::Spec &spec, const attn_kernel *kernel, Call &call) {
  const attn_status status = call.run(kernel);
  INFO("attn_run: ", status_name(status), ": ", last_error());
  REQUIRE(status == ATTN_OK);
  const Expected expected = expected_result(spec, call);
  const Comparison result = compare(call.tensors.at("out"), expected);
  CAPTURE(result);
  CHECK(result.pass());
  if (spec.lse) {
    const LseComparison lse = compare_lse(call.tensors.at("lse"), expected);
    CAPTURE(lse);
    CHECK(lse.pass());
  }
  if (spec.probs) {
    const Comparison probs = compare(call.tensors.at("probs"), probs_expected(expected));
    CAPTURE(probs);
    CHECK(probs.pass());
  }
}

void check_lse_nonfinite(const attn::Spec &spec, const Call &call, const Expected &expected) {
  if (!spec.lse) return;
  const Tensor &lse = call.tensors.at("lse");
  const NonfiniteComparison l =
      compare_nonfinite([&](int64_t n) { return lse.logical(n); }, expected.exact_lse, expected.naive_lse);
  CAPTURE(l);
  CHECK(l.pass());
}

int64_t check_nonfinite(const attn::Spec &spec, const Call &call, const Expected &expected) {
  const Tensor &out = call.tensors.at("out");
  const NonfiniteComparison c =
      compare_nonfinite([&](int64_t n) { return out.logical(n); }, expected.exact, expected.naive);
  CAPTURE(c);
  CHECK(c.pass());
  CHECK(out.padding_intact());
  check_lse_nonfinite(spec, call, expected);
  return c.finite;
}

std::ostream &operator<<(std::ostream &os, const CallShape &s) {
  return os << "B=" << s.batch << " Sq=" << s.seq_q << " Sk=" << s.seq_k;
}

int64_t run_and_check_nonfinite(const attn::Spec &spec, const attn_kernel *kernel, Call &call) {
  const attn_status status = call.run(kernel);
  INFO("attn_run: ", status_name(status), ": ", last_error());
  REQUIRE(status == ATTN_OK);
  return check_nonfinite(spec, call, expected_result(spec, call));
}

Expected probs_expected(const Expected &expected) {
  Expected probs;
  probs.exact = expected.exact_probs;
  probs.naive = expected.naive_probs;
  return probs;
}

}  // namespace attnc::test

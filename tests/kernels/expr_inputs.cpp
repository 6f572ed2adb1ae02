// expr_inputs.cpp: captured tensors for the expression suites and the reference's view of them.
#include "expr_inputs.h"

#include <cstring>
#include <string>
#include <vector>

namespace attnc::test {
namespace {

std::string name_of(const attn::CapturedInput &c) {
  return std::string(c.name, strnlen(c.name, attn::max_input_name));
}

std::vector<int64_t> shape_of(const attn::Spec &s, const attn::CapturedInput &c, int batch, int seq_q,
                              int seq_k) {
  std::vector<int64_t> shape;
  for (int d = 0; d < c.rank; ++d) {
    const int32_t v = c.dims[d];
    shape.push_back(v == attn::dim::B     ? batch
                    : v == attn::dim::Sq  ? seq_q
                    : v == attn::dim::Sk  ? seq_k
                    : v == attn::dim::H   ? s.heads
                    : v == attn::dim::KVH ? s.kv_heads
                                          : v);
  }
  return shape;
}

// The element at `index` (outermost first) of a tensor.
template <class T>
double element(const BasicTensor<T> &t, const std::vector<int64_t> &index) {
  int64_t n = 0;
  for (size_t d = 0; d < index.size(); ++d) n = n * t.shape()[d] + index[d];
  return static_cast<double>(t.logical(n));
}

// The lengths of the call: q's (or x's) and k's (or x_kv's, else x's) sequence dims.
std::pair<int64_t, int64_t> call_lengths(const Call &call) {
  if (call.tensors.count("q")) return {call.tensors.at("q").shape()[1], call.tensors.at("k").shape()[1]};
  const int64_t sq = call.tensors.at("x").shape()[1];
  return {sq, call.tensors.count("x_kv") ? call.tensors.at("x_kv").shape()[1] : sq};
}

}  // namespace

void add_captured_inputs(const attn::Spec &s, Call &call, int batch, int seq_q, int seq_k, bool padded,
                         std::mt19937 &rng) {
  for (int t = 0; t < s.captured.count; ++t) {
    const attn::CapturedInput &c = s.captured.items[t];
    const std::vector<int64_t> shape = shape_of(s, c, batch, seq_q, seq_k);
    const std::string name = name_of(c);
    if (c.dtype == attn::InputDType::f32) {
      Tensor x(shape, padded, NAN);
      x.fill_uniform(rng, 1.0f);
      call.tensors.insert_or_assign(name, std::move(x));
    } else if (c.dtype == attn::InputDType::i32) {
      IndexTensor x(shape, padded, -12345);
      std::uniform_int_distribution<int32_t> value(-8, 8);
      for (int64_t n = 0; n < x.elements(); ++n) x.logical(n) = value(rng);
      call.index_tensors.insert_or_assign(name, std::move(x));
    } else {
      ByteTensor x(shape, padded, 200);
      std::uniform_int_distribution<int> value(0, 3);
      for (int64_t n = 0; n < x.elements(); ++n) x.logical(n) = static_cast<uint8_t>(value(rng));
      call.byte_tensors.insert_or_assign(name, std::move(x));
    }
  }
}

reference::CapturedViews captured_views(const attn::Spec &s, const Call &call) {
  reference::CapturedViews views;
  for (int t = 0; t < s.captured.count; ++t) {
    const std::string name = name_of(s.captured.items[t]);
    reference::CapturedView v;
    if (auto f = call.tensors.find(name); f != call.tensors.end()) {
      const Tensor *x = &f->second;
      v = {x->shape(), [x](const std::vector<int64_t> &i) { return element(*x, i); }, true};
    } else if (auto n = call.index_tensors.find(name); n != call.index_tensors.end()) {
      const IndexTensor *x = &n->second;
      v = {x->shape(), [x](const std::vector<int64_t> &i) { return element(*x, i); }, false};
    } else if (auto b = call.byte_tensors.find(name); b != call.byte_tensors.end()) {
      const ByteTensor *x = &b->second;
      v = {x->shape(), [x](const std::vector<int64_t> &i) { return element(*x, i); }, false};
    } else {
      continue;  // not given: the kernel refuses the call, the reference is not asked
    }
    views.emplace(name, std::move(v));
  }
  return views;
}

void add_expr_reference(reference::Options &o, const attn::Spec &s, const Call &call) {
  if (s.score_mod.empty() && s.mask_mod.empty()) return;
  const auto [seq_q, seq_k] = call_lengths(call);
  reference::add_expr_options(o, s, seq_q, seq_k, captured_views(s, call));
}

}  // namespace attnc::test

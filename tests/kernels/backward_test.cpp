// backward=true against the fp64 backward reference and against central differences of the forward
// kernel itself: masks, modifiers, GQA, Dv != D, fully masked rows, garbage in masked keys, NaN.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "attn/spec_text.h"
#include "backward_reference.h"
#include "backward_specs.h"
#include "kernel_test_support.h"
#include "low_precision.h"
#include "sequence_reference.h"

namespace {

using namespace attnc::test;
namespace ref = attnc::reference;

struct Lengths {
  int batch, seq_q, seq_k;
};
// Odd prefill sizes, more queries than keys (bottom-right alignment leaves rows with no key), one
// query and one key, a decode-sized row, and sizes past a key tile and a query tile.
constexpr Lengths lengths[] = {{2, 37, 45}, {1, 1, 1}, {2, 65, 17}, {3, 5, 70}, {1, 130, 129}};

// The forward of a backward spec: the same spec with lse instead of backward.
attn::Spec forward_of(attn::Spec spec) {
  spec.backward_pass = false;
  spec.score_bias_grad = false;
  spec.lse = true;
  return spec;
}

// The forward's call (q, k, v and the spec's run-time inputs, random), run.
Call run_forward(const attn::Spec &backward, const Lengths &l, bool padded, std::mt19937 &rng) {
  const attn::Spec forward = forward_of(backward);
  Call call = make_core_call(forward, l.batch, l.seq_q, l.seq_k, padded, rng);
  // With dscore_bias, score_bias at full shape: its gradient is then dscore_bias itself.
  add_runtime_inputs(forward, call, l.batch, l.seq_q, l.seq_k, padded,
                     backward.score_bias_grad ? MaskShape::b_h_sq_sk : MaskShape::b_one_sq_sk, rng);
  const attn_kernel *kernel = find_kernel(forward);
  REQUIRE(kernel != nullptr);
  const attn_status status = call.run(kernel);
  INFO("forward: ", status_name(status), ": ", last_error());
  REQUIRE(status == ATTN_OK);
  return call;
}

// The backward's call from a forward call: its inputs, out and lse as inputs, a random dout, and
// dq, dk and dv holding the output sentinel.
Call backward_call(const attn::Spec &spec, const Call &forward, bool padded, std::mt19937 &rng) {
  Call call = forward;
  const Tensor &q = forward.tensors.at("q"), &k = forward.tensors.at("k"), &v = forward.tensors.at("v");
  Tensor dout(forward.tensors.at("out").shape(), padded, NAN);
  dout.fill_normal(rng);
  call.tensors.emplace("dout", std::move(dout));
  call.tensors.emplace("dq", Tensor(q.shape(), padded, output_sentinel));
  call.tensors.emplace("dk", Tensor(k.shape(), padded, output_sentinel));
  call.tensors.emplace("dv", Tensor(v.shape(), padded, output_sentinel));
  if (spec.score_bias_grad)
    call.tensors.emplace("dscore_bias", Tensor({q.shape()[0], spec.heads, q.shape()[1], k.shape()[1]}, padded,
                                               output_sentinel));
  return call;
}

struct Reference {
  ref::Gradients<double> exact;
  ref::Gradients<float> naive;
};
// Rows [B, S, heads, D] of a tensor, dense, each row (b, s, head) rotated by rope at position
// s + offset (offset 0 and sign -1: the transposed rotation, for gradients).
template <class T>
void rotate_rows(std::vector<T> &x, int64_t seq, int64_t heads, int head_dim, int64_t offset, int sign,
                 const attn::Spec &spec) {
  const ref::RopeOptions rope{spec.rope, spec.rope_theta, spec.rope_dim};
  for (int64_t row = 0; row * head_dim < static_cast<int64_t>(x.size()); ++row) {
    const int64_t position = (row / heads) % seq + offset;
    ref::rope_rotate(&x[static_cast<size_t>(row * head_dim)], head_dim, sign * position, rope);
  }
}

Reference reference_of(const attn::Spec &spec, const Call &call) {
  const ref::Options o = reference_options(spec, call);
  auto view = [&](const char *name) { return call.tensors.at(name).view(); };
  if (spec.rope == attn::Rope::none)
    return {ref::core_backward_reference(view("q"), view("k"), view("v"), view("dout"), o),
            ref::core_backward_naive_f32(view("q"), view("k"), view("v"), view("dout"), o)};
  // rope: the reference of the rotated q and k (rotated here in double, from docs/DSL.md's angles,
  // bottom-right positions: row i at Sk - Sq + i, key j at j), its dq and dk turned back.
  const Tensor &q = call.tensors.at("q"), &k = call.tensors.at("k");
  const int64_t seq_q = q.shape()[1], seq_k = k.shape()[1];
  auto dense = [](const Tensor &t) {
    std::vector<double> x(static_cast<size_t>(t.elements()));
    for (int64_t n = 0; n < t.elements(); ++n) x[static_cast<size_t>(n)] = t.logical(n);
    return x;
  };
  std::vector<double> q_rot = dense(q), k_rot = dense(k);
  rotate_rows(q_rot, seq_q, spec.heads, spec.head_dim, seq_k - seq_q, 1, spec);
  rotate_rows(k_rot, seq_k, spec.kv_heads, spec.head_dim, 0, 1, spec);
  const std::vector<float> q_f32(q_rot.begin(), q_rot.end()), k_f32(k_rot.begin(), k_rot.end());
  const auto q_view = ref::TensorView::dense(q_f32.data(), {q.shape()[0], seq_q, spec.heads, spec.head_dim});
  const auto k_view =
      ref::TensorView::dense(k_f32.data(), {k.shape()[0], seq_k, spec.kv_heads, spec.head_dim});
  Reference r{ref::core_backward_reference(q_view, k_view, view("v"), view("dout"), o),
              ref::core_backward_naive_f32(q_view, k_view, view("v"), view("dout"), o)};
  rotate_rows(r.exact.dq, seq_q, spec.heads, spec.head_dim, seq_k - seq_q, -1, spec);
  rotate_rows(r.exact.dk, seq_k, spec.kv_heads, spec.head_dim, 0, -1, spec);
  rotate_rows(r.naive.dq, seq_q, spec.heads, spec.head_dim, seq_k - seq_q, -1, spec);
  rotate_rows(r.naive.dk, seq_k, spec.kv_heads, spec.head_dim, 0, -1, spec);
  return r;
}

// One gradient under the pass rule: max|g - exact| <= 2 max|naive - exact| + 1e-5.
void check_gradient(const Call &call, const char *name, const std::vector<double> &exact,
                    const std::vector<float> &naive) {
  Expected e;
  e.exact = exact;
  e.naive = naive;
  const Comparison c = compare(call.tensors.at(name), e);
  const std::string gradient = name;
  CAPTURE(gradient);
  CAPTURE(c);
  CHECK(c.pass());
}

int64_t nan_count(const Tensor &t) {
  int64_t n = 0;
  for (int64_t e = 0; e < t.elements(); ++e) n += std::isnan(t.logical(e));
  return n;
}

// The specs this build's library holds: all of backward_specs.h, or its first ATTNC_BACKWARD_SHARE
// backward specs and their forwards (the AArch64 tree's share).
#ifdef ATTNC_BACKWARD_SHARE
constexpr size_t active_count = ATTNC_BACKWARD_SHARE;
#else
constexpr size_t active_count = std::size(backward_specs);
#endif
std::vector<const char *> active_specs() {
  return {std::begin(backward_specs), std::begin(backward_specs) + active_count};
}

std::vector<const char *> variant_caps() {
  return attnc::test::variant_caps(find_kernel(parse(backward_specs[0])));
}

TEST_CASE("the spec list matches the linked kernels") {
  std::vector<std::string> all(std::begin(backward_specs), std::begin(backward_specs) + active_count);
  all.insert(all.end(), std::begin(backward_forward_specs),
             std::begin(backward_forward_specs) + active_count);
#ifndef ATTNC_BACKWARD_SHARE
  all.push_back(varlen_backward_spec);
  all.push_back(attn::to_string(forward_of(parse(varlen_backward_spec))));
#endif
  check_spec_list(spec_list_drift(all), "backward_specs.h");
}

TEST_CASE("dq, dk and dv match the fp64 backward reference, on every variant") {
  int64_t cases = 0, f32_specs = 0;
  for (const char *spec_text : active_specs()) f32_specs += parse(spec_text).dtype == attn::DType::f32;
  for (const char *cap : variant_caps())
    for (const char *spec_text : active_specs()) {
      CAPTURE(std::string(cap ? cap : "none"));
      REQUIRE(attn_set_max_isa(cap) == ATTN_OK);
      const attn::Spec spec = parse(spec_text);
      if (spec.dtype != attn::DType::f32) continue;
      const attn_kernel *kernel = find_kernel(spec);
      REQUIRE(kernel != nullptr);
      for (const Lengths &l : lengths) {
        const std::string spec_name = spec_text;
        CAPTURE(spec_name);
        CAPTURE(l.batch);
        CAPTURE(l.seq_q);
        CAPTURE(l.seq_k);
        const bool padded = l.seq_q % 2 == 1;
        std::mt19937 rng(static_cast<unsigned>(l.seq_q * 131 + l.seq_k));
        const Call forward = run_forward(spec, l, padded, rng);
        Call call = backward_call(spec, forward, padded, rng);
        const attn_status status = call.run(kernel);
        INFO("backward: ", status_name(status), ": ", last_error());
        REQUIRE(status == ATTN_OK);
        const Reference r = reference_of(spec, call);
        check_gradient(call, "dq", r.exact.dq, r.naive.dq);
        check_gradient(call, "dk", r.exact.dk, r.naive.dk);
        check_gradient(call, "dv", r.exact.dv, r.naive.dv);
        if (spec.score_bias_grad) check_gradient(call, "dscore_bias", r.exact.dlogit, r.naive.dlogit);
        ++cases;
      }
      REQUIRE(attn_set_max_isa(nullptr) == ATTN_OK);
    }
  CHECK(cases >= f32_specs * static_cast<int64_t>(std::size(lengths)));
}

// A gradient of 16-bit storage, widened, against the exact one: the low-precision pass rule,
// max |g - exact| <= 2 max |round(naive fp32) - exact| + 1e-5, no NaN, padding untouched.
void check_low_precision_gradient(attn::DType dtype, const BitsTensor &got, const std::vector<double> &exact,
                                  const std::vector<float> &naive, const char *name) {
  Tensor widened(got.shape(), false, 0.0f);
  for (int64_t n = 0; n < got.elements(); ++n) widened.logical(n) = from_bits(dtype, got.logical(n));
  Expected e;
  e.exact = exact;
  for (float x : naive) e.naive.push_back(round_to(dtype, x));
  const Comparison c = compare(widened, e);
  const std::string gradient = name;
  CAPTURE(gradient);
  CAPTURE(c);
  CHECK(c.pass());
  CHECK(got.padding_intact());
}

TEST_CASE("f16 and bf16 backward kernels match the reference on the rounded inputs") {
  int64_t cases = 0, low_precision_specs = 0;
  for (const char *spec_text : active_specs()) {
    const attn::Spec spec = parse(spec_text);
    if (spec.dtype == attn::DType::f32) continue;
    ++low_precision_specs;
    for (const Lengths &l : lengths) {
      const std::string spec_name = spec_text;
      CAPTURE(spec_name);
      CAPTURE(l.seq_q);
      CAPTURE(l.seq_k);
      const bool padded = l.seq_k % 2 == 1;
      std::mt19937 rng(static_cast<unsigned>(l.seq_q * 7 + l.seq_k));
      const attn::Spec forward = forward_of(spec);
      Call f32 = make_core_call(forward, l.batch, l.seq_q, l.seq_k, padded, rng);
      add_runtime_inputs(forward, f32, l.batch, l.seq_q, l.seq_k, padded, MaskShape::b_one_sq_sk, rng);
      Call call = storage_call(forward, f32);  // rounds f32's q, k and v in place
      REQUIRE(call.run(find_kernel(forward)) == ATTN_OK);
      // dout rounded to the dtype, for the kernel (bits) and the references (its values).
      Tensor dout(f32.tensors.at("out").shape(), padded, NAN);
      dout.fill_normal(rng);
      BitsTensor dout_bits(dout.shape(), dout.strides(), to_bits(spec.dtype, NAN));
      for (int64_t n = 0; n < dout.elements(); ++n) {
        dout_bits.logical(n) = to_bits(spec.dtype, dout.logical(n));
        dout.logical(n) = from_bits(spec.dtype, dout_bits.logical(n));
      }
      call.bits_tensors.emplace("dout", dout_bits);
      const uint16_t sentinel = to_bits(spec.dtype, output_sentinel);
      for (auto [input, gradient] : {std::pair{"q", "dq"}, std::pair{"k", "dk"}, std::pair{"v", "dv"}}) {
        const BitsTensor &x = call.bits_tensors.at(input);
        call.bits_tensors.emplace(gradient, BitsTensor(x.shape(), x.strides(), sentinel));
      }
      const attn_status status = call.run(find_kernel(spec));
      INFO("backward: ", status_name(status), ": ", last_error());
      REQUIRE(status == ATTN_OK);
      // The forward's out as the kernel stored it, widened: the naive implementation's D.
      const BitsTensor &out_bits = call.bits_tensors.at("out");
      Tensor out(out_bits.shape(), false, 0.0f);
      for (int64_t n = 0; n < out.elements(); ++n)
        out.logical(n) = from_bits(spec.dtype, out_bits.logical(n));
      f32.tensors.insert_or_assign("dout", dout);
      const ref::Options o = reference_options(spec, f32);
      auto view = [&](const char *name) { return f32.tensors.at(name).view(); };
      const auto exact = ref::core_backward_reference(view("q"), view("k"), view("v"), view("dout"), o);
      const auto naive =
          ref::core_backward_naive_f32(view("q"), view("k"), view("v"), view("dout"), o, out.view());
      check_low_precision_gradient(spec.dtype, call.bits_tensors.at("dq"), exact.dq, naive.dq, "dq");
      check_low_precision_gradient(spec.dtype, call.bits_tensors.at("dk"), exact.dk, naive.dk, "dk");
      check_low_precision_gradient(spec.dtype, call.bits_tensors.at("dv"), exact.dv, naive.dv, "dv");
      ++cases;
    }
  }
  CHECK(cases == low_precision_specs * static_cast<int64_t>(std::size(lengths)));
}

#ifndef ATTNC_BACKWARD_SHARE
// layout=varlen: sequences packed without padding, one with no queries and one with no keys.
TEST_CASE("layout=varlen: each packed sequence's gradients are its dense backward's") {
  const attn::Spec spec = parse(varlen_backward_spec), forward = forward_of(spec);
  const int heads = spec.heads, kv_heads = spec.kv_heads, d = spec.head_dim, dv = spec.head_dim_v;
  const std::vector<int> seq_q = {5, 0, 17, 3, 9}, seq_k = {7, 4, 17, 0, 30};
  const int batch = static_cast<int>(seq_q.size());
  IndexTensor cu_q({batch + 1}, false, 0), cu_k({batch + 1}, false, 0);
  for (int b = 0; b < batch; ++b) {
    cu_q.logical(b + 1) = cu_q.logical(b) + seq_q[static_cast<size_t>(b)];
    cu_k.logical(b + 1) = cu_k.logical(b) + seq_k[static_cast<size_t>(b)];
  }
  const int total_q = cu_q.logical(batch), total_k = cu_k.logical(batch);
  std::mt19937 rng(21);
  Call call;
  auto input = [&](const char *name, std::vector<int64_t> shape) {
    Tensor x(std::move(shape), false, NAN);
    x.fill_normal(rng);
    call.tensors.emplace(name, std::move(x));
  };
  input("q", {total_q, heads, d});
  input("k", {total_k, kv_heads, d});
  input("v", {total_k, kv_heads, dv});
  call.index_tensors.emplace("cu_seqlens_q", cu_q);
  call.index_tensors.emplace("cu_seqlens_k", cu_k);
  call.tensors.emplace("out", Tensor({total_q, heads, dv}, false, output_sentinel));
  call.tensors.emplace("lse", Tensor({total_q, heads}, false, output_sentinel));
  REQUIRE(call.run(find_kernel(forward)) == ATTN_OK);
  input("dout", {total_q, heads, dv});
  call.tensors.emplace("dq", Tensor({total_q, heads, d}, false, output_sentinel));
  call.tensors.emplace("dk", Tensor({total_k, kv_heads, d}, false, output_sentinel));
  call.tensors.emplace("dv", Tensor({total_k, kv_heads, dv}, false, output_sentinel));
  const attn_status status = call.run(find_kernel(spec));
  INFO("backward: ", status_name(status), ": ", last_error());
  REQUIRE(status == ATTN_OK);

  // The reference per sequence, on dense copies of its rows; zeros where a side is empty.
  ref::Options o;
  o.scale = scale_of(spec);
  o.mask = spec.mask;
  std::map<std::string, Expected> expected;
  for (const char *name : {"dq", "dk", "dv"}) {
    const Tensor &g = call.tensors.at(name);
    expected[name].exact.assign(static_cast<size_t>(g.elements()), 0.0);
    expected[name].naive.assign(static_cast<size_t>(g.elements()), 0.0f);
  }
  auto rows = [&](const char *name, int first, int count) {
    const Tensor &x = call.tensors.at(name);
    const int64_t row = x.elements() / x.shape()[0];
    std::vector<float> copy(static_cast<size_t>(count * row));
    for (int64_t n = 0; n < count * row; ++n) copy[static_cast<size_t>(n)] = x.logical(first * row + n);
    return copy;
  };
  auto place = [&](const char *name, int first, const std::vector<double> &exact,
                   const std::vector<float> &naive) {
    const Tensor &x = call.tensors.at(name);
    const int64_t row = x.elements() / x.shape()[0];
    for (size_t n = 0; n < exact.size(); ++n) {
      expected[name].exact[static_cast<size_t>(first * row) + n] = exact[n];
      expected[name].naive[static_cast<size_t>(first * row) + n] = naive[n];
    }
  };
  for (int b = 0; b < batch; ++b) {
    const int sq = seq_q[static_cast<size_t>(b)], sk = seq_k[static_cast<size_t>(b)];
    if (sq == 0 || sk == 0) continue;
    const int fq = cu_q.logical(b), fk = cu_k.logical(b);
    const std::vector<float> q = rows("q", fq, sq), k = rows("k", fk, sk), v = rows("v", fk, sk),
                             dout = rows("dout", fq, sq);
    const auto qv = ref::TensorView::dense(q.data(), {1, sq, heads, d});
    const auto kv = ref::TensorView::dense(k.data(), {1, sk, kv_heads, d});
    const auto vv = ref::TensorView::dense(v.data(), {1, sk, kv_heads, dv});
    const auto dv_view = ref::TensorView::dense(dout.data(), {1, sq, heads, dv});
    const auto exact = ref::core_backward_reference(qv, kv, vv, dv_view, o);
    const auto naive = ref::core_backward_naive_f32(qv, kv, vv, dv_view, o);
    place("dq", fq, exact.dq, naive.dq);
    place("dk", fk, exact.dk, naive.dk);
    place("dv", fk, exact.dv, naive.dv);
  }
  for (const char *name : {"dq", "dk", "dv"}) {
    const Comparison c = compare(call.tensors.at(name), expected[name]);
    const std::string gradient = name;
    CAPTURE(gradient);
    CAPTURE(c);
    CHECK(c.pass());
  }
}
#endif

TEST_CASE("a masked key's garbage reaches no gradient, and a masked key's dk and dv are 0") {
  // Padding: batch b keeps keys [0, key_lengths[b]); every k and v past it is NaN.
  const attn::Spec spec = parse(backward_specs[2]);
  const attn_kernel *kernel = find_kernel(spec);
  REQUIRE(kernel != nullptr);
  const Lengths l{2, 9, 21};
  std::mt19937 rng(11);
  const attn::Spec forward = forward_of(spec);
  Call call = make_core_call(forward, l.batch, l.seq_q, l.seq_k, false, rng);
  add_runtime_inputs(forward, call, l.batch, l.seq_q, l.seq_k, false, MaskShape::b_one_sq_sk, rng);
  IndexTensor &lengths_in = call.index_tensors.at("key_lengths");
  lengths_in.logical(0) = 13;
  lengths_in.logical(1) = 4;
  int64_t poisoned = 0;
  for (const char *name : {"k", "v"}) {
    Tensor &t = call.tensors.at(name);
    const int64_t per_key = t.elements() / (l.batch * l.seq_k);
    for (int64_t n = 0; n < t.elements(); ++n) {
      const int64_t key = (n / per_key) % l.seq_k, batch = n / (per_key * l.seq_k);
      if (key >= lengths_in.logical(batch)) {
        t.logical(n) = NAN;
        ++poisoned;
      }
    }
  }
  REQUIRE(poisoned > 0);
  REQUIRE(call.run(find_kernel(forward)) == ATTN_OK);
  Call backward = backward_call(spec, call, false, rng);
  REQUIRE(backward.run(kernel) == ATTN_OK);
  for (const char *name : {"dq", "dk", "dv"}) {
    const std::string gradient = name;
    CAPTURE(gradient);
    CHECK(nan_count(backward.tensors.at(name)) == 0);
  }
  int64_t masked_nonzero = 0, masked = 0;
  for (const char *name : {"dk", "dv"}) {
    const Tensor &t = backward.tensors.at(name);
    const int64_t per_key = t.elements() / (l.batch * l.seq_k);
    for (int64_t n = 0; n < t.elements(); ++n) {
      const int64_t key = (n / per_key) % l.seq_k, batch = n / (per_key * l.seq_k);
      if (key < lengths_in.logical(batch)) continue;
      ++masked;
      masked_nonzero += t.logical(n) != 0.0f;
    }
  }
  CHECK(masked > 0);
  CHECK(masked_nonzero == 0);
}

TEST_CASE("a NaN in a kept key propagates to the gradients of the rows that keep it") {
  const attn::Spec spec = parse(backward_specs[0]);  // causal, Sk > Sq: every row keeps key 0
  const Lengths l{1, 6, 10};
  std::mt19937 rng(12);
  Call forward = run_forward(spec, l, false, rng);
  forward.tensors.at("k").logical(0) = NAN;  // batch 0, key 0, head 0, d 0
  REQUIRE(forward.run(find_kernel(forward_of(spec))) == ATTN_OK);
  Call call = backward_call(spec, forward, false, rng);
  REQUIRE(call.run(find_kernel(spec)) == ATTN_OK);
  // Head 0's rows: all of dq is NaN there; every dk and dv of KV head 0 too.
  const Tensor &dq = call.tensors.at("dq");
  int64_t head0_nan = 0, head0 = 0;
  for (int64_t n = 0; n < dq.elements(); ++n) {
    if ((n / spec.head_dim) % spec.heads != 0) continue;
    ++head0;
    head0_nan += std::isnan(dq.logical(n));
  }
  CHECK(head0 > 0);
  CHECK(head0_nan == head0);
  CHECK(nan_count(call.tensors.at("dv")) > 0);
}

// L(q, k, v) = sum(out * dout) through the forward kernel.
double forward_loss(Call &forward, const attn_kernel *kernel, const Tensor &dout) {
  REQUIRE(forward.run(kernel) == ATTN_OK);
  const Tensor &out = forward.tensors.at("out");
  double sum = 0;
  for (int64_t n = 0; n < out.elements(); ++n) sum += double(out.logical(n)) * dout.logical(n);
  return sum;
}

TEST_CASE("directional derivatives of the forward kernel agree with dq, dk and dv") {
  for (const char *spec_text : active_specs()) {
    const attn::Spec spec = parse(spec_text);
    if (spec.dtype != attn::DType::f32) continue;  // fp32 forwards: their rounding is below the check's
    const std::string spec_name = spec_text;
    CAPTURE(spec_name);
    const Lengths l{2, 23, 31};
    std::mt19937 rng(13);
    Call forward = run_forward(spec, l, false, rng);
    Call call = backward_call(spec, forward, false, rng);
    REQUIRE(call.run(find_kernel(spec)) == ATTN_OK);
    const attn_kernel *forward_kernel = find_kernel(forward_of(spec));
    const Tensor &dout = call.tensors.at("dout");
    std::vector<std::pair<const char *, const char *>> pairs = {{"q", "dq"}, {"k", "dk"}, {"v", "dv"}};
    if (spec.score_bias_grad) pairs.push_back({"score_bias", "dscore_bias"});
    for (auto [input, gradient] : pairs) {
      const std::string name = input;
      CAPTURE(name);
      const Tensor x = forward.tensors.at(input), &grad = call.tensors.at(gradient);
      Tensor plus = x, minus = x;
      std::normal_distribution<float> normal;
      const float eps = 1e-2f;
      double predicted = 0;
      for (int64_t n = 0; n < x.elements(); ++n) {
        const float u = normal(rng);
        plus.logical(n) = x.logical(n) + eps * u;
        minus.logical(n) = x.logical(n) - eps * u;
        predicted += (double(plus.logical(n)) - double(minus.logical(n))) * grad.logical(n);
      }
      forward.tensors.at(input) = plus;
      const double up = forward_loss(forward, forward_kernel, dout);
      forward.tensors.at(input) = minus;
      const double down = forward_loss(forward, forward_kernel, dout);
      forward.tensors.at(input) = x;
      CAPTURE(up - down);
      CAPTURE(predicted);
      CHECK(std::abs((up - down) - predicted) <= 5e-3 * std::abs(predicted) + 1e-4);
    }
  }
}

}  // namespace

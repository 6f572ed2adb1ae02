// NaN and Inf in the inputs: a masked key never reaches an output whatever its k and v hold (garbage
// in a cache slot), and a NaN or Inf that the query or a kept key carries propagates to exactly the
// outputs the fp64 reference gives as NaN or Inf. Every pipeline: split keys (Sq <= 8), the
// whole-row and block cores, the packed copies (Sk >= 1024, 8 tasks), the block form.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_support.h"

namespace {

using namespace attnc::test;

constexpr float nan_value = std::numeric_limits<float>::quiet_NaN();
constexpr float inf_value = std::numeric_limits<float>::infinity();

struct Shape {
  int batch, seq_q, seq_k;
};

// Runs the call and checks out (and lse) against the reference; returns the finite outputs.
int64_t run_and_compare(const attn::Spec &spec, const attn_kernel *kernel, Call &call) {
  return run_and_check_nonfinite(spec, kernel, call);
}

// Element n of a [d0, d1, d2, d3] tensor in row-major order.
int64_t at4(const Tensor &t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
  const std::vector<int64_t> &s = t.shape();
  return ((i0 * s[1] + i1) * s[2] + i2) * s[3] + i3;
}

Call make_call(const attn::Spec &spec, const Shape &shape, std::mt19937 &rng) {
  const bool core = spec.form == attn::Form::core;
  Call call = core ? make_core_call(spec, shape.batch, shape.seq_q, shape.seq_k, shape.seq_k % 2 == 1, rng)
                   : make_block_call(spec, shape.batch, shape.seq_q, false, rng);
  add_runtime_inputs(spec, call, shape.batch, shape.seq_q, shape.seq_k, shape.seq_k % 2 == 1,
                     MaskShape::b_h_sq_sk, rng);
  return call;
}

// One key's k and v rows (every kv head, every element) hold garbage: NaN, +Inf and -Inf.
void corrupt_key(Call &call, int64_t batch, int64_t key) {
  Tensor &k = call.tensors.at("k");
  Tensor &v = call.tensors.at("v");
  const float garbage[3] = {nan_value, inf_value, -inf_value};
  for (int64_t g = 0; g < k.shape()[2]; ++g) {
    for (int64_t d = 0; d < k.shape()[3]; ++d) k.logical(at4(k, batch, key, g, d)) = garbage[(d + g) % 3];
    for (int64_t e = 0; e < v.shape()[3]; ++e) v.logical(at4(v, batch, key, g, e)) = garbage[(e + g + 1) % 3];
  }
}

const char *const core_specs[] = {
    "heads=2 head_dim=16 mask=window(5,3)",
    "heads=1 head_dim=32 mask=causal",
    "heads=2 head_dim=16 mask=global(4)",
    "heads=2 head_dim=32 mask=padding",
    "heads=2 head_dim=16 mask=document",
    "heads=2 head_dim=32 mask=tensor",
    "heads=2 head_dim=16 mask=causal|prefix",
    "heads=2 head_dim=16 mask=(window(8,8)|global(4))&padding",
    "heads=2 kv_heads=1 head_dim=16 mask=causal&padding",
    "heads=2 head_dim=16 mask=causal&padding softcap=2 alibi=true score_bias=tensor lse=true",
    "heads=2 head_dim=32 mask=(window(8,8)|global(4))&padding lse=true",
    "heads=2 head_dim=16 mask=none lse=true",
};

// Split keys (Sq <= 8), the main cores, the packed copies (Sk >= 1024 with 8 tasks).
const Shape core_shapes[] = {{2, 3, 37}, {2, 45, 70}, {4, 21, 1031}};

TEST_CASE("a masked key's garbage k and v never reach an output") {
  int64_t finite_rows_with_garbage_in_reach = 0;
  for (const char *text : core_specs) {
    const attn::Spec spec = parse(text);
    const attn_kernel *kernel = find_kernel(spec);
    REQUIRE(kernel != nullptr);
    for (const Shape &shape : core_shapes) {
      for (int trial = 0; trial < 3; ++trial) {
        std::mt19937 rng(static_cast<unsigned>(shape.seq_k * 7 + trial));
        Call call = make_call(spec, shape, rng);
        // Keys at the end (a cache's unused slots, masked by padding or past a window), in the
        // middle (masked for the rows before them under causal) and at the start.
        const int64_t key = trial == 0 ? shape.seq_k - 1 : trial == 1 ? shape.seq_k / 2 : 0;
        for (int64_t b = 0; b < shape.batch; ++b) corrupt_key(call, b, key);
        CAPTURE(text);
        CAPTURE(shape.batch);
        CAPTURE(shape.seq_q);
        CAPTURE(shape.seq_k);
        CAPTURE(key);
        finite_rows_with_garbage_in_reach += run_and_compare(spec, kernel, call);
      }
    }
  }
  CHECK(finite_rows_with_garbage_in_reach > 0);
}

TEST_CASE("NaN and Inf that the query or a kept key carries propagate as in the reference") {
  for (const char *text : core_specs) {
    const attn::Spec spec = parse(text);
    const attn_kernel *kernel = find_kernel(spec);
    REQUIRE(kernel != nullptr);
    for (const Shape &shape : core_shapes) {
      std::mt19937 rng(static_cast<unsigned>(shape.seq_k * 13 + shape.seq_q));
      Call call = make_call(spec, shape, rng);
      Tensor &q = call.tensors.at("q");
      Tensor &k = call.tensors.at("k");
      Tensor &v = call.tensors.at("v");
      // NaN in one query element; NaN in one key element and +Inf in one value element of keys
      // early in the sequence (kept by most rows of most masks); a key whose scores overflow.
      q.logical(at4(q, 0, shape.seq_q - 1, 0, 1)) = nan_value;
      k.logical(at4(k, shape.batch - 1, 1, 0, 2)) = nan_value;
      v.logical(at4(v, 0, 2, 0, 3)) = inf_value;
      for (int64_t d = 0; d < k.shape()[3]; ++d) k.logical(at4(k, shape.batch - 1, 3, 0, d)) = 3e37f;
      CAPTURE(text);
      CAPTURE(shape.batch);
      CAPTURE(shape.seq_q);
      CAPTURE(shape.seq_k);
      run_and_compare(spec, kernel, call);
    }
  }
}

TEST_CASE("block form: a NaN token reaches the rows that keep it, and only those") {
  const char *const block_specs[] = {
      "d_model=32 heads=2 form=block mask=padding",
      "d_model=32 heads=2 form=block qkv=fused proj_bias=true mask=causal|prefix",
      "d_model=64 heads=2 form=block mask=(window(8,8)|global(4))&padding lse=true",
  };
  int64_t finite = 0;
  for (const char *text : block_specs) {
    const attn::Spec spec = parse(text);
    const attn_kernel *kernel = find_kernel(spec);
    REQUIRE(kernel != nullptr);
    for (const Shape &shape : {Shape{2, 5, 5}, Shape{2, 40, 40}}) {
      for (const int token : {shape.seq_q - 1, shape.seq_q / 2}) {
        std::mt19937 rng(static_cast<unsigned>(shape.seq_q + token));
        Call call = make_call(spec, shape, rng);
        Tensor &x = call.tensors.at("x");
        for (int64_t b = 0; b < shape.batch; ++b)
          for (int64_t c = 0; c < spec.d_model; ++c)
            x.logical((b * shape.seq_q + token) * spec.d_model + c) = c % 2 ? nan_value : inf_value;
        CAPTURE(text);
        CAPTURE(shape.seq_q);
        CAPTURE(token);
        finite += run_and_compare(spec, kernel, call);
      }
    }
  }
  CHECK(finite > 0);
}

}  // namespace

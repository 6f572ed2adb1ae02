// Mixed head groups in the block form (issue 24) against the fp64 reference: each group its own
// head size, scale and GQA, rows of the projections group by group; odd lengths, masks, lse,
// biases, fused and separate qkv, head-indexed inputs, bf16 and f16; and the shapes the kernel
// insists on.
#include <doctest/doctest.h>

#include <iterator>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "attn/validate.h"
#include "head_groups_specs.h"
#include "kernel_test_support.h"
#include "low_precision.h"

namespace {

using namespace attnc::test;

struct GroupsCase {
  std::string spec;
  int batch, seq;
  MaskShape mask_shape;
  bool padded;  // outer strides larger than dense
};

std::ostream &operator<<(std::ostream &os, const GroupsCase &c) {
  return os << "{\"" << c.spec << "\", B=" << c.batch << ", S=" << c.seq << ", mask " << c.mask_shape
            << (c.padded ? ", padded strides}" : ", dense}");
}

// The suite's specs: all of them, or the GPU variant's (kernels_opencl_head_groups_test).
#ifdef ATTNC_HEAD_GROUPS_GPU
constexpr auto &suite_specs = head_groups_gpu_specs;
#else
constexpr auto &suite_specs = head_groups_specs;
#endif

Call make_case_call(const GroupsCase &c, const attn::Spec &spec) {
  std::mt19937 rng(static_cast<unsigned>(c.batch * 7919 + c.seq * 31 + c.spec.size()));
  Call call = make_block_call(spec, c.batch, c.seq, c.padded, rng);
  add_runtime_inputs(spec, call, c.batch, c.seq, c.seq, c.padded, c.mask_shape, rng);
  return call;
}

TEST_CASE("the head-group specs are the linked kernels") {
  check_spec_list(spec_list_drift(std::vector<std::string>(std::begin(suite_specs), std::end(suite_specs))),
                  "head_groups_specs.h");
}

TEST_CASE("block kernels with head groups match the fp64 reference") {
  constexpr MaskShape shapes[] = {MaskShape::h_sq_sk, MaskShape::b_h_sq_sk, MaskShape::one_h_sq_sk,
                                  MaskShape::sq_sk};
  int n = 0;
  for (const char *text : suite_specs) {
    const attn::Spec spec = parse(text);
    const attn_kernel *kernel = find_kernel(spec);
    REQUIRE(kernel != nullptr);
    for (int seq : {1, 7, 33}) {
      const GroupsCase c{text, 1 + n % 3, seq, shapes[n % 4], n % 2 == 1};
      ++n;
      CAPTURE(c);
      Call call = make_case_call(c, spec);
      if (spec.dtype == attn::DType::f32) {
        run_and_check(spec, kernel, call);
      } else {
        check_low_precision(spec, run_low_precision(spec, kernel, call));
      }
    }
  }
}

// The seed's layer (4x128+8x64, causal, lse) at B = 1, S = 7, its kernel and a call.
struct SeedLayer {
  attn::Spec spec;
  const attn_kernel *kernel;
  Call call;
};
SeedLayer seed_layer() {
  const attn::Spec spec = parse(suite_specs[0]);
  const attn_kernel *kernel = find_kernel(spec);
  REQUIRE(kernel != nullptr);
  return {spec, kernel, make_case_call({suite_specs[0], 1, 7, MaskShape::sq_sk, false}, spec)};
}

TEST_CASE("each group has its own scale") {
  // Against a reference with one scale for every group the kernel fails: the comparisons above
  // tell per-group scales apart.
  auto [spec, kernel, call] = seed_layer();
  REQUIRE(call.run(kernel) == ATTN_OK);
  const Comparison right = compare(call.tensors.at("out"), expected_result(spec, call));
  CHECK(right.pass());
  // 1/sqrt(64) for every group: right for the 8 heads of 64, wrong for the 4 of 128.
  const Comparison wrong = compare(call.tensors.at("out"), expected_result(spec.with_scale(0.125f), call));
  CHECK_FALSE(wrong.pass());
}

TEST_CASE("weights shaped for the widest head everywhere are refused, naming the tensor") {
  auto [spec, kernel, call] = seed_layer();
  // 12 heads of 128 rows: not what the groups hold (4·128 + 8·64 = 1024 rows).
  CHECK(attn::query_width(spec) == 1024);
  call.tensors.at("w_q") = Tensor({12 * 128, spec.d_model}, false, 0.0f);
  call.tensors.at("out").fill(output_sentinel);
  const attn_status status = call.run(kernel);
  CHECK(status == ATTN_ERR_SHAPE);
  CHECK(last_error().find("w_q") != std::string::npos);
  CHECK(call.tensors.at("out").all_padding());
}

}  // namespace

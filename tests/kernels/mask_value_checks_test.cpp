// key_lengths and prefix_lengths outside [0, Sk]: ATTN_ERR_INVALID_VALUE with a message naming the
// tensor, out and lse untouched. The kernels check these values themselves (Halide require()).
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "kernel_test_support.h"
#include "mask_specs.h"

namespace {

using namespace attnc::test;

constexpr int batch = 3, seq_k = 33;
// 17 queries run the tiled core, 1 the split-keys core (decode): both check the values.
constexpr int core_query_lengths[] = {17, 1};
constexpr int block_seq = 17;

bool outputs_untouched(const Call &call) {
  for (const char *name : {"out", "lse"})
    if (auto it = call.tensors.find(name); it != call.tensors.end() && !it->second.all_padding())
      return false;
  return true;
}

void check_one(const char *spec_text, int seq_q, const char *tensor, int batch_entry, int value) {
  CAPTURE(spec_text);
  CAPTURE(seq_q);
  CAPTURE(tensor);
  CAPTURE(batch_entry);
  CAPTURE(value);
  const attn::Spec spec = parse(spec_text);
  const attn_kernel *kernel = find_kernel(spec);
  REQUIRE(kernel != nullptr);
  std::mt19937 rng(5);
  const bool core = spec.form == attn::Form::core;
  const int sk = core ? seq_k : block_seq;
  Call call = core ? make_core_call(spec, batch, seq_q, sk, false, rng)
                   : make_block_call(spec, batch, seq_q, false, rng);
  add_runtime_inputs(spec, call, batch, seq_q, sk, false, MaskShape::sq_sk, rng);
  call.index_tensors.at(tensor).logical(batch_entry) = value;
  const attn_status status = call.run(kernel);
  const std::string message = last_error();
  CAPTURE(message);
  CHECK_MESSAGE(status == ATTN_ERR_INVALID_VALUE, "got ", status_name(status));
  CHECK(message.find(tensor) != std::string::npos);
  CHECK(outputs_untouched(call));
}

void check_bad_value(const char *spec_text, const char *tensor, int batch_entry, int value) {
  if (parse(spec_text).form == attn::Form::core) {
    for (int seq_q : core_query_lengths) check_one(spec_text, seq_q, tensor, batch_entry, value);
  } else {
    check_one(spec_text, block_seq, tensor, batch_entry, value);
  }
}

TEST_CASE("key_lengths out of [0, Sk] is ATTN_ERR_INVALID_VALUE") {
  for (const char *spec :
       {"heads=2 head_dim=32 mask=(window(8,8)|global(4))&padding lse=true",
        "heads=2 head_dim=32 mask=padding", "heads=2 head_dim=16 mask=(causal|prefix)&padding",
        "d_model=32 heads=2 form=block mask=padding",
        "d_model=64 heads=2 form=block mask=(window(8,8)|global(4))&padding lse=true"}) {
    const int sk = parse(spec).form == attn::Form::core ? seq_k : block_seq;
    check_bad_value(spec, "key_lengths", 0, -1);
    check_bad_value(spec, "key_lengths", 2, sk + 1);
    check_bad_value(spec, "key_lengths", 1, 1 << 30);
    check_bad_value(spec, "key_lengths", 1, -2147483647 - 1);
  }
}

TEST_CASE("prefix_lengths out of [0, Sk] is ATTN_ERR_INVALID_VALUE") {
  for (const char *spec :
       {"heads=2 head_dim=16 mask=prefix", "heads=2 head_dim=16 mask=(causal|prefix)&padding",
        "heads=2 head_dim=16 mask=prefix&document|window(1,-1)&tensor",
        "d_model=32 heads=2 form=block qkv=fused proj_bias=true mask=causal|prefix"}) {
    const int sk = parse(spec).form == attn::Form::core ? seq_k : block_seq;
    check_bad_value(spec, "prefix_lengths", 0, -1);
    check_bad_value(spec, "prefix_lengths", 2, sk + 1);
    check_bad_value(spec, "prefix_lengths", 1, 1 << 30);
  }
}

}  // namespace

// Bad runtime inputs of masks and modifiers: a named status, a message, and out and lse untouched.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_support.h"
#include "mask_specs.h"

namespace {

using namespace attnc::test;

constexpr int batch = 2, seq_q = 17, seq_k = 33;

// A valid call of spec with every runtime input it uses.
Call good_call(const attn::Spec &spec) {
  std::mt19937 rng(99);
  const bool core = spec.form == attn::Form::core;
  const int sk = core ? seq_k : seq_q;
  Call call = core ? make_core_call(spec, batch, seq_q, sk, false, rng)
                   : make_block_call(spec, batch, seq_q, false, rng);
  add_runtime_inputs(spec, call, batch, seq_q, sk, false, MaskShape::b_h_sq_sk, rng);
  return call;
}

// Every output element (padding and guards included) still the sentinel.
bool outputs_untouched(const Call &call) {
  for (const char *name : {"out", "lse"})
    if (auto it = call.tensors.find(name); it != call.tensors.end() && !it->second.all_padding())
      return false;
  return true;
}

struct BadInput {
  std::string what;
  const char *spec;
  std::function<void(Call &)> spoil;
  attn_status expected;
  std::string named;  // the tensor the message must name
};

template <class Map>
void reshape(Map &tensors, const std::string &name, std::vector<int64_t> shape) {
  using T = typename Map::mapped_type;
  tensors.erase(name);
  T t(std::move(shape), false, {});
  t.fill({});
  tensors.emplace(name, std::move(t));
}

const char *const with_tensor_and_modifiers =
    "heads=2 kv_heads=1 head_dim=16 mask=(window(16,0)|global(2))&tensor mask_block=8 softcap=3 alibi=true "
    "score_bias=tensor lse=true";
const char *const with_prefix_document_tensor =
    "heads=2 head_dim=16 mask=prefix&document|window(1,-1)&tensor";
const char *const with_padding =
    "heads=2 head_dim=16 mask=causal&padding softcap=2 alibi=true score_bias=tensor lse=true";
const char *const block_with_document =
    "d_model=32 heads=2 form=block proj_bias=true mask=document&causal softcap=2 alibi=true "
    "score_bias=tensor lse=true";

std::vector<BadInput> bad_inputs() {
  const int h = 2;
  return {
      {"mask [Sq+1, Sk]", with_tensor_and_modifiers,
       [](Call &c) {
         reshape(c.byte_tensors, "mask", {seq_q + 1, seq_k});
       },
       ATTN_ERR_SHAPE, "'mask'"},
      {"mask [B, H, Sq, Sk-1]", with_tensor_and_modifiers,
       [](Call &c) {
         reshape(c.byte_tensors, "mask", {batch, h, seq_q, seq_k - 1});
       },
       ATTN_ERR_SHAPE, "'mask'"},
      {"mask [B+1, Sq, Sk]", with_prefix_document_tensor,
       [](Call &c) {
         reshape(c.byte_tensors, "mask", {batch + 1, seq_q, seq_k});
       },
       ATTN_ERR_SHAPE, "'mask'"},
      {"mask [B, H+1, Sq, Sk]: H is fixed", with_prefix_document_tensor,
       [](Call &c) {
         reshape(c.byte_tensors, "mask", {batch, h + 1, seq_q, seq_k});
       },
       ATTN_ERR_SHAPE, "'mask'"},
      {"mask [Sk]: rank 1", with_prefix_document_tensor,
       [](Call &c) { reshape(c.byte_tensors, "mask", {seq_k}); }, ATTN_ERR_RANK, "'mask'"},
      {"mask as f32", with_tensor_and_modifiers,
       [](Call &c) {
         c.byte_tensors.erase("mask");
         reshape(c.tensors, "mask", {seq_q, seq_k});
       },
       ATTN_ERR_DTYPE, "'mask'"},
      {"score_bias [Sq, Sk+1]", with_tensor_and_modifiers,
       [](Call &c) {
         reshape(c.tensors, "score_bias", {seq_q, seq_k + 1});
       },
       ATTN_ERR_SHAPE, "'score_bias'"},
      {"segment_ids_q [B, Sq+1]", with_prefix_document_tensor,
       [](Call &c) {
         reshape(c.index_tensors, "segment_ids_q", {batch, seq_q + 1});
       },
       ATTN_ERR_SHAPE, "'segment_ids_q'"},
      {"segment_ids_k [B, Sk-1]", with_prefix_document_tensor,
       [](Call &c) {
         reshape(c.index_tensors, "segment_ids_k", {batch, seq_k - 1});
       },
       ATTN_ERR_SHAPE, "'segment_ids_k'"},
      {"segment_ids_k [B, Sq]: the query length", with_prefix_document_tensor,
       [](Call &c) {
         reshape(c.index_tensors, "segment_ids_k", {batch, seq_q});
       },
       ATTN_ERR_SHAPE, "'segment_ids_k'"},
      {"segment_ids_q [B, S+1] (block)", block_with_document,
       [](Call &c) {
         reshape(c.index_tensors, "segment_ids_q", {batch, seq_q + 1});
       },
       ATTN_ERR_SHAPE, "'segment_ids_q'"},
      {"segment_ids_k as f32", with_prefix_document_tensor,
       [](Call &c) {
         c.index_tensors.erase("segment_ids_k");
         reshape(c.tensors, "segment_ids_k", {batch, seq_k});
       },
       ATTN_ERR_DTYPE, "'segment_ids_k'"},
      {"alibi_slopes missing", with_tensor_and_modifiers, [](Call &c) { c.tensors.erase("alibi_slopes"); },
       ATTN_ERR_MISSING_TENSOR, "'alibi_slopes'"},
      {"alibi_slopes missing (block)", block_with_document, [](Call &c) { c.tensors.erase("alibi_slopes"); },
       ATTN_ERR_MISSING_TENSOR, "'alibi_slopes'"},
      {"alibi_slopes [H+1]", with_padding, [](Call &c) { reshape(c.tensors, "alibi_slopes", {h + 1}); },
       ATTN_ERR_SHAPE, "'alibi_slopes'"},
      {"score_bias missing", with_padding, [](Call &c) { c.tensors.erase("score_bias"); },
       ATTN_ERR_MISSING_TENSOR, "'score_bias'"},
      {"key_lengths as f32", with_padding,
       [](Call &c) {
         c.index_tensors.erase("key_lengths");
         reshape(c.tensors, "key_lengths", {batch});
       },
       ATTN_ERR_DTYPE, "'key_lengths'"},
      {"key_lengths as u8", with_padding,
       [](Call &c) {
         c.index_tensors.erase("key_lengths");
         reshape(c.byte_tensors, "key_lengths", {batch});
       },
       ATTN_ERR_DTYPE, "'key_lengths'"},
      {"key_lengths [B+1]", with_padding,
       [](Call &c) { reshape(c.index_tensors, "key_lengths", {batch + 1}); }, ATTN_ERR_SHAPE,
       "'key_lengths'"},
      {"key_lengths missing", with_padding, [](Call &c) { c.index_tensors.erase("key_lengths"); },
       ATTN_ERR_MISSING_TENSOR, "'key_lengths'"},
      {"prefix_lengths missing", with_prefix_document_tensor,
       [](Call &c) { c.index_tensors.erase("prefix_lengths"); }, ATTN_ERR_MISSING_TENSOR, "'prefix_lengths'"},
      {"lse missing", with_padding, [](Call &c) { c.tensors.erase("lse"); }, ATTN_ERR_MISSING_TENSOR,
       "'lse'"},
      {"lse [B, Sq, H+1]", with_tensor_and_modifiers,
       [](Call &c) {
         c.tensors.erase("lse");
         c.tensors.emplace("lse", Tensor({batch, seq_q, h + 1}, false, output_sentinel));
       },
       ATTN_ERR_SHAPE, "'lse'"},
      {"a mask tensor the spec does not take", with_padding,
       [](Call &c) {
         reshape(c.byte_tensors, "mask", {seq_q, seq_k});
       },
       ATTN_ERR_UNKNOWN_TENSOR, "'mask'"},
  };
}

TEST_CASE("the unspoiled calls run") {
  for (const char *spec_text :
       {with_tensor_and_modifiers, with_prefix_document_tensor, with_padding, block_with_document}) {
    CAPTURE(spec_text);
    const attn::Spec spec = parse(spec_text);
    const attn_kernel *kernel = find_kernel(spec);
    REQUIRE(kernel != nullptr);
    Call call = good_call(spec);
    const attn_status status = call.run(kernel);
    INFO(status_name(status), ": ", last_error());
    CHECK(status == ATTN_OK);
    CHECK(compare(call.tensors.at("out"), expected_result(spec, call)).pass());
  }
}

TEST_CASE("bad mask and modifier inputs return their status, say why, and leave out and lse untouched") {
  for (const BadInput &bad : bad_inputs()) {
    CAPTURE(bad.what);
    CAPTURE(bad.spec);
    const attn::Spec spec = parse(bad.spec);
    const attn_kernel *kernel = find_kernel(spec);
    REQUIRE(kernel != nullptr);
    Call call = good_call(spec);
    bad.spoil(call);
    const attn_status status = call.run(kernel);
    const std::string message = last_error();
    CAPTURE(message);
    CHECK_MESSAGE(status == bad.expected, "got ", status_name(status), ", expected ",
                  status_name(bad.expected));
    CHECK(!message.empty());
    CHECK(message.find(bad.named) != std::string::npos);
    CHECK(outputs_untouched(call));
  }
}

}  // namespace

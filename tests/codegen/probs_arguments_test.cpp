// probs=true adds one output, probs [B,H,Sq,Sk] f32, after every other argument; without it the
// argument list is what it was.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "attn/spec_text.h"
#include "attn/validate.h"
#include "attnc/arguments.h"

namespace {

attn::Spec resolved(const char *text) {
  const attn::ParseResult parsed = attn::parse_spec(text);
  REQUIRE(parsed.ok);
  return attn::resolve(parsed.spec);
}

std::string describe(const attnc::ArgSpec &a) {
  std::string out = a.name + ":" + a.dtype + (a.is_output ? ":out[" : ":in[");
  for (const attnc::ArgDim &d : a.dims) out += (d.fixed > 0 ? std::to_string(d.fixed) : d.symbol) + ",";
  return out + "]" + std::to_string(a.broadcast_dims) + "/" + std::to_string(a.min_rank);
}

std::vector<std::string> describe(const std::vector<attnc::ArgSpec> &args) {
  std::vector<std::string> out;
  for (const attnc::ArgSpec &a : args) out.push_back(describe(a));
  return out;
}

TEST_CASE("the argument list without probs, and with it") {
  struct Case {
    const char *spec;
    std::vector<std::string> plain;  // as before probs existed
    const char *probs;               // the one output probs adds, last
  };
  const Case cases[] = {
      {"heads=2 kv_heads=1 head_dim=16 mask=causal&padding",
       {"q:f32:in[B,Sq,2,16,]0/0", "k:f32:in[B,Sk,1,16,]0/0", "v:f32:in[B,Sk,1,16,]0/0",
        "key_lengths:i32:in[B,]0/0", "out:f32:out[B,Sq,2,16,]0/0"},
       "probs:f32:out[B,2,Sq,Sk,]0/0"},
      {"heads=3 head_dim=8 mask=tensor score_bias=tensor lse=true dtype=bf16",
       {"q:bf16:in[B,Sq,3,8,]0/0", "k:bf16:in[B,Sk,3,8,]0/0", "v:bf16:in[B,Sk,3,8,]0/0",
        "mask:u8:in[B,3,Sq,Sk,]3/2", "score_bias:f32:in[B,3,Sq,Sk,]3/2", "out:bf16:out[B,Sq,3,8,]0/0",
        "lse:f32:out[B,Sq,3,]0/0"},
       "probs:f32:out[B,3,Sq,Sk,]0/0"},
      {"d_model=32 heads=2 form=block qkv=fused proj_bias=true mask=padding",
       {"x:f32:in[B,S,32,]0/0", "w_qkv:f32:in[96,32,]0/0", "b_qkv:f32:in[96,]0/0", "w_o:f32:in[32,32,]0/0",
        "b_o:f32:in[32,]0/0", "key_lengths:i32:in[B,]0/0", "out:f32:out[B,S,32,]0/0"},
       "probs:f32:out[B,2,S,S,]0/0"},
  };
  for (const Case &c : cases) {
    CAPTURE(c.spec);
    attn::Spec spec = resolved(c.spec);
    CHECK(describe(attnc::kernel_arguments(spec)) == c.plain);
    std::vector<std::string> with_probs = c.plain;
    with_probs.push_back(c.probs);
    CHECK(describe(attnc::kernel_arguments(spec.with_probs())) == with_probs);
  }
}

}  // namespace

// kernel_id_test.cpp: kernel ids: exact forms, what is and is not part of them, distinctness, length.
#include "attn/kernel_id.h"

#include <doctest/doctest.h>

#include <cctype>
#include <map>
#include <string>

#include "spec_cases.h"

namespace {

constexpr attn::Spec gpt2 = attn::attention().with_d_model(768).with_heads(12);
constexpr attn::Spec core64 = attn::attention().with_heads(8).with_head_dim(64);

bool is_c_identifier(const std::string &s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (const char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

TEST_CASE("the documented examples") {
  CHECK(attn::kernel_id(attn::attention().with_heads(12).with_head_dim(64).causal()) ==
        "attn_core_h12_kv12_d64_f32_causal");
  CHECK(attn::kernel_id(gpt2.block().fused_qkv().with_proj_bias().causal()) ==
        "attn_block_m768_h12_kv12_d64_f32_causal_fused_bias");
}

TEST_CASE("each field's part of the id") {
  CHECK(attn::kernel_id(gpt2) == "attn_core_h12_kv12_d64_f32");
  CHECK(attn::kernel_id(gpt2.block()) == "attn_block_m768_h12_kv12_d64_f32_sep");
  CHECK(attn::kernel_id(gpt2.block().with_proj_bias()) == "attn_block_m768_h12_kv12_d64_f32_sep_bias");
  CHECK(attn::kernel_id(gpt2.with_kv_heads(4)) == "attn_core_h12_kv4_d64_f32");
  CHECK(attn::kernel_id(core64.with_head_dim_v(128)) == "attn_core_h8_kv8_d64_dv128_f32");
  CHECK(attn::kernel_id(gpt2.with_dtype(attn::DType::bf16)) == "attn_core_h12_kv12_d64_bf16");
  CHECK(attn::kernel_id(gpt2.block().with_dtype(attn::DType::f16)) == "attn_block_m768_h12_kv12_d64_f16_sep");
  CHECK(attn::kernel_id(gpt2.with_scale(0.1f)) == "attn_core_h12_kv12_d64_f32_s3dcccccd");
  CHECK(attn::kernel_id(gpt2.block().fused_qkv().with_scale(2.0f)) ==
        "attn_block_m768_h12_kv12_d64_f32_fused_s40000000");
}

TEST_CASE("mask slugs") {
  CHECK(attn::kernel_id(core64.with_mask(attn::window(128, 0))) == "attn_core_h8_kv8_d64_f32_win128x0");
  CHECK(attn::kernel_id(core64.with_mask(attn::window(-1, 4))) == "attn_core_h8_kv8_d64_f32_wininfx4");
  CHECK(attn::kernel_id(core64.with_mask(attn::window(128, 0) & attn::causal())) ==
        "attn_core_h8_kv8_d64_f32_and_win128x0_causal");
  CHECK(attn::kernel_id(core64.with_mask((attn::window(256, 256) | attn::causal()) & attn::window(-1, 4))) ==
        "attn_core_h8_kv8_d64_f32_and_or_win256x256_causal_wininfx4");
}

TEST_CASE("slugs of the newer mask terms") {
  const std::string base = "attn_core_h8_kv8_d64_f32_";
  CHECK(attn::kernel_id(core64.with_mask(attn::global_tokens(4))) == base + "glob4");
  CHECK(attn::kernel_id(core64.with_mask(attn::random_blocks(64, 3, 42))) == base + "rnd64x3s42");
  CHECK(attn::kernel_id(core64.with_mask(attn::random_blocks(64, 3, 4294967295u))) ==
        base + "rnd64x3s4294967295");
  CHECK(attn::kernel_id(core64.with_mask(attn::padding())) == base + "pad");
  CHECK(attn::kernel_id(core64.with_mask(attn::prefix())) == base + "prefix");
  CHECK(attn::kernel_id(core64.with_mask(attn::document())) == base + "doc");
  CHECK(attn::kernel_id(core64.with_mask(attn::mask_tensor())) == base + "tensor");
  CHECK(attn::kernel_id(core64.with_mask((attn::window(256, 256) | attn::global_tokens(4)) &
                                         attn::padding())) == base + "and_or_win256x256_glob4_pad");
}

TEST_CASE("parts for mask_block and the score modifiers, only when set") {
  CHECK(attn::kernel_id(core64.causal().with_mask_block(64)) == "attn_core_h8_kv8_d64_f32_causal_mb64");
  CHECK(attn::kernel_id(gpt2.with_softcap(50.0f)) == "attn_core_h12_kv12_d64_f32_cap42480000");
  CHECK(attn::kernel_id(gpt2.with_alibi()) == "attn_core_h12_kv12_d64_f32_alibi");
  CHECK(attn::kernel_id(gpt2.with_score_bias()) == "attn_core_h12_kv12_d64_f32_bias_t");
  CHECK(attn::kernel_id(gpt2.with_lse()) == "attn_core_h12_kv12_d64_f32_lse");
  CHECK(attn::kernel_id(gpt2.with_probs()) == "attn_core_h12_kv12_d64_f32_probs");
  CHECK(attn::kernel_id(gpt2.with_lse().with_probs()) == "attn_core_h12_kv12_d64_f32_lse_probs");
  CHECK(attn::kernel_id(gpt2.causal().with_align(attn::Align::top_left)) == "attn_core_h12_kv12_d64_f32_causal_tl");
  // A run-time scale and cross-attention change the arguments: each has its own part.
  CHECK(attn::kernel_id(gpt2.causal().with_runtime_scale()) == "attn_core_h12_kv12_d64_f32_causal_rs");
  CHECK(attn::kernel_id(attn::attention().with_d_model(64).with_heads(2).block().with_cross_attention()) ==
        "attn_block_m64_h2_kv2_d32_f32_sep_cross");
  CHECK(attn::kernel_id(gpt2.causal().with_align(attn::Align::bottom_right)) == "attn_core_h12_kv12_d64_f32_causal");
  CHECK(attn::kernel_id(gpt2.block()
                            .with_proj_bias()
                            .causal()
                            .with_mask_block(128)
                            .with_scale(0.1f)
                            .with_softcap(30.0f)
                            .with_alibi()
                            .with_score_bias()
                            .with_lse()) ==
        "attn_block_m768_h12_kv12_d64_f32_causal_mb128_sep_bias_s3dcccccd_cap41f00000_alibi_bias_t_lse");
  // Switched off, they leave the id as it was.
  CHECK(attn::kernel_id(gpt2.with_alibi(false).with_score_bias(false).with_lse(false).with_probs(false)) ==
        "attn_core_h12_kv12_d64_f32");
}

TEST_CASE("specs that resolve alike share an id; the name is not part of it") {
  const std::string id = attn::kernel_id(gpt2.causal());
  CHECK(attn::kernel_id(attn::attention().with_heads(12).with_head_dim(64).causal()) == id);
  CHECK(attn::kernel_id(gpt2.with_kv_heads(12).with_head_dim_v(64).causal()) == id);
  CHECK(attn::kernel_id(gpt2.with_mask(attn::window(-1, 0))) == id);
  CHECK(attn::kernel_id(gpt2.causal().named("gpt2")) == id);
  CHECK(attn::kernel_id(gpt2.causal().with_scale(0.125f)) == id);  // the default scale, written out
}

TEST_CASE("ids over the table are distinct C identifiers of at most 120 characters") {
  std::map<std::string, const char *> seen;
  for (const attn_test::SpecCase &c : attn_test::spec_cases) {
    const std::string id = attn::kernel_id(c.spec);
    CAPTURE(c.label);
    CAPTURE(id);
    CHECK(is_c_identifier(id));
    CHECK(id.size() <= 120);
    const auto inserted = seen.emplace(id, c.label);
    const char *first_with_id = inserted.first->second;
    CAPTURE(first_with_id);
    CHECK(inserted.second);
  }
}

TEST_CASE("long ids keep 100 characters and a hash of the whole") {
  const attn::Mask wide = (attn::window(1000000, 2000000) | attn::window(3000000, 4000000)) &
                          (attn::window(5000000, 6000000) | attn::window(7000000, 8000000));
  const std::string id = attn::kernel_id(core64.with_mask(wide & attn::causal()));
  CAPTURE(id);
  CHECK(id.size() == 117);
  CHECK(id.rfind("attn_core_h8_kv8_d64_f32_and_and_or_win1000000x2000000_win3000000x4000000_or_", 0) == 0);
  CHECK(id[100] == '_');
  CHECK(id.find_first_not_of("0123456789abcdef", 101) == std::string::npos);
  CHECK(attn::kernel_id(core64.with_mask(wide & attn::window(-1, 1))) != id);  // differs after 100 chars
}

}  // namespace

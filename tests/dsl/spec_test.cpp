// spec_test.cpp: constexpr construction of specs, resolved defaults, and the mask algebra.
#include "attn/spec.h"

#include <doctest/doctest.h>

#include <string>

#include "attn/validate.h"
#include "test_support.h"

namespace {

constexpr attn::Spec gpt2 = attn::attention().named("gpt2").with_d_model(768).with_heads(12).causal();

// Construction and resolution are usable in constant expressions.
static_assert(gpt2.d_model == 768 && gpt2.heads == 12 && gpt2.kv_heads == 0 && gpt2.head_dim == 0);
static_assert(attn::is_causal(gpt2.mask));
static_assert(attn::check_spec(gpt2).ok());
static_assert(attn::resolve(gpt2).head_dim == 64);
static_assert(attn::resolve(gpt2).scale == 0.125f);

TEST_CASE("the fluent DSL records every field") {
  constexpr attn::Spec s = attn::attention()
                               .with_d_model(1024)
                               .with_heads(16)
                               .with_kv_heads(4)
                               .with_head_dim(32)
                               .with_head_dim_v(48)
                               .block()
                               .fused_qkv()
                               .with_proj_bias()
                               .with_mask(attn::window(128, 0))
                               .with_scale(0.5f)
                               .with_mask_block(16)
                               .with_softcap(20.0f)
                               .with_alibi()
                               .with_score_bias()
                               .with_lse();
  CHECK(s.d_model == 1024);
  CHECK(s.heads == 16);
  CHECK(s.kv_heads == 4);
  CHECK(s.head_dim == 32);
  CHECK(s.head_dim_v == 48);
  CHECK(s.form == attn::Form::block);
  CHECK(s.qkv == attn::Qkv::fused);
  CHECK(s.proj_bias);
  CHECK(s.mask.count == 1);
  CHECK(s.has_scale);
  CHECK(s.scale == 0.5f);
  CHECK(s.mask_block == 16);
  CHECK(s.has_softcap);
  CHECK(s.softcap == 20.0f);
  CHECK(s.alibi);
  CHECK(s.score_bias);
  CHECK(s.lse);
  CHECK(s.bad_value_field == 0);
  CHECK(s.with_proj_bias(false).proj_bias == false);
  CHECK(s.separate_qkv().qkv == attn::Qkv::separate);
  CHECK(s.core().form == attn::Form::core);
}

TEST_CASE("named keeps at most 31 characters") {
  constexpr attn::Spec s = attn::attention().named("a_name_that_is_much_longer_than_thirty_one_chars");
  CHECK(std::string(s.name) == "a_name_that_is_much_longer_than");
  CHECK(std::string(s.named("short").name) == "short");
}

TEST_CASE("resolve fills the documented defaults") {
  SUBCASE("from d_model and heads") {
    constexpr attn::Spec r = attn::resolve(attn::attention().with_d_model(768).with_heads(12));
    CHECK(r.kv_heads == 12);
    CHECK(r.head_dim == 64);
    CHECK(r.head_dim_v == 64);
    CHECK(r.scale == 0.125f);
    CHECK_FALSE(r.has_scale);
  }
  SUBCASE("core from heads and head_dim") {
    constexpr attn::Spec r =
        attn::resolve(attn::attention().with_heads(8).with_head_dim(128).with_kv_heads(2));
    CHECK(r.d_model == 1024);
    CHECK(r.kv_heads == 2);
    CHECK(r.head_dim_v == 128);
    CHECK(r.scale == doctest::Approx(0.08838834764));
  }
  SUBCASE("explicit values stay") {
    constexpr attn::Spec r =
        attn::resolve(attn::attention().with_d_model(512).with_heads(8).with_head_dim_v(32).with_scale(0.3f));
    CHECK(r.head_dim == 64);
    CHECK(r.head_dim_v == 32);
    CHECK(r.scale == 0.3f);
  }
  SUBCASE("resolving twice changes nothing") {
    constexpr attn::Spec once = attn::resolve(gpt2.with_kv_heads(3).with_head_dim(20));
    CHECK(attn_test::same_resolved(attn::resolve(once), once));
  }
}

TEST_CASE("setters record the first out-of-range value") {
  constexpr attn::Spec s = attn::attention().with_head_dim(0).with_heads(-2);
  CHECK(s.bad_value_field == static_cast<int>(attn::SpecProblem::head_dim_not_positive));
  CHECK(s.bad_value == 0);
}

TEST_CASE("mask algebra") {
  constexpr attn::Mask w = attn::window(128, 0);
  constexpr attn::Mask none = attn::no_mask();
  SUBCASE("none is the identity of &") {
    CHECK(attn_test::same_mask(none & w, w));
    CHECK(attn_test::same_mask(w & none, w));
    CHECK((none & none).empty());
  }
  SUBCASE("none absorbs |") {
    CHECK((none | w).empty());
    CHECK((w | none).empty());
  }
  SUBCASE("causal is window(-1, 0)") {
    CHECK(attn_test::same_mask(attn::causal(), attn::window(-1, 0)));
    CHECK(attn::is_causal(attn::window(-1, 0)));
    CHECK_FALSE(attn::is_causal(attn::window(0, -1)));
    CHECK_FALSE(attn::is_causal(attn::causal() & attn::causal()));
  }
  SUBCASE("operands are stored in post-order") {
    constexpr attn::Mask m = (w | attn::causal()) & attn::window(-1, 4);
    static_assert(m.count == 5);
    CHECK(m.nodes[2].op == attn::MaskOp::either);
    CHECK(m.nodes[2].lhs == 0);
    CHECK(m.nodes[2].rhs == 1);
    CHECK(m.nodes[4].op == attn::MaskOp::both);
    CHECK(m.nodes[4].lhs == 2);
    CHECK(m.nodes[4].rhs == 3);
    CHECK(m.root() == 4);
  }
  SUBCASE("bad bounds and overflow are recorded") {
    CHECK(attn::window(-2, 0).bad_term == attn::MaskProblem::window_bound);
    CHECK(attn::window(0, -7).bad_value == -7);
    CHECK((attn::window(-3, 0) & w).bad_term == attn::MaskProblem::window_bound);
    attn::Mask big = w;
    for (int i = 0; i < 7; ++i) big = big & w;  // 15 nodes: still fits
    CHECK(big.bad_term == attn::MaskProblem::none);
    CHECK((big & w).bad_term == attn::MaskProblem::too_many_terms);
    CHECK((big & w).bad_value == 17);
  }
  SUBCASE("the first problem in an expression is kept") {
    constexpr attn::Mask m = attn::global_tokens(0) & attn::window(-5, 0);
    CHECK(m.bad_term == attn::MaskProblem::global_tokens);
    CHECK(m.bad_value == 0);
    CHECK((w | attn::random_blocks(64, -1, 0)).bad_term == attn::MaskProblem::random_count);
  }
}

TEST_CASE("mask terms record their values") {
  SUBCASE("global tokens") {
    constexpr attn::Mask g = attn::global_tokens(4);
    static_assert(g.count == 1 && g.nodes[0].op == attn::MaskOp::global_tokens && g.nodes[0].tokens == 4);
    CHECK(g.bad_term == attn::MaskProblem::none);
    CHECK(attn::global_tokens(0).bad_term == attn::MaskProblem::global_tokens);
    CHECK(attn::global_tokens(-1).bad_value == -1);
  }
  SUBCASE("random blocks") {
    constexpr attn::Mask r = attn::random_blocks(64, 3, 4294967295u);
    static_assert(r.nodes[0].op == attn::MaskOp::random_blocks);
    CHECK(r.nodes[0].block == 64);
    CHECK(r.nodes[0].blocks == 3);
    CHECK(r.nodes[0].seed == 4294967295u);
    CHECK(r.bad_term == attn::MaskProblem::none);
    CHECK(attn::random_blocks(0, 2, 1).bad_term == attn::MaskProblem::random_block);
    CHECK(attn::random_blocks(0, 2, 1).bad_value == 0);
    CHECK(attn::random_blocks(0, 0, 1).bad_term == attn::MaskProblem::random_block);  // block size first
    CHECK(attn::random_blocks(16, -3, 1).bad_term == attn::MaskProblem::random_count);
    CHECK(attn::random_blocks(16, -3, 1).bad_value == -3);
  }
  SUBCASE("runtime terms") {
    CHECK(attn::padding().nodes[0].op == attn::MaskOp::padding);
    CHECK(attn::prefix().nodes[0].op == attn::MaskOp::prefix);
    CHECK(attn::document().nodes[0].op == attn::MaskOp::document);
    CHECK(attn::mask_tensor().nodes[0].op == attn::MaskOp::tensor);
  }
  SUBCASE("uses, is_structural, is_operator") {
    constexpr attn::Mask m = (attn::window(64, 64) | attn::global_tokens(2)) & attn::padding();
    static_assert(m.uses(attn::MaskOp::global_tokens) && m.uses(attn::MaskOp::padding));
    CHECK(m.uses(attn::MaskOp::either));
    CHECK_FALSE(m.uses(attn::MaskOp::random_blocks));
    CHECK_FALSE(attn::no_mask().uses(attn::MaskOp::window));
    CHECK(attn::is_structural(attn::MaskOp::window));
    CHECK(attn::is_structural(attn::MaskOp::global_tokens));
    CHECK(attn::is_structural(attn::MaskOp::random_blocks));
    for (const attn::MaskOp op : {attn::MaskOp::padding, attn::MaskOp::prefix, attn::MaskOp::document,
                                  attn::MaskOp::tensor, attn::MaskOp::both, attn::MaskOp::either})
      CHECK_FALSE(attn::is_structural(op));
    CHECK(attn::is_operator(attn::MaskOp::both));
    CHECK(attn::is_operator(attn::MaskOp::either));
    CHECK_FALSE(attn::is_operator(attn::MaskOp::tensor));
  }
  SUBCASE("operands of new terms are re-indexed like windows") {
    constexpr attn::Mask m = attn::padding() & (attn::global_tokens(1) | attn::prefix());
    static_assert(m.count == 5);
    CHECK(m.nodes[3].op == attn::MaskOp::either);
    CHECK(m.nodes[3].lhs == 1);
    CHECK(m.nodes[3].rhs == 2);
    CHECK(m.nodes[4].lhs == 0);
    CHECK(m.nodes[4].rhs == 3);
  }
}

TEST_CASE("score modifiers, lse and mask_block") {
  constexpr attn::Spec s =
      gpt2.with_mask_block(64).with_softcap(30.0f).with_alibi().with_score_bias().with_lse();
  static_assert(attn::check_spec(s).ok());
  CHECK_FALSE(s.with_alibi(false).alibi);
  CHECK_FALSE(s.with_score_bias(false).score_bias);
  CHECK_FALSE(s.with_lse(false).lse);
  SUBCASE("unset by default, and resolve leaves them unset") {
    constexpr attn::Spec r = attn::resolve(gpt2);
    CHECK(r.mask_block == 0);
    CHECK_FALSE(r.has_softcap);
    CHECK_FALSE(r.alibi);
    CHECK_FALSE(r.score_bias);
    CHECK_FALSE(r.lse);
  }
  SUBCASE("with_mask_block records values <= 0") {
    CHECK(gpt2.with_mask_block(0).bad_value_field ==
          static_cast<int>(attn::SpecProblem::mask_block_not_positive));
    CHECK(gpt2.with_mask_block(-8).bad_value == -8);
  }
}

}  // namespace

// limits_test.cpp: every bound of attn/limits.h, just inside and just outside, in C++ and in text.
// The expected numbers are written out here (not read from limits.h), as docs/DSL.md lists them.
#include <doctest/doctest.h>

#include <string>

#include "attn/spec_text.h"
#include "attn/validate.h"

namespace {

constexpr attn::Spec x = attn::attention().named("x");

std::string message(const attn::Spec &s) {
  return attn::validate(s).message;
}

// The text form's error, or "ok" when it parses.
std::string text_error(const std::string &text) {
  const attn::ParseResult r = attn::parse_spec(text);
  return r.ok ? "ok" : r.message;
}

std::string nested(int depth, const std::string &inner = "causal") {
  return std::string(depth, '(') + inner + std::string(depth, ')');
}

TEST_CASE("heads, kv_heads, head dims and d_model have upper bounds") {
  SUBCASE("just inside") {
    CHECK(attn::validate(x.with_heads(4096).with_head_dim(16)).ok);
    CHECK(attn::validate(x.with_heads(64).with_head_dim(1024).with_head_dim_v(1024)).ok);
    CHECK(attn::validate(x.with_d_model(65536).with_heads(64)).ok);
    CHECK(attn::validate(x.with_heads(4096).with_kv_heads(4096).with_head_dim(16)).ok);
  }
  SUBCASE("the values from the issue") {
    CHECK(message(x.with_heads(2147483647).with_head_dim(16)) ==
          "spec 'x': heads (2147483647) must be at most 4096");
    CHECK(message(x.with_heads(65536).with_head_dim(65536)) ==
          "spec 'x': heads (65536) must be at most 4096");
  }
  SUBCASE("just outside, each field") {
    CHECK(message(x.with_heads(4097).with_head_dim(16)) == "spec 'x': heads (4097) must be at most 4096");
    CHECK(message(x.with_heads(8).with_kv_heads(4097).with_head_dim(16)) ==
          "spec 'x': kv_heads (4097) must be at most 4096");
    CHECK(message(x.with_heads(1).with_head_dim(1025)) == "spec 'x': head_dim (1025) must be at most 1024");
    CHECK(message(x.with_heads(1).with_head_dim(64).with_head_dim_v(1025)) ==
          "spec 'x': head_dim_v (1025) must be at most 1024");
    CHECK(message(x.with_d_model(65537 * 2).with_heads(2)) ==
          "spec 'x': d_model (131074) must be at most 65536");
    CHECK(message(x.with_d_model(2147483647).with_heads(1)) ==
          "spec 'x': d_model (2147483647) must be at most 65536");
  }
  SUBCASE("derived values") {
    CHECK(message(x.with_d_model(4096).with_heads(2)) ==
          "spec 'x': head_dim (2048, d_model / heads) must be at most 1024");
    CHECK(message(x.with_heads(128).with_head_dim(1024)) ==
          "spec 'x': heads * head_dim (131072) must be at most 65536");
    CHECK(message(x.with_heads(128).with_head_dim(16).with_head_dim_v(1024)) ==
          "spec 'x': heads * head_dim_v (131072) must be at most 65536");
    // head_dim_v defaults to head_dim: both widths are then the same number.
    CHECK(message(x.with_heads(4096).with_head_dim(32)) ==
          "spec 'x': heads * head_dim (131072) must be at most 65536");
  }
  SUBCASE("resolve never overflows on an unchecked spec") {
    CHECK(attn::resolve(x.with_heads(65536).with_head_dim(65536)).d_model == 0);  // 2^32 wraps to 0
  }
}

TEST_CASE("the block form's projection weights stay below 2 GiB") {
  // Separate: w_q [H*D, d_model]. gen built 23168 and failed in Halide at 23296.
  CHECK(attn::validate(x.with_d_model(23168).with_heads(32).block()).ok);
  CHECK(message(x.with_d_model(23296).with_heads(32).block()) ==
        "spec 'x': block form: w_q [23296, 23296] would hold 542703616 elements; at most 536870911 (2 GiB of "
        "f32)");
  // Fused: w_qkv [(H + 2 KVH) * D, d_model].
  CHECK(
      message(x.with_d_model(16384).with_heads(16).block().fused_qkv()) ==
      "spec 'x': block form: w_qkv [49152, 16384] would hold 805306368 elements; at most 536870911 (2 GiB of "
      "f32)");
  CHECK(attn::validate(x.with_d_model(16384).with_heads(16).with_kv_heads(4).block().fused_qkv()).ok);
  // w_o [d_model, H * Dv] is the largest when Dv is.
  CHECK(
      message(x.with_d_model(32768).with_heads(32).with_head_dim(16).with_head_dim_v(1024).block()) ==
      "spec 'x': block form: w_o [32768, 32768] would hold 1073741824 elements; at most 536870911 (2 GiB of "
      "f32)");
  CHECK(attn::validate(x.with_d_model(16384).with_heads(16).with_head_dim(64).with_head_dim_v(1024).block())
            .ok);
  // The core form has no weights.
  CHECK(attn::validate(x.with_d_model(65536).with_heads(64)).ok);
}

TEST_CASE("structural mask values stay within 2^24 positions") {
  constexpr attn::Spec s = x.with_heads(2).with_head_dim(16);
  SUBCASE("just inside") {
    CHECK(attn::validate(s.with_mask(attn::window(16777216, 16777216))).ok);
    CHECK(attn::validate(s.with_mask(attn::global_tokens(16777216))).ok);
    CHECK(attn::validate(s.with_mask(attn::random_blocks(16777216, 16, 4294967295u))).ok);
    CHECK(attn::validate(s.with_mask_block(16777216)).ok);
  }
  SUBCASE("the values from the issue") {
    CHECK(message(s.with_mask(attn::window(2147483647, 0))) ==
          "spec 'x': window bound (2147483647) must be at most 16777216 (or -1 for unbounded)");
    CHECK(message(s.with_mask(attn::window(1073741824, 0))) ==
          "spec 'x': window bound (1073741824) must be at most 16777216 (or -1 for unbounded)");
    CHECK(message(s.with_mask_block(2147483647)) ==
          "spec 'x': mask_block (2147483647) must be at most 16777216");
    CHECK(message(s.with_mask(attn::global_tokens(2147483647))) ==
          "spec 'x': global(G) needs G <= 16777216 (got 2147483647)");
    CHECK(message(s.with_mask(attn::random_blocks(64, 2147483647, 1))) ==
          "spec 'x': random(BS,N,SEED) needs N <= 16 blocks (got 2147483647)");
  }
  SUBCASE("just outside") {
    CHECK(message(s.with_mask(attn::causal() & attn::window(3, 16777217))) ==
          "spec 'x': window bound (16777217) must be at most 16777216 (or -1 for unbounded)");
    CHECK(message(s.with_mask(attn::random_blocks(16777217, 1, 0))) ==
          "spec 'x': random(BS,N,SEED) needs a block size BS <= 16777216 (got 16777217)");
    CHECK(message(s.with_mask(attn::random_blocks(64, 17, 0))) ==
          "spec 'x': random(BS,N,SEED) needs N <= 16 blocks (got 17)");
    CHECK(message(s.with_mask_block(16777217)) == "spec 'x': mask_block (16777217) must be at most 16777216");
  }
  SUBCASE("random draws add up over terms") {
    CHECK(attn::validate(s.with_mask(attn::random_blocks(64, 8, 1) | attn::random_blocks(32, 8, 2))).ok);
    CHECK(message(
              s.with_mask(attn::random_blocks(64, 10, 1) | attn::causal() | attn::random_blocks(32, 7, 2))) ==
          "spec 'x': random terms draw 17 key blocks in all (the sum of their N); at most 16");
  }
}

TEST_CASE("hand-built masks are checked node by node") {
  constexpr attn::Spec s = x.with_heads(2).with_head_dim(16);
  SUBCASE("a term written into a node directly") {
    attn::Mask m = attn::causal();
    m.nodes[0].left = 2147483647;
    CHECK(message(s.with_mask(m)) ==
          "spec 'x': window bound (2147483647) must be at most 16777216 (or -1 for unbounded)");
  }
  SUBCASE("an operand that is not an earlier node") {
    attn::Mask m = attn::causal() & attn::padding();
    m.nodes[2].rhs = 2;
    CHECK(
        message(s.with_mask(m)) ==
        "spec 'x': mask node 2 is malformed (an operator's operands must be earlier nodes, a term one of the "
        "known terms)");
    m.nodes[2].rhs = -1;
    CHECK_FALSE(attn::validate(s.with_mask(m)).ok);
  }
  SUBCASE("a node count beyond the capacity") {
    attn::Mask m = attn::causal();
    m.count = 17;
    CHECK(message(s.with_mask(m)) == "spec 'x': mask node count (17) must be between 0 and 16");
    m.count = -1;
    CHECK(message(s.with_mask(m)) == "spec 'x': mask node count (-1) must be between 0 and 16");
  }
  SUBCASE("an unknown term") {
    attn::Mask m = attn::causal();
    m.nodes[0].op = static_cast<attn::MaskOp>(200);
    CHECK_FALSE(attn::validate(s.with_mask(m)).ok);
  }
}

TEST_CASE("the text form applies the same bounds") {
  CHECK(text_error("heads=2147483647 head_dim=16") ==
        "spec '<unnamed>': heads (2147483647) must be at most 4096");
  CHECK(text_error("heads=65536 head_dim=65536") == "spec '<unnamed>': heads (65536) must be at most 4096");
  CHECK(text_error("heads=4096 head_dim=16") == "ok");
  CHECK(text_error("name=x heads=1 head_dim=16 mask=window(2147483647,0)") ==
        "spec 'x': window bound (2147483647) must be at most 16777216 (or -1 for unbounded)");
  CHECK(text_error("name=x heads=1 head_dim=16 mask=global(2147483647)") ==
        "spec 'x': global(G) needs G <= 16777216 (got 2147483647)");
  CHECK(text_error("name=x heads=1 head_dim=16 mask_block=2147483647") ==
        "spec 'x': mask_block (2147483647) must be at most 16777216");
  CHECK(text_error("name=x heads=1 head_dim=16 mask=random(64,2147483647,1)") ==
        "spec 'x': random(BS,N,SEED) needs N <= 16 blocks (got 2147483647)");
  CHECK(text_error("name=x heads=1 head_dim=16 mask=random(64,64,1)") ==
        "spec 'x': random(BS,N,SEED) needs N <= 16 blocks (got 64)");
  CHECK(text_error("name=x heads=1 head_dim=16 mask=random(64,9,1)|random(64,9,2)") ==
        "spec 'x': random terms draw 18 key blocks in all (the sum of their N); at most 16");
  const attn::MaskParseResult m = attn::parse_mask("window(16777217,0)");
  CHECK_FALSE(m.ok);
  CHECK(m.message == "mask: window bound (16777217) must be at most 16777216 (or -1 for unbounded)");
}

TEST_CASE("mask parentheses nest at most 64 deep") {
  CHECK(text_error("heads=1 head_dim=16 mask=" + nested(64)) == "ok");
  CHECK(attn::parse_mask(nested(64, "causal|(padding&window(4,4))")).ok == false);  // 65 levels
  CHECK(attn::parse_mask(nested(63, "causal|(padding&window(4,4))")).ok);
  CHECK(text_error("heads=1 head_dim=16 mask=" + nested(65)) ==
        "key 'mask': parentheses nest deeper than 64 at offset 65 in '" + nested(65).substr(0, 80) + "...'");
  // Deep enough to overflow the stack of a recursive parser without a bound (the 3000).
  const std::string expected =
      "parentheses nest deeper than 64 at offset 65 in '" + std::string(80, '(') + "...'";
  CHECK(text_error("heads=1 head_dim=16 mask=" + nested(3000)) == "key 'mask': " + expected);
  CHECK(text_error("heads=1 head_dim=16 mask=" + nested(30000)) == "key 'mask': " + expected);
  const attn::MaskParseResult m = attn::parse_mask(nested(30000));
  CHECK_FALSE(m.ok);
  CHECK(m.message == "mask: " + expected);
}

TEST_CASE("spec and mask texts are at most 64 KiB") {
  std::string spaces(65536 - 20, ' ');
  CHECK(text_error("heads=1 head_dim=16 " + spaces) == "ok");  // 65536 bytes
  CHECK(text_error("heads=1 head_dim=16 " + spaces + " ") == "spec text is 65537 bytes long; at most 65536");
  const std::string big(1 << 20, 'x');
  CHECK(text_error(big) == "spec text is 1048576 bytes long; at most 65536");
  const attn::MaskParseResult m = attn::parse_mask(big);
  CHECK_FALSE(m.ok);
  CHECK(m.message == "mask: mask text is 1048576 bytes long; at most 65536");
}

TEST_CASE("long mask texts are shortened in messages") {
  std::string long_mask = "causal";
  for (int i = 0; i < 40; ++i) long_mask += "&causal";
  long_mask += "&";
  const attn::MaskParseResult m = attn::parse_mask(long_mask);
  CHECK_FALSE(m.ok);
  CHECK(m.message == "mask: expected a term at offset " + std::to_string(long_mask.size()) + " in '" +
                         long_mask.substr(0, 80) + "...'");
}

}  // namespace

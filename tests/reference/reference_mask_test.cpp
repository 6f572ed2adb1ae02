// The reference's mask terms, block-sparse widening, score modifiers and lse on hand-checked cases.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "reference.h"

namespace {

namespace ref = attnc::reference;
using ref::ByteView;
using ref::IndexView;
using ref::Options;
using ref::Pair;
using ref::RuntimeInputs;
using ref::TensorView;

// The pair (q', k) of batch b / head h / row i, with Lk given.
Pair at(int64_t q_pos, int64_t k, int64_t key_length = 1000, int64_t b = 0, int64_t h = 0, int64_t i = 0) {
  return Pair{b, h, i, k, q_pos, key_length};
}

bool keeps(const attn::Mask &mask, const Pair &p, int mask_block = 0, const RuntimeInputs &in = {}) {
  return ref::keeps(mask, mask_block, in, p);
}

TEST_CASE("random draws: the check values of docs/DSL.md") {
  CHECK(ref::random_key_blocks(42, 0, 3, 16) == std::vector<int64_t>{0, 10, 6});
  CHECK(ref::random_key_blocks(42, 1, 3, 16) == std::vector<int64_t>{6, 2, 10});
  CHECK(ref::random_key_blocks(42, 2, 3, 16) == std::vector<int64_t>{10, 11, 12});
  CHECK(ref::random_key_blocks(42, 3, 3, 16) == std::vector<int64_t>{12, 1, 11});
  CHECK(ref::random_key_blocks(4294967295u, 123456, 4, 1000) == std::vector<int64_t>{54, 124, 346, 129});
}

TEST_CASE(
    "random(4,3,42) keeps the drawn key blocks of the query's block, nothing before key 0 or for Lk 0") {
  const attn::Mask mask = attn::random_blocks(4, 3, 42);
  // Lk = 64: 16 key blocks; query block 0 (q' 0..3) draws blocks 0, 10, 6; query block 1 draws 6, 2, 10.
  for (int64_t q_pos : {0, 3})
    for (int64_t k = 0; k < 64; ++k) {
      CAPTURE(q_pos);
      CAPTURE(k);
      const int64_t kb = k / 4;
      CHECK(keeps(mask, at(q_pos, k, 64)) == (kb == 0 || kb == 10 || kb == 6));
    }
  CHECK(keeps(mask, at(4, 8, 64)));
  CHECK_FALSE(keeps(mask, at(4, 0, 64)));
  CHECK_FALSE(keeps(mask, at(-1, 0, 64)));  // q' < 0: no random keys
  CHECK_FALSE(keeps(mask, at(0, 0, 0)));    // Lk 0: no key blocks
  // Lk = 5: 2 key blocks, so every draw is block 0 or 1.
  const std::vector<int64_t> drawn = ref::random_key_blocks(42, 0, 3, 2);
  for (int64_t k = 0; k < 8; ++k) {
    bool in_drawn = false;
    for (int64_t b : drawn) in_drawn = in_drawn || b == k / 4;
    CHECK(keeps(mask, at(1, k, 5)) == in_drawn);
  }
}

TEST_CASE("global(2): the first two positions see and are seen by all") {
  const attn::Mask mask = attn::global_tokens(2);
  CHECK(keeps(mask, at(5, 1)));
  CHECK_FALSE(keeps(mask, at(5, 2)));
  CHECK(keeps(mask, at(1, 100)));
  CHECK_FALSE(keeps(mask, at(2, 100)));
  CHECK(keeps(mask, at(-3, 50)));  // q' < G holds before key 0 too
  const attn::Mask longformer = attn::window(1, 1) | attn::global_tokens(2);
  CHECK(keeps(longformer, at(10, 11)));
  CHECK(keeps(longformer, at(10, 0)));
  CHECK_FALSE(keeps(longformer, at(10, 5)));
  CHECK(keeps(longformer, at(0, 999)));
}

TEST_CASE("runtime terms: padding, prefix, document and tensor read their inputs per batch, head and row") {
  const std::vector<int32_t> lengths = {3, 0}, prefixes = {2, 5};
  const std::vector<int32_t> seg_q = {0, 0, 1, /* b1 */ 4, 4, 4}, seg_k = {0, 1, 1, 2, /* b1 */ 4, 4, 5, 5};
  RuntimeInputs in;
  in.key_lengths = IndexView::dense(lengths.data(), {2});
  in.prefix_lengths = IndexView::dense(prefixes.data(), {2});
  in.segment_ids_q = IndexView::dense(seg_q.data(), {2, 3});
  in.segment_ids_k = IndexView::dense(seg_k.data(), {2, 4});

  CHECK(keeps(attn::padding(), at(0, 2, 3, 0), 0, in));
  CHECK_FALSE(keeps(attn::padding(), at(0, 3, 3, 0), 0, in));
  CHECK_FALSE(keeps(attn::padding(), at(0, 0, 0, 1), 0, in));  // key_lengths 0: nothing
  CHECK(keeps(attn::prefix(), at(0, 1, 4, 0), 0, in));
  CHECK_FALSE(keeps(attn::prefix(), at(0, 2, 4, 0), 0, in));
  CHECK(keeps(attn::prefix(), at(0, 4, 4, 1), 0, in));
  // causal | prefix: a prefix LM. Batch 0 (prefix 2), row at q' = 0 sees keys 0 and 1; q' = 3 sees 0..3.
  const attn::Mask prefix_lm = attn::causal() | attn::prefix();
  CHECK(keeps(prefix_lm, at(0, 1, 4, 0), 0, in));
  CHECK_FALSE(keeps(prefix_lm, at(0, 2, 4, 0), 0, in));
  CHECK(keeps(prefix_lm, at(3, 3, 4, 0), 0, in));
  CHECK_FALSE(keeps(prefix_lm, at(3, 4, 8, 0), 0, in));
  // document reads the row index, not q'.
  CHECK(keeps(attn::document(), at(99, 0, 4, 0, 0, 0), 0, in));
  CHECK_FALSE(keeps(attn::document(), at(99, 1, 4, 0, 0, 0), 0, in));
  CHECK(keeps(attn::document(), at(99, 1, 4, 0, 0, 2), 0, in));
  CHECK(keeps(attn::document(), at(99, 2, 4, 0, 0, 2), 0, in));
  CHECK_FALSE(keeps(attn::document(), at(99, 3, 4, 0, 0, 2), 0, in));
  CHECK(keeps(attn::document(), at(99, 1, 4, 1, 0, 1), 0, in));
  CHECK_FALSE(keeps(attn::document(), at(99, 2, 4, 1, 0, 1), 0, in));
  // document & causal: packed causal documents.
  CHECK_FALSE(keeps(attn::document() & attn::causal(), at(1, 2, 4, 0, 0, 2), 0, in));
  CHECK(keeps(attn::document() & attn::causal(), at(2, 2, 4, 0, 0, 2), 0, in));
  // (window(1,1) | global(1)) & padding, batch 0 (3 keys): q' 5 keeps global key 0 only.
  const attn::Mask mixed = (attn::window(1, 1) | attn::global_tokens(1)) & attn::padding();
  CHECK(keeps(mixed, at(5, 0, 3, 0), 0, in));
  CHECK_FALSE(keeps(mixed, at(5, 4, 3, 0), 0, in));  // in the window, beyond key_lengths
  CHECK(keeps(mixed, at(2, 1, 3, 0), 0, in));
}

TEST_CASE("the mask tensor broadcasts size-1 and left-out B and H dims") {
  // [B=2, H=2, Sq=1, Sk=2]: (b, h) -> mask row.
  const std::vector<uint8_t> full = {1, 0, /* b0 h1 */ 0, 1, /* b1 h0 */ 1, 1, /* b1 h1 */ 0, 0};
  RuntimeInputs in;
  in.mask = ByteView::dense(full.data(), {2, 2, 1, 2});
  auto kept = [&](int64_t b, int64_t h, int64_t k) {
    return keeps(attn::mask_tensor(), at(0, k, 2, b, h, 0), 0, in);
  };
  CHECK(kept(0, 0, 0));
  CHECK_FALSE(kept(0, 0, 1));
  CHECK(kept(0, 1, 1));
  CHECK(kept(1, 0, 1));
  CHECK_FALSE(kept(1, 1, 0));
  // [Sq, Sk]: every batch and head reads the same row.
  in.mask = ByteView::dense(full.data(), {1, 2});
  CHECK(kept(1, 1, 0));
  CHECK_FALSE(kept(1, 1, 1));
  // [H, Sq, Sk] (aligned from the right, as NumPy): head 1 reads its own row whatever the batch.
  in.mask = ByteView::dense(full.data(), {2, 1, 2});
  CHECK(kept(0, 1, 0) == false);
  CHECK(kept(0, 1, 1) == true);
  CHECK(kept(1, 0, 0) == true);
  CHECK(kept(1, 0, 1) == false);
  // [1, H, Sq, Sk]: every batch reads batch 0's heads.
  in.mask = ByteView::dense(full.data(), {1, 2, 1, 2});
  CHECK(kept(1, 1, 1));
  CHECK_FALSE(kept(1, 1, 0));
  // A value other than 1 keeps too.
  const std::vector<uint8_t> seven = {7, 0};
  in.mask = ByteView::dense(seven.data(), {1, 2});
  CHECK(kept(0, 0, 0));
  CHECK_FALSE(kept(0, 0, 1));
}

TEST_CASE("mask_block widens causal, windows and global to whole blocks; random and runtime terms stay") {
  // causal, blocks of 4: q' 5 (block 4..7) keeps keys 0..7.
  CHECK(keeps(attn::causal(), at(5, 7), 4));
  CHECK_FALSE(keeps(attn::causal(), at(5, 8), 4));
  CHECK_FALSE(keeps(attn::causal(), at(5, 6)));  // per element
  // q' -1 sits in block -4..-1: causal keeps no key block.
  CHECK_FALSE(keeps(attn::causal(), at(-1, 0), 4));
  // window(1, 0): q' 4 (block 4..7) reaches key 3, so key block 0..3 is kept whole; q' 8 does not reach it.
  CHECK(keeps(attn::window(1, 0), at(4, 0), 4));
  CHECK_FALSE(keeps(attn::window(1, 0), at(8, 3), 4));
  CHECK(keeps(attn::window(1, 0), at(8, 7), 4));
  // global(2): key block 0..3 holds keys 0, 1; query block -4..-1 is below 2.
  CHECK(keeps(attn::global_tokens(2), at(9, 3), 4));
  CHECK_FALSE(keeps(attn::global_tokens(2), at(9, 4), 4));
  CHECK(keeps(attn::global_tokens(2), at(3, 40), 4));
  CHECK_FALSE(keeps(attn::global_tokens(2), at(4, 40), 4));
  CHECK(keeps(attn::global_tokens(2), at(-1, 40), 4));
  // padding stays per element: causal & padding with 6 keys keeps key 5 of block 4..7, not 6.
  const std::vector<int32_t> lengths = {6};
  RuntimeInputs in;
  in.key_lengths = IndexView::dense(lengths.data(), {1});
  CHECK(keeps(attn::causal() & attn::padding(), at(4, 5, 6), 4, in));
  CHECK_FALSE(keeps(attn::causal() & attn::padding(), at(4, 6, 6), 4, in));
  // random is not widened: the same pairs with and without mask_block.
  const attn::Mask random = attn::random_blocks(3, 2, 7);
  for (int64_t q_pos = -2; q_pos < 40; ++q_pos)
    for (int64_t k = 0; k < 40; ++k)
      CHECK(keeps(random, at(q_pos, k, 40), 8) == keeps(random, at(q_pos, k, 40)));
}

TEST_CASE("mask_block: a structural term keeps a block pair iff some pair of positions in it is kept") {
  for (int block : {1, 2, 3, 4, 8})
    for (const attn::Mask &mask :
         {attn::causal(), attn::window(0, 0), attn::window(2, 1), attn::window(-1, 3), attn::window(5, -1),
          attn::global_tokens(1), attn::global_tokens(5)})
      for (int64_t q_pos = -9; q_pos < 24; ++q_pos)
        for (int64_t k = 0; k < 24; ++k) {
          const int64_t q_first = (q_pos >= 0 ? q_pos / block : -((-q_pos + block - 1) / block)) * block;
          const int64_t k_first = k / block * block;
          bool any = false;
          for (int64_t qq = q_first; qq < q_first + block; ++qq)
            for (int64_t kk = k_first; kk < k_first + block; ++kk) any = any || keeps(mask, at(qq, kk));
          CAPTURE(block);
          CAPTURE(q_pos);
          CAPTURE(k);
          REQUIRE(keeps(mask, at(q_pos, k), block) == any);
        }
}

// One query row attending to keys with given scores (q = 1, k = score, scale 1, D = 1).
struct Row {
  std::vector<float> q = {1.0f}, k, v;
  ref::Result<double> run(const Options &o) const {
    const int64_t sk = static_cast<int64_t>(k.size());
    return ref::core_reference(TensorView::dense(q.data(), {1, 1, 1, 1}),
                               TensorView::dense(k.data(), {1, sk, 1, 1}),
                               TensorView::dense(v.data(), {1, sk, 1, 1}), o);
  }
};

TEST_CASE("softcap, alibi and score_bias apply after the scale, in that order; lse is of the final scores") {
  Row row;
  row.k = {2.0f, 0.0f, -1.0f};
  row.v = {1.0f, 10.0f, 100.0f};
  auto expected = [&](const std::vector<double> &s) {
    double sum = 0, acc = 0;
    for (size_t j = 0; j < s.size(); ++j) sum += std::exp(s[j]), acc += std::exp(s[j]) * row.v[j];
    return std::pair<double, double>{acc / sum, std::log(sum)};
  };
  Options o;
  o.scale = 0.5;  // scores 1, 0, -0.5
  SUBCASE("scale alone") {
    const auto [out, lse] = expected({1.0, 0.0, -0.5});
    const auto r = row.run(o);
    CHECK(r.out[0] == doctest::Approx(out).epsilon(1e-12));
    CHECK(r.lse[0] == doctest::Approx(lse).epsilon(1e-12));
  }
  SUBCASE("softcap 0.8: s = 0.8 tanh(s / 0.8)") {
    o.softcap = 0.8;
    const auto [out, lse] = expected({0.8 * std::tanh(1 / 0.8), 0.0, 0.8 * std::tanh(-0.5 / 0.8)});
    const auto r = row.run(o);
    CHECK(r.out[0] == doctest::Approx(out).epsilon(1e-12));
    CHECK(r.lse[0] == doctest::Approx(lse).epsilon(1e-12));
  }
  // One query at q' = 2 (Sq = 1, Sk = 3): distances 2, 1, 0.
  const std::vector<float> slopes = {0.25f};
  o.inputs.alibi_slopes = TensorView::dense(slopes.data(), {1});
  SUBCASE("alibi 0.25: s -= 0.25 |q' - k|") {
    o.alibi = true;
    const auto [out, lse] = expected({1.0 - 0.5, 0.0 - 0.25, -0.5});
    const auto r = row.run(o);
    CHECK(r.out[0] == doctest::Approx(out).epsilon(1e-12));
    CHECK(r.lse[0] == doctest::Approx(lse).epsilon(1e-12));
  }
  const std::vector<float> bias = {0.0f, 3.0f, -2.0f};
  o.inputs.score_bias = TensorView::dense(bias.data(), {1, 3});  // [Sq, Sk]
  SUBCASE("score_bias: s += bias") {
    o.score_bias = true;
    const auto [out, lse] = expected({1.0, 3.0, -2.5});
    const auto r = row.run(o);
    CHECK(r.out[0] == doctest::Approx(out).epsilon(1e-12));
    CHECK(r.lse[0] == doctest::Approx(lse).epsilon(1e-12));
  }
  SUBCASE("all three: the bias after alibi after the softcap") {
    o.softcap = 0.8;
    o.alibi = true;
    o.score_bias = true;
    auto cap = [](double s) { return 0.8 * std::tanh(s / 0.8); };
    const auto [out, lse] = expected({cap(1.0) - 0.5, cap(0.0) - 0.25 + 3.0, cap(-0.5) - 2.0});
    const auto r = row.run(o);
    CHECK(r.out[0] == doctest::Approx(out).epsilon(1e-12));
    CHECK(r.lse[0] == doctest::Approx(lse).epsilon(1e-12));
  }
  SUBCASE("a masked key counts in neither the softmax nor the lse") {
    o.mask = attn::window(0, -1);  // keys k >= q' = 2
    const auto r = row.run(o);
    CHECK(r.out[0] == doctest::Approx(100.0));
    CHECK(r.lse[0] == doctest::Approx(-0.5));
  }
}

TEST_CASE("padding sets Lk: rows align to each batch's own length, for the mask and for alibi") {
  // B = 2, Sq = Sk = 4, zero queries (uniform weights over the kept keys), v = 1, 2, 4, 8.
  const std::vector<float> q(8, 0.0f), k(8, 0.5f), v = {1, 2, 4, 8, 1, 2, 4, 8};
  const std::vector<int32_t> lengths = {2, 4};
  Options o;
  o.mask = attn::causal() & attn::padding();
  o.inputs.key_lengths = IndexView::dense(lengths.data(), {2});
  const TensorView qv = TensorView::dense(q.data(), {2, 4, 1, 1}),
                   kv = TensorView::dense(k.data(), {2, 4, 1, 1}),
                   vv = TensorView::dense(v.data(), {2, 4, 1, 1});
  const auto r = ref::core_reference(qv, kv, vv, o);
  const double inf = std::numeric_limits<double>::infinity();
  // Batch 0: Lk 2, q' = i - 2: rows 0, 1 see nothing; row 2 key 0; row 3 keys 0, 1.
  CHECK(r.out[0] == 0.0);
  CHECK(r.out[1] == 0.0);
  CHECK(r.lse[0] == -inf);
  CHECK(r.lse[1] == -inf);
  CHECK(r.out[2] == doctest::Approx(1.0));
  CHECK(r.out[3] == doctest::Approx(1.5));
  CHECK(r.lse[3] == doctest::Approx(std::log(2.0)));
  // Batch 1: Lk 4, the usual causal rows.
  CHECK(r.out[4] == doctest::Approx(1.0));
  CHECK(r.out[7] == doctest::Approx(15.0 / 4));
  CHECK(r.lse[7] == doctest::Approx(std::log(4.0)));

  // alibi with slope 1 and padding: batch 0's row 3 sits at q' = 1, so keys 0, 1 get -1, 0.
  const std::vector<float> slope = {1.0f};
  o.mask = attn::padding();
  o.alibi = true;
  o.inputs.alibi_slopes = TensorView::dense(slope.data(), {1});
  const auto a = ref::core_reference(qv, kv, vv, o);
  const double e = std::exp(-1.0);
  CHECK(a.out[3] == doctest::Approx((e * 1 + 2) / (e + 1)));
  CHECK(a.lse[3] == doctest::Approx(std::log(e + 1)));
  // Row 0 of batch 0 sits at q' = -2: distances 2, 3.
  CHECK(a.out[0] ==
        doctest::Approx((std::exp(-2.0) * 1 + std::exp(-3.0) * 2) / (std::exp(-2.0) + std::exp(-3.0))));
}

TEST_CASE("top-left alignment: row i sits at key i, as PyTorch's is_causal, whatever Sq and Sk") {
  // Sq = 2, Sk = 4, zero queries (uniform weights over the kept keys), v = 1, 2, 4, 8.
  const std::vector<float> q(2, 0.0f), k(4, 0.5f), v = {1, 2, 4, 8};
  const TensorView qv = TensorView::dense(q.data(), {1, 2, 1, 1}), kv = TensorView::dense(k.data(), {1, 4, 1, 1}),
                   vv = TensorView::dense(v.data(), {1, 4, 1, 1});
  Options o;
  o.mask = attn::causal();
  // Bottom-right: rows at q' = 2, 3 keep keys 0..2 and 0..3.
  const auto bottom = ref::core_reference(qv, kv, vv, o);
  CHECK(bottom.out[0] == doctest::Approx(7.0 / 3));
  CHECK(bottom.out[1] == doctest::Approx(15.0 / 4));
  // Top-left: rows at q' = 0, 1 keep key 0 and keys 0, 1.
  o.top_left = true;
  const auto top = ref::core_reference(qv, kv, vv, o);
  CHECK(top.out[0] == doctest::Approx(1.0));
  CHECK(top.out[1] == doctest::Approx(1.5));
  // Sq = 4 > Sk = 2, top-left: rows 2 and 3 see both keys (bottom-right: rows 0, 1 see none).
  const TensorView q4 = TensorView::dense(k.data(), {1, 4, 1, 1}), k2 = TensorView::dense(q.data(), {1, 2, 1, 1}),
                   v2 = TensorView::dense(v.data(), {1, 2, 1, 1});
  const auto tall = ref::core_reference(q4, k2, v2, o);
  CHECK(tall.out[0] == doctest::Approx(1.0));
  CHECK(tall.out[1] == doctest::Approx(1.5));
  CHECK(tall.out[3] == doctest::Approx(1.5));
  o.top_left = false;
  const auto tall_bottom = ref::core_reference(q4, k2, v2, o);
  CHECK(tall_bottom.out[0] == 0.0);
  CHECK(tall_bottom.out[3] == doctest::Approx(1.5));
}

TEST_CASE("fully masked rows: out 0 and lse -inf, whatever removes the keys") {
  const std::vector<float> q(6, 1.0f), k(8, 0.5f), v = {1, 2, 3, 4, 5, 6, 7, 8};
  const TensorView qv = TensorView::dense(q.data(), {2, 3, 1, 1}),
                   kv = TensorView::dense(k.data(), {2, 4, 1, 1}),
                   vv = TensorView::dense(v.data(), {2, 4, 1, 1});
  const std::vector<uint8_t> zeros(12, 0);
  const std::vector<int32_t> no_keys = {0, 0};
  Options o;
  SUBCASE("an all-zero mask tensor") {
    o.mask = attn::mask_tensor();
    o.inputs.mask = ByteView::dense(zeros.data(), {3, 4});
  }
  SUBCASE("key_lengths 0") {
    o.mask = attn::padding() | attn::window(0, 0);  // padding sets q' = i - 3 < 0, before every key
    o.inputs.key_lengths = IndexView::dense(no_keys.data(), {2});
  }
  SUBCASE("global(1) & padding with key_lengths 0") {
    o.mask = attn::global_tokens(1) & attn::padding();  // global keeps every key for q' < 1
    o.inputs.key_lengths = IndexView::dense(no_keys.data(), {2});
  }
  SUBCASE("a window that ends before the keys") {
    o.mask = attn::window(0, 0) & attn::prefix();  // keeps k == q' = i + 1 < prefix_lengths = 0
    o.inputs.prefix_lengths = IndexView::dense(no_keys.data(), {2});
  }
  const auto r = ref::core_reference(qv, kv, vv, o);
  const auto naive = ref::core_naive_f32(qv, kv, vv, o);
  for (size_t n = 0; n < r.out.size(); ++n) {
    CHECK(r.out[n] == 0.0);
    CHECK(naive.out[n] == 0.0f);
  }
  for (size_t n = 0; n < r.lse.size(); ++n) {
    CHECK(r.lse[n] == -std::numeric_limits<double>::infinity());
    CHECK(naive.lse[n] == -std::numeric_limits<float>::infinity());
  }
}

TEST_CASE("the naive fp32 twin agrees with the reference on every term and modifier") {
  const int64_t B = 2, Sq = 9, Sk = 13, H = 2, D = 3;
  std::vector<float> q(B * Sq * H * D), k(B * Sk * H * D), v(B * Sk * H * D);
  for (size_t i = 0; i < q.size(); ++i) q[i] = std::sin(0.7f * static_cast<float>(i));
  for (size_t i = 0; i < k.size(); ++i) k[i] = std::cos(0.3f * static_cast<float>(i));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(1.3f * static_cast<float>(i) + 1);
  std::vector<uint8_t> mask(B * Sq * Sk);
  std::vector<float> bias(H * Sq * Sk);
  for (size_t i = 0; i < mask.size(); ++i) mask[i] = static_cast<uint8_t>(i % 3 != 0);
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = std::sin(0.1f * static_cast<float>(i));
  const std::vector<int32_t> lengths = {13, 7}, prefixes = {3, 0},
                             seg_q = {0, 0, 0, 1, 1, 1, 1, 2, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1},
                             seg_k = {0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2,
                                      0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  const std::vector<float> slopes = {0.5f, 0.125f};
  Options o;
  o.scale = 0.6;
  o.mask = ((attn::window(3, 1) | attn::global_tokens(2) | attn::random_blocks(4, 2, 9)) & attn::padding() &
            attn::mask_tensor()) |
           (attn::prefix() & attn::document());
  o.mask_block = 2;
  o.softcap = 1.5;
  o.alibi = o.score_bias = true;
  o.inputs.key_lengths = IndexView::dense(lengths.data(), {B});
  o.inputs.prefix_lengths = IndexView::dense(prefixes.data(), {B});
  o.inputs.segment_ids_q = IndexView::dense(seg_q.data(), {B, Sq});
  o.inputs.segment_ids_k = IndexView::dense(seg_k.data(), {B, Sk});
  o.inputs.mask = ByteView::dense(mask.data(), {B, 1, Sq, Sk});
  o.inputs.alibi_slopes = TensorView::dense(slopes.data(), {H});
  o.inputs.score_bias = TensorView::dense(bias.data(), {1, H, Sq, Sk});
  const TensorView qv = TensorView::dense(q.data(), {B, Sq, H, D}),
                   kv = TensorView::dense(k.data(), {B, Sk, H, D}),
                   vv = TensorView::dense(v.data(), {B, Sk, H, D});
  const auto exact = ref::core_reference(qv, kv, vv, o);
  const auto naive = ref::core_naive_f32(qv, kv, vv, o);
  REQUIRE(exact.out.size() == naive.out.size());
  for (size_t i = 0; i < exact.out.size(); ++i) CHECK(std::abs(naive.out[i] - exact.out[i]) < 1e-5);
  int masked_rows = 0;
  for (size_t i = 0; i < exact.lse.size(); ++i) {
    CHECK(std::isinf(naive.lse[i]) == std::isinf(exact.lse[i]));
    if (std::isinf(exact.lse[i]))
      ++masked_rows;
    else
      CHECK(std::abs(naive.lse[i] - exact.lse[i]) < 1e-5);
  }
  CHECK(masked_rows < static_cast<int>(exact.lse.size()));
}

TEST_CASE("inputs that do not fit the call are refused, not read out of range") {
  const std::vector<float> x(4, 0.0f);
  const TensorView t = TensorView::dense(x.data(), {1, 2, 1, 2});
  const std::vector<int32_t> too_long = {3};
  Options o;
  o.mask = attn::padding();
  CHECK_THROWS_AS(ref::core_reference(t, t, t, o), std::invalid_argument);  // no key_lengths
  o.inputs.key_lengths = IndexView::dense(too_long.data(), {1});
  CHECK_THROWS_AS(ref::core_reference(t, t, t, o), std::invalid_argument);  // 3 > Sk = 2
  const std::vector<uint8_t> mask(6, 1);
  o.mask = attn::mask_tensor();
  o.inputs.mask = ByteView::dense(mask.data(), {2, 3});
  CHECK_THROWS_AS(ref::core_reference(t, t, t, o), std::invalid_argument);  // [2, 3] is not [Sq, Sk]
  CHECK_THROWS_AS(ref::keeps(attn::random_blocks(2, 1, 0), 0, 0), std::invalid_argument);
  CHECK_THROWS_AS(ref::keeps(attn::padding(), 0, 0), std::invalid_argument);
}

}  // namespace

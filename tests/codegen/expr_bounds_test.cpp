// The block bounds and key spans of mask_mod expressions (expr_bounds.h, expr_spans.h), folded to
// constants for concrete blocks and checked pair by pair against the reference's own evaluator:
// "never" only where no pair is kept, "always" only where every pair is, the hull holds every
// kept key, the kept-by-all span only keys every query keeps. And the examples skip.
#include "attnc/expr_bounds.h"

#include <doctest/doctest.h>

#include <random>
#include <string>

#include "attn/expr_text.h"
#include "attn/spec_text.h"
#include "attn/validate.h"
#include "attnc/expr_spans.h"
#include "expr_random.h"
#include "expr_reference.h"

namespace {

using attnc::BlockTruth;
using attnc::PairBlock;
using Halide::Expr;

attn::ExprTree parsed(const std::string &text) {
  const attn::ExprParse p = attn::parse_expr(text);
  REQUIRE_MESSAGE(p.ok, p.message);
  return p.tree;
}

int64_t folded(const Expr &e) {
  const Expr s = Halide::Internal::simplify(Halide::cast<int64_t>(e));
  const std::optional<int64_t> v = Halide::Internal::as_const_int(s);
  REQUIRE_MESSAGE(v.has_value(), "not a constant: ", s);
  return *v;
}

struct Block {
  int64_t q_lo, q_hi, k_lo, k_hi, head, batch, seq_q, seq_k;
};

PairBlock pair_block(const Block &b, int group) {
  // Bottom-right: row i sits at q = i + Sk - Sq.
  const int64_t offset = b.seq_k - b.seq_q;
  auto c = [](int64_t v) { return Expr(static_cast<int32_t>(v)); };
  return {c(b.q_lo), c(b.q_hi),         c(b.q_lo - offset), c(b.q_hi - offset), c(b.k_lo), c(b.k_hi),
          c(b.head), c(b.head / group), c(b.batch),         c(b.seq_q),         c(b.seq_k)};
}

bool kept(const attn::ExprTree &e, const Block &b, int group, int64_t q, int64_t k,
          const attnc::reference::CapturedViews &tensors) {
  const attnc::reference::ExprVars v{b.batch, b.head, b.head / group, q, k, q - (b.seq_k - b.seq_q),
                                     b.seq_q, b.seq_k};
  return attnc::reference::eval_mask(e, v, tensors);
}

// Checks every bound for one block against every pair in it; returns {never, always}.
std::pair<bool, bool> check_block(const attn::ExprTree &e, const Block &b, int group,
                                  const attnc::reference::CapturedViews &tensors) {
  const BlockTruth t = attnc::mask_mod_on_block(e, pair_block(b, group));
  const bool never = folded(t.never) != 0, always = folded(t.always) != 0;
  const std::optional<attnc::KeyInterval> hull = attnc::mask_mod_key_hull(e, pair_block(b, group));
  const attnc::KeyInterval all = attnc::mask_mod_kept_by_all(e, pair_block(b, group));
  const int64_t all_first = folded(all.first), all_last = folded(all.last);
  for (int64_t q = b.q_lo; q <= b.q_hi; ++q) {
    for (int64_t k = b.k_lo; k <= b.k_hi; ++k) {
      const bool keep = kept(e, b, group, q, k, tensors);
      CAPTURE(q);
      CAPTURE(k);
      if (never) CHECK_FALSE(keep);
      if (always) CHECK(keep);
      if (hull && keep) {
        CHECK(k >= folded(hull->first));
        CHECK(k <= folded(hull->last));
      }
      if (k >= all_first && k <= all_last) CHECK(keep);
    }
  }
  return {never, always};
}

TEST_CASE("the issue's masks are false on the blocks they remove and true where they keep all") {
  const attnc::reference::CapturedViews none;
  struct Case {
    const char *mask;
    Block block;
    bool never, always;
  };
  // Sq = Sk = 4096: blocks of 64 queries by 64 keys.
  const Case cases[] = {
      {"q >= k", {128, 191, 192, 255, 0, 0, 4096, 4096}, true, false},
      {"q >= k", {128, 191, 64, 127, 0, 0, 4096, 4096}, false, true},
      {"q >= k", {128, 191, 128, 191, 0, 0, 4096, 4096}, false, false},
      {"q - k < 256 && q >= k", {1024, 1087, 512, 575, 0, 0, 4096, 4096}, true, false},
      {"q - k < 256 && q >= k", {1024, 1087, 832, 895, 0, 0, 4096, 4096}, false, true},
      {"k < 16 || q < 16", {64, 127, 64, 127, 0, 0, 4096, 4096}, true, false},
      {"k < 16 || q < 16", {64, 127, 0, 15, 0, 0, 4096, 4096}, false, true},
      {"(q / 64) == (k / 64)", {128, 191, 0, 63, 0, 0, 4096, 4096}, true, false},
      {"(q / 64) == (k / 64)", {128, 191, 128, 191, 0, 0, 4096, 4096}, false, true},
      {"q >= k && h < 2", {128, 191, 0, 63, 3, 0, 4096, 4096}, true, false},
  };
  for (const Case &c : cases) {
    CAPTURE(c.mask);
    CAPTURE(c.block.k_lo);
    const auto [never, always] = check_block(parsed(c.mask), c.block, 1, none);
    CHECK(never == c.never);
    CHECK(always == c.always);
  }
  // Key hulls for a query block: what the cores visit.
  const PairBlock tile = pair_block({1024, 1087, 0, 0, 0, 0, 4096, 4096}, 1);
  const std::optional<attnc::KeyInterval> causal = attnc::mask_mod_key_hull(parsed("q >= k"), tile);
  REQUIRE(causal.has_value());
  CHECK(folded(causal->first) == 0);
  CHECK(folded(causal->last) == 1087);
  const std::optional<attnc::KeyInterval> window =
      attnc::mask_mod_key_hull(parsed("q - k < 256 && q >= k"), tile);
  REQUIRE(window.has_value());
  CHECK(folded(window->first) == 1024 - 255);
  CHECK(folded(window->last) == 1087);
  const attnc::KeyInterval kept = attnc::mask_mod_kept_by_all(parsed("q - k < 256 && q >= k"), tile);
  CHECK(folded(kept.first) == 1087 - 255);
  CHECK(folded(kept.last) == 1024);
}

// The subtree at node n as an expression of its own (post-order, operands first).
int copy_subtree(const attn::ExprTree &from, int n, attn::ExprTree &to) {
  attn::ExprNode node = from.nodes[n];
  for (int a = 0; a < node.argc; ++a) node.arg[a] = static_cast<int8_t>(copy_subtree(from, node.arg[a], to));
  to.nodes[to.count] = node;
  return to.count++;
}

// Alternative j of a random mask_mod: select(pick[1] == 0, E0, select(pick[1] == 1, E1, ...)).
attn::ExprTree alternative(const attn::ExprTree &chain, int j) {
  int n = chain.root();
  for (int step = 0; step < j && chain.nodes[n].op == attn::ExprOp::select; ++step) n = chain.nodes[n].arg[2];
  if (chain.nodes[n].op == attn::ExprOp::select) n = chain.nodes[n].arg[1];
  attn::ExprTree e;
  copy_subtree(chain, n, e);
  return e;
}

TEST_CASE("random masks: every derived bound holds pair by pair") {
  std::mt19937 rng(3402);
  int blocks = 0, never_blocks = 0, always_blocks = 0;
  for (int n = 0; n < 12; ++n) {
    const std::string spec_text = attnc::test::random_expr_spec(attnc::test::expr_random_seed + 1, n);
    const attn::ParseResult spec = attn::parse_spec(spec_text);
    REQUIRE(spec.ok);
    // Tensors give unknowns; every value 1 keeps the reference's reads in bounds and defined.
    attnc::reference::CapturedViews tensors;
    for (int t = 0; t < spec.spec.captured.count; ++t) {
      const attn::CapturedInput &c = spec.spec.captured.items[t];
      const bool is_float = c.dtype == attn::InputDType::f32;
      tensors[c.name] = {std::vector<int64_t>(c.rank, 1000), [](const std::vector<int64_t> &) { return 1.0; },
                         is_float};
    }
    const attn::Spec r = attn::resolve(spec.spec);
    for (int j = 0; j < attnc::test::expr_random_picks; ++j) {
      tensors["pick"] = {{2}, [j](const std::vector<int64_t> &) { return static_cast<double>(j); }, false};
      for (int trial = 0; trial < 4; ++trial) {
        const int64_t seq_k = 8 + rng() % 40, seq_q = 1 + rng() % seq_k;
        const int64_t offset = seq_k - seq_q;
        const int64_t q_lo = offset + rng() % seq_q, q_hi = q_lo + rng() % (seq_k - q_lo);
        const int64_t k_lo = rng() % seq_k, k_hi = k_lo + rng() % (seq_k - k_lo);
        const Block block{q_lo, q_hi, k_lo, k_hi, static_cast<int64_t>(rng() % r.heads), 0, seq_q, seq_k};
        CAPTURE(spec_text);
        CAPTURE(j);
        const attn::ExprTree e = alternative(r.mask_mod, j);
        CAPTURE(attn::to_string(e));
        const auto [never, always] = check_block(e, block, r.heads / r.kv_heads, tensors);
        ++blocks;
        never_blocks += never;
        always_blocks += always;
      }
    }
  }
  MESSAGE(blocks, " blocks: ", never_blocks, " provably empty, ", always_blocks, " provably full");
  CHECK(never_blocks > 0);
  CHECK(always_blocks > 0);
}

}  // namespace

// The run-time block mask (issue 34): the pass (block_mask=pass) against a classification written
// here, the attention kernel (block_mask=input) given it against the fp64 reference and reusing it
// across calls, NaN in masked keys, the contract for block masks that disagree with the data, and
// refused calls that write nothing.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <ostream>
#include <random>
#include <vector>

#include "expr_block_mask_specs.h"
#include "kernel_test_support.h"

namespace {

using namespace attnc::test;

using Shape = CallShape;

// Around the 128 x 128 blocks and the cores' tiles; Sq > Sk gives causal rows with no key.
constexpr Shape shapes[] = {{2, 1, 1},     {1, 5, 300},   {2, 300, 300},
                            {1, 129, 385}, {2, 385, 129}, {1, 256, 256}};

constexpr int rows_per_block = 128, keys_per_block = 128;

// Documents of uneven lengths, empty ones (an id no token has) and 1-token ones among them, and
// long ones that fill whole blocks; each batch element starts at another place in the list.
void fill_documents(IndexTensor &doc) {
  constexpr int lengths[] = {1, 0, 300, 1, 0, 130, 2, 1, 260, 0, 17};
  const int64_t batch = doc.shape()[0], seq = doc.shape()[1];
  for (int64_t b = 0; b < batch; ++b) {
    int32_t id = 0;
    int left = lengths[(3 * b) % std::size(lengths)];
    for (int64_t t = 0; t < seq; ++t) {
      while (left == 0) left = lengths[(++id + 3 * b) % std::size(lengths)];
      doc.logical(b * seq + t) = id;
      --left;
    }
  }
}

// flag[h, k]: nonzero except for head 1's keys 128 .. 255, so that head 0 has full blocks and head 1
// partial ones.
void fill_flags(ByteTensor &flag) {
  const int64_t heads = flag.shape()[0], seq = flag.shape()[1];
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t k = 0; k < seq; ++k)
      flag.logical(h * seq + k) = h == 1 && k >= 128 && k < 256 ? 0 : 1 + k % 3;
}

// Both specs' mask_mod at one pair, written from docs/DSL.md: q = Sk - Sq + i, indices clamped.
bool keeps(const Call &call, int64_t b, int64_t h, int64_t i, int64_t k, const Shape &s) {
  const IndexTensor &doc = call.index_tensors.at("doc");
  const int64_t q = s.seq_k - s.seq_q + i, qi = std::clamp<int64_t>(q, 0, s.seq_k - 1);
  const bool same = doc.logical(b * s.seq_k + qi) == doc.logical(b * s.seq_k + k);
  const auto flag = call.byte_tensors.find("flag");
  if (flag == call.byte_tensors.end()) return same;
  return same && (flag->second.logical(h * s.seq_k + k) != 0 || q == k);
}

// The block mask the pass must write, [B', H', ceil(Sq/128), ceil(Sk/128)] row-major: 0 where no
// pair of the block is kept, 2 where all are, else 1.
std::vector<uint8_t> classify(const Call &call, const Shape &s, int64_t batches, int64_t heads) {
  const int64_t nq = (s.seq_q + rows_per_block - 1) / rows_per_block;
  const int64_t nk = (s.seq_k + keys_per_block - 1) / keys_per_block;
  std::vector<uint8_t> out;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t qb = 0; qb < nq; ++qb)
        for (int64_t kb = 0; kb < nk; ++kb) {
          int64_t kept = 0, pairs = 0;
          for (int64_t i = qb * rows_per_block; i < std::min<int64_t>(s.seq_q, (qb + 1) * rows_per_block);
               ++i)
            for (int64_t k = kb * keys_per_block; k < std::min<int64_t>(s.seq_k, (kb + 1) * keys_per_block);
                 ++k) {
              kept += keeps(call, b, h, i, k, s);
              ++pairs;
            }
          out.push_back(kept == 0 ? 0 : kept == pairs ? 2 : 1);
        }
  return out;
}

// An attention call with the suite's documents and flags (its block mask not yet added).
Call attention_call(const attn::Spec &spec, const Shape &s, bool padded, std::mt19937 &rng) {
  Call call = make_call(spec, s.batch, s.seq_q, s.seq_k, padded, rng);
  add_runtime_inputs(spec, call, s.batch, s.seq_q, s.seq_k, padded, MaskShape::b_h_sq_sk, rng);
  fill_documents(call.index_tensors.at("doc"));
  if (auto flag = call.byte_tensors.find("flag"); flag != call.byte_tensors.end()) fill_flags(flag->second);
  return call;
}

// The pass's call on the attention call's q, k and captured tensors, its output at the shape its
// kernel declares (B or 1, H or 1), every byte a sentinel.
Call pass_call(const attn_kernel *pass, const Call &attention, const Shape &s) {
  Call call;
  for (const char *name : {"q", "k"}) call.tensors.emplace(name, attention.tensors.at(name));
  call.index_tensors.emplace("doc", attention.index_tensors.at("doc"));
  if (auto flag = attention.byte_tensors.find("flag"); flag != attention.byte_tensors.end())
    call.byte_tensors.emplace("flag", flag->second);
  attn_arg_info info{};
  REQUIRE(attn_kernel_arg(pass, attn_kernel_arg_count(pass) - 1, &info) == ATTN_OK);
  REQUIRE(std::string(info.name) == "block_mask");
  // B or a fixed 1, H or a fixed 1: as the mask_mod reads b, h and kvh.
  const std::vector<int64_t> shape = {info.fixed_shape[0] > 0 ? info.fixed_shape[0] : s.batch,
                                      info.fixed_shape[1], (s.seq_q + 127) / 128, (s.seq_k + 127) / 128};
  call.byte_tensors.emplace("block_mask", ByteTensor(shape, false, 0xEE));
  call.byte_tensors.at("block_mask").fill(0xEE);
  return call;
}

struct Kernels {
  attn::Spec attention, pass;
  const attn_kernel *run, *classify;
};
Kernels kernels(const BlockMaskSpecs &texts) {
  Kernels k{parse(texts.attention), parse(texts.pass), nullptr, nullptr};
  k.run = find_kernel(k.attention);
  k.classify = find_kernel(k.pass);
  REQUIRE(k.run != nullptr);
  REQUIRE(k.classify != nullptr);
  return k;
}

// The pass's block mask for an attention call.
ByteTensor block_mask_of(const Kernels &k, const Call &attention, const Shape &s) {
  Call pass = pass_call(k.classify, attention, s);
  const attn_status status = pass.run(k.classify);
  INFO("pass: ", status_name(status), ": ", last_error());
  REQUIRE(status == ATTN_OK);
  return pass.byte_tensors.at("block_mask");
}

void refill(Call &call, std::mt19937 &rng) {
  for (const char *name : {"q", "k", "v"}) call.tensors.at(name).fill_normal(rng);
  call.tensors.at("out").fill(output_sentinel);
  if (call.tensors.count("lse")) call.tensors.at("lse").fill(output_sentinel);
}

TEST_CASE("the pass classifies every 128 x 128 block as the mask_mod does pair by pair") {
  std::mt19937 rng(341);
  for (const BlockMaskSpecs &texts : block_mask_specs) {
    const Kernels k = kernels(texts);
    for (const Shape &s : shapes) {
      CAPTURE(texts.pass);
      CAPTURE(s);
      const Call attention = attention_call(k.attention, s, false, rng);
      const ByteTensor mask = block_mask_of(k, attention, s);
      const std::vector<uint8_t> want = classify(attention, s, mask.shape()[0], mask.shape()[1]);
      REQUIRE(static_cast<int64_t>(want.size()) == mask.elements());
      int64_t wrong = 0;
      for (int64_t n = 0; n < mask.elements(); ++n) wrong += mask.logical(n) != want[static_cast<size_t>(n)];
      CHECK(wrong == 0);
      CHECK(mask.padding_intact());
    }
  }
}

TEST_CASE("attention given the pass's block mask matches the fp64 reference, and reuses it") {
  std::mt19937 rng(342);
  for (const BlockMaskSpecs &texts : block_mask_specs) {
    const Kernels k = kernels(texts);
    for (size_t n = 0; n < std::size(shapes); ++n) {
      const Shape &s = shapes[n];
      const bool padded = n % 2 == 1;
      CAPTURE(texts.attention);
      CAPTURE(s);
      CAPTURE(padded);
      Call call = attention_call(k.attention, s, padded, rng);
      call.byte_tensors.emplace("block_mask", block_mask_of(k, call, s));
      for (int again = 0; again < 2; ++again) {  // the second call: new q, k, v, the same block mask
        CAPTURE(again);
        if (again) refill(call, rng);
        run_and_check_nonfinite(k.attention, k.run, call);
      }
    }
  }
}

// NaN in every key of one document (batch 1's tokens 1 .. 130): the rows of the documents after
// it share its partial blocks and never see it; the document's own rows turn NaN.
TEST_CASE("NaN in the keys a row's mask removes stays out; a NaN in a kept key propagates") {
  std::mt19937 rng(343);
  for (const BlockMaskSpecs &texts : block_mask_specs) {
    const Kernels k = kernels(texts);
    const Shape s{2, 300, 300};
    CAPTURE(texts.attention);
    Call call = attention_call(k.attention, s, false, rng);
    call.byte_tensors.emplace("block_mask", block_mask_of(k, call, s));
    const IndexTensor &doc = call.index_tensors.at("doc");
    const int64_t b = 1, poisoned = doc.logical(b * s.seq_k + 60);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (int64_t key = 0; key < s.seq_k; ++key) {
      if (doc.logical(b * s.seq_k + key) != poisoned) continue;
      for (const char *name : {"k", "v"}) {
        Tensor &t = call.tensors.at(name);
        const int64_t per_key = t.elements() / (s.batch * s.seq_k);
        for (int64_t e = 0; e < per_key; ++e) t.logical((b * s.seq_k + key) * per_key + e) = nan;
      }
    }
    run_and_check_nonfinite(k.attention, k.run, call);
  }
}

// docs/DSL.md's contract: the kernel trusts the block mask's 0 and 2; any other byte is partial.
TEST_CASE(
    "a block mask that disagrees with the data: empty drops, full keeps every pair, other bytes are "
    "partial") {
  std::mt19937 rng(344);
  const Kernels k = kernels(block_mask_specs[1]);
  const Shape s{2, 300, 300};
  Call call = attention_call(k.attention, s, false, rng);
  ByteTensor all(std::vector<int64_t>{3, 3}, false, 0);  // [nq, nk]: B and H broadcast
  call.byte_tensors.emplace("block_mask", all);
  SUBCASE("every byte 7 (no pass writes it): partial everywhere, the exact result") {
    call.byte_tensors.at("block_mask").fill(7);
    run_and_check_nonfinite(k.attention, k.run, call);
  }
  SUBCASE("every block empty: every row is fully masked (zeros, lse -inf)") {
    call.byte_tensors.at("block_mask").fill(0);
    attn::Spec nothing_kept = k.attention;
    nothing_kept.mask_mod = parse(R"(heads=2 head_dim=16 mask_mod="k < 0")").mask_mod;
    run_and_check_nonfinite(nothing_kept, k.run, call);
  }
  SUBCASE("every block full: the mask_mod never runs, only mask=causal holds") {
    call.byte_tensors.at("block_mask").fill(2);
    attn::Spec causal_only = k.attention;
    causal_only.mask_mod = attn::ExprTree{};
    run_and_check_nonfinite(causal_only, k.run, call);
  }
}

// Near the diagonal the mask_mod holds at every pair (q - k < 150); farther out it keeps every
// 7th key: both sweeps of the block core run, against the reference.
TEST_CASE("blocks a mask_mod provably keeps whole run without it, with the same result") {
  std::mt19937 rng(346);
  const attn::Spec spec = parse(provably_true_spec);
  const attn_kernel *kernel = find_kernel(spec);
  REQUIRE(kernel != nullptr);
  for (const Shape &s : shapes) {
    CAPTURE(s);
    Call call = make_call(spec, s.batch, s.seq_q, s.seq_k, false, rng);
    run_and_check_nonfinite(spec, kernel, call);
  }
}

TEST_CASE("a block mask of the wrong shape or dtype is refused, and nothing is written") {
  std::mt19937 rng(345);
  const Kernels k = kernels(block_mask_specs[0]);
  const Shape s{2, 300, 300};
  Call call = attention_call(k.attention, s, false, rng);
  SUBCASE("one query block too many") {
    call.byte_tensors.emplace("block_mask", ByteTensor(std::vector<int64_t>{2, 1, 4, 3}, false, 0));
    CHECK(call.run(k.run) == ATTN_ERR_SHAPE);
    CHECK(last_error().find("ceil(Sq/128)") != std::string::npos);
  }
  SUBCASE("one key block too few") {
    call.byte_tensors.emplace("block_mask", ByteTensor(std::vector<int64_t>{3, 2}, false, 0));
    CHECK(call.run(k.run) == ATTN_ERR_SHAPE);
  }
  SUBCASE("int32 instead of uint8") {
    call.index_tensors.emplace("block_mask", IndexTensor(std::vector<int64_t>{3, 3}, false, 0));
    CHECK(call.run(k.run) == ATTN_ERR_DTYPE);
  }
  SUBCASE("the pass's output of the wrong shape") {
    Call pass = pass_call(k.classify, call, s);
    pass.byte_tensors.insert_or_assign("block_mask",
                                       ByteTensor(std::vector<int64_t>{2, 1, 3, 4}, false, 0xEE));
    pass.byte_tensors.at("block_mask").fill(0xEE);
    CHECK(pass.run(k.classify) == ATTN_ERR_SHAPE);
    CHECK(pass.byte_tensors.at("block_mask").all_padding());
  }
  CHECK(call.tensors.at("out").all_padding());
}

}  // namespace

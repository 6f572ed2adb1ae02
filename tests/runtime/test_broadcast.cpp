// test_broadcast.cpp: broadcast arguments (lower ranks, size-1 dims) and kernel value checks.
#include <doctest/doctest.h>

#include <iterator>
#include <string>
#include <vector>

#include "arg_dims.h"
#include "attn/runtime.hpp"
#include "fake_masked_kernel.h"

namespace {

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

std::string shape_text(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

// One mask form a caller may give: its shape and, for each of its dims, the declared dim it is.
struct MaskForm {
  const char *what;
  std::vector<int64_t> shape;
  std::vector<int> declared;
};

// Runs call on desc, expects status and a message with every part; out and the kernel untouched.
void check_refused(fake::MaskedCall &call, const attn_kernel_desc &desc, attn_status status,
                   std::initializer_list<std::string> parts) {
  const int runs_before = fake::mask_seen.runs;
  const attn_status got = call.run(desc);
  const std::string message = attn_last_error();
  CAPTURE(message);
  CHECK(std::string(attn_status_name(got)) == attn_status_name(status));
  for (const std::string &part : parts) CHECK_MESSAGE(contains(message, part), "missing '" << part << "'");
  CHECK(call.core.out_untouched());
  CHECK(fake::mask_seen.runs == runs_before);
}

constexpr int64_t B = 2, H = fake::heads, Sq = 3, Sk = 5;

}  // namespace

TEST_CASE("every accepted mask form reaches the kernel at full size, stride 0 where it broadcasts") {
  const MaskForm forms[] = {
      {"[Sq, Sk]", {Sq, Sk}, {2, 3}},
      {"[H, Sq, Sk]: the missing dim is B (aligned from the right, as NumPy)", {H, Sq, Sk}, {1, 2, 3}},
      {"[1, Sq, Sk]", {1, Sq, Sk}, {1, 2, 3}},
      {"[B, H, Sq, Sk]", {B, H, Sq, Sk}, {0, 1, 2, 3}},
      {"[1, 1, Sq, Sk]", {1, 1, Sq, Sk}, {0, 1, 2, 3}},
      {"[B, 1, Sq, Sk]", {B, 1, Sq, Sk}, {0, 1, 2, 3}},
      {"[1, H, Sq, Sk]", {1, H, Sq, Sk}, {0, 1, 2, 3}},
  };
  for (const MaskForm &form : forms) {
    CAPTURE(form.what);
    fake::MaskedCall call(form.shape);
    REQUIRE(call.run() == ATTN_OK);

    // Expected Halide strides: the caller's row-major ones where it gives a dim in full, else 0.
    int64_t halide_stride[4] = {0, 0, 0, 0};
    int64_t stride = 1;
    for (int c = static_cast<int>(form.shape.size()) - 1; c >= 0; --c) {
      const int d = form.declared[static_cast<size_t>(c)];
      const bool broadcast = d <= 1 && form.shape[static_cast<size_t>(c)] == 1;
      halide_stride[3 - d] = broadcast ? 0 : stride;
      stride *= form.shape[static_cast<size_t>(c)];
    }
    const fake::BufferSeen &seen = fake::mask_seen;
    CHECK(seen.dimensions == 4);
    CHECK(seen.host == call.mask.data());
    CHECK(seen.extent[0] == Sk);
    CHECK(seen.extent[1] == Sq);
    CHECK(seen.extent[2] == H);
    CHECK(seen.extent[3] == B);
    for (int h = 0; h < 4; ++h) {
      CAPTURE(h);
      CHECK(seen.stride[h] == halide_stride[h]);
    }
    for (int64_t b = 0; b < B; ++b)
      for (int64_t s = 0; s < Sq; ++s)
        for (int64_t h = 0; h < H; ++h)
          for (int64_t e = 0; e < fake::head_dim_v; ++e) {
            const size_t i = static_cast<size_t>(((b * Sq + s) * H + h) * fake::head_dim_v + e);
            CHECK(call.core.out[i] == call.expected(form.declared, b, s, h, e));
          }
  }
}

TEST_CASE("a broadcastable dim given in full is an ordinary dim") {
  fake::MaskedCall call({B, H, Sq, Sk});
  SUBCASE("a padded mask keeps its strides") {
    // Each key row padded to 8 bytes: the kernel must see stride 8, not 5.
    const int64_t strides[] = {H * Sq * 8, Sq * 8, 8, 1};
    std::vector<uint8_t> padded(static_cast<size_t>(B * H * Sq * 8), 0);
    for (int64_t row = 0; row < B * H * Sq; ++row)
      for (int64_t j = 0; j < Sk; ++j)
        padded[static_cast<size_t>(row * 8 + j)] = call.mask[static_cast<size_t>(row * Sk + j)];
    attn_register_kernel(&fake::masked);
    std::vector<attn_arg> args = {{"mask", {padded.data(), ATTN_U8, 4, call.mask_shape.data(), strides}}};
    args.insert(args.end(), call.core.args.begin(), call.core.args.end());
    REQUIRE(attn_run(fake::find("fake_masked"), args.data(), static_cast<int>(args.size())) == ATTN_OK);
    CHECK(fake::mask_seen.stride[1] == 8);
    CHECK(fake::mask_seen.stride[2] == Sq * 8);
    CHECK(call.core.out[0] == call.expected({0, 1, 2, 3}, 0, 0, 0, 0));
  }
  SUBCASE("the only tensor naming a dim sets it, broadcast or not") {
    for (const std::vector<int64_t> &shape : {std::vector<int64_t>{4}, {1, 4}, {3, 4}}) {
      CAPTURE(shape_text(shape));
      std::vector<float> bias(static_cast<size_t>(shape.size() == 1 ? 4 : shape[0] * 4));
      for (size_t i = 0; i < bias.size(); ++i) bias[i] = static_cast<float>(i + 1);
      std::vector<float> out(4, -1.0f);
      const int64_t out_shape[] = {4};
      attn_register_kernel(&fake::group_bias);
      const attn_arg args[] = {
          {"bias", {bias.data(), ATTN_F32, static_cast<int32_t>(shape.size()), shape.data(), nullptr}},
          {"out", {out.data(), ATTN_F32, 1, out_shape, nullptr}}};
      REQUIRE(attn_run(fake::find("fake_group_bias"), args, 2) == ATTN_OK);
      const int64_t groups = shape.size() == 1 ? 1 : shape[0];
      CHECK(fake::bias_seen.dimensions == 2);
      CHECK(fake::bias_seen.extent[0] == 4);
      CHECK(fake::bias_seen.extent[1] == groups);
      CHECK(fake::bias_seen.stride[1] == (groups == 1 ? 0 : 4));
      for (int64_t e = 0; e < 4; ++e) {
        float sum = 0;
        for (int64_t g = 0; g < groups; ++g) sum += bias[static_cast<size_t>(g * 4 + e)];
        CHECK(out[static_cast<size_t>(e)] == sum);
      }
    }
  }
}

TEST_CASE("only H may be 1 where it alone broadcasts") {
  fake::MaskedCall call({B, 1, Sq, Sk});
  REQUIRE(call.run(fake::masked_h_only) == ATTN_OK);
  CHECK(fake::mask_seen.extent[2] == H);
  CHECK(fake::mask_seen.stride[2] == 0);
  CHECK(fake::mask_seen.stride[3] == Sq * Sk);
  CHECK(call.core.out[0] == call.expected({0, 1, 2, 3}, 0, 0, 0, 0));
}

TEST_CASE("mask forms the kernel refuses") {
  SUBCASE("a broadcast dim of a fixed size that is neither that size nor 1") {
    fake::MaskedCall call({B, 3, Sq, Sk});
    check_refused(call, fake::masked, ATTN_ERR_SHAPE,
                  {"tensor 'mask': dim 1 (H) is 3, kernel expects 2 or 1 (broadcast)"});
  }
  SUBCASE("rank 3 aligns from the right, as NumPy: [H, Sq, Sk], never [B, Sq, Sk]") {
    // Its first dim is H, fixed at 2 (or 1), whatever B is.
    fake::MaskedCall call({3, Sq, Sk});
    check_refused(call, fake::masked, ATTN_ERR_SHAPE,
                  {"tensor 'mask': dim 0 (H) is 3, kernel expects 2 or 1 (broadcast)"});
  }
  SUBCASE("a broadcast dim of a runtime size that other tensors set otherwise, though checked first") {
    fake::MaskedCall call({3, H, Sq, Sk});
    check_refused(
        call, fake::masked, ATTN_ERR_SHAPE,
        {"tensor 'mask': dim 0 (B) is 3, but tensor 'q' set B to 2; kernel expects 2 or 1 (broadcast)"});
  }
  SUBCASE("a dim that cannot broadcast, given as 1") {
    fake::MaskedCall call({1, H, Sq, Sk});
    check_refused(call, fake::masked_h_only, ATTN_ERR_SHAPE, {"'q'", "(B) is 2", "'mask' set B to 1"});
  }
  SUBCASE("a rank below min_rank") {
    fake::MaskedCall call({Sk});
    check_refused(
        call, fake::masked, ATTN_ERR_RANK,
        {"tensor 'mask' has rank 1, kernel expects 2 to 4: [B, H, Sq, Sk], a lower rank leaving out "
         "dim 0 (B), then dim 1 (H)"});
  }
  SUBCASE("a rank above the declared rank") {
    fake::MaskedCall call({1, B, H, Sq, Sk});
    check_refused(call, fake::masked, ATTN_ERR_RANK, {"tensor 'mask' has rank 5, kernel expects 2 to 4"});
  }
  SUBCASE("a missing dim that does not broadcast") {
    fake::MaskedCall call({B, Sq, Sk});
    check_refused(call, fake::masked_h_only, ATTN_ERR_RANK,
                  {"tensor 'mask' has rank 3, but dim 0 (B) cannot be left out: it does not broadcast",
                   "kernel expects 4 ([B, H, Sq, Sk])"});
  }
  SUBCASE("a rank below min_rank where no dim may be left out") {
    fake::MaskedCall call({Sq, Sk});
    check_refused(call, fake::masked_h_only, ATTN_ERR_RANK, {"tensor 'mask' has rank 2, kernel expects 4"});
  }
  SUBCASE("a lower-rank mask is described in its own dims") {
    fake::MaskedCall call({0, Sk});
    check_refused(call, fake::masked, ATTN_ERR_SHAPE, {"tensor 'mask': dim 0 (Sq) is 0"});
  }
  SUBCASE("a lower-rank mask sets the sizes of the dims it gives") {
    fake::MaskedCall call({Sq, Sk + 1});
    check_refused(call, fake::masked, ATTN_ERR_SHAPE, {"tensor 'k': dim 1 (Sk) is 5", "'mask' set Sk to 6"});
  }
  SUBCASE("a mask that fits, but not once broadcast") {
    // [Sq, Sk] holds 2^30 elements; broadcast over B 2 and H 2 it would be 2^32.
    fake::MaskedCall call({1, 1});
    call.core.seq_q = int64_t{1} << 19;
    call.core.seq_k = int64_t{1} << 11;
    call.core.q_shape = {B, call.core.seq_q, H, fake::head_dim};
    call.core.k_shape = {B, call.core.seq_k, 1, fake::head_dim};
    call.core.v_shape = {B, call.core.seq_k, 1, fake::head_dim_v};
    call.core.out_shape = {B, call.core.seq_q, H, fake::head_dim_v};
    call.core.bind();  // never read: the call is refused before the kernel runs
    call.mask_shape = {call.core.seq_q, call.core.seq_k};
    check_refused(call, fake::masked, ATTN_ERR_SHAPE,
                  {"tensor 'mask' broadcasts to more than 2147483647 elements"});
  }
}

TEST_CASE("the C++ wrapper states the rank rule as the runtime applies it") {
  const attn_arg_info infos[] = {
      fake::masked.args[0],                   // B, H broadcast, min rank 2
      fake::masked_h_only.args[0],            // H only, min rank 3
      fake::group_bias.args[0],               // G, min rank 1
      fake::masked.args[1],                   // q: no broadcasting
      {"x", ATTN_F32, 5, 0, {}, {}, 0x7, 0},  // broadcasts, but min_rank 0: exactly 5
      {"y", ATTN_F32, 5, 0, {}, {}, 0x1, 2},  // min_rank 2, but only one leading dim may go
  };
  for (const attn_arg_info &info : infos) {
    CAPTURE(info.name);
    for (int rank = 1; rank <= ATTN_MAX_RANK; ++rank) {
      CAPTURE(rank);
      int declared[ATTN_MAX_RANK];
      const bool runtime_takes = attn::detail::map_caller_dims(info, rank, declared) == ATTN_OK;
      const std::vector<int> wrapper = attn::rt::declared_dims(info, rank);
      CHECK(runtime_takes == !wrapper.empty());
      CHECK(runtime_takes == (rank >= attn::rt::lowest_rank(info) && rank <= info.rank));
      for (size_t j = 0; runtime_takes && j < wrapper.size(); ++j) CHECK(wrapper[j] == declared[j]);
    }
  }
  CHECK(attn::rt::declared_dims(fake::masked.args[0], 3) == std::vector<int>{1, 2, 3});
  CHECK(attn::rt::declared_dims(fake::masked.args[0], 2) == std::vector<int>{2, 3});
  CHECK(attn::rt::lowest_rank(fake::masked.args[0]) == 2);
  CHECK(attn::rt::dim_broadcasts(fake::masked.args[0], 1));
  CHECK_FALSE(attn::rt::dim_broadcasts(fake::masked.args[0], 2));
}

TEST_CASE("the C++ wrapper runs a lower-rank u8 mask") {
  fake::MaskedCall call({Sq, Sk});
  attn_register_kernel(&fake::masked);
  const auto kernel = attn::rt::Kernel::find("fake_masked");
  REQUIRE(kernel.ok());
  CHECK(kernel->args()[0].broadcast_dims == 0x3u);
  CHECK(kernel->args()[0].min_rank == 2);
  const attn::rt::Tensor mask(call.mask.data(), call.mask_shape), q(call.core.q.data(), call.core.q_shape),
      k(call.core.k.data(), call.core.k_shape), v(call.core.v.data(), call.core.v_shape);
  attn::rt::Tensor out(call.core.out.data(), call.core.out_shape);
  CHECK(mask.view().dtype == ATTN_U8);
  const attn::rt::Status ok =
      attn::rt::run(*kernel, {{"mask", mask}, {"q", q}, {"k", k}, {"v", v}, {"out", out}});
  CHECK(ok.ok());
  CHECK(call.core.out[0] == call.expected({2, 3}, 0, 0, 0, 0));
}

TEST_CASE("a kernel's failed requirement is an invalid value with the kernel's message") {
  fake::CoreCall call;
  SUBCASE("with a message") {
    CHECK(call.run(fake::invalid_value) == ATTN_ERR_INVALID_VALUE);
    const std::string message = attn_last_error();
    CAPTURE(message);
    CHECK(contains(message, fake::requirement_message));
    CHECK(contains(message, "fake_invalid_value"));
    CHECK(std::string(attn_status_name(ATTN_ERR_INVALID_VALUE)) == "ATTN_ERR_INVALID_VALUE");
  }
  SUBCASE("without one") {
    CHECK(call.run(fake::invalid_value_silent) == ATTN_ERR_INVALID_VALUE);
    CHECK(contains(attn_last_error(), "no message"));
  }
  SUBCASE("through the C++ wrapper") {
    attn_register_kernel(&fake::invalid_value);
    const auto kernel = attn::rt::Kernel::find("fake_invalid_value");
    REQUIRE(kernel.ok());
    const attn::rt::Tensor q(call.q.data(), call.q_shape), k(call.k.data(), call.k_shape),
        v(call.v.data(), call.v_shape);
    attn::rt::Tensor out(call.out.data(), call.out_shape);
    const attn::rt::Status status = attn::rt::run(*kernel, {{"q", q}, {"k", k}, {"v", v}, {"out", out}});
    CHECK(status.code() == ATTN_ERR_INVALID_VALUE);
    CHECK(std::string(status.name()) == "ATTN_ERR_INVALID_VALUE");
    CHECK(contains(status.message(), fake::requirement_message));
  }
  CHECK(call.out_untouched());
}

TEST_CASE("tables whose broadcasting cannot work are refused") {
  struct Broken {
    const char *id;
    attn_arg_info arg;
    const char *why;
  };
  static const Broken broken[] = {
      {"fake_output_broadcasts",
       {"out", ATTN_F32, 2, 1, {0, 4}, {"G", nullptr}, 0x1, 0},
       "outputs never broadcast"},
      {"fake_output_min_rank",
       {"out", ATTN_F32, 2, 1, {0, 4}, {"G", nullptr}, 0, 1},
       "outputs never broadcast"},
      {"fake_min_rank_above_rank", {"x", ATTN_F32, 2, 0, {0, 4}, {"G", nullptr}, 0x1, 3}, "min_rank 3"},
      {"fake_negative_min_rank", {"x", ATTN_F32, 2, 0, {0, 4}, {"G", nullptr}, 0x1, -1}, "min_rank -1"},
      {"fake_bits_beyond_rank", {"x", ATTN_F32, 2, 0, {0, 4}, {"G", nullptr}, 0x5, 0}, "beyond its rank 2"},
  };
  static attn_kernel_desc descs[std::size(broken)];  // tables live as long as the registry
  for (size_t i = 0; i < std::size(broken); ++i) {
    const Broken &b = broken[i];
    CAPTURE(b.id);
    descs[i] = fake::group_bias;
    descs[i].id = b.id;
    descs[i].arg_count = 1;
    descs[i].args = &b.arg;
    attn_register_kernel(&descs[i]);
    const attn_kernel *kernel = nullptr;
    CHECK(attn_find_kernel(b.id, &kernel) == ATTN_ERR_ABI_MISMATCH);
    CHECK(contains(attn_last_error(), b.why));
  }
}

// test_tensor_errors.cpp: every bad tensor gets its own status and message, and out stays untouched.
#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "fake_kernel.h"

namespace {

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

// Runs call, expects status, checks the message mentions every part and that out is untouched.
void check_refused(fake::CoreCall &call, attn_status status, std::initializer_list<std::string> parts) {
  const int runs_before = fake::observed.runs;
  const attn_status got = call.run();
  const std::string message = attn_last_error();
  CAPTURE(message);
  CHECK(std::string(attn_status_name(got)) == attn_status_name(status));
  for (const std::string &part : parts) CHECK_MESSAGE(contains(message, part), "missing '" << part << "'");
  CHECK(call.out_untouched());
  CHECK(fake::observed.runs == runs_before);
}

}  // namespace

TEST_CASE("tensor names: unknown, duplicated, missing") {
  fake::CoreCall call;
  SUBCASE("a name the kernel does not take") {
    call.args.push_back({"bias", call.args[0].tensor});
    check_refused(call, ATTN_ERR_UNKNOWN_TENSOR, {"'bias'", "q, k, v, out"});
  }
  SUBCASE("a name given twice") {
    call.args.push_back(call.args[0]);
    check_refused(call, ATTN_ERR_UNKNOWN_TENSOR, {"'q'", "twice"});
  }
  SUBCASE("a null name") {
    call.args[1].name = nullptr;
    check_refused(call, ATTN_ERR_UNKNOWN_TENSOR, {"argument 1", "null name"});
  }
  SUBCASE("a missing tensor") {
    call.args.erase(call.args.begin() + 2);
    check_refused(call, ATTN_ERR_MISSING_TENSOR, {"'v'", "missing"});
  }
  SUBCASE("a missing output") {
    call.args.pop_back();
    check_refused(call, ATTN_ERR_MISSING_TENSOR, {"'out'"});
  }
}

TEST_CASE("null data and dtype") {
  fake::CoreCall call;
  SUBCASE("null data") {
    call.args[2].tensor.data = nullptr;
    check_refused(call, ATTN_ERR_NULL_DATA, {"'v'", "null data"});
  }
  SUBCASE("wrong dtype") {
    call.args[0].tensor.dtype = ATTN_F16;
    check_refused(call, ATTN_ERR_DTYPE, {"tensor 'q' has dtype f16, kernel expects f32"});
  }
  SUBCASE("a dtype outside the enum") {
    // As a C caller could store it: converting 42 to attn_dtype in C++ would be undefined.
    const int forty_two = 42;
    std::memcpy(&call.args[3].tensor.dtype, &forty_two, sizeof(forty_two));
    check_refused(call, ATTN_ERR_DTYPE, {"'out'", "42"});
  }
}

TEST_CASE("rank") {
  fake::CoreCall call;
  SUBCASE("a rank the kernel does not expect") {
    call.args[1].tensor.rank = 3;
    check_refused(call, ATTN_ERR_RANK, {"tensor 'k' has rank 3, kernel expects 4"});
  }
  SUBCASE("rank 0") {
    call.args[0].tensor.rank = 0;
    check_refused(call, ATTN_ERR_RANK, {"'q'", "rank 0", "1..8"});
  }
  SUBCASE("a rank above the maximum") {
    call.args[0].tensor.rank = ATTN_MAX_RANK + 1;
    check_refused(call, ATTN_ERR_RANK, {"'q'", "rank 9"});
  }
  SUBCASE("a null shape") {
    call.args[3].tensor.shape = nullptr;
    check_refused(call, ATTN_ERR_RANK, {"'out'", "null shape"});
  }
}

TEST_CASE("shape") {
  fake::CoreCall call;
  SUBCASE("a fixed size that differs, named dim") {
    call.q_shape[3] = 80;
    call.bind();
    check_refused(call, ATTN_ERR_SHAPE, {"tensor 'q': dim 3 (head_dim) is 80, kernel expects 4"});
    CHECK(std::string(attn_last_error()).find("looks like") == std::string::npos);  // no layout hint
  }
  SUBCASE("a head-major [B,H,S,D] tensor is told the layout the kernel takes") {
    call.q_shape = {2, 2, 3, 4};  // [B, heads, Sq, head_dim]: PyTorch's order
    call.bind();
    check_refused(call, ATTN_ERR_SHAPE,
                  {"tensor 'q': dim 2 (heads) is 3, kernel expects 2; this looks like [B,heads,Sq,head_dim]",
                   "the kernel takes [B,Sq,heads,head_dim], so swap dims 1 and 2"});
  }
  SUBCASE("a fixed size that differs, unnamed dim") {
    call.k_shape[2] = 2;
    call.bind();
    check_refused(call, ATTN_ERR_SHAPE, {"tensor 'k': dim 2 is 2, kernel expects 1"});
  }
  SUBCASE("a runtime size that disagrees with an earlier tensor") {
    call.k_shape[0] = 3;
    call.bind();
    check_refused(call, ATTN_ERR_SHAPE, {"tensor 'k': dim 0 (B) is 3, but tensor 'q' set B to 2"});
  }
  SUBCASE("the key length of v disagrees with k") {
    call.v_shape[1] = 4;
    call.bind();
    check_refused(call, ATTN_ERR_SHAPE, {"'v'", "(Sk) is 4", "'k' set Sk to 5"});
  }
  SUBCASE("out's query length disagrees with q") {
    call.out_shape[1] = 2;
    call.bind();
    check_refused(call, ATTN_ERR_SHAPE, {"'out'", "(Sq) is 2", "'q' set Sq to 3"});
  }
  SUBCASE("a size of 0") {
    call.q_shape[1] = 0;
    call.bind();
    check_refused(call, ATTN_ERR_SHAPE, {"tensor 'q': dim 1 (Sq) is 0", "at least 1"});
  }
  SUBCASE("a negative size") {
    call.k_shape[1] = -5;
    call.bind();
    check_refused(call, ATTN_ERR_SHAPE, {"'k'", "is -5"});
  }
  SUBCASE("a size beyond int32") {
    call.q_shape[1] = 3000000000;
    call.bind();
    check_refused(call, ATTN_ERR_SHAPE, {"'q'", "3000000000", "2147483647"});
  }
  SUBCASE("more elements than int32 addresses") {
    call.q_shape[0] = 70000;
    call.q_shape[1] = 70000;
    call.bind();
    check_refused(call, ATTN_ERR_SHAPE, {"'q'", "elements"});
  }
}

TEST_CASE("strides") {
  fake::CoreCall call;
  SUBCASE("an innermost stride other than 1") {
    const int64_t strides[] = {3 * 2 * 8, 2 * 8, 8, 2};
    call.args[0].tensor.strides = strides;
    check_refused(call, ATTN_ERR_STRIDE, {"'q'", "innermost", "stride 2", "expects 1"});
  }
  SUBCASE("a negative stride") {
    const int64_t strides[] = {-20, 4, 4, 1};
    call.args[1].tensor.strides = strides;
    check_refused(call, ATTN_ERR_STRIDE, {"'k'", "dim 0 (B) has stride -20"});
  }
  SUBCASE("an extent times stride beyond int32") {
    const int64_t strides[] = {int64_t{1} << 31, 4, 4, 1};
    call.args[1].tensor.strides = strides;
    check_refused(call, ATTN_ERR_STRIDE, {"'k'", "2147483648"});
  }
  SUBCASE("a span beyond int32 from several dims") {
    const int64_t strides[] = {1073741823, 429496729, 4, 1};  // each dim fits, their sum does not
    call.args[1].tensor.strides = strides;
    check_refused(call, ATTN_ERR_STRIDE, {"'k'", "spans"});
  }
  SUBCASE("an output whose rows overlap") {
    // heads stride 3 is fine, but Sq stride 4 < heads (2) * 3: rows share elements.
    const int64_t strides[] = {3 * 4, 4, 3, 1};
    call.args[3].tensor.strides = strides;
    check_refused(call, ATTN_ERR_STRIDE, {"output tensor 'out' overlaps itself", "dim 1 (Sq) has stride 4"});
  }
  SUBCASE("an output broadcast over a dim") {
    const int64_t strides[] = {0, 6, 3, 1};
    call.args[3].tensor.strides = strides;
    check_refused(call, ATTN_ERR_STRIDE, {"'out'", "overlaps"});
  }
}

TEST_CASE("invalid calls") {
  fake::CoreCall call;
  const attn_kernel *kernel = fake::find("fake_core");
  REQUIRE(kernel != nullptr);
  CHECK(attn_run(nullptr, call.args.data(), 4) == ATTN_ERR_INVALID_ARGUMENT);
  CHECK(contains(attn_last_error(), "kernel is null"));
  CHECK(attn_run(kernel, nullptr, 4) == ATTN_ERR_INVALID_ARGUMENT);
  CHECK(attn_run(kernel, call.args.data(), -1) == ATTN_ERR_INVALID_ARGUMENT);
  CHECK(attn_run(kernel, nullptr, 0) == ATTN_ERR_MISSING_TENSOR);
  CHECK(call.out_untouched());
}

// Kernels generated with tile sizes from a tuning file (attn_add_kernels TUNING) are exact too.
#include <doctest/doctest.h>

#include <fstream>
#include <iterator>
#include <random>
#include <string>

#include "kernel_test_support.h"

namespace {

using namespace attnc::test;

constexpr const char *tuned_specs[] = {
    "heads=2 head_dim=64 mask=causal",
    "heads=3 head_dim=80 mask=none",
    "heads=4 kv_heads=2 head_dim=32 mask=window(4,4)|causal",
};

std::string manifest_text() {
  std::ifstream in(ATTNC_TUNED_MANIFEST);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("the manifest says which variants run tuned tiles") {
  const std::string manifest = manifest_text();
  REQUIRE(!manifest.empty());
  // Every kernel of the library has an entry for this machine's width, so each is tuned.
  size_t tuned = 0;
  for (size_t at = manifest.find("\"tuned\": true"); at != std::string::npos;
       at = manifest.find("\"tuned\": true", at + 1))
    ++tuned;
  CHECK(tuned == std::size(tuned_specs));
}

TEST_CASE("kernels with tuned tiles match the fp64 reference around their tile edges") {
  for (const char *text : tuned_specs) {
    const attn::Spec spec = parse(text);
    const attn_kernel *kernel = find_kernel(spec);
    REQUIRE(kernel != nullptr);
    for (const int seq_q : {1, 9, 16, 25, 47, 65, 130})
      for (const int seq_k : {1, 8, 23, 41, 64, 129}) {
        CAPTURE(text);
        CAPTURE(seq_q);
        CAPTURE(seq_k);
        std::mt19937 rng(static_cast<unsigned>(seq_q * 131 + seq_k));
        const int batch = 1 + (seq_q + seq_k) % 2;
        Call call = make_core_call(spec, batch, seq_q, seq_k, seq_k % 2 == 0, rng);
        REQUIRE(call.run(kernel) == ATTN_OK);
        const Comparison result = compare(call.tensors.at("out"), expected_result(spec, call));
        CAPTURE(result);
        CHECK(result.pass());
      }
  }
}

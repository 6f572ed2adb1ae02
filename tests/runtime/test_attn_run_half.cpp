// test_attn_run_half.cpp: attn-run on generated dtype=bf16 and dtype=f16 kernels, from 16-bit
// files and from '<f4' files it rounds, against the fp64 reference on the rounded inputs.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "attn/half.hpp"
#include "attn/mask.h"
#include "npy.h"
#include "npy_files.h"
#include "reference.h"

namespace fs = std::filesystem;

namespace {

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

// The library's two kernels: heads=2 head_dim=16 mask=causal, in bf16 and in f16.
constexpr int64_t batch = 2, seq_q = 5, seq_k = 9, heads = 2, head_dim = 16;
const std::string library = HALF_LIB;

struct Storage {
  const char *name;
  attn_dtype dtype;
  const char *kernel;
  uint16_t (*round)(float);
  float (*widen)(uint16_t);
};
const Storage storages[] = {
    {"bf16", ATTN_BF16, "attn_core_h2_kv2_d16_bf16_causal", [](float x) { return attn::rt::to_bf16(x).bits; },
     [](uint16_t b) { return attn::rt::to_float(attn::rt::bf16{b}); }},
    {"f16", ATTN_F16, "attn_core_h2_kv2_d16_f16_causal", [](float x) { return attn::rt::to_f16(x).bits; },
     [](uint16_t b) { return attn::rt::to_float(attn::rt::f16{b}); }},
};

struct Outcome {
  int code = -1;
  std::string err;
};

using attnc::test::array_of;

// q, k, v drawn once (normal, fixed seed), saved as '<f4' and as each storage type's file.
struct Workspace {
  fs::path dir = fs::temp_directory_path() / ("attnc_attn_run_half_test_" + std::to_string(getpid()));
  std::vector<float> q, k, v;

  Workspace() {
    fs::create_directories(dir);
    std::mt19937 random(20);
    std::normal_distribution<float> normal(0.0f, 1.5f);
    for (auto [values, seq] : {std::pair{&q, seq_q}, {&k, seq_k}, {&v, seq_k}}) {
      values->resize(static_cast<size_t>(batch * seq * heads * head_dim));
      for (float &x : *values) x = normal(random);
    }
    for (const char *name : {"q", "k", "v"}) save(std::string(name) + "_f32.npy", f32_array(name));
  }
  ~Workspace() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
  std::string file(const std::string &name) const { return (dir / name).string(); }
  const std::vector<float> &values(const std::string &name) const {
    return name == "q" ? q : name == "k" ? k : v;
  }
  std::vector<int64_t> shape(const std::string &name) const {
    return {batch, name == "q" ? seq_q : seq_k, heads, head_dim};
  }
  attn::npy::Array f32_array(const std::string &name) const {
    return array_of(ATTN_F32, shape(name), values(name));
  }
  void save(const std::string &name, const attn::npy::Array &array) const {
    attnc::test::save_npy(file(name), array);
  }
  attn::npy::Array load(const std::string &name) const { return attnc::test::load_npy(file(name)); }
  Outcome run(const std::string &arguments) const {
    const std::string err = file("stderr.txt");
    const int status =
        std::system((std::string(ATTN_RUN_PATH) + " " + library + " " + arguments + " 2>" + err).c_str());
    std::ifstream f(err);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, std::string(std::istreambuf_iterator<char>(f), {})};
  }
  // --input q=<prefix>q<suffix> ... for the three inputs.
  std::string inputs(const std::string &suffix) const {
    std::string text;
    for (const char *name : {"q", "k", "v"})
      text += std::string(" --input ") + name + "=" + file(name + suffix);
    return text;
  }
};

std::vector<uint16_t> patterns(const attn::npy::Array &array) {
  std::vector<uint16_t> bits(array.data.size() / sizeof(uint16_t));
  std::memcpy(bits.data(), array.data.data(), array.data.size());
  return bits;
}

}  // namespace

TEST_CASE("attn-run lists the kernels' arguments in their storage type") {
  Workspace ws;
  const std::string listing = ws.file("list.txt");
  const int status =
      std::system((std::string(ATTN_RUN_PATH) + " " + library + " --list >" + listing + " 2>&1").c_str());
  std::ifstream f(listing);
  const std::string text(std::istreambuf_iterator<char>(f), {});
  CAPTURE(text);
  CHECK(status == 0);
  CHECK(contains(text, "q bf16 [B, Sq, 2, 16]"));
  CHECK(contains(text, "out bf16 [B, Sq, 2, 16] (output)"));
  CHECK(contains(text, "v f16 [B, Sk, 2, 16]"));
}

TEST_CASE("bf16 and f16 kernels through attn-run match the fp64 reference on the rounded inputs") {
  Workspace ws;
  for (const Storage &s : storages) {
    CAPTURE(s.name);
    // The inputs as the kernel sees them: rounded to the storage type, saved as its file type.
    std::vector<std::vector<float>> widened;
    for (const char *name : {"q", "k", "v"}) {
      std::vector<uint16_t> bits;
      std::vector<float> wide;
      for (float x : ws.values(name)) {
        bits.push_back(s.round(x));
        wide.push_back(s.widen(bits.back()));
      }
      ws.save(std::string(name) + "_" + s.name + ".npy", array_of(s.dtype, ws.shape(name), bits));
      widened.push_back(std::move(wide));
    }

    const std::string call = std::string("--kernel ") + s.kernel;
    const Outcome from_bits = ws.run(call + ws.inputs(std::string("_") + s.name + ".npy") +
                                     " --output out=" + ws.file("out_bits.npy"));
    CAPTURE(from_bits.err);
    REQUIRE(from_bits.code == 0);
    CHECK_FALSE(contains(from_bits.err, "rounded"));
    const attn::npy::Array out = ws.load("out_bits.npy");
    CHECK(out.dtype == s.dtype);  // bf16 read back from '<u2', f16 from '<f2'
    CHECK(out.shape == std::vector<int64_t>{batch, seq_q, heads, head_dim});

    // '<f4' inputs are rounded by attn-run exactly as above, one stderr line per input.
    const Outcome from_f32 = ws.run(call + ws.inputs("_f32.npy") + " --output out=" + ws.file("out_f32.npy"));
    CAPTURE(from_f32.err);
    REQUIRE(from_f32.code == 0);
    for (const char *name : {"q", "k", "v"}) {
      CHECK(contains(from_f32.err, "input '" + std::string(name) + "' ('" +
                                       ws.file(std::string(name) + "_f32.npy") + "') is f32; rounded to " +
                                       s.name + ", to nearest even"));
    }
    CHECK(std::count(from_f32.err.begin(), from_f32.err.end(), '\n') == 3);
    CHECK(patterns(ws.load("out_f32.npy")) == patterns(out));

    // Pass rule for low precision: at most twice the error of a naive fp32 computation on the
    // same rounded inputs whose output is rounded to the storage type, plus 1e-5.
    using attnc::reference::TensorView;
    const TensorView q = TensorView::dense(widened[0].data(), {batch, seq_q, heads, head_dim});
    const TensorView k = TensorView::dense(widened[1].data(), {batch, seq_k, heads, head_dim});
    const TensorView v = TensorView::dense(widened[2].data(), {batch, seq_k, heads, head_dim});
    const double scale = attnc::reference::default_scale(head_dim);
    const std::vector<double> exact = attnc::reference::core_reference(q, k, v, scale, attn::causal());
    const std::vector<float> naive =
        attnc::reference::core_naive_f32(q, k, v, static_cast<float>(scale), attn::causal());
    const std::vector<uint16_t> got = patterns(out);
    REQUIRE(got.size() == exact.size());
    double kernel_error = 0, naive_error = 0;
    for (size_t i = 0; i < exact.size(); ++i) {
      kernel_error = std::max(kernel_error, std::fabs(s.widen(got[i]) - exact[i]));
      naive_error = std::max(naive_error, std::fabs(s.widen(s.round(naive[i])) - exact[i]));
    }
    CAPTURE(kernel_error);
    CAPTURE(naive_error);
    CHECK(std::isfinite(kernel_error));
    CHECK(kernel_error <= 2 * naive_error + 1e-5);
  }
}

TEST_CASE("attn-run refuses a file of another dtype for a bf16 or f16 argument, by name") {
  Workspace ws;
  ws.save("q_i32.npy", array_of(ATTN_I32, ws.shape("q"), std::vector<int32_t>(ws.q.size(), 1)));
  ws.save("q_f16.npy", array_of(ATTN_F16, ws.shape("q"), std::vector<uint16_t>(ws.q.size(), 0x3C00)));
  ws.save("q_bf16.npy", array_of(ATTN_BF16, ws.shape("q"), std::vector<uint16_t>(ws.q.size(), 0x3F80)));
  const std::string kv = " --input k=" + ws.file("k_f32.npy") + " --input v=" + ws.file("v_f32.npy");

  const Outcome ints =
      ws.run("--kernel attn_core_h2_kv2_d16_bf16_causal --input q=" + ws.file("q_i32.npy") + kv);
  CAPTURE(ints.err);
  CHECK(ints.code == 1);
  CHECK(
      contains(ints.err, "input 'q' ('" + ws.file("q_i32.npy") +
                             "') has dtype i32 ('<i4'), kernel expects bf16: give '<u2' (bf16 bit patterns) "
                             "or '<f4' (rounded to nearest even)"));

  const Outcome halves =
      ws.run("--kernel attn_core_h2_kv2_d16_bf16_causal --input q=" + ws.file("q_f16.npy") + kv);
  CHECK(halves.code == 1);
  CHECK(contains(halves.err, "has dtype f16 ('<f2'), kernel expects bf16"));

  const Outcome bits =
      ws.run("--kernel attn_core_h2_kv2_d16_f16_causal --input q=" + ws.file("q_bf16.npy") + kv);
  CHECK(bits.code == 1);
  CHECK(contains(bits.err, "has dtype bf16 ('<u2' bit patterns), kernel expects f16: give '<f2' or '<f4'"));
}

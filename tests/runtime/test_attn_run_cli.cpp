// test_attn_run_cli.cpp: the attn-run tool end to end on the fake shared library.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "npy.h"

namespace fs = std::filesystem;

namespace {

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

struct Outcome {
  int code = -1;
  std::string out, err;
};

// Inputs for fake_lib_core (B 1, Sq 2, Sk 3) in a fresh folder, and a way to run attn-run there.
struct Workspace {
  fs::path dir = fs::temp_directory_path() / ("attnc_attn_run_test_" + std::to_string(getpid()));
  std::vector<float> q, v;

  Workspace() {
    fs::create_directories(dir);
    q.resize(16);
    v.resize(9);
    for (size_t i = 0; i < q.size(); ++i) q[i] = static_cast<float>(i);
    for (size_t i = 0; i < v.size(); ++i) v[i] = 100.0f * static_cast<float>(i);
    save("q.npy", {1, 2, 2, 4}, q);
    save("k.npy", {1, 3, 1, 4}, std::vector<float>(12, 0.0f));
    save("v.npy", {1, 3, 1, 3}, v);
  }
  ~Workspace() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
  std::string file(const std::string &name) const { return (dir / name).string(); }
  void save(const std::string &name, std::vector<int64_t> shape, const std::vector<float> &values) const {
    attn::npy::Array array;
    array.shape = std::move(shape);
    array.data.resize(values.size() * sizeof(float));
    if (!values.empty()) std::memcpy(array.data.data(), values.data(), array.data.size());
    std::string error;
    REQUIRE_MESSAGE(attn::npy::write(file(name), array, &error), error);
  }
  std::string inputs() const {
    return " --input q=" + file("q.npy") + " --input k=" + file("k.npy") + " --input v=" + file("v.npy");
  }
  // environment: "NAME=value ..." set for this run only.
  Outcome run(const std::string &arguments, const std::string &environment = "") const {
    const std::string out = file("stdout.txt"), err = file("stderr.txt");
    const std::string command =
        environment + " " + std::string(ATTN_RUN_PATH) + " " + arguments + " >" + out + " 2>" + err;
    const int status = std::system(command.c_str());
    auto slurp = [](const std::string &path) {
      std::ifstream f(path);
      return std::string(std::istreambuf_iterator<char>(f), {});
    };
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
  }
};

const std::string lib = FAKE_LIB_GOOD;

}  // namespace

TEST_CASE("attn-run runs a kernel on .npy files and writes its output") {
  Workspace ws;
  const Outcome o =
      ws.run(lib + " --kernel fake_lib_core" + ws.inputs() + " --output out=" + ws.file("out.npy"));
  CAPTURE(o.err);
  REQUIRE(o.code == 0);
  attn::npy::Array out;
  std::string error;
  REQUIRE_MESSAGE(attn::npy::read(ws.file("out.npy"), &out, &error), error);
  CHECK(out.shape == std::vector<int64_t>{1, 2, 2, 3});
  CHECK(o.out == "wrote out [1,2,2,3] to " + ws.file("out.npy") + "\n");
  std::vector<float> values(12);
  std::memcpy(values.data(), out.data.data(), out.data.size());
  // out[0, s, h, e] = q[0, s, h, e] + v[0, 2, 0, e]
  CHECK(values[0] == ws.q[0] + ws.v[6]);
  CHECK(values[11] == ws.q[1 * 8 + 1 * 4 + 2] + ws.v[8]);
}

TEST_CASE("attn-run --list shows kernels and their arguments") {
  Workspace ws;
  const Outcome o = ws.run(lib + " --list");
  REQUIRE(o.code == 0);
  CHECK(contains(o.out, "fake_lib_core"));
  CHECK(contains(o.out, "heads=2"));
  CHECK(contains(o.out, "q f32 [B, Sq, 2, 4]"));
  CHECK(contains(o.out, "out f32 [B, Sq, 2, 3] (output)"));
  CHECK(contains(o.out, "runs:   x86-64-linux"));
}

TEST_CASE("attn-run takes a max isa from --max-isa or ATTN_MAX_ISA and refuses unknown ones") {
  Workspace ws;
  const std::string call = lib + " --kernel fake_lib_core" + ws.inputs();
  const Outcome capped = ws.run(call + " --max-isa x86-64 --bench --runs 1");
  CAPTURE(capped.err);
  CHECK(capped.code == 0);
  CHECK(contains(capped.out, "variant x86-64-linux"));
  const Outcome from_environment = ws.run(call, "ATTN_MAX_ISA=avx2");
  CAPTURE(from_environment.err);
  CHECK(from_environment.code == 0);

  const Outcome unknown = ws.run(call + " --max-isa avx3");
  CHECK(unknown.code == 1);
  CHECK(contains(unknown.err, "max isa 'avx3' is not an instruction set"));
  const Outcome bad_environment = ws.run(call, "ATTN_MAX_ISA=avx1024");
  CHECK(bad_environment.code == 1);
  CHECK(contains(bad_environment.err, "ATTN_MAX_ISA is 'avx1024', not an instruction set"));
  CHECK(contains(bad_environment.err, "ATTN_ERR_INVALID_ARGUMENT"));
  // The option overrides the environment.
  CHECK(ws.run(call + " --max-isa avx2", "ATTN_MAX_ISA=avx1024").code == 0);
  CHECK(ws.run(lib + " --kernel fake_lib_core --max-isa").code == 2);
  // Issue 32: an empty value was taken silently (and lifted the limit).
  for (const char *empty : {" --max-isa ''", " --max-isa=''"}) {
    CAPTURE(empty);
    const Outcome o = ws.run(call + empty + " --bench --runs 1");
    CHECK(o.code == 2);
    CHECK(contains(o.err, "--max-isa needs an instruction set"));
    CHECK(contains(o.err, "got ''"));
  }
}

TEST_CASE("attn-run --bench --json prints one json line") {
  Workspace ws;
  const Outcome o = ws.run(lib + " --kernel fake_lib_core" + ws.inputs() +
                           " --bench --json --warmup 1 --runs 3 --threads 2");
  CAPTURE(o.err);
  REQUIRE(o.code == 0);
  CHECK(o.out.starts_with("{\"kernel\":\"fake_lib_core\",\"median_ms\":"));
  CHECK(contains(o.out, "\"min_ms\":"));
  CHECK(contains(o.out, "\"gflops\":"));
  CHECK(contains(o.out, "\"runs\":3,\"threads\":2,\"variant\":\"x86-64-linux\"}"));
  CHECK(o.out.find('\n') == o.out.size() - 1);

  const Outcome human = ws.run(lib + " --kernel fake_lib_core" + ws.inputs() + " --bench --runs 2");
  REQUIRE(human.code == 0);
  CHECK(contains(human.out, "median"));
  CHECK(contains(human.out, "GFLOP/s"));
}

TEST_CASE("attn-run --help names the manifest as attnc gen writes it") {
  Workspace ws;
  const Outcome o = ws.run("--help");
  CHECK(o.code == 0);
  CHECK(o.out.starts_with("usage: attn-run LIB --list\n"));
  CHECK(contains(o.out, "its manifest DIR/NAME.json (written\nbeside it by attnc gen)"));
  CHECK_FALSE(contains(o.out, "LIB.json"));
}

TEST_CASE("attn-run errors exit 1 with a message, usage errors exit 2") {
  Workspace ws;
  auto error = [&](const std::string &arguments, int code, const std::string &part) {
    const Outcome o = ws.run(arguments);
    CAPTURE(arguments);
    CAPTURE(o.err);
    CHECK(o.code == code);
    CHECK(o.err.starts_with("attn-run: "));
    CHECK(contains(o.err, part));
  };
  error("", 2, "no library");
  error(lib, 2, "--kernel");
  error(lib + " --kernel fake_lib_core --runs 0", 2, "--runs");
  error(lib + " --kernel fake_lib_core --bogus", 2, "'--bogus'");
  error(lib + " --kernel fake_lib_core --json", 2, "--bench");
  error(lib + " --kernel fake_lib_core --input q", 2, "NAME=FILE.npy");
  error("/nonexistent/lib.so --list", 1, "/nonexistent/lib.so");
  error(lib + " --kernel nope" + ws.inputs(), 1, "'nope'");
  error(lib + " --kernel fake_lib_core --input q=" + ws.file("missing.npy"), 1, "missing.npy");
  error(lib + " --kernel fake_lib_core --input q=" + ws.file("q.npy"), 1, "needs input 'k'");
  error(lib + " --kernel fake_lib_core" + ws.inputs() + " --input bias=" + ws.file("q.npy"), 1, "'bias'");
  error(lib + " --kernel fake_lib_core" + ws.inputs() + " --output lse=" + ws.file("o.npy"), 1, "'lse'");
  error(lib + " --kernel fake_lib_core" + ws.inputs() + " --threads -1", 2, "--threads");

  attn::npy::Array ints;
  ints.dtype = ATTN_I32;
  ints.shape = {1, 2, 2, 4};
  ints.data.resize(64);
  std::string ignored;
  REQUIRE(attn::npy::write(ws.file("ints.npy"), ints, &ignored));
  error(lib + " --kernel fake_lib_core --input q=" + ws.file("ints.npy") + " --input k=" + ws.file("k.npy") +
            " --input v=" + ws.file("v.npy"),
        1, "has dtype i32 ('<i4'), kernel expects f32 ('<f4')");

  // q alone names Sq: out cannot be sized from a q of the wrong rank.
  ws.save("q3.npy", {2, 2, 4}, ws.q);
  error(lib + " --kernel fake_lib_core --input q=" + ws.file("q3.npy") + " --input k=" + ws.file("k.npy") +
            " --input v=" + ws.file("v.npy"),
        1, "input 'q' has rank 3, kernel expects 4 ([B, Sq, 2, 4])");

  ws.save("short_v.npy", {1, 2, 1, 3}, std::vector<float>(6, 0.0f));
  error(lib + " --kernel fake_lib_core --input q=" + ws.file("q.npy") + " --input k=" + ws.file("k.npy") +
            " --input v=" + ws.file("short_v.npy"),
        1, "ATTN_ERR_SHAPE");
}

namespace {

const std::string masked_lib = FAKE_LIB_MASKED;

// Inputs for fake_lib_masked (B 2, Sq 2, Sk 3) beside core's in a workspace; mask files of each
// accepted form hold 0 or 1 as (i * 7 + 3) % 3 != 0 over their own elements.
struct MaskedInputs {
  static constexpr int64_t batch = 2, seq_q = 2, seq_k = 3, heads = 2, dv = 3;
  const Workspace &ws;
  std::vector<float> q, v;
  std::vector<int32_t> key_lengths = {3, 2};

  explicit MaskedInputs(const Workspace &workspace) : ws(workspace) {
    q.resize(batch * seq_q * heads * 4);
    v.resize(batch * seq_k * dv);
    for (size_t i = 0; i < q.size(); ++i) q[i] = static_cast<float>(i);
    for (size_t i = 0; i < v.size(); ++i) v[i] = 100.0f * static_cast<float>(i);
    ws.save("mq.npy", {batch, seq_q, heads, 4}, q);
    ws.save("mk.npy", {batch, seq_k, 1, 4}, std::vector<float>(batch * seq_k * 4, 0.0f));
    ws.save("mv.npy", {batch, seq_k, 1, dv}, v);
    save_lengths("lengths.npy", key_lengths);
  }
  void save_lengths(const std::string &name, const std::vector<int32_t> &lengths) const {
    attn::npy::Array array;
    array.dtype = ATTN_I32;
    array.shape = {static_cast<int64_t>(lengths.size())};
    array.data.resize(lengths.size() * sizeof(int32_t));
    std::memcpy(array.data.data(), lengths.data(), array.data.size());
    std::string error;
    REQUIRE_MESSAGE(attn::npy::write(ws.file(name), array, &error), error);
  }
  static uint8_t mask_value(int64_t i) { return (i * 7 + 3) % 3 != 0 ? 1 : 0; }
  void save_mask(const std::string &name, std::vector<int64_t> shape) const {
    attn::npy::Array array;
    array.dtype = ATTN_U8;
    array.shape = std::move(shape);
    array.data.resize(static_cast<size_t>(array.element_count()));
    for (size_t i = 0; i < array.data.size(); ++i) array.data[i] = mask_value(static_cast<int64_t>(i));
    std::string error;
    REQUIRE_MESSAGE(attn::npy::write(ws.file(name), array, &error), error);
  }
  // The mask comes first: a mask whose B is 1 must not size the outputs.
  std::string inputs(const std::string &mask, const std::string &lengths = "lengths.npy") const {
    return " --input mask=" + ws.file(mask) + " --input q=" + ws.file("mq.npy") +
           " --input k=" + ws.file("mk.npy") + " --input v=" + ws.file("mv.npy") +
           " --input key_lengths=" + ws.file(lengths);
  }
  // The kept keys of (b, h, s) for a mask of rank 2 [Sq, Sk] or 3 [H, Sq, Sk] (aligned from the
  // right, as NumPy broadcasts).
  std::vector<int64_t> kept(int mask_rank, int64_t b, int64_t h, int64_t s) const {
    std::vector<int64_t> keys;
    for (int64_t j = 0; j < key_lengths[static_cast<size_t>(b)]; ++j) {
      const int64_t i = (mask_rank == 3 ? h * seq_q * seq_k : 0) + s * seq_k + j;
      if (mask_value(i) != 0) keys.push_back(j);
    }
    return keys;
  }
};

std::vector<float> read_floats(const std::string &path, std::vector<int64_t> *shape) {
  attn::npy::Array array;
  std::string error;
  REQUIRE_MESSAGE(attn::npy::read(path, &array, &error), error);
  *shape = array.shape;
  std::vector<float> values(array.data.size() / sizeof(float));
  std::memcpy(values.data(), array.data.data(), array.data.size());
  return values;
}

}  // namespace

TEST_CASE("attn-run --list shows broadcast dims, the lowest rank and every output") {
  Workspace ws;
  const Outcome o = ws.run(masked_lib + " --list");
  CAPTURE(o.err);
  REQUIRE(o.code == 0);
  CHECK(contains(o.out, "mask u8 [B|1, 2|1, Sq, Sk] (min rank 2)\n"));
  CHECK(contains(o.out, "key_lengths i32 [B]\n"));
  CHECK(contains(o.out, "out f32 [B, Sq, 2, 3] (output)\n"));
  CHECK(contains(o.out, "lse f32 [B, Sq, 2] (output)\n"));
}

TEST_CASE("attn-run passes masks of a lower rank and writes each output asked for") {
  Workspace ws;
  MaskedInputs in(ws);
  struct Form {
    const char *what;
    std::vector<int64_t> shape;
    int rank_used;  // the rank whose values the broadcast mask repeats
  };
  const Form forms[] = {
      {"[Sq, Sk]", {2, 3}, 2}, {"[H, Sq, Sk]", {2, 2, 3}, 3}, {"[1, Sq, Sk]", {1, 2, 3}, 2}};
  for (const Form &form : forms) {
    CAPTURE(form.what);
    in.save_mask("mask.npy", form.shape);
    std::error_code ignored;
    fs::remove(ws.file("out.npy"), ignored);
    fs::remove(ws.file("lse.npy"), ignored);
    const Outcome o = ws.run(masked_lib + " --kernel fake_lib_masked" + in.inputs("mask.npy") +
                             " --output out=" + ws.file("out.npy") + " --output lse=" + ws.file("lse.npy"));
    CAPTURE(o.err);
    REQUIRE(o.code == 0);
    std::vector<int64_t> out_shape, lse_shape;
    const std::vector<float> out = read_floats(ws.file("out.npy"), &out_shape);
    const std::vector<float> lse = read_floats(ws.file("lse.npy"), &lse_shape);
    CHECK(out_shape == std::vector<int64_t>{2, 2, 2, 3});
    CHECK(lse_shape == std::vector<int64_t>{2, 2, 2});
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t s = 0; s < 2; ++s)
        for (int64_t h = 0; h < 2; ++h) {
          const std::vector<int64_t> keys = in.kept(form.rank_used, b, h, s);
          CHECK(lse[static_cast<size_t>((b * 2 + s) * 2 + h)] == static_cast<float>(keys.size()));
          for (int64_t e = 0; e < 3; ++e) {
            float expected = in.q[static_cast<size_t>(((b * 2 + s) * 2 + h) * 4 + e)];
            for (int64_t j : keys) expected += in.v[static_cast<size_t>((b * 3 + j) * 3 + e)];
            CHECK(out[static_cast<size_t>(((b * 2 + s) * 2 + h) * 3 + e)] == expected);
          }
        }
  }
}

TEST_CASE("attn-run leaves an optional scale out, or reads it from a scalar file") {
  Workspace ws;
  ws.save("x.npy", {4}, {1, 2, 3, 4});
  const Outcome list = ws.run(masked_lib + " --list");
  CAPTURE(list.err);
  CHECK(contains(list.out, "scale f32 [] (optional, default 0.500000)\n"));
  const std::string call = masked_lib + " --kernel fake_lib_scaled --input x=" + ws.file("x.npy") +
                           " --output out=" + ws.file("out.npy");
  struct Scale {
    const char *what;
    std::vector<int64_t> shape;  // none: left out
    float value;
  };
  const Scale scales[] = {{"left out", {-1}, 0.5f}, {"shape ()", {}, 3.0f}, {"shape (1,)", {1}, -2.0f}};
  for (const Scale &scale : scales) {
    CAPTURE(scale.what);
    std::string arguments = call;
    if (scale.shape != std::vector<int64_t>{-1}) {
      ws.save("scale.npy", scale.shape, {scale.value});
      arguments += " --input scale=" + ws.file("scale.npy");
    }
    const Outcome o = ws.run(arguments);
    CAPTURE(o.err);
    REQUIRE(o.code == 0);
    std::vector<int64_t> shape;
    const std::vector<float> out = read_floats(ws.file("out.npy"), &shape);
    CHECK(shape == std::vector<int64_t>{4});
    for (size_t e = 0; e < 4; ++e) CHECK(out[e] == static_cast<float>(e + 1) * scale.value);
  }
  ws.save("scale.npy", {2}, {1, 2});
  const Outcome two = ws.run(call + " --input scale=" + ws.file("scale.npy"));
  CHECK(two.code == 1);
  CHECK(contains(two.err, "tensor 'scale': dim 0 is 2, kernel expects 1 (a scalar) (ATTN_ERR_SHAPE)"));
}

TEST_CASE("attn-run allocates outputs it does not write") {
  Workspace ws;
  MaskedInputs in(ws);
  in.save_mask("mask.npy", {2, 3});
  const Outcome o = ws.run(masked_lib + " --kernel fake_lib_masked" + in.inputs("mask.npy") +
                           " --output lse=" + ws.file("lse.npy"));
  CAPTURE(o.err);
  REQUIRE(o.code == 0);
  CHECK(fs::exists(ws.file("lse.npy")));
  CHECK_FALSE(fs::exists(ws.file("out.npy")));
  const Outcome none = ws.run(masked_lib + " --kernel fake_lib_masked" + in.inputs("mask.npy"));
  CHECK(none.code == 0);
}

TEST_CASE("attn-run reports refused masks, refused values and repeated outputs") {
  Workspace ws;
  MaskedInputs in(ws);
  auto error = [&](const std::string &arguments, const std::vector<std::string> &parts) {
    const Outcome o = ws.run(masked_lib + " --kernel fake_lib_masked" + arguments);
    CAPTURE(arguments);
    CAPTURE(o.err);
    CHECK(o.code == 1);
    for (const std::string &part : parts) CHECK(contains(o.err, part));
    CHECK_FALSE(fs::exists(ws.file("out.npy")));
  };
  in.save_mask("rank1.npy", {3});
  error(in.inputs("rank1.npy") + " --output out=" + ws.file("out.npy"),
        {"tensor 'mask' has rank 1, kernel expects 2 to 4", "ATTN_ERR_RANK"});
  in.save_mask("heads3.npy", {2, 3, 2, 3});
  error(in.inputs("heads3.npy") + " --output out=" + ws.file("out.npy"),
        {"tensor 'mask': dim 1 is 3, kernel expects 2 or 1 (broadcast)", "ATTN_ERR_SHAPE"});
  in.save_mask("mask.npy", {2, 3});
  in.save_lengths("long.npy", {3, 4});
  error(in.inputs("mask.npy", "long.npy") + " --output out=" + ws.file("out.npy"),
        {"key_lengths must be at most Sk", "ATTN_ERR_INVALID_VALUE"});
  error(in.inputs("mask.npy") + " --output lse=" + ws.file("a.npy") + " --output lse=" + ws.file("b.npy"),
        {"output 'lse' is given twice"});
}

TEST_CASE("attn-run checks every output path before it runs, and writes all outputs or none") {
  Workspace ws;
  MaskedInputs in(ws);
  in.save_mask("mask.npy", {2, 3});
  const std::string call = masked_lib + " --kernel fake_lib_masked" + in.inputs("mask.npy");
  auto refused = [&](const std::string &outputs, const std::string &part) {
    const Outcome o = ws.run(call + outputs);
    CAPTURE(outputs);
    CAPTURE(o.err);
    CHECK(o.code == 1);
    CHECK(contains(o.err, part));
    CHECK_FALSE(fs::exists(ws.file("a.npy")));
    CHECK_FALSE(fs::exists(ws.file("o.npy")));
    for (const auto &entry : fs::directory_iterator(ws.dir))
      CHECK_FALSE(contains(entry.path().string(), "attn-run-"));
  };
  SUBCASE("a folder that does not exist") {
    refused(" --output out=" + ws.file("a.npy") + " --output lse=" + ws.file("nodir/x.npy"),
            "folder '" + ws.file("nodir") + "' does not exist");
  }
  SUBCASE("the same file twice") {
    refused(" --output out=" + ws.file("o.npy") + " --output lse=" + ws.file("o.npy"), "is the same file as");
  }
  SUBCASE("the same file twice, spelled differently") {
    refused(" --output out=" + ws.file("o.npy") + " --output lse=" + (ws.dir / "." / "o.npy").string(),
            "is the same file as");
  }
  SUBCASE("a path that is a folder") {
    fs::create_directories(ws.dir / "folder.npy");
    refused(" --output out=" + ws.file("a.npy") + " --output lse=" + ws.file("folder.npy"),
            "not a regular file");
  }
  SUBCASE("a kernel that fails writes nothing") {
    in.save_lengths("long.npy", {3, 4});
    const Outcome o = ws.run(masked_lib + " --kernel fake_lib_masked" + in.inputs("mask.npy", "long.npy") +
                             " --output out=" + ws.file("a.npy") + " --output lse=" + ws.file("o.npy"));
    CHECK(o.code == 1);
    CHECK_FALSE(fs::exists(ws.file("a.npy")));
    CHECK_FALSE(fs::exists(ws.file("o.npy")));
  }
  SUBCASE("both outputs, replacing an old file") {
    std::ofstream(ws.file("o.npy")) << "old";
    const Outcome o =
        ws.run(call + " --output out=" + ws.file("a.npy") + " --output lse=" + ws.file("o.npy"));
    CAPTURE(o.err);
    REQUIRE(o.code == 0);
    std::vector<int64_t> shape;
    read_floats(ws.file("a.npy"), &shape);
    CHECK(shape == std::vector<int64_t>{2, 2, 2, 3});
    read_floats(ws.file("o.npy"), &shape);
    CHECK(shape == std::vector<int64_t>{2, 2, 2});
    for (const auto &entry : fs::directory_iterator(ws.dir))
      CHECK_FALSE(contains(entry.path().string(), "attn-run-"));
  }
}

TEST_CASE("attn-run names what is wrong with odd inputs") {
  Workspace ws;
  SUBCASE("a zero-sized dim") {
    ws.save("k0.npy", {1, 0, 1, 4}, {});
    ws.save("v0.npy", {1, 0, 1, 3}, {});
    const Outcome o = ws.run(lib + " --kernel fake_lib_core --input q=" + ws.file("q.npy") +
                             " --input k=" + ws.file("k0.npy") + " --input v=" + ws.file("v0.npy"));
    CAPTURE(o.err);
    CHECK(o.code == 1);
    CHECK(contains(o.err, "input 'k'"));
    CHECK(contains(o.err, "size 0 in dim 1 (Sk)"));
    CHECK(contains(o.err, "not allowed"));
    CHECK_FALSE(contains(o.err, "null data"));
  }
  SUBCASE("a zero head dim") {
    ws.save("q0.npy", {1, 2, 2, 0}, {});
    const Outcome o = ws.run(lib + " --kernel fake_lib_core --input q=" + ws.file("q0.npy") +
                             " --input k=" + ws.file("k.npy") + " --input v=" + ws.file("v.npy"));
    CHECK(o.code == 1);
    CHECK(contains(o.err, "size 0 in dim 3"));
    CHECK_FALSE(contains(o.err, "null data"));
  }
  SUBCASE("a fifo") {
    // A fifo holding a valid .npy: this process holds it open for writing (O_RDWR does not wait
    // for a reader), with q.npy's bytes in its buffer, so a reader neither blocks nor hangs.
    const std::string fifo = ws.file("q_fifo.npy");
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    const int writer = open(fifo.c_str(), O_RDWR | O_NONBLOCK);
    REQUIRE(writer >= 0);
    std::ifstream q_file(ws.file("q.npy"), std::ios::binary);
    const std::string q_bytes(std::istreambuf_iterator<char>(q_file), {});
    REQUIRE(write(writer, q_bytes.data(), q_bytes.size()) == static_cast<ssize_t>(q_bytes.size()));
    const Outcome o = ws.run(lib + " --kernel fake_lib_core --input q=" + fifo +
                             " --input k=" + ws.file("k.npy") + " --input v=" + ws.file("v.npy"));
    close(writer);
    CAPTURE(o.err);
    CHECK(o.code == 1);
    CHECK(contains(o.err, "is a fifo"));
    CHECK_FALSE(contains(o.err, "magic"));
  }
  SUBCASE("a shape too large to address") {
    std::string header =
        "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 1, 2, 4), }";
    header.append(118 - header.size(), ' ');
    header += '\n';
    std::ofstream(ws.file("huge.npy"), std::ios::binary)
        << std::string("\x93NUMPY\x01\x00", 8) << static_cast<char>(header.size()) << '\0' << header;
    const Outcome o = ws.run(lib + " --kernel fake_lib_core --input q=" + ws.file("huge.npy") +
                             " --input k=" + ws.file("k.npy") + " --input v=" + ws.file("v.npy"));
    CAPTURE(o.err);
    CHECK(o.code == 1);
    CHECK(contains(o.err, "too large"));
    CHECK_FALSE(contains(o.err, "-1 bytes"));
  }
}

TEST_CASE("attn-run opens only verified libraries unless told --unverified") {
  Workspace ws;
  const fs::path copy = ws.dir / "libcopy.so";
  fs::copy_file(lib, copy);
  const std::string call = " --kernel fake_lib_core" + ws.inputs();
  const Outcome refused = ws.run(copy.string() + call);
  CHECK(refused.code == 1);
  CHECK(contains(refused.err, "no manifest"));
  CHECK(contains(refused.err, "ATTN_ERR_LIBRARY_INTEGRITY"));
  const Outcome unverified = ws.run(copy.string() + call + " --unverified");
  CAPTURE(unverified.err);
  CHECK(unverified.code == 0);
  CHECK(ws.run(lib + " --unverified=yes --list").code == 2);
}

TEST_CASE("attn-run refuses a truncated library with a message, not a signal") {
  Workspace ws;
  std::ifstream in(lib, std::ios::binary);
  const std::string bytes(std::istreambuf_iterator<char>(in), {});
  const fs::path cut = ws.dir / "libcut.so";
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() * 2 / 3);
  for (const char *flag : {"", " --unverified"}) {
    CAPTURE(flag);
    const Outcome o = ws.run(cut.string() + " --list" + flag);
    CHECK(o.code == 1);
    CHECK(contains(o.err, "truncated"));
    CHECK(contains(o.err, "ATTN_ERR_LIBRARY_INTEGRITY"));
  }
}

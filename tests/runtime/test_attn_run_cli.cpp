// test_attn_run_cli.cpp: the attn-run tool end to end on the fake shared library.
#include <doctest/doctest.h>
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
    std::memcpy(array.data.data(), values.data(), array.data.size());
    std::string error;
    REQUIRE_MESSAGE(attn::npy::write(file(name), array, &error), error);
  }
  std::string inputs() const {
    return " --input q=" + file("q.npy") + " --input k=" + file("k.npy") + " --input v=" + file("v.npy");
  }
  Outcome run(const std::string &arguments) const {
    const std::string out = file("stdout.txt"), err = file("stderr.txt");
    const std::string command = std::string(ATTN_RUN_PATH) + " " + arguments + " >" + out + " 2>" + err;
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
  CHECK(contains(o.out, "\"runs\":3,\"threads\":2}"));
  CHECK(o.out.find('\n') == o.out.size() - 1);

  const Outcome human = ws.run(lib + " --kernel fake_lib_core" + ws.inputs() + " --bench --runs 2");
  REQUIRE(human.code == 0);
  CHECK(contains(human.out, "median"));
  CHECK(contains(human.out, "GFLOP/s"));
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
        1, "dtype i32, kernel expects f32");

  ws.save("short_v.npy", {1, 2, 1, 3}, std::vector<float>(6, 0.0f));
  error(lib + " --kernel fake_lib_core --input q=" + ws.file("q.npy") + " --input k=" + ws.file("k.npy") +
            " --input v=" + ws.file("short_v.npy"),
        1, "ATTN_ERR_SHAPE");
}

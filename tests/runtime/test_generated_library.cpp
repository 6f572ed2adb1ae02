// test_generated_library.cpp: a library attnc gen --shared wrote: opened only when it is untouched.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "attn/runtime.h"

namespace fs = std::filesystem;

namespace {

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

std::string slurp(const fs::path &path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), {});
}

void write_file(const fs::path &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

std::string replaced(std::string text, const std::string &from, const std::string &to) {
  const size_t at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, from);
  return text.replace(at, from.size(), to);
}

// The generated library and its manifest, copied into a fresh folder to be tampered with.
struct GeneratedCopy {
  fs::path dir = fs::temp_directory_path() / ("attnc_generated_library_test_" + std::to_string(getpid()));
  fs::path library = dir / "libk.so", manifest = dir / "libk.json";
  std::string bytes = slurp(GENERATED_LIB);
  std::string manifest_text = slurp(fs::path(GENERATED_LIB).replace_extension(".json"));

  GeneratedCopy() {
    fs::create_directories(dir);
    write_file(library, bytes);
    write_file(manifest, manifest_text);
  }
  ~GeneratedCopy() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
};

attn_status open_status(const fs::path &path, bool verified = true) {
  attn_library *library = nullptr;
  const attn_status status = verified ? attn_library_open(path.c_str(), &library)
                                      : attn_library_open_unverified(path.c_str(), &library);
  attn_library_close(library);
  return status;
}

// The kernel of library whose spec mentions mask, or null.
const attn_kernel *kernel_with_mask(const attn_library *library, const std::string &mask) {
  for (int i = 0; i < attn_library_kernel_count(library); ++i) {
    const attn_kernel *kernel = attn_library_kernel_at(library, i);
    if (contains(attn_kernel_spec(kernel), "mask=" + mask + " ")) return kernel;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("the library attnc generated opens verified, and runs") {
  GeneratedCopy copy;
  REQUIRE(contains(copy.manifest_text, "\"library_sha256\": \""));
  attn_library *library = nullptr;
  REQUIRE_MESSAGE(attn_library_open(copy.library.c_str(), &library) == ATTN_OK, attn_last_error());
  CHECK(attn_library_kernel_count(library) == 2);
  const attn_kernel *kernel = kernel_with_mask(library, "none");
  REQUIRE(kernel != nullptr);
  // One key: its softmax weight is 1, so out is v whatever q and k hold.
  std::mt19937 random(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> q(3 * 16), k(16), v(16), out(3 * 16, -1.0f);
  for (float &x : q) x = uniform(random);
  for (float &x : k) x = uniform(random);
  for (float &x : v) x = uniform(random);
  const int64_t q_shape[] = {1, 3, 1, 16}, kv_shape[] = {1, 1, 1, 16};
  const attn_arg args[] = {{"q", {q.data(), ATTN_F32, 4, q_shape, nullptr}},
                           {"k", {k.data(), ATTN_F32, 4, kv_shape, nullptr}},
                           {"v", {v.data(), ATTN_F32, 4, kv_shape, nullptr}},
                           {"out", {out.data(), ATTN_F32, 4, q_shape, nullptr}}};
  REQUIRE_MESSAGE(attn_run(kernel, args, 4) == ATTN_OK, attn_last_error());
  for (size_t i = 0; i < out.size(); ++i) {
    CAPTURE(i);
    CHECK(out[i] == doctest::Approx(v[i % 16]).epsilon(1e-6));
  }
  attn_library_close(library);
}

TEST_CASE("an edited manifest of a generated library is refused") {
  GeneratedCopy copy;
  const std::string &text = copy.manifest_text;
  struct Edit {
    const char *what;
    std::string manifest;
    attn_status status;
  };
  const std::string abi = "\"abi_version\": " + std::to_string(ATTN_ABI_VERSION);
  const size_t hash_at = text.find("\"library_sha256\": \"") + 19;
  std::string other_hash = text;
  other_hash[hash_at] = other_hash[hash_at] == 'a' ? 'b' : 'a';
  const std::vector<Edit> edits = {
      {"abi_version", replaced(text, abi, "\"abi_version\": " + std::to_string(ATTN_ABI_VERSION - 1)),
       ATTN_ERR_MANIFEST_MISMATCH},
      {"an output made an input",
       replaced(text, R"("name": "out", "dtype": "f32", "output": true)",
                R"("name": "out", "dtype": "f32", "output": false)"),
       ATTN_ERR_MANIFEST_MISMATCH},
      {"an argument's dtype",
       replaced(text, R"("name": "q", "dtype": "f32")", R"("name": "q", "dtype": "f16")"),
       ATTN_ERR_MANIFEST_MISMATCH},
      {"the kernel's cpu features",
       replaced(text, R"("required_cpu_features": ")", R"("required_cpu_features": "x,)"),
       ATTN_ERR_MANIFEST_MISMATCH},
      {"a variant's cpu features",
       replaced(text, R"(, "required_cpu_features": ")", R"(, "required_cpu_features": "x,)"),
       ATTN_ERR_MANIFEST_MISMATCH},
      {"the hash", other_hash, ATTN_ERR_LIBRARY_INTEGRITY},
  };
  for (const Edit &edit : edits) {
    CAPTURE(edit.what);
    REQUIRE(edit.manifest != text);
    write_file(copy.manifest, edit.manifest);
    CHECK(open_status(copy.library) == edit.status);
    CAPTURE(attn_last_error());
  }
  write_file(copy.manifest, text);
  CHECK(open_status(copy.library) == ATTN_OK);
}

TEST_CASE("a generated library that is not the file attnc wrote is refused") {
  GeneratedCopy copy;
  SUBCASE("no manifest") {
    fs::remove(copy.manifest);
    CHECK(open_status(copy.library) == ATTN_ERR_LIBRARY_INTEGRITY);
    CHECK(open_status(copy.library, false) == ATTN_OK);
  }
  SUBCASE("another library swapped in") {
    write_file(copy.library, slurp(FAKE_LIB_GOOD));
    CHECK(open_status(copy.library) == ATTN_ERR_LIBRARY_INTEGRITY);
    CHECK(contains(attn_last_error(), "sha256"));
  }
  SUBCASE("one byte changed") {
    std::string bytes = copy.bytes;
    bytes[bytes.size() / 2] ^= 1;
    write_file(copy.library, bytes);
    CHECK(open_status(copy.library) == ATTN_ERR_LIBRARY_INTEGRITY);
  }
  SUBCASE("truncated, through the runtime and through attn-run") {
    for (size_t keep : {size_t{10000}, size_t{200000}, copy.bytes.size() - 1}) {
      if (keep >= copy.bytes.size()) continue;
      CAPTURE(keep);
      write_file(copy.library, copy.bytes.substr(0, keep));
      CHECK(open_status(copy.library) == ATTN_ERR_LIBRARY_INTEGRITY);
      CHECK(open_status(copy.library, false) == ATTN_ERR_LIBRARY_INTEGRITY);
      const std::string err = (copy.dir / "stderr.txt").string();
      const int status = std::system(
          (std::string(ATTN_RUN_PATH) + " " + copy.library.string() + " --list 2>" + err).c_str());
      REQUIRE(WIFEXITED(status));  // not killed by a signal (SIGBUS)
      CHECK(WEXITSTATUS(status) == 1);
      CHECK(contains(slurp(err), "truncated"));
    }
  }
}

TEST_CASE("a failed requirement reads as its message, without Halide's prefix and newline") {
  attn_library *library = nullptr;
  REQUIRE_MESSAGE(attn_library_open(GENERATED_LIB, &library) == ATTN_OK, attn_last_error());
  const attn_kernel *kernel = kernel_with_mask(library, "padding");
  REQUIRE(kernel != nullptr);
  std::vector<float> q(16, 0.5f), k(2 * 16, 0.25f), v(2 * 16, 1.0f), out(16, -1.0f);
  std::vector<int32_t> key_lengths = {3};  // Sk is 2
  const int64_t q_shape[] = {1, 1, 1, 16}, kv_shape[] = {1, 2, 1, 16}, lengths_shape[] = {1};
  const attn_arg args[] = {{"q", {q.data(), ATTN_F32, 4, q_shape, nullptr}},
                           {"k", {k.data(), ATTN_F32, 4, kv_shape, nullptr}},
                           {"v", {v.data(), ATTN_F32, 4, kv_shape, nullptr}},
                           {"key_lengths", {key_lengths.data(), ATTN_I32, 1, lengths_shape, nullptr}},
                           {"out", {out.data(), ATTN_F32, 4, q_shape, nullptr}}};
  CHECK(attn_run(kernel, args, 5) == ATTN_ERR_INVALID_VALUE);
  const std::string message = attn_last_error();
  CAPTURE(message);
  CHECK(contains(message, "key_lengths"));
  CHECK_FALSE(contains(message, "Requirement Failed"));
  CHECK_FALSE(contains(message, "(false)"));
  CHECK_FALSE(message.ends_with("\n"));
  for (float x : out) CHECK(x == -1.0f);
  attn_library_close(library);
}

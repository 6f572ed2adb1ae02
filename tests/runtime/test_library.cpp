// test_library.cpp: opening shared kernel libraries: success, ABI, CPU, load and manifest refusals.
#include <dlfcn.h>
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "attn/runtime.h"
#include "attn/runtime.hpp"

namespace fs = std::filesystem;

namespace {

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

// Whether the library at path is still mapped into the process (a refused open must unload it).
bool still_loaded(const std::string &path) {
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle != nullptr) dlclose(handle);
  return handle != nullptr;
}

enum class Check { verified, unverified };

attn_status open_status(const std::string &path, Check check = Check::verified) {
  attn_library *library = reinterpret_cast<attn_library *>(1);
  const attn_status status = check == Check::verified ? attn_library_open(path.c_str(), &library)
                                                      : attn_library_open_unverified(path.c_str(), &library);
  if (status == ATTN_OK)
    attn_library_close(library);
  else
    CHECK(library == nullptr);
  return status;
}

std::string slurp(const fs::path &path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), {});
}

// "dir/libx.so" -> "dir/libx.json", where the build writes a fake library's manifest.
fs::path manifest_of(const fs::path &library) {
  return fs::path(library).replace_extension(".json");
}

// A copy of a library (the good one unless told) in a fresh folder, without a manifest until one
// is written: its built manifest holds the library's hash (CMake's file(SHA256), not the
// runtime's), so built_manifest edited is what a tampered manifest looks like.
struct LibraryCopy {
  fs::path dir, library, manifest;
  std::string built_manifest;

  explicit LibraryCopy(const char *source = FAKE_LIB_GOOD) {
    dir = fs::temp_directory_path() / ("attnc_library_test_" + std::to_string(getpid()));
    fs::create_directories(dir);
    library = dir / "libfake_kernels.so";
    manifest = dir / "libfake_kernels.json";
    fs::copy_file(source, library, fs::copy_options::overwrite_existing);
    fs::remove(manifest);
    if (fs::exists(manifest_of(source))) built_manifest = slurp(manifest_of(source));
  }
  ~LibraryCopy() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
  void write_manifest(const std::string &text) const { std::ofstream(manifest, std::ios::binary) << text; }
};

std::string replaced(std::string text, const std::string &from, const std::string &to) {
  const size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("a good library opens and its kernel runs") {
  attn_library *library = nullptr;
  REQUIRE(attn_library_open(FAKE_LIB_GOOD, &library) == ATTN_OK);
  CHECK(attn_library_kernel_count(library) == 1);
  const attn_kernel *kernel = attn_library_kernel_at(library, 0);
  REQUIRE(kernel != nullptr);
  CHECK(std::string(attn_kernel_id(kernel)) == "fake_lib_core");
  CHECK(attn_library_kernel_at(library, 1) == nullptr);

  const attn_kernel *found = nullptr;
  CHECK(attn_library_find_kernel(library, "fake_lib_core", &found) == ATTN_OK);
  CHECK(found == kernel);
  CHECK(attn_library_find_kernel(library, "fake_lib_other", &found) == ATTN_ERR_UNKNOWN_KERNEL);
  CHECK(contains(attn_last_error(), "fake_lib_other"));
  CHECK(contains(attn_last_error(), "fake_lib_core"));
  // A library's kernels are not in the application's registry.
  CHECK(attn_find_kernel("fake_lib_core", &found) == ATTN_ERR_UNKNOWN_KERNEL);

  const int64_t q_shape[] = {1, 2, 2, 4}, k_shape[] = {1, 3, 1, 4}, v_shape[] = {1, 3, 1, 3},
                out_shape[] = {1, 2, 2, 3};
  std::vector<float> q(16), k(12, 0.0f), v(9), out(12, -777.0f);
  for (size_t i = 0; i < q.size(); ++i) q[i] = static_cast<float>(i);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 100.0f * static_cast<float>(i);
  const attn_arg args[] = {{"q", {q.data(), ATTN_F32, 4, q_shape, nullptr}},
                           {"k", {k.data(), ATTN_F32, 4, k_shape, nullptr}},
                           {"v", {v.data(), ATTN_F32, 4, v_shape, nullptr}},
                           {"out", {out.data(), ATTN_F32, 4, out_shape, nullptr}}};
  REQUIRE(attn_run(kernel, args, 4) == ATTN_OK);
  // out[0, 1, 1, 2] = q[0, 1, 1, 2] + v[0, 2, 0, 2]
  CHECK(out[11] == q[1 * 8 + 1 * 4 + 2] + v[2 * 3 + 2]);
  attn_library_close(library);
  CHECK_FALSE(still_loaded(FAKE_LIB_GOOD));
  attn_library_close(nullptr);
}

TEST_CASE("the C++ wrapper owns the library") {
  auto library = attn::rt::Library::open(FAKE_LIB_GOOD);
  REQUIRE(library.ok());
  CHECK(library->kernels().size() == 1);
  CHECK(library->find("fake_lib_core").ok());
  CHECK(library->find("nope").status().code() == ATTN_ERR_UNKNOWN_KERNEL);
  auto missing = attn::rt::Library::open("/nonexistent/libnothing.so");
  CHECK(missing.status().code() == ATTN_ERR_LOAD);
  auto unverified = attn::rt::Library::open_unverified(FAKE_LIB_CPU);
  CHECK(unverified.status().code() == ATTN_ERR_UNSUPPORTED_CPU);
}

TEST_CASE("libraries that cannot be used are refused and unloaded") {
  SUBCASE("a missing file") {
    CHECK(open_status("/nonexistent/dir/libattn_missing.so") == ATTN_ERR_LOAD);
    CHECK(contains(attn_last_error(), "/nonexistent/dir/libattn_missing.so"));
  }
  SUBCASE("a directory") {
    CHECK(open_status(fs::temp_directory_path().string(), Check::unverified) == ATTN_ERR_LOAD);
    CHECK(contains(attn_last_error(), "is a directory"));
  }
  SUBCASE("a fifo, without waiting for a writer") {
    LibraryCopy copy;
    fs::remove(copy.library);
    REQUIRE(mkfifo(copy.library.c_str(), 0600) == 0);
    CHECK(open_status(copy.library, Check::unverified) == ATTN_ERR_LOAD);
    CHECK(contains(attn_last_error(), "is a fifo"));
  }
  SUBCASE("a file that is not ELF") {
    LibraryCopy copy;
    std::ofstream(copy.library, std::ios::trunc) << std::string(4096, 'x');
    CHECK(open_status(copy.library, Check::unverified) == ATTN_ERR_LOAD);
    CHECK(contains(attn_last_error(), "not an ELF file"));
  }
  SUBCASE("a library built for the other architecture") {
    // The good library with its ELF header's e_machine (bytes 18-19) set to the other one's: the
    // runtime names both and refuses it before dlopen sees it.
    LibraryCopy copy;
#if defined(__aarch64__)
    const uint16_t other = 62;  // EM_X86_64
    const char *other_name = "x86-64";
#else
    const uint16_t other = 183;  // EM_AARCH64
    const char *other_name = "AArch64";
#endif
    {
      std::fstream file(copy.library, std::ios::in | std::ios::out | std::ios::binary);
      file.seekp(18);
      const char bytes[2] = {static_cast<char>(other & 0xff), static_cast<char>(other >> 8)};
      file.write(bytes, 2);
    }
    CHECK(open_status(copy.library, Check::unverified) == ATTN_ERR_UNSUPPORTED_CPU);
    CHECK(contains(attn_last_error(), std::string("is built for ") + other_name));
    CHECK_FALSE(still_loaded(copy.library));
  }
  SUBCASE("a library without the table symbol") {
    CHECK(open_status(FAKE_LIB_NO_TABLE, Check::unverified) == ATTN_ERR_LOAD);
    CHECK(contains(attn_last_error(), "attn_library_table_v1"));
    CHECK_FALSE(still_loaded(FAKE_LIB_NO_TABLE));
  }
  SUBCASE("a table of another abi version") {
    CHECK(open_status(FAKE_LIB_TABLE_ABI, Check::unverified) == ATTN_ERR_ABI_MISMATCH);
    CHECK(contains(attn_last_error(), "abi version 99"));
    CHECK_FALSE(still_loaded(FAKE_LIB_TABLE_ABI));
  }
  SUBCASE("a kernel of another abi version") {
    CHECK(open_status(FAKE_LIB_DESC_ABI, Check::unverified) == ATTN_ERR_ABI_MISMATCH);
    CHECK(contains(attn_last_error(), "fake_lib_core"));
    CHECK(contains(attn_last_error(), "abi version 99"));
    CHECK_FALSE(still_loaded(FAKE_LIB_DESC_ABI));
  }
  SUBCASE("a kernel needing cpu features this machine lacks") {
    CHECK(open_status(FAKE_LIB_CPU, Check::unverified) == ATTN_ERR_UNSUPPORTED_CPU);
    CHECK(contains(attn_last_error(), "fake_lib_core"));
    CHECK(contains(attn_last_error(), "nonsense_feature"));
    CHECK_FALSE(still_loaded(FAKE_LIB_CPU));
  }
  SUBCASE("null arguments") {
    attn_library *library = nullptr;
    CHECK(attn_library_open(nullptr, &library) == ATTN_ERR_INVALID_ARGUMENT);
    CHECK(attn_library_open(FAKE_LIB_GOOD, nullptr) == ATTN_ERR_INVALID_ARGUMENT);
    CHECK(attn_library_open_unverified(nullptr, &library) == ATTN_ERR_INVALID_ARGUMENT);
    CHECK(attn_library_open_unverified(FAKE_LIB_GOOD, nullptr) == ATTN_ERR_INVALID_ARGUMENT);
  }
}

TEST_CASE("a library is only loaded when it is the file its manifest's hash names") {
  LibraryCopy copy;
  REQUIRE(contains(copy.built_manifest, "\"library_sha256\""));
  SUBCASE("the untouched library and manifest") {
    copy.write_manifest(copy.built_manifest);
    CHECK(open_status(copy.library) == ATTN_OK);
  }
  SUBCASE("no manifest: refused, unless opened unverified") {
    CHECK(open_status(copy.library) == ATTN_ERR_LIBRARY_INTEGRITY);
    CHECK(contains(attn_last_error(), "no manifest"));
    CHECK(contains(attn_last_error(), copy.manifest.string()));
    CHECK_FALSE(still_loaded(copy.library.string()));
    CHECK(open_status(copy.library, Check::unverified) == ATTN_OK);
  }
  SUBCASE("a manifest without the hash") {
    const size_t at = copy.built_manifest.find("\"library_sha256\"");
    std::string text = copy.built_manifest;
    text.erase(at, text.find('\n', at) - at);
    copy.write_manifest(text);
    CHECK(open_status(copy.library) == ATTN_ERR_LIBRARY_INTEGRITY);
    CHECK(contains(attn_last_error(), "library_sha256"));
    CHECK(open_status(copy.library, Check::unverified) == ATTN_OK);
  }
  SUBCASE("an edited hash") {
    const size_t at = copy.built_manifest.find("\"library_sha256\": \"") + 19;
    std::string text = copy.built_manifest;
    text[at] = text[at] == '0' ? '1' : '0';
    copy.write_manifest(text);
    CHECK(open_status(copy.library) == ATTN_ERR_LIBRARY_INTEGRITY);
    CHECK(contains(attn_last_error(), "sha256"));
    CHECK_FALSE(still_loaded(copy.library.string()));
  }
  SUBCASE("another library swapped in under the same name") {
    copy.write_manifest(copy.built_manifest);
    fs::copy_file(FAKE_LIB_MASKED, copy.library, fs::copy_options::overwrite_existing);
    CHECK(open_status(copy.library) == ATTN_ERR_LIBRARY_INTEGRITY);
    CHECK(contains(attn_last_error(), "not the one attnc wrote"));
    CHECK_FALSE(still_loaded(FAKE_LIB_MASKED));
  }
  SUBCASE("a truncated library, whether verified or not") {
    copy.write_manifest(copy.built_manifest);
    const std::string bytes = slurp(copy.library);
    for (size_t keep : {size_t{0}, size_t{40}, size_t{1000}, bytes.size() / 2, bytes.size() - 1}) {
      CAPTURE(keep);
      std::ofstream(copy.library, std::ios::binary | std::ios::trunc) << bytes.substr(0, keep);
      for (Check check : {Check::verified, Check::unverified}) {
        const attn_status status = open_status(copy.library, check);
        CHECK((status == ATTN_ERR_LIBRARY_INTEGRITY || (keep < 64 && status == ATTN_ERR_LOAD)));
        CHECK((contains(attn_last_error(), "truncated") || contains(attn_last_error(), "shorter than")));
      }
    }
  }
  SUBCASE("a manifest that is a directory") {
    fs::create_directories(copy.manifest);
    CHECK(open_status(copy.library) == ATTN_ERR_MANIFEST_MISMATCH);
    CHECK(contains(attn_last_error(), "is a directory"));
    CHECK_FALSE(contains(attn_last_error(), "json at byte"));
  }
  SUBCASE("a manifest that is a fifo") {
    REQUIRE(mkfifo(copy.manifest.c_str(), 0600) == 0);
    CHECK(open_status(copy.library) == ATTN_ERR_MANIFEST_MISMATCH);
    CHECK(contains(attn_last_error(), "is a fifo"));
  }
}

TEST_CASE("a manifest beside the library must match it") {
  LibraryCopy copy;
  const std::string good_manifest = copy.built_manifest;
  SUBCASE("a matching manifest") {
    copy.write_manifest(good_manifest);
    CHECK(open_status(copy.library) == ATTN_OK);
  }
  SUBCASE("a manifest without args is refused, even unverified") {
    copy.write_manifest("{\"abi_version\": " + std::to_string(ATTN_ABI_VERSION) +
                        R"(, "kernels": [{"id": "fake_lib_core", "target": "x86-64-linux",
        "required_cpu_features": "",
        "spec": "form=core heads=2 kv_heads=1 head_dim=4 head_dim_v=3 mask=causal dtype=f32",},],})");
    CHECK(open_status(copy.library, Check::unverified) == ATTN_ERR_MANIFEST_MISMATCH);
    CHECK(contains(attn_last_error(), "\"args\""));
  }
  SUBCASE("another abi version") {
    copy.write_manifest(replaced(good_manifest, "\"abi_version\": " + std::to_string(ATTN_ABI_VERSION),
                                 "\"abi_version\": " + std::to_string(ATTN_ABI_VERSION + 1)));
    CHECK(open_status(copy.library) == ATTN_ERR_MANIFEST_MISMATCH);
    CHECK(contains(attn_last_error(), "abi_version " + std::to_string(ATTN_ABI_VERSION + 1)));
    CHECK_FALSE(still_loaded(copy.library.string()));
  }
  SUBCASE("no abi version") {
    copy.write_manifest(replaced(good_manifest, "\"abi_version\"", "\"abi_versions\""));
    CHECK(open_status(copy.library) == ATTN_ERR_MANIFEST_MISMATCH);
    CHECK(contains(attn_last_error(), "abi_version none"));
  }
  SUBCASE("other required cpu features") {
    copy.write_manifest(
        replaced(good_manifest, R"("required_cpu_features": "")", R"("required_cpu_features": "sse41")"));
    CHECK(open_status(copy.library) == ATTN_ERR_MANIFEST_MISMATCH);
    CHECK(contains(attn_last_error(), "required_cpu_features 'sse41'"));
  }
  SUBCASE("a variant the library does not have") {
    copy.write_manifest(replaced(good_manifest, R"("variants": [])",
                                 R"("variants": [{"target": "x86-64-linux", "required_cpu_features": ""}])"));
    CHECK(open_status(copy.library) == ATTN_ERR_MANIFEST_MISMATCH);
    CHECK(contains(attn_last_error(), "1 variants"));
  }
  SUBCASE("an argument left out") {
    copy.write_manifest(replaced(
        good_manifest, R"({"name": "k", "dtype": "f32", "output": false, "shape": ["B", "Sk", 1, 4]},)", ""));
    CHECK(open_status(copy.library) == ATTN_ERR_MANIFEST_MISMATCH);
    CHECK(contains(attn_last_error(), "3 arguments"));
  }
  SUBCASE("an output listed as an input") {
    copy.write_manifest(replaced(good_manifest, R"("name": "out", "dtype": "f32", "output": true)",
                                 R"("name": "out", "dtype": "f32", "output": false)"));
    CHECK(open_status(copy.library) == ATTN_ERR_MANIFEST_MISMATCH);
    CHECK(contains(attn_last_error(), "'out' is an output in the library"));
  }
  SUBCASE("a kernel the library lacks") {
    copy.write_manifest(replaced(good_manifest, R"("kernels": [)",
                                 R"("kernels": [{"id": "fake_lib_extra", "spec": "", "target": ""}, )"));
    CHECK(open_status(copy.library) == ATTN_ERR_MANIFEST_MISMATCH);
    CHECK(contains(attn_last_error(), "fake_lib_extra"));
    CHECK_FALSE(still_loaded(copy.library.string()));
  }
  SUBCASE("a library kernel the manifest lacks") {
    const size_t list = good_manifest.find("\"kernels\": [");
    copy.write_manifest(good_manifest.substr(0, list) + "\"kernels\": []}");
    CHECK(open_status(copy.library) == ATTN_ERR_MANIFEST_MISMATCH);
    CHECK(contains(attn_last_error(), "fake_lib_core"));
    CHECK(contains(attn_last_error(), "does not list"));
  }
  SUBCASE("a different spec") {
    copy.write_manifest(replaced(good_manifest, "heads=2", "heads=4"));
    CHECK(open_status(copy.library) == ATTN_ERR_MANIFEST_MISMATCH);
    CHECK(contains(attn_last_error(), "spec"));
    CHECK(contains(attn_last_error(), "heads=4"));
  }
  SUBCASE("a different target") {
    copy.write_manifest(replaced(good_manifest, "x86-64-linux", "arm-64-linux"));
    CHECK(open_status(copy.library) == ATTN_ERR_MANIFEST_MISMATCH);
    CHECK(contains(attn_last_error(), "arm-64-linux"));
  }
  SUBCASE("a different argument dtype") {
    copy.write_manifest(
        replaced(good_manifest, R"("name": "v", "dtype": "f32")", R"("name": "v", "dtype": "f16")"));
    CHECK(open_status(copy.library) == ATTN_ERR_MANIFEST_MISMATCH);
    CHECK(contains(attn_last_error(), "'v'"));
    CHECK(contains(attn_last_error(), "f16"));
  }
  SUBCASE("a different argument shape") {
    copy.write_manifest(replaced(good_manifest, R"(["B", "Sk", 1, 3])", R"(["B", "Sk", 1, 8])"));
    CHECK(open_status(copy.library) == ATTN_ERR_MANIFEST_MISMATCH);
    CHECK(contains(attn_last_error(), "dim 3"));
  }
  SUBCASE("a kernel listed twice") {
    const size_t first = good_manifest.find("    {\n      \"id\"");
    const size_t end = good_manifest.rfind("\n  ]");
    REQUIRE(first != std::string::npos);
    const std::string entry = good_manifest.substr(first, end - first);
    copy.write_manifest(good_manifest.substr(0, end) + ",\n" + entry + good_manifest.substr(end));
    CHECK(open_status(copy.library) == ATTN_ERR_MANIFEST_MISMATCH);
    CHECK(contains(attn_last_error(), "twice"));
  }
  SUBCASE("a manifest that is not json") {
    copy.write_manifest(R"({"kernels": [{"id": "fake_lib_core")");
    CHECK(open_status(copy.library) == ATTN_ERR_MANIFEST_MISMATCH);
    CHECK(contains(attn_last_error(), "not valid json"));
  }
  SUBCASE("a manifest without a kernels list") {
    copy.write_manifest(R"({"attnc_version": "0.1.0"})");
    CHECK(open_status(copy.library) == ATTN_ERR_MANIFEST_MISMATCH);
    CHECK(contains(attn_last_error(), "kernels"));
  }
}

TEST_CASE("a manifest's broadcast dims and min_rank must match the library's") {
  LibraryCopy copy(FAKE_LIB_MASKED);
  const std::string manifest = copy.built_manifest;
  REQUIRE(contains(manifest, R"("broadcast": [0, 1])"));
  SUBCASE("matching") {
    copy.write_manifest(manifest);
    CHECK(open_status(copy.library) == ATTN_OK);
  }
  SUBCASE("other broadcast dims") {
    copy.write_manifest(replaced(manifest, R"("broadcast": [0, 1])", R"("broadcast": [0])"));
    CHECK(open_status(copy.library) == ATTN_ERR_MANIFEST_MISMATCH);
    CHECK(contains(attn_last_error(), "'mask' broadcasts other dims"));
  }
  SUBCASE("no broadcast dims") {
    copy.write_manifest(replaced(manifest, R"("broadcast": [0, 1],)", ""));
    CHECK(open_status(copy.library) == ATTN_ERR_MANIFEST_MISMATCH);
    CHECK(contains(attn_last_error(), "'mask' broadcasts other dims"));
  }
  SUBCASE("another min_rank") {
    copy.write_manifest(replaced(manifest, R"("min_rank": 2)", R"("min_rank": 3)"));
    CHECK(open_status(copy.library) == ATTN_ERR_MANIFEST_MISMATCH);
    CHECK(contains(attn_last_error(), "'mask' has another min_rank"));
  }
}

TEST_CASE("a manifest's optional arguments and their defaults must match the library's") {
  LibraryCopy copy(FAKE_LIB_MASKED);
  const std::string manifest = copy.built_manifest;
  const std::string optional = R"("optional": true, "default": 0.5)";
  REQUIRE(contains(manifest, optional));
  SUBCASE("another default") {
    copy.write_manifest(replaced(manifest, optional, R"("optional": true, "default": 0.25)"));
    CHECK(open_status(copy.library) == ATTN_ERR_MANIFEST_MISMATCH);
    CHECK(contains(attn_last_error(), "'scale' has another default in the manifest"));
  }
  SUBCASE("not optional") {
    copy.write_manifest(replaced(manifest, ", " + optional, ""));
    CHECK(open_status(copy.library) == ATTN_ERR_MANIFEST_MISMATCH);
    CHECK(contains(attn_last_error(), "'scale' is optional in the library but not in the manifest"));
  }
  SUBCASE("an input made optional") {
    copy.write_manifest(
        replaced(manifest, R"("name": "x", "dtype": "f32", "output": false, "shape": [4])",
                 R"("name": "x", "dtype": "f32", "output": false, "shape": [4], "optional": true)"));
    CHECK(open_status(copy.library) == ATTN_ERR_MANIFEST_MISMATCH);
    CHECK(contains(attn_last_error(), "'x' is required in the library but not in the manifest"));
  }
}

TEST_CASE("closing a library frees the scratch blocks its kernels keep") {
  // The test holds the library too, so that its block count can be read once it is closed.
  void *own = dlopen(FAKE_LIB_GOOD, RTLD_NOW | RTLD_LOCAL);
  REQUIRE(own != nullptr);
  auto held_blocks = reinterpret_cast<int (*)(void)>(dlsym(own, "fake_library_held_blocks"));
  REQUIRE(reinterpret_cast<void *>(held_blocks) != nullptr);
  attn_library *library = nullptr;
  REQUIRE(attn_library_open(FAKE_LIB_GOOD, &library) == ATTN_OK);
  const attn_kernel *kernel = attn_library_kernel_at(library, 0);
  REQUIRE(kernel != nullptr);
  constexpr int threads = 4, calls = 5;
  std::vector<attn_status> statuses(threads * calls, ATTN_ERR_KERNEL_FAILED);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      const int64_t q_shape[] = {1, 2, 2, 4}, k_shape[] = {1, 3, 1, 4}, v_shape[] = {1, 3, 1, 3},
                    out_shape[] = {1, 2, 2, 3};
      std::vector<float> q(16, 1.0f), k(12, 0.0f), v(9, 2.0f), out(12);
      const attn_arg args[] = {{"q", {q.data(), ATTN_F32, 4, q_shape, nullptr}},
                               {"k", {k.data(), ATTN_F32, 4, k_shape, nullptr}},
                               {"v", {v.data(), ATTN_F32, 4, v_shape, nullptr}},
                               {"out", {out.data(), ATTN_F32, 4, out_shape, nullptr}}};
      for (int c = 0; c < calls; ++c)
        statuses[static_cast<size_t>(t * calls + c)] = attn_run(kernel, args, 4);
    });
  }
  for (std::thread &worker : workers) worker.join();
  for (attn_status status : statuses) CHECK(status == ATTN_OK);
  CHECK(held_blocks() == threads * calls);
  attn_library_close(library);
  CHECK(held_blocks() == 0);
  dlclose(own);
}

TEST_CASE("a library opened twice, closed once, does not stand in for another library") {
  // The loader knows a library by the descriptor path it was loaded through; a later open must
  // never be handed an earlier library that a reused descriptor number names.
  attn_library *first = nullptr, *second = nullptr, *other = nullptr;
  REQUIRE(attn_library_open(FAKE_LIB_GOOD, &first) == ATTN_OK);
  REQUIRE(attn_library_open(FAKE_LIB_GOOD, &second) == ATTN_OK);
  attn_library_close(first);
  REQUIRE(attn_library_open(FAKE_LIB_MASKED, &other) == ATTN_OK);
  const attn_kernel *kernel = nullptr;
  CHECK(attn_library_find_kernel(other, "fake_lib_masked", &kernel) == ATTN_OK);
  CHECK(attn_library_find_kernel(second, "fake_lib_core", &kernel) == ATTN_OK);
  attn_library_close(other);
  attn_library_close(second);
  CHECK_FALSE(still_loaded(FAKE_LIB_GOOD));
  CHECK_FALSE(still_loaded(FAKE_LIB_MASKED));
}

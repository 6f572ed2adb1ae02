// test_library.cpp: opening shared kernel libraries: success, ABI, CPU, load and manifest refusals.
#include <dlfcn.h>
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
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

attn_status open_status(const std::string &path) {
  attn_library *library = reinterpret_cast<attn_library *>(1);
  const attn_status status = attn_library_open(path.c_str(), &library);
  if (status == ATTN_OK)
    attn_library_close(library);
  else
    CHECK(library == nullptr);
  return status;
}

// A copy of a library (the good one unless told) in a fresh folder, so that a manifest can sit
// beside it.
struct LibraryCopy {
  fs::path dir, library, manifest;

  explicit LibraryCopy(const char *source = FAKE_LIB_GOOD) {
    dir = fs::temp_directory_path() / ("attnc_library_test_" + std::to_string(getpid()));
    fs::create_directories(dir);
    library = dir / "libfake_kernels.so";
    manifest = dir / "libfake_kernels.json";
    fs::copy_file(source, library, fs::copy_options::overwrite_existing);
    fs::remove(manifest);
  }
  ~LibraryCopy() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
  void write_manifest(const std::string &text) const { std::ofstream(manifest) << text; }
};

const char *const good_manifest = R"({
  "attnc_version": "0.1.0", "halide_version": "21.0.0",
  "kernels": [{
    "id": "fake_lib_core",
    "spec": "form=core heads=2 kv_heads=1 head_dim=4 head_dim_v=3 mask=causal dtype=f32",
    "target": "x86-64-linux",
    "args": [
      {"name": "q", "dtype": "f32", "shape": ["B", "Sq", 2, 4], "output": false},
      {"name": "k", "dtype": "f32", "shape": ["B", "Sk", 1, 4], "output": false},
      {"name": "v", "dtype": "f32", "shape": ["B", "Sk", 1, 3], "output": false},
      {"name": "out", "dtype": "f32", "shape": ["B", "Sq", 2, 3], "output": true}
    ]
  }]
})";

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
}

TEST_CASE("libraries that cannot be used are refused and unloaded") {
  SUBCASE("a missing file") {
    CHECK(open_status("/nonexistent/dir/libattn_missing.so") == ATTN_ERR_LOAD);
    CHECK(contains(attn_last_error(), "/nonexistent/dir/libattn_missing.so"));
  }
  SUBCASE("a library without the table symbol") {
    CHECK(open_status(FAKE_LIB_NO_TABLE) == ATTN_ERR_LOAD);
    CHECK(contains(attn_last_error(), "attn_library_table_v1"));
    CHECK_FALSE(still_loaded(FAKE_LIB_NO_TABLE));
  }
  SUBCASE("a table of another abi version") {
    CHECK(open_status(FAKE_LIB_TABLE_ABI) == ATTN_ERR_ABI_MISMATCH);
    CHECK(contains(attn_last_error(), "abi version 99"));
    CHECK_FALSE(still_loaded(FAKE_LIB_TABLE_ABI));
  }
  SUBCASE("a kernel of another abi version") {
    CHECK(open_status(FAKE_LIB_DESC_ABI) == ATTN_ERR_ABI_MISMATCH);
    CHECK(contains(attn_last_error(), "fake_lib_core"));
    CHECK(contains(attn_last_error(), "abi version 99"));
    CHECK_FALSE(still_loaded(FAKE_LIB_DESC_ABI));
  }
  SUBCASE("a kernel needing cpu features this machine lacks") {
    CHECK(open_status(FAKE_LIB_CPU) == ATTN_ERR_UNSUPPORTED_CPU);
    CHECK(contains(attn_last_error(), "fake_lib_core"));
    CHECK(contains(attn_last_error(), "nonsense_feature"));
    CHECK_FALSE(still_loaded(FAKE_LIB_CPU));
  }
  SUBCASE("null arguments") {
    attn_library *library = nullptr;
    CHECK(attn_library_open(nullptr, &library) == ATTN_ERR_INVALID_ARGUMENT);
    CHECK(attn_library_open(FAKE_LIB_GOOD, nullptr) == ATTN_ERR_INVALID_ARGUMENT);
  }
}

TEST_CASE("a manifest beside the library must match it") {
  LibraryCopy copy;
  SUBCASE("no manifest is fine") {
    CHECK(open_status(copy.library) == ATTN_OK);
  }
  SUBCASE("a matching manifest") {
    copy.write_manifest(good_manifest);
    CHECK(open_status(copy.library) == ATTN_OK);
  }
  SUBCASE("a manifest without args or versions is enough") {
    copy.write_manifest(R"({"kernels": [{"id": "fake_lib_core", "target": "x86-64-linux",
        "spec": "form=core heads=2 kv_heads=1 head_dim=4 head_dim_v=3 mask=causal dtype=f32",},],})");
    CHECK(open_status(copy.library) == ATTN_OK);
  }
  SUBCASE("a kernel the library lacks") {
    copy.write_manifest(replaced(good_manifest, R"("kernels": [{)",
                                 R"("kernels": [{"id": "fake_lib_extra", "spec": "", "target": ""}, {)"));
    CHECK(open_status(copy.library) == ATTN_ERR_MANIFEST_MISMATCH);
    CHECK(contains(attn_last_error(), "fake_lib_extra"));
    CHECK_FALSE(still_loaded(copy.library.string()));
  }
  SUBCASE("a library kernel the manifest lacks") {
    copy.write_manifest(R"({"kernels": []})");
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
    copy.write_manifest(replaced(
        good_manifest, R"("kernels": [{)",
        std::string(R"("kernels": [{"id": "fake_lib_core", "target": "x86-64-linux",)") +
            R"("spec": "form=core heads=2 kv_heads=1 head_dim=4 head_dim_v=3 mask=causal dtype=f32"}, {)"));
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
  const std::string manifest = R"({"kernels": [{"id": "fake_lib_masked", "target": "x86-64-linux",
    "spec": "form=core heads=2 kv_heads=1 head_dim=4 head_dim_v=3 mask=padding&tensor lse=true dtype=f32",
    "args": [
      {"name": "q", "dtype": "f32", "shape": ["B", "Sq", 2, 4], "output": false},
      {"name": "k", "dtype": "f32", "shape": ["B", "Sk", 1, 4], "output": false},
      {"name": "v", "dtype": "f32", "shape": ["B", "Sk", 1, 3], "output": false},
      {"name": "key_lengths", "dtype": "i32", "shape": ["B"], "output": false},
      {"name": "mask", "dtype": "u8", "shape": ["B", 2, "Sq", "Sk"], "output": false,
       "broadcast": [0, 1], "min_rank": 2},
      {"name": "out", "dtype": "f32", "shape": ["B", "Sq", 2, 3], "output": true},
      {"name": "lse", "dtype": "f32", "shape": ["B", "Sq", 2], "output": true}
    ]}]})";
  SUBCASE("matching") {
    copy.write_manifest(manifest);
    CHECK(open_status(copy.library) == ATTN_OK);
  }
  SUBCASE("other broadcast dims") {
    copy.write_manifest(replaced(manifest, R"("broadcast": [0, 1])", R"("broadcast": [0])"));
    CHECK(open_status(copy.library) == ATTN_ERR_MANIFEST_MISMATCH);
    CHECK(contains(attn_last_error(), "'mask' broadcasts other dims"));
  }
  SUBCASE("another min_rank") {
    copy.write_manifest(replaced(manifest, R"("min_rank": 2)", R"("min_rank": 3)"));
    CHECK(open_status(copy.library) == ATTN_ERR_MANIFEST_MISMATCH);
    CHECK(contains(attn_last_error(), "'mask' has another min_rank"));
  }
}

// test_registry.cpp: static registration, lookup, kernel info, refusals and first-wins ids.
#include <doctest/doctest.h>

#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fake_kernel.h"

namespace {

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

// A table built at run time and its id's storage.
struct OwnedDesc {
  std::string id;
  attn_kernel_desc desc;
};

// Tables built at run time live until the process exits, as the registry requires; a deque keeps
// their addresses as it grows. Threads of the thread-safety test build them concurrently.
attn_kernel_desc *make_desc(const std::string &id, int32_t abi_version = ATTN_ABI_VERSION) {
  static std::mutex mutex;
  static std::deque<OwnedDesc> tables;
  std::lock_guard lock(mutex);
  OwnedDesc &owned = tables.emplace_back(OwnedDesc{id, fake::core});
  owned.desc.id = owned.id.c_str();
  owned.desc.abi_version = abi_version;
  return &owned.desc;
}

}  // namespace

TEST_CASE("a kernel registered at load time is found with its info") {
  const attn_kernel *kernel = nullptr;
  REQUIRE(attn_find_kernel("fake_core", &kernel) == ATTN_OK);
  REQUIRE(kernel != nullptr);
  CHECK(std::string(attn_kernel_id(kernel)) == "fake_core");
  CHECK(contains(attn_kernel_spec(kernel), "heads=2"));
  CHECK(std::string(attn_kernel_target(kernel)) == "host");
  REQUIRE(attn_kernel_arg_count(kernel) == 4);
  attn_arg_info info{};
  REQUIRE(attn_kernel_arg(kernel, 3, &info) == ATTN_OK);
  CHECK(std::string(info.name) == "out");
  CHECK(info.is_output == 1);
  CHECK(info.rank == 4);
  CHECK(info.fixed_shape[3] == fake::head_dim_v);
  CHECK(std::string(info.dim_names[1]) == "Sq");
  CHECK(attn_kernel_arg(kernel, 4, &info) == ATTN_ERR_INVALID_ARGUMENT);
  CHECK(contains(attn_last_error(), "index 4"));
  CHECK(attn_kernel_arg(kernel, -1, &info) == ATTN_ERR_INVALID_ARGUMENT);

  bool listed = false;
  for (int i = 0; i < attn_kernel_count(); ++i) listed = listed || attn_kernel_at(i) == kernel;
  CHECK(listed);
  CHECK(attn_kernel_at(-1) == nullptr);
  CHECK(attn_kernel_at(attn_kernel_count()) == nullptr);
}

TEST_CASE("registering the same table twice keeps one kernel") {
  const int before = attn_kernel_count();
  attn_register_kernel(&fake::core);
  attn_register_kernel(nullptr);
  CHECK(attn_kernel_count() == before);
}

TEST_CASE("a second table with a taken id loses to the first") {
  attn_kernel_desc *other = make_desc("fake_core");
  other->spec = "form=core heads=7";
  const int before = attn_kernel_count();
  attn_register_kernel(other);
  CHECK(attn_kernel_count() == before);
  const attn_kernel *kernel = nullptr;
  REQUIRE(attn_find_kernel("fake_core", &kernel) == ATTN_OK);
  CHECK(contains(attn_kernel_spec(kernel), "heads=2"));
}

TEST_CASE("an unknown id is refused with the known ids") {
  const attn_kernel *kernel = reinterpret_cast<const attn_kernel *>(1);
  CHECK(attn_find_kernel("attn_fwd_nope", &kernel) == ATTN_ERR_UNKNOWN_KERNEL);
  CHECK(kernel == nullptr);
  const std::string message = attn_last_error();
  CHECK(contains(message, "attn_fwd_nope"));
  CHECK(contains(message, "fake_core"));

  SUBCASE("at most ten ids are listed") {
    for (int i = 0; i < 12; ++i) attn_register_kernel(make_desc("fake_many_" + std::to_string(i)));
    CHECK(attn_find_kernel("attn_fwd_nope", &kernel) == ATTN_ERR_UNKNOWN_KERNEL);
    CHECK(contains(attn_last_error(), "more"));
  }
  SUBCASE("null arguments") {
    CHECK(attn_find_kernel(nullptr, &kernel) == ATTN_ERR_INVALID_ARGUMENT);
    CHECK(attn_find_kernel("fake_core", nullptr) == ATTN_ERR_INVALID_ARGUMENT);
  }
}

TEST_CASE("a table built for another abi version is refused") {
  const int before = attn_kernel_count();
  attn_register_kernel(make_desc("fake_future_abi", ATTN_ABI_VERSION + 41));
  CHECK(attn_kernel_count() == before);
  const attn_kernel *kernel = nullptr;
  CHECK(attn_find_kernel("fake_future_abi", &kernel) == ATTN_ERR_ABI_MISMATCH);
  CHECK(kernel == nullptr);
  const std::string message = attn_last_error();
  CHECK(contains(message, "fake_future_abi"));
  CHECK(contains(message, std::to_string(ATTN_ABI_VERSION + 41)));
}

TEST_CASE("a malformed table is refused") {
  attn_kernel_desc *broken = make_desc("fake_no_run");
  broken->run = nullptr;
  attn_register_kernel(broken);
  const attn_kernel *kernel = nullptr;
  CHECK(attn_find_kernel("fake_no_run", &kernel) == ATTN_ERR_ABI_MISMATCH);
  CHECK(contains(attn_last_error(), "no run entry"));
}

TEST_CASE("registration is thread-safe") {
  const int before = attn_kernel_count();
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < 50; ++i) {
        attn_register_kernel(make_desc("fake_thread_" + std::to_string(t) + "_" + std::to_string(i)));
        attn_kernel_count();
      }
    });
  }
  for (std::thread &thread : threads) thread.join();
  CHECK(attn_kernel_count() == before + 400);
  const attn_kernel *kernel = nullptr;
  CHECK(attn_find_kernel("fake_thread_7_49", &kernel) == ATTN_OK);
}

TEST_CASE("kernel info of a null kernel is empty, not a crash") {
  CHECK(std::string(attn_kernel_id(nullptr)).empty());
  CHECK(attn_kernel_arg_count(nullptr) == 0);
  attn_arg_info info{};
  CHECK(attn_kernel_arg(nullptr, 0, &info) == ATTN_ERR_INVALID_ARGUMENT);
}

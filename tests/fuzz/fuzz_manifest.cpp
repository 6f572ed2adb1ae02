// Fuzzes the manifest reader: any text is parsed as JSON or refused with a message, and a library
// whose manifest holds it opens (the manifest matches) or is refused with a named status.
#include <dlfcn.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "attn/runtime.h"
#include "fuzz_check.h"
#include "json_reader.h"

namespace fs = std::filesystem;

namespace {

// A copy of each fake library in a folder of its own, so that a manifest can sit beside it; both
// stay loaded, so that each open reads the manifest without loading the library again.
struct LibraryCopies {
  fs::path dir;
  fs::path library[2], manifest[2];
  void *keep_loaded[2] = {nullptr, nullptr};

  LibraryCopies() {
    dir = fs::temp_directory_path() / ("attnc_fuzz_manifest_" + std::to_string(getpid()));
    fs::create_directories(dir);
    const char *sources[2] = {FAKE_LIB_GOOD, FAKE_LIB_MASKED};
    for (int i = 0; i < 2; ++i) {
      library[i] = dir / ("libfake" + std::to_string(i) + ".so");
      manifest[i] = dir / ("libfake" + std::to_string(i) + ".json");
      fs::copy_file(sources[i], library[i], fs::copy_options::overwrite_existing);
      keep_loaded[i] = dlopen(library[i].c_str(), RTLD_NOW | RTLD_LOCAL);
      FUZZ_CHECK(keep_loaded[i] != nullptr, "cannot load %s: %s", library[i].c_str(), dlerror());
    }
  }
  ~LibraryCopies() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
};

LibraryCopies &copies() {
  static LibraryCopies instance;
  return instance;
}

bool named_status(attn_status status) {
  return status == ATTN_ERR_MANIFEST_MISMATCH || status == ATTN_ERR_LOAD || status == ATTN_ERR_LIBRARY_INTEGRITY;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  const int which = data[0] & 1;  // the first byte picks the library; the rest is the manifest
  const std::string_view text(reinterpret_cast<const char *>(data + 1), size - 1);

  const attn::detail::json::ParseResult parsed = attn::detail::json::Reader(text).parse();
  FUZZ_CHECK(parsed.ok || !parsed.message.empty(), "json refused without a message");

  LibraryCopies &lib = copies();
  std::ofstream(lib.manifest[which], std::ios::binary | std::ios::trunc) << text;
  attn_library *library = nullptr;
  // Unverified: a fuzzed manifest has no valid library_sha256, and the verified open would refuse
  // every input before reading the rest; the unverified one still checks every field it holds.
  const attn_status status = attn_library_open_unverified(lib.library[which].c_str(), &library);
  if (status != ATTN_OK) {
    FUZZ_CHECK(named_status(status), "open: unexpected %s: %s", attn_status_name(status), attn_last_error());
    FUZZ_CHECK(library == nullptr, "a refused library was handed out");
    FUZZ_CHECK(attn_last_error()[0] != '\0', "refused without a message");
    return 0;
  }
  FUZZ_CHECK(parsed.ok, "a library opened with a manifest that is not json");
  const int count = attn_library_kernel_count(library);
  for (int i = 0; i < count; ++i) {
    const attn_kernel *kernel = attn_library_kernel_at(library, i);
    FUZZ_CHECK(kernel != nullptr, "kernel %d of %d is null", i, count);
    for (int a = 0; a < attn_kernel_arg_count(kernel); ++a) {
      attn_arg_info info;
      FUZZ_CHECK(attn_kernel_arg(kernel, a, &info) == ATTN_OK, "arg %d: %s", a, attn_last_error());
    }
  }
  attn_library_close(library);
  return 0;
}

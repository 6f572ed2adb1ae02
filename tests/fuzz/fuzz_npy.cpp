// Fuzzes attn-run's .npy reader: any file is read or refused with a message; what is read holds
// exactly its elements' bytes and survives a write and a second read unchanged.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "npy.h"

namespace {

// An in-memory file holding bytes, named by a path the reader can open.
class MemoryFile {
 public:
  MemoryFile() : fd_(memfd_create("attnc_fuzz_npy", 0)) { FUZZ_CHECK(fd_ >= 0, "memfd_create failed"); }
  ~MemoryFile() { close(fd_); }
  MemoryFile(const MemoryFile &) = delete;
  MemoryFile &operator=(const MemoryFile &) = delete;
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }
  void write_all(const uint8_t *data, size_t size) {
    for (size_t done = 0; done < size;) {
      const ssize_t wrote = write(fd_, data + done, size - done);
      FUZZ_CHECK(wrote > 0, "writing the memory file failed");
      done += static_cast<size_t>(wrote);
    }
  }

 private:
  int fd_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  MemoryFile file;
  file.write_all(data, size);
  attn::npy::Array array;
  std::string error;
  if (!attn::npy::read(file.path(), &array, &error)) {
    FUZZ_CHECK(!error.empty(), "a refused file without a message");
    return 0;
  }
  const size_t element = attn::npy::element_size(array.dtype);
  FUZZ_CHECK(element > 0, "read a dtype (%d) it cannot hold", static_cast<int>(array.dtype));
  FUZZ_CHECK(array.element_count() >= 0, "a negative element count");
  FUZZ_CHECK(array.data.size() == static_cast<size_t>(array.element_count()) * element,
             "%zu data bytes for %lld elements of %zu bytes", array.data.size(),
             static_cast<long long>(array.element_count()), element);

  MemoryFile copy;
  FUZZ_CHECK(attn::npy::write(copy.path(), array, &error), "writing what was read failed: %s", error.c_str());
  attn::npy::Array again;
  FUZZ_CHECK(attn::npy::read(copy.path(), &again, &error), "reading what was written failed: %s",
             error.c_str());
  FUZZ_CHECK(again.dtype == array.dtype && again.shape == array.shape && again.data == array.data,
             "a write and a read changed the array");
  return 0;
}

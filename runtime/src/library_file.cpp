// library_file.cpp: opens a kernel library by descriptor, checks its ELF extent and hashes it.
#include "library_file.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "sha256.h"
#include "status_internal.h"

namespace attn::detail {
namespace {

const char *file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a fifo";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Reads size bytes at offset; false on a short read or an error.
bool read_at(int fd, void *out, size_t size, uint64_t offset) {
  auto *bytes = static_cast<uint8_t *>(out);
  while (size > 0) {
    const ssize_t n = pread(fd, bytes, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return true;
}

// The end of a table of count entries of entry_size bytes at offset, or UINT64_MAX on overflow.
uint64_t table_end(uint64_t offset, uint64_t count, uint64_t entry_size) {
  const uint64_t bytes = count * entry_size;  // both at most 65535: no overflow
  return offset > UINT64_MAX - bytes ? UINT64_MAX : offset + bytes;
}

// The ELF machine this runtime runs on, and a name for any machine a library may be built for.
#if defined(__aarch64__)
constexpr uint16_t this_machine = EM_AARCH64;
#else
constexpr uint16_t this_machine = EM_X86_64;
#endif
std::string machine_name(uint16_t machine) {
  switch (machine) {
    case EM_X86_64: return "x86-64";
    case EM_AARCH64: return "AArch64";
    case EM_RISCV: return "RISC-V";
    case EM_PPC64: return "POWER";
    default: return "ELF machine " + std::to_string(machine);
  }
}

// The bytes an ELF64 file needs, read from its own headers: the program and section header
// tables and every segment's file contents. Sets why when the headers themselves are unreadable,
// machine when the file is for another architecture than this runtime's.
uint64_t elf_extent(int fd, uint64_t size, std::string *why, uint16_t *machine) {
  Elf64_Ehdr header;
  if (size < sizeof(header) || !read_at(fd, &header, sizeof(header), 0)) {
    *why = "is " + std::to_string(size) + " bytes, shorter than an ELF header";
    return 0;
  }
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) {
    *why = "is not an ELF file (no \\x7fELF magic)";
    return 0;
  }
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_phentsize != sizeof(Elf64_Phdr)) {
    *why = "is not a 64-bit ELF file";
    return 0;
  }
  if (header.e_machine != this_machine) {
    *machine = header.e_machine;
    return 0;
  }
  uint64_t extent = std::max(table_end(header.e_phoff, header.e_phnum, header.e_phentsize),
                             table_end(header.e_shoff, header.e_shnum, header.e_shentsize));
  if (extent > size) return extent;
  std::vector<Elf64_Phdr> segments(header.e_phnum);
  if (!segments.empty() &&
      !read_at(fd, segments.data(), segments.size() * sizeof(Elf64_Phdr), header.e_phoff)) {
    *why = "has unreadable program headers";
    return 0;
  }
  for (const Elf64_Phdr &segment : segments) {
    extent = std::max(extent, table_end(segment.p_offset, 1, segment.p_filesz));
  }
  return extent;
}

}  // namespace

LibraryFile::~LibraryFile() {
  if (fd_ >= 0) ::close(fd_);
}

attn_status LibraryFile::open(const std::string &path) {
  path_ = path;
  // O_NONBLOCK: opening a fifo must not wait for a writer; reads of a regular file ignore it, and
  // dlopen opens /proc/self/fd/N afresh.
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd_ < 0) {
    return fail(ATTN_ERR_LOAD, "cannot open kernel library '%s': %s", path.c_str(), std::strerror(errno));
  }
  struct stat info {};
  if (fstat(fd_, &info) != 0) {
    return fail(ATTN_ERR_LOAD, "cannot read kernel library '%s': %s", path.c_str(), std::strerror(errno));
  }
  if (!S_ISREG(info.st_mode)) {
    return fail(ATTN_ERR_LOAD, "kernel library '%s' is %s; give the path of a .so file", path.c_str(),
                file_kind(info.st_mode));
  }
  size_ = static_cast<uint64_t>(info.st_size);
  std::string why;
  uint16_t machine = this_machine;
  const uint64_t extent = elf_extent(fd_, size_, &why, &machine);
  if (machine != this_machine) {
    return fail(ATTN_ERR_UNSUPPORTED_CPU,
                "kernel library '%s' is built for %s, and this runtime runs on %s: run it on an %s "
                "machine (or under its emulator with that machine's attn-run), or generate it for this "
                "one (attnc gen --target host)",
                path.c_str(), machine_name(machine).c_str(), machine_name(this_machine).c_str(),
                machine_name(machine).c_str());
  }
  if (!why.empty()) {
    return fail(ATTN_ERR_LOAD, "kernel library '%s' %s; give the path of a .so file attnc gen --shared wrote",
                path.c_str(), why.c_str());
  }
  if (extent > size_) {
    return fail(ATTN_ERR_LIBRARY_INTEGRITY,
                "kernel library '%s' is truncated: its ELF headers need %llu bytes, the file has %llu; "
                "copy or generate it again",
                path.c_str(), static_cast<unsigned long long>(extent),
                static_cast<unsigned long long>(size_));
  }
  return ATTN_OK;
}

attn_status LibraryFile::sha256(std::string *hex) const {
  Sha256 hash;
  std::vector<uint8_t> chunk(1 << 16);
  uint64_t offset = 0;
  for (;;) {
    const ssize_t n = pread(fd_, chunk.data(), chunk.size(), static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return fail(ATTN_ERR_LOAD, "cannot read kernel library '%s': %s", path_.c_str(), std::strerror(errno));
    }
    if (n == 0) break;
    hash.update(chunk.data(), static_cast<size_t>(n));
    offset += static_cast<uint64_t>(n);
  }
  *hex = hex_digest(hash.digest());
  return ATTN_OK;
}

std::string LibraryFile::load_path() const {
  return "/proc/self/fd/" + std::to_string(fd_);
}

int LibraryFile::release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

attn_status read_regular_file(const std::string &path, const char *what, uint64_t max_bytes,
                              std::string *text, bool *missing) {
  *missing = false;
  // O_NONBLOCK: opening a fifo must not wait for a writer; a regular file ignores it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    *missing = errno == ENOENT;
    return fail(ATTN_ERR_MANIFEST_MISMATCH, "cannot open %s '%s': %s", what, path.c_str(),
                std::strerror(errno));
  }
  struct stat info {};
  attn_status status = ATTN_OK;
  if (fstat(fd, &info) != 0) {
    status =
        fail(ATTN_ERR_MANIFEST_MISMATCH, "cannot read %s '%s': %s", what, path.c_str(), std::strerror(errno));
  } else if (!S_ISREG(info.st_mode)) {
    status = fail(ATTN_ERR_MANIFEST_MISMATCH, "%s '%s' is %s, not a json file", what, path.c_str(),
                  file_kind(info.st_mode));
  } else if (static_cast<uint64_t>(info.st_size) > max_bytes) {
    status = fail(ATTN_ERR_MANIFEST_MISMATCH, "%s '%s' is %lld bytes, more than the %llu a manifest may have",
                  what, path.c_str(), static_cast<long long>(info.st_size),
                  static_cast<unsigned long long>(max_bytes));
  } else {
    text->resize(static_cast<size_t>(info.st_size));
    if (!read_at(fd, text->data(), text->size(), 0)) {
      status = fail(ATTN_ERR_MANIFEST_MISMATCH, "cannot read %s '%s' to its end", what, path.c_str());
    }
  }
  ::close(fd);
  return status;
}

}  // namespace attn::detail

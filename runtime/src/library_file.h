// library_file.h: a kernel library's file read through one descriptor: kind, ELF extent, SHA-256.
#pragma once

#include <cstdint>
#include <string>

#include "attn/runtime.h"

namespace attn::detail {

// An open kernel library file. The loader hashes it and then loads this same descriptor
// (/proc/self/fd/N), so the file cannot be swapped between the check and the load.
class LibraryFile {
 public:
  LibraryFile() = default;
  LibraryFile(const LibraryFile &) = delete;
  LibraryFile &operator=(const LibraryFile &) = delete;
  ~LibraryFile();

  // Opens path; refuses what is not a regular file, or an ELF file shorter than its own headers
  // say it is (a truncated copy, which dlopen would map and fault on: SIGBUS).
  attn_status open(const std::string &path);
  // The file's SHA-256 as 64 hex digits, read through the descriptor.
  attn_status sha256(std::string *hex) const;
  // The path dlopen loads the descriptor by.
  std::string load_path() const;
  // Gives the descriptor up: the caller now owns it (or closes it).
  int release();

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
  std::string path_;
};

// Reads a small regular file whole (a manifest). Refuses what is not a regular file, or one
// larger than max_bytes. missing is set when there is no file at path at all.
attn_status read_regular_file(const std::string &path, const char *what, uint64_t max_bytes,
                              std::string *text, bool *missing);

}  // namespace attn::detail

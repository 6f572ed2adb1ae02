// text_file.cpp: read_text_file on stat, then a read bounded to one byte past the limit.
#include "attnc/text_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace attnc {
namespace {

const char *kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a fifo";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

bool read_text_file(const std::string &path, const std::string &what, int64_t max_bytes, std::string *text,
                    std::string *error) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    *error = "cannot read " + what + ": " + std::strerror(errno);
    return false;
  }
  if (!S_ISREG(info.st_mode)) {
    *error = what + " is " + kind_of(info.st_mode) + "; expected a regular text file";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = "cannot read " + what + ": " + std::strerror(errno);
    return false;
  }
  // One byte past the limit: a file that grew since stat is refused too.
  text->assign(static_cast<size_t>(max_bytes) + 1, '\0');
  in.read(text->data(), static_cast<std::streamsize>(text->size()));
  if (in.bad()) {
    *error = "cannot read " + what + ": " + std::strerror(errno);
    return false;
  }
  text->resize(static_cast<size_t>(in.gcount()));
  if (static_cast<int64_t>(text->size()) > max_bytes) {
    *error = what + " is larger than " + std::to_string(max_bytes) + " bytes";
    return false;
  }
  return true;
}

}  // namespace attnc

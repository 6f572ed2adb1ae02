// spec_file.h: reading a --spec-file (one spec text a line, # comments), refusing what is not one.
#pragma once

#include <string>
#include <vector>

namespace attnc::tool {

// Spec files are small: a few lines a kernel. Anything larger is not one.
constexpr long long max_spec_file_bytes = 1 << 20;

// Appends the file's specs (blank lines and `#` comments skipped) to `specs`. False, with `error`
// naming the path and why, when the path is not a regular file (a directory, a fifo, a device:
// refused before it is opened, attnc/text_file.h), cannot be read, is larger than
// max_spec_file_bytes, or holds no spec.
bool read_spec_file(const std::string &path, std::vector<std::string> *specs, std::string *error);

}  // namespace attnc::tool

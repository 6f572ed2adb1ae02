// spec_file.cpp: --spec-file reading; the checks come first so that a directory or a device is
// named as such instead of reading as an empty file.
#include "spec_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace attnc::tool {

bool read_spec_file(const std::string &path, std::vector<std::string> *specs, std::string *error) {
  namespace fs = std::filesystem;
  const std::string quoted = "spec file '" + path + "'";
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    *error = quoted + " is a directory; expected a text file with one spec a line";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = "cannot read " + quoted + ": " + std::strerror(errno);
    return false;
  }
  // Read one byte past the limit, so that a pipe or a device without an end is refused too.
  std::string text(static_cast<size_t>(max_spec_file_bytes) + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) {
    *error = "cannot read " + quoted + ": " + std::strerror(errno);
    return false;
  }
  text.resize(static_cast<size_t>(in.gcount()));
  if (static_cast<long long>(text.size()) > max_spec_file_bytes) {
    *error = quoted + " is larger than " + std::to_string(max_spec_file_bytes) +
             " bytes; a spec file holds one spec a line";
    return false;
  }
  std::istringstream lines(text);
  size_t found = 0;
  for (std::string line; std::getline(lines, line);) {
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    const size_t last = line.find_last_not_of(" \t\r");
    specs->push_back(line.substr(first, last - first + 1));
    ++found;
  }
  if (found == 0) {
    *error = quoted + " holds no spec (only blank lines and # comments)";
    return false;
  }
  return true;
}

}  // namespace attnc::tool

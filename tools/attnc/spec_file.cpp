// spec_file.cpp: --spec-file reading (read_text_file refuses what is not a small regular file: a
// directory, a fifo or a device is named as such instead of blocking or reading without end).
#include "spec_file.h"

#include <sstream>

#include "attnc/text_file.h"

namespace attnc::tool {

bool read_spec_file(const std::string &path, std::vector<std::string> *specs, std::string *error) {
  const std::string quoted = "spec file '" + path + "'";
  std::string text;
  if (!read_text_file(path, quoted, max_spec_file_bytes, &text, error)) {
    if (error->find("is a directory") != std::string::npos) *error += " with one spec a line";
    if (error->find("is larger than") != std::string::npos) *error += "; a spec file holds one spec a line";
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

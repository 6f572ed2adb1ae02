// staging_dir.cpp: mkdtemp inside the output directory (the same file system, so rename is atomic).
#include "attnc/staging_dir.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace attnc {

namespace fs = std::filesystem;

StagingDir::StagingDir(const fs::path &out_dir) : out_dir_(out_dir) {
  std::string name = (out_dir / ".attnc-partial-XXXXXX").string();
  if (mkdtemp(name.data()) == nullptr) {
    error_ = "cannot create a staging directory in '" + out_dir.string() + "': " + std::strerror(errno);
    return;
  }
  path_ = name;
}

StagingDir::~StagingDir() {
  std::error_code ec;
  if (!path_.empty()) fs::remove_all(path_, ec);
}

bool StagingDir::commit(std::string *error) {
  std::error_code ec;
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(path_, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file()) files.push_back(it->path());
  if (ec) {
    *error = "cannot list '" + path_.string() + "': " + ec.message();
    return false;
  }
  for (const fs::path &from : files) {
    const fs::path to = out_dir_ / from.lexically_relative(path_);
    fs::create_directories(to.parent_path(), ec);
    if (!ec) fs::rename(from, to, ec);
    if (ec) {
      *error = "cannot move '" + from.string() + "' to '" + to.string() + "': " + ec.message();
      return false;
    }
  }
  return true;
}

}  // namespace attnc

// attnc/staging_dir.h: a temporary directory inside an output directory; its files move into place
// only when the whole output is written, so a failed or interrupted run leaves no partial files.
#pragma once

#include <filesystem>
#include <string>

namespace attnc {

class StagingDir {
 public:
  // Creates `<out_dir>/.attnc-partial-XXXXXX` (out_dir must exist); see ok() and error().
  explicit StagingDir(const std::filesystem::path &out_dir);
  // Removes the staging directory and whatever is still in it.
  ~StagingDir();
  StagingDir(const StagingDir &) = delete;
  StagingDir &operator=(const StagingDir &) = delete;

  bool ok() const { return !path_.empty(); }
  const std::string &error() const { return error_; }
  const std::filesystem::path &path() const { return path_; }

  // Renames every file under path() to the same relative path under the output directory (atomic
  // per file: a reader sees the old file or the new one, never half of one). False, with `error`
  // naming the file, when a rename fails.
  bool commit(std::string *error);

 private:
  std::filesystem::path out_dir_;
  std::filesystem::path path_;
  std::string error_;
};

}  // namespace attnc

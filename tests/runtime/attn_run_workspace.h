// attn_run_workspace.h: a temporary folder of .npy files and attn-run calls on one kernel library, for the
// attn-run tests.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>

#include "npy_files.h"

namespace attnc::test {

class AttnRunWorkspace {
 public:
  // A folder named after `test` (and this process) under the temporary directory; attn-run at
  // `attn_run` runs on the kernel library at `library`.
  AttnRunWorkspace(const std::string &test, std::string attn_run, std::string library)
      : dir_(std::filesystem::temp_directory_path() / (test + "_" + std::to_string(getpid()))),
        attn_run_(std::move(attn_run)),
        library_(std::move(library)) {
    std::filesystem::create_directories(dir_);
  }
  ~AttnRunWorkspace() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  AttnRunWorkspace(const AttnRunWorkspace &) = delete;
  AttnRunWorkspace &operator=(const AttnRunWorkspace &) = delete;

  std::string file(const std::string &name) const { return (dir_ / name).string(); }
  void save(const std::string &name, const attn::npy::Array &array) const { save_npy(file(name), array); }
  attn::npy::Array load(const std::string &name) const { return load_npy(file(name)); }
  // attn-run <library> <arguments>: its exit status, and what it printed into *output.
  int run(const std::string &arguments, std::string *output) const {
    const std::string path = file("stderr.txt");
    const int status =
        std::system((attn_run_ + " " + library_ + " " + arguments + " >" + path + " 2>&1").c_str());
    std::ifstream f(path);
    *output = std::string(std::istreambuf_iterator<char>(f), {});
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  std::filesystem::path dir_;
  std::string attn_run_, library_;
};

}  // namespace attnc::test

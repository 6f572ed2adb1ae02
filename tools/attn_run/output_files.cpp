// output_files.cpp: output paths checked up front; .npy files written to temporaries, then renamed.
#include "output_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace attn::run_tool {
namespace fs = std::filesystem;
namespace {

// The folder a path's file lives in ("." for a bare name).
fs::path folder_of(const std::string &path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

std::string described(const OutputFile &output) {
  return "output '" + output.name + "' ('" + output.path + "')";
}

// A temporary file beside path, created empty with the permissions a new file would get.
bool make_temporary(const std::string &path, std::string *temporary, std::string *error) {
  const fs::path target(path);
  std::string pattern = (folder_of(path) / ("." + target.filename().string() + ".attn-run-XXXXXX")).string();
  const int fd = mkstemp(pattern.data());
  if (fd < 0) {
    *error = "cannot create a temporary file beside '" + path + "': " + std::strerror(errno);
    return false;
  }
  const mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  close(fd);
  *temporary = pattern;
  return true;
}

}  // namespace

bool check_output_paths(const std::vector<OutputFile> &outputs, std::string *error) {
  std::vector<fs::path> canonical;
  for (const OutputFile &output : outputs) {
    std::error_code ec;
    const fs::path folder = folder_of(output.path);
    if (!fs::is_directory(folder, ec)) {
      *error = described(output) + ": folder '" + folder.string() + "' does not exist";
      return false;
    }
    if (access(folder.c_str(), W_OK | X_OK) != 0) {
      *error =
          described(output) + ": folder '" + folder.string() + "' is not writable: " + std::strerror(errno);
      return false;
    }
    const fs::file_status status = fs::status(output.path, ec);
    if (fs::exists(status) && !fs::is_regular_file(status)) {
      *error = described(output) + " exists and is not a regular file; give a file path";
      return false;
    }
    const fs::path resolved = fs::weakly_canonical(output.path, ec);
    if (ec) {
      *error = described(output) + ": cannot resolve the path: " + ec.message();
      return false;
    }
    for (size_t earlier = 0; earlier < canonical.size(); ++earlier) {
      if (canonical[earlier] == resolved) {
        *error = described(output) + " is the same file as " + described(outputs[earlier]) +
                 "; give each output its own file";
        return false;
      }
    }
    canonical.push_back(resolved);
  }
  return true;
}

bool write_outputs_atomically(const std::vector<OutputFile> &outputs,
                              const std::vector<const npy::Array *> &arrays, std::string *error) {
  std::vector<std::string> temporaries;
  auto remove_temporaries = [&] {
    for (const std::string &temporary : temporaries) std::remove(temporary.c_str());
  };
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string temporary;
    if (!make_temporary(outputs[i].path, &temporary, error)) {
      remove_temporaries();
      return false;
    }
    temporaries.push_back(temporary);
    std::string why;
    if (!npy::write(temporary, *arrays[i], &why)) {
      *error = described(outputs[i]) + " could not be written: " + why;
      remove_temporaries();
      return false;
    }
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (std::rename(temporaries[i].c_str(), outputs[i].path.c_str()) != 0) {
      *error = described(outputs[i]) + " could not be put in place: " + std::strerror(errno);
      for (size_t j = i; j < temporaries.size(); ++j) std::remove(temporaries[j].c_str());
      return false;
    }
  }
  return true;
}

}  // namespace attn::run_tool

// spec_printer_main.cpp: prints the text form of every spec a file exports with ATTN_EXPORT_SPECS.
// Usage: <printer> [output-file]; the file is rewritten only when its content changes, so the
// kernels generated from it are not rebuilt needlessly.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "attn/spec.h"
#include "attn/spec_text.h"
#include "attn/validate.h"

// Defined by ATTN_EXPORT_SPECS in the user's spec file.
extern "C" const attn::Spec *attn_exported_specs(int *count);

namespace {

bool read_file(const char *path, std::string &content) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  content.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

bool write_if_changed(const char *path, const std::string &content) {
  std::string old;
  if (read_file(path, old) && old == content) return true;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  return static_cast<bool>(out.flush());
}

}  // namespace

int main(int argc, char **argv) {
  int count = 0;
  const attn::Spec *specs = attn_exported_specs(&count);
  std::string text;
  for (int i = 0; i < count; ++i) {
    const attn::Validation v = attn::validate(specs[i]);
    if (!v.ok) {
      std::fprintf(stderr, "attnc spec printer: exported spec %d: %s\n", i, v.message.c_str());
      return 1;
    }
    text += attn::to_string(specs[i]) + "\n";
  }
  if (argc < 2) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return std::fflush(stdout) == 0 ? 0 : 1;
  }
  if (!write_if_changed(argv[1], text)) {
    std::fprintf(stderr, "attnc spec printer: cannot write '%s'\n", argv[1]);
    return 1;
  }
  return 0;
}

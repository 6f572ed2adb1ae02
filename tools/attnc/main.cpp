// attnc: the command-line generator. `attnc gen` turns spec texts into a kernel library.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "attn/kernel_id.h"
#include "attn/spec_text.h"
#include "attn/validate.h"
#include "attnc/compile.h"
#include "attnc/tuning.h"
#include "tune.h"

namespace {

const char *kUsage =
    "usage:\n"
    "  attnc gen --spec TEXT [--spec TEXT ...] [--spec-file FILE ...] --target T[,T...] -o DIR\n"
    "            [--shared] [--basename NAME] [--tuning FILE] [--no-runtime] [--entry-source-only] [--cc "
    "CC]\n"
    "            [--stmt] [--asm] [-v]\n"
    "  attnc tune --spec TEXT --shape B,SQ,SK [--threads N] [--runs N] [--max-candidates N] [-o FILE]\n"
    "                               time tile candidates here; write the fastest to a tuning file\n"
    "  attnc runtime --target T[,T...] -o FILE.a\n"
    "  attnc check --spec TEXT      print the resolved spec and its kernel id, or why it is invalid\n"
    "  attnc id --spec TEXT         print the kernel id\n"
    "targets: host (this machine's dispatch set), native (this machine only), x86, or Halide\n"
    "target strings such as x86-64-linux-avx2-fma-f16c-sse41-avx\n";

int usage_error(const std::string &message) {
  std::fprintf(stderr, "attnc: %s\n%s", message.c_str(), kUsage);
  return 2;
}

bool read_spec_file(const std::string &path, std::vector<std::string> *specs, std::string *error) {
  std::ifstream in(path);
  if (!in) {
    *error = "cannot read spec file '" + path + "'";
    return false;
  }
  std::string line;
  while (std::getline(in, line)) {
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    specs->push_back(line.substr(first));
  }
  return true;
}

int run_gen(int argc, char **argv) {
  attnc::GenerateOptions o;
  bool have_target = false;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char *flag) -> const char * {
      if (i + 1 >= argc) return nullptr;
      (void)flag;
      return argv[++i];
    };
    if (a == "--spec" || a == "--spec-file" || a == "--target" || a == "-o" || a == "--basename" ||
        a == "--cc" || a == "--tuning") {
      const char *v = value(a.c_str());
      if (!v) return usage_error(a + " needs a value");
      std::string error;
      if (a == "--spec")
        o.specs.push_back(v);
      else if (a == "--spec-file" && !read_spec_file(v, &o.specs, &error))
        return usage_error(error);
      else if (a == "--target")
        o.targets = v, have_target = true;
      else if (a == "-o")
        o.out_dir = v;
      else if (a == "--basename")
        o.basename = v;
      else if (a == "--cc")
        o.cc = v;
      else if (a == "--tuning" && !attnc::read_tuning_file(v, &o.tile_overrides, &error))
        return usage_error(error);
    } else if (a == "--shared") {
      o.shared = true;
    } else if (a == "--no-runtime") {
      o.emit_runtime = false;
    } else if (a == "--entry-source-only") {
      o.compile_entry = false;
    } else if (a == "--stmt") {
      o.emit_stmt = true;
    } else if (a == "--asm") {
      o.emit_assembly = true;
    } else if (a == "-v") {
      o.verbose = true;
    } else {
      return usage_error("unknown argument '" + a + "'");
    }
  }
  if (o.specs.empty()) return usage_error("gen needs at least one --spec or --spec-file");
  if (!have_target) return usage_error("gen needs --target (e.g. --target host)");
  if (o.out_dir.empty()) return usage_error("gen needs -o DIR");
  if (o.basename.empty()) {
    const attn::ParseResult first = attn::parse_spec(o.specs.front());
    o.basename = o.specs.size() == 1 && first.ok ? attn::kernel_id(first.spec) : "attn_kernels";
  }
  const attnc::GenerateResult r = attnc::generate_library(o);
  if (!r.ok) {
    std::fprintf(stderr, "attnc: %s\n", r.message.c_str());
    return 1;
  }
  for (const std::string &id : r.ids) std::printf("kernel %s\n", id.c_str());
  for (const std::string &f : r.files) std::printf("wrote %s\n", f.c_str());
  std::printf("generated %zu kernel(s) in %.1f s\n", r.ids.size(), r.seconds);
  return 0;
}

int run_runtime(int argc, char **argv) {
  std::string targets, out;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--target" || a == "-o") && i + 1 < argc) {
      (a == "--target" ? targets : out) = argv[++i];
    } else {
      return usage_error("unknown or incomplete argument '" + a + "'");
    }
  }
  if (targets.empty() || out.empty()) return usage_error("runtime needs --target and -o");
  const attnc::GenerateResult r = attnc::generate_runtime(targets, out);
  if (!r.ok) {
    std::fprintf(stderr, "attnc: %s\n", r.message.c_str());
    return 1;
  }
  std::printf("wrote %s\n", out.c_str());
  return 0;
}

int run_check(int argc, char **argv, bool id_only) {
  if (argc != 4 || std::strcmp(argv[2], "--spec") != 0) return usage_error("expected --spec TEXT");
  const attn::ParseResult parsed = attn::parse_spec(argv[3]);
  if (!parsed.ok) {
    std::fprintf(stderr, "attnc: %s\n", parsed.message.c_str());
    return 1;
  }
  if (id_only) {
    std::printf("%s\n", attn::kernel_id(parsed.spec).c_str());
  } else {
    std::printf("%s\nid: %s\n", attn::to_string(parsed.spec).c_str(), attn::kernel_id(parsed.spec).c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) return usage_error("no command");
  const std::string command = argv[1];
  if (command == "gen") return run_gen(argc, argv);
  if (command == "runtime") return run_runtime(argc, argv);
  if (command == "tune") return attnc::tool::run_tune(argc, argv);
  if (command == "check") return run_check(argc, argv, false);
  if (command == "id") return run_check(argc, argv, true);
  if (command == "--help" || command == "-h" || command == "help") {
    std::printf("%s", kUsage);
    return 0;
  }
  return usage_error("unknown command '" + command + "'");
}

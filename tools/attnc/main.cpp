// attnc: the command-line generator. `attnc gen` turns spec texts into a kernel library.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "attn/kernel_id.h"
#include "attn/spec_text.h"
#include "attn/validate.h"
#include "attnc/compile.h"
#include "attnc/tuning.h"
#include "command_line.h"
#include "spec_file.h"
#include "tensors.h"
#include "tune.h"

namespace {

using attnc::tool::CommandLine;

const char *gen_usage =
    "usage: attnc gen --spec TEXT [--spec TEXT ...] [--spec-file FILE ...] [--target T[,T...]] -o DIR\n"
    "                 [--shared] [--basename NAME] [--tuning FILE] [--no-runtime] [--entry-source-only]\n"
    "                 [--cc CC] [--stmt] [--asm] [-v]\n"
    "Generates one kernel library for the specs: DIR/NAME.a (or .so with --shared), its C header\n"
    "NAME.h, entry source NAME_entry.c and JSON manifest NAME.json, the Halide runtime NAME_runtime.a,\n"
    "and, where it compiles the entry, DIR/include/ with attn/runtime.h and the ABI headers the entry\n"
    "is compiled against (also for your application). Files appear in DIR only once all are written.\n"
    "  --spec TEXT          a spec's text form, e.g. \"d_model=768 heads=12 mask=causal\"; the keys and\n"
    "                       values are in docs/DSL.md (Text form); `attnc check --spec TEXT` tries one\n"
    "  --spec-file FILE     one spec per line ('#' starts a comment)\n"
    "  --target T[,T...]    default host (this machine's dispatch set), as attn_add_kernels does\n"
    "  --basename NAME      default: the kernel id when there is one spec, else attn_kernels\n"
    "  --shared             also link NAME.so (kernels, entry and Halide runtime) for attn-run and Python\n"
    "  --tuning FILE        tile sizes from `attnc tune`\n"
    "  --no-runtime         do not write NAME_runtime.a (an application links one Halide runtime; attnc\n"
    "                       runtime writes it once for all its kernel libraries)\n"
    "  --entry-source-only  leave NAME_entry.c as source, not compiled into NAME.a (your build compiles\n"
    "                       it, as attn_add_kernels does)\n"
    "  --cc CC              C compiler for the entry; default: a foreign target's cross compiler, $CC or cc\n"
    "  --stmt, --asm        also write Halide's lowered statement / the assembly of each kernel\n"
    "  -v                   print a line per kernel as it is generated\n";
const char *runtime_usage =
    "usage: attnc runtime --target T[,T...] -o FILE.a\n"
    "Writes the Halide runtime for the targets (one per application linking static kernels).\n";
const char *check_usage =
    "usage: attnc check --spec TEXT\n"
    "Prints the resolved spec and its kernel id, or why the spec is invalid (exit 1).\n";
const char *id_usage =
    "usage: attnc id --spec TEXT\n"
    "Prints the kernel id of a valid spec, or why the spec is invalid (exit 1).\n";
const char *overview =
    "usage:\n"
    "  attnc gen --spec TEXT [--spec TEXT ...] [--spec-file FILE ...] [--target T[,T...]] -o DIR\n"
    "            [--shared] [--basename NAME] [--tuning FILE] [--no-runtime] [--entry-source-only] [--cc "
    "CC]\n"
    "            [--stmt] [--asm] [-v]\n"
    "                               generate a kernel library (static, or shared with --shared)\n"
    "  attnc tune --spec TEXT --shape B,SQ,SK [--threads N] [--runs N] [--max-candidates N] [-o FILE]\n"
    "                               time tile candidates here; write the fastest to a tuning file\n"
    "  attnc runtime --target T[,T...] -o FILE.a\n"
    "                               write the Halide runtime that an application's static kernels share\n"
    "  attnc check --spec TEXT      print the resolved spec and its kernel id, or why it is invalid\n"
    "  attnc id --spec TEXT         print the kernel id\n"
    "  attnc tensors --spec TEXT | --markdown\n"
    "                               list the tensors of a spec's kernel, or of every kernel family\n"
    "Every option also reads --option=VALUE; `attnc COMMAND --help` describes one command.\n"
    "targets: host (this machine's dispatch set), native (this machine only), x86, or Halide\n"
    "target strings such as x86-64-linux-avx2-fma-f16c-sse41-avx\n";

int usage_error(const std::string &message, const char *usage) {
  std::fprintf(stderr, "attnc: %s\n%s", message.c_str(), usage);
  return 2;
}

int show_usage(const char *usage) {
  std::fputs(usage, stdout);
  return 0;
}

int run_gen(int argc, char **argv) {
  const CommandLine line = attnc::tool::parse_command_line(
      argc, argv, 2, {"--spec", "--spec-file", "--target", "-o", "--basename", "--cc", "--tuning"},
      {"--shared", "--no-runtime", "--entry-source-only", "--stmt", "--asm", "-v"});
  if (line.help) return show_usage(gen_usage);
  if (!line.error.empty()) return usage_error(line.error, gen_usage);
  attnc::GenerateOptions o;
  std::string error, tuning;
  if (!line.single("--target", &o.targets, &error) || !line.single("-o", &o.out_dir, &error) ||
      !line.single("--basename", &o.basename, &error) || !line.single("--cc", &o.cc, &error) ||
      !line.single("--tuning", &tuning, &error))
    return usage_error(error, gen_usage);
  // Specs keep the order they were given in, --spec and --spec-file interleaved.
  for (const attnc::tool::Argument &a : line.arguments) {
    if (a.option == "--spec") o.specs.push_back(a.value);
    if (a.option == "--spec-file" && !attnc::tool::read_spec_file(a.value, &o.specs, &error))
      return usage_error(error, gen_usage);
  }
  if (!tuning.empty() && !attnc::read_tuning_file(tuning, &o.tile_overrides, &error))
    return usage_error(error, gen_usage);
  o.shared = line.has("--shared");
  o.emit_runtime = !line.has("--no-runtime");
  o.compile_entry = !line.has("--entry-source-only");
  o.emit_stmt = line.has("--stmt");
  o.emit_assembly = line.has("--asm");
  o.verbose = line.has("-v");
  if (o.specs.empty()) return usage_error("gen needs at least one --spec or --spec-file", gen_usage);
  if (o.targets.empty()) o.targets = "host";
  if (o.out_dir.empty()) return usage_error("gen needs -o DIR", gen_usage);
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
  const CommandLine line = attnc::tool::parse_command_line(argc, argv, 2, {"--target", "-o"}, {});
  if (line.help) return show_usage(runtime_usage);
  if (!line.error.empty()) return usage_error(line.error, runtime_usage);
  std::string targets, out, error;
  if (!line.single("--target", &targets, &error) || !line.single("-o", &out, &error))
    return usage_error(error, runtime_usage);
  if (targets.empty() || out.empty()) return usage_error("runtime needs --target and -o", runtime_usage);
  const attnc::GenerateResult r = attnc::generate_runtime(targets, out);
  if (!r.ok) {
    std::fprintf(stderr, "attnc: %s\n", r.message.c_str());
    return 1;
  }
  std::printf("wrote %s\n", out.c_str());
  return 0;
}

int run_check(int argc, char **argv, bool id_only) {
  const char *usage = id_only ? id_usage : check_usage;
  const CommandLine line = attnc::tool::parse_command_line(argc, argv, 2, {"--spec"}, {});
  if (line.help) return show_usage(usage);
  if (!line.error.empty()) return usage_error(line.error, usage);
  std::string text, error;
  if (!line.single("--spec", &text, &error)) return usage_error(error, usage);
  if (!line.has("--spec")) return usage_error("expected --spec TEXT", usage);
  const attn::ParseResult parsed = attn::parse_spec(text);
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

int run_command(int argc, char **argv) {
  if (argc < 2) return usage_error("no command", overview);
  const std::string command = argv[1];
  if (command == "gen") return run_gen(argc, argv);
  if (command == "runtime") return run_runtime(argc, argv);
  if (command == "tune") return attnc::tool::run_tune(argc, argv);
  if (command == "check") return run_check(argc, argv, false);
  if (command == "id") return run_check(argc, argv, true);
  if (command == "tensors") return attnc::tool::run_tensors(argc, argv);
  if (command == "--help" || command == "-h" || command == "help") return show_usage(overview);
  return usage_error("unknown command '" + command + "'", overview);
}

}  // namespace

int main(int argc, char **argv) {
  // Whatever escapes (std::bad_alloc, a filesystem error) is reported, never an abort.
  try {
    return run_command(argc, argv);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "attnc: %s\n", e.what());
    return 1;
  }
}

// tune.cpp: attnc tune. Each candidate tiling becomes a shared library for this machine's
// native target (the same AOT path as attnc gen), is timed through the runtime on random
// inputs of the given shape, and is checked against the default tiling's output; the fastest
// is written to a tuning file that attnc gen --tuning reads.
#include "tune.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "attn/half.hpp"
#include "attn/kernel_id.h"
#include "attn/runtime.h"
#include "attn/spec_text.h"
#include "attn/validate.h"
#include "attnc/compile.h"
#include "attnc/targets.h"
#include "attnc/targets_arm.h"
#include "attnc/tile_config.h"
#include "attnc/tuning.h"
#include "command_line.h"

namespace attnc::tool {
namespace {

namespace fs = std::filesystem;

const char *tune_usage =
    "usage: attnc tune --spec TEXT --shape B,SQ,SK [--threads N] [--runs N] [--max-candidates N]\n"
    "                  [-o TUNING_FILE] [--keep DIR]\n"
    "Times tile candidates for this machine's native target on random inputs of the shape (RUNS\n"
    "interleaved rounds, one run of each candidate per round; the median counts), checks each against\n"
    "the default tiles' output, and writes the fastest to TUNING_FILE (replacing the\n"
    "kernel's line for this vector width); attnc gen --tuning TUNING_FILE then uses it.\n";

int fail(const std::string &message, int code = 1) {
  std::fprintf(stderr, "attnc tune: %s\n", message.c_str());
  if (code == 2) std::fputs(tune_usage, stderr);
  return code;
}

struct Options {
  std::string spec, out_file, keep_dir;
  int64_t batch = 0, seq_q = 0, seq_k = 0;
  int threads = 0, runs = 5, max_candidates = 0;
};

bool parse_int(const std::string &text, int64_t minimum, int64_t *out) {
  try {
    size_t used = 0;
    const long long value = std::stoll(text, &used);
    if (used != text.size() || value < minimum) return false;
    *out = value;
    return true;
  } catch (...) {
    return false;
  }
}

// Returns an exit code, or -1 when the options are complete.
int parse_options(int argc, char **argv, Options *o) {
  const CommandLine line = parse_command_line(
      argc, argv, 2, {"--spec", "-o", "--keep", "--shape", "--threads", "--runs", "--max-candidates"}, {});
  if (line.help) {
    std::fputs(tune_usage, stdout);
    return 0;
  }
  if (!line.error.empty()) return fail(line.error, 2);
  std::string error, shape;
  if (!line.single("--spec", &o->spec, &error) || !line.single("-o", &o->out_file, &error) ||
      !line.single("--keep", &o->keep_dir, &error) || !line.single("--shape", &shape, &error))
    return fail(error, 2);
  int64_t n = 0;
  if (line.has("--shape")) {
    std::stringstream in(shape);
    std::vector<int64_t> sizes;
    for (std::string item; std::getline(in, item, ',');) {
      if (!parse_int(item, 1, &n) || n > INT32_MAX)
        return fail("--shape '" + shape + "': sizes must be positive integers up to 2147483647", 2);
      sizes.push_back(n);
    }
    if (sizes.size() != 3) return fail("--shape '" + shape + "': expected B,SQ,SK", 2);
    o->batch = sizes[0], o->seq_q = sizes[1], o->seq_k = sizes[2];
  }
  for (const char *count : {"--threads", "--runs", "--max-candidates"}) {
    const std::string a = count;
    std::string v;
    if (!line.single(a, &v, &error)) return fail(error, 2);
    if (!line.has(a)) continue;
    if (!parse_int(v, a == "--threads" ? 0 : 1, &n) || n > 100000)
      return fail(a + " '" + v + "' is not a valid count", 2);
    (a == "--threads" ? o->threads : a == "--runs" ? o->runs : o->max_candidates) = static_cast<int>(n);
  }
  if (o->spec.empty()) return fail("tune needs --spec", 2);
  if (o->batch == 0) return fail("tune needs --shape B,SQ,SK", 2);
  return -1;
}

// One tensor per kernel argument, in the kernel's order, filled for a timing run: float inputs
// normal (rounded to f16 or bf16 for such kernels), key_lengths = Sk (every key kept), other i32
// inputs 0, u8 masks 1.
struct Tensors {
  std::vector<std::vector<int64_t>> shapes;
  std::vector<std::vector<unsigned char>> data;
  std::vector<attn_arg> args;
  int out_index = -1;
  attn_dtype out_dtype = ATTN_F32;
};

size_t element_bytes(attn_dtype dtype) {
  return dtype == ATTN_U8 || dtype == ATTN_I8 ? 1 : dtype == ATTN_F16 || dtype == ATTN_BF16 ? 2 : dtype == ATTN_U64 ? 8 : 4;
}

// Stores value as element e of a float tensor of dtype (f32, f16 or bf16), rounded to nearest even.
void store_float(unsigned char *data, attn_dtype dtype, int64_t e, float value) {
  const size_t bytes = element_bytes(dtype);
  uint16_t half = 0;
  if (dtype == ATTN_F16) half = attn::rt::to_f16(value).bits;
  if (dtype == ATTN_BF16) half = attn::rt::to_bf16(value).bits;
  std::memcpy(data + static_cast<size_t>(e) * bytes, bytes == 2 ? static_cast<const void *>(&half) : &value,
              bytes);
}

float load_float(const unsigned char *data, attn_dtype dtype, size_t e) {
  if (dtype == ATTN_F32) {
    float value;
    std::memcpy(&value, data + e * 4, 4);
    return value;
  }
  uint16_t half;
  std::memcpy(&half, data + e * 2, 2);
  return dtype == ATTN_F16 ? attn::rt::to_float(attn::rt::f16{half})
                           : attn::rt::to_float(attn::rt::bf16{half});
}

bool is_float(attn_dtype dtype) {
  return dtype == ATTN_F32 || dtype == ATTN_F16 || dtype == ATTN_BF16;
}

bool make_tensors(const attn_kernel *kernel, const Options &o, Tensors *t, std::string *error) {
  std::mt19937 rng(1234);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int count = attn_kernel_arg_count(kernel);
  t->shapes.resize(count);
  t->data.resize(count);
  for (int i = 0; i < count; ++i) {
    attn_arg_info info;
    attn_kernel_arg(kernel, i, &info);
    int64_t elements = 1;
    for (int d = 0; d < info.rank; ++d) {
      int64_t size = info.fixed_shape[d];
      if (size == 0) {
        const std::string name = info.dim_names[d] != nullptr ? info.dim_names[d] : "";
        if (name == "B")
          size = o.batch;
        else if (name == "Sq")
          size = o.seq_q;
        else if (name == "Sk")
          size = o.seq_k;
        else if (name == "S" && o.seq_q == o.seq_k)
          size = o.seq_q;
        else {
          *error = std::string("argument '") + info.name + "' has dim '" + name +
                   "', which --shape does not give" + (name == "S" ? " (the block form needs SQ = SK)" : "");
          return false;
        }
      }
      t->shapes[i].push_back(size);
      // Sizes are at most 2^31 - 1 (parse_options), so the check comes before any overflow.
      if (elements > INT32_MAX / size) {
        *error = std::string("argument '") + info.name +
                 "' would hold more than 2147483647 elements at --shape " + std::to_string(o.batch) + "," +
                 std::to_string(o.seq_q) + "," + std::to_string(o.seq_k) +
                 " (kernels address at most 2147483647)";
        return false;
      }
      elements *= size;
    }
    t->data[i].resize(static_cast<size_t>(elements) * element_bytes(info.dtype));
    if (is_float(info.dtype)) {
      for (int64_t e = 0; e < elements; ++e)
        store_float(t->data[i].data(), info.dtype, e, info.is_output ? 0.0f : normal(rng));
    } else if (info.dtype == ATTN_I32) {
      const int32_t value = std::string(info.name) == "key_lengths" ? static_cast<int32_t>(o.seq_k) : 0;
      int32_t *values = reinterpret_cast<int32_t *>(t->data[i].data());
      std::fill(values, values + elements, value);
    } else {
      std::fill(t->data[i].begin(), t->data[i].end(), static_cast<unsigned char>(1));
    }
    if (std::string(info.name) == "out") {
      t->out_index = i;
      t->out_dtype = info.dtype;
    }
    t->args.push_back({info.name, {t->data[i].data(), info.dtype, info.rank, t->shapes[i].data(), nullptr}});
  }
  if (t->out_index < 0) {
    *error = "the kernel has no 'out' argument";
    return false;
  }
  return true;
}

// One candidate: its library, opened, and the milliseconds of its timed runs.
struct Candidate {
  CpuTiles tiles;
  std::string message;  // why it was dropped; "" while it is in the running
  attn_library *library = nullptr;
  const attn_kernel *kernel = nullptr;
  std::vector<double> ms;

  Candidate() = default;
  Candidate(const Candidate &) = delete;
  Candidate &operator=(const Candidate &) = delete;
  ~Candidate() {
    if (library != nullptr) attn_library_close(library);
  }
  double median() const {
    std::vector<double> sorted = ms;
    std::sort(sorted.begin(), sorted.end());
    const size_t n = sorted.size();
    return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  }
};

// Generates the candidate as a shared library for the native target and opens it. The defaults
// are built as attnc gen builds them, with no tuning file (so with their short-sequence tiles).
void build_candidate(const Options &o, const std::string &id, int lanes, const fs::path &dir, bool defaults,
                     Candidate *c) {
  GenerateOptions g;
  g.specs = {o.spec};
  g.targets = "native";
  g.out_dir = dir.string();
  g.basename = "tune";
  g.shared = true;
  if (!defaults) g.tile_overrides = {{id, lanes, core_tiles_text(c->tiles)}};
  const GenerateResult generated = generate_library(g);
  if (!generated.ok) {
    c->message = generated.message;
    return;
  }
  if (attn_library_open((dir / "tune.so").string().c_str(), &c->library) != ATTN_OK ||
      attn_library_find_kernel(c->library, id.c_str(), &c->kernel) != ATTN_OK ||
      attn_kernel_set_threads(c->kernel, o.threads) != ATTN_OK)
    c->message = attn_last_error();
}

// Runs the candidate once; returns its milliseconds, or a negative value with c->message set.
double run_once(Candidate *c, Tensors *tensors) {
  const auto start = std::chrono::steady_clock::now();
  if (attn_run(c->kernel, tensors->args.data(), static_cast<int>(tensors->args.size())) != ATTN_OK) {
    c->message = attn_last_error();
    return -1;
  }
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// The candidate's output must be the defaults' (reference, empty for the defaults) to rounding:
// 1e-4 of the largest value in fp32, and one more unit in the last place of a 16-bit out, where
// fp32 sums in another order may round to the neighbouring value (2^-7 of it for bf16, 2^-10 f16).
void check_output(Candidate *c, const Tensors &tensors, std::vector<float> *reference) {
  const std::vector<unsigned char> &bytes = tensors.data[static_cast<size_t>(tensors.out_index)];
  const size_t n = bytes.size() / element_bytes(tensors.out_dtype);
  std::vector<float> out(n);
  for (size_t e = 0; e < n; ++e) out[e] = load_float(bytes.data(), tensors.out_dtype, e);
  if (reference->empty()) *reference = out;
  double scale = 1.0, max_diff = 0.0;
  for (size_t e = 0; e < n; ++e) {
    scale = std::max(scale, std::fabs(static_cast<double>((*reference)[e])));
    const double diff = std::fabs(static_cast<double>(out[e]) - (*reference)[e]);
    max_diff = std::isnan(diff) ? INFINITY : std::max(max_diff, diff);
  }
  const double ulp = tensors.out_dtype == ATTN_BF16 ? 0x1p-7 : tensors.out_dtype == ATTN_F16 ? 0x1p-10 : 0.0;
  if (!(max_diff <= (1e-4 + ulp) * scale))
    c->message = "its output differs from the default tiles' by " + std::to_string(max_diff);
}

std::string today() {
  char text[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(text, sizeof(text), "%Y-%m-%d", std::gmtime(&now));
  return text;
}

}  // namespace

int run_tune(int argc, char **argv) {
  Options o;
  if (const int code = parse_options(argc, argv, &o); code >= 0) return code;
  const attn::ParseResult parsed = attn::parse_spec(o.spec);
  if (!parsed.ok) return fail("spec: " + parsed.message);
  const attn::Spec spec = attn::resolve(parsed.spec);
  const std::string id = attn::kernel_id(spec);
  const int lanes = native_lanes();
  const VectorUnit unit = native_vector_unit();
  const int decode_queries = cpu_tiles(spec, unit).split_keys_max_queries;
  if (spec.form == attn::Form::core && o.seq_q <= decode_queries)
    return fail("Sq = " + std::to_string(o.seq_q) +
                " runs the decode (split-keys) pipeline, which tiles do not change " +
                "(it runs for Sq <= " + std::to_string(decode_queries) + "); tune with the prefill shape");
  // A tuning file that exists must parse before any work is done: it is rewritten at the end.
  std::string existing;
  if (std::ifstream in(o.out_file); in) {
    std::stringstream text;
    text << in.rdbuf();
    existing = text.str();
    std::vector<TileOverride> entries;
    std::string error;
    if (!parse_tuning(existing, &entries, &error))
      return fail("tuning file '" + o.out_file + "' is not valid, left as it was: " + error);
  }
  std::vector<CpuTiles> candidates = tile_candidates(spec, unit);
  if (o.max_candidates > 0 && static_cast<int>(candidates.size()) > o.max_candidates)
    candidates.resize(static_cast<size_t>(o.max_candidates));

  const fs::path work = o.keep_dir.empty()
                            ? fs::temp_directory_path() / ("attnc_tune_" + std::to_string(getpid()))
                            : fs::path(o.keep_dir);
  std::error_code ec;
  fs::create_directories(work, ec);
  if (ec) return fail("cannot create '" + work.string() + "': " + ec.message());
  struct Cleanup {
    fs::path dir;
    bool keep;
    ~Cleanup() {
      std::error_code ignored;
      if (!keep) fs::remove_all(dir, ignored);
    }
  } cleanup{work, !o.keep_dir.empty()};

  std::printf(
      "attnc tune: %s, B=%lld Sq=%lld Sk=%lld, %d lanes, %zu candidates, median of %d interleaved rounds\n",
      id.c_str(), static_cast<long long>(o.batch), static_cast<long long>(o.seq_q),
      static_cast<long long>(o.seq_k), lanes, candidates.size(), o.runs);
  // Build and check every candidate first, then time them in interleaved rounds, so that the
  // machine's drift (several percent on a shared VM) spreads over all of them alike.
  std::vector<Candidate> all(candidates.size());
  Tensors tensors;
  std::vector<float> reference;
  for (size_t c = 0; c < all.size(); ++c) {
    all[c].tiles = candidates[c];
    build_candidate(o, id, lanes, work / ("c" + std::to_string(c)), c == 0, &all[c]);
    std::string error;
    if (all[c].message.empty() && tensors.args.empty() && !make_tensors(all[c].kernel, o, &tensors, &error))
      return fail(error);
    if (all[c].message.empty() && run_once(&all[c], &tensors) >= 0)
      check_output(&all[c], tensors, &reference);
    if (c == 0 && !all[c].message.empty())
      return fail("the default tiles (" + core_tiles_text(candidates[0]) + ") failed: " + all[c].message);
  }
  for (int round = 0; round < o.runs; ++round)
    for (Candidate &c : all)
      if (c.message.empty())
        if (const double ms = run_once(&c, &tensors); ms >= 0) c.ms.push_back(ms);
  int best = 0;
  for (size_t c = 0; c < all.size(); ++c) {
    const std::string text = core_tiles_text(all[c].tiles);
    if (!all[c].message.empty()) {
      std::printf("  %2zu  failed: %s  (%s)\n", c, all[c].message.c_str(), text.c_str());
      continue;
    }
    std::printf("  %2zu  %9.3f ms  %s%s\n", c, all[c].median(), text.c_str(), c == 0 ? "  (defaults)" : "");
    if (all[c].median() < all[static_cast<size_t>(best)].median()) best = static_cast<int>(c);
  }
  const double best_ms = all[static_cast<size_t>(best)].median(), default_ms = all[0].median();
  const std::string winner = core_tiles_text(all[static_cast<size_t>(best)].tiles);
  std::printf("best: %s, %.3f ms (defaults %.3f ms, %.2fx)\n", winner.c_str(), best_ms, default_ms,
              default_ms / best_ms);
  if (o.out_file.empty()) return 0;

  char comment[256];
  std::snprintf(comment, sizeof(comment),
                "attnc tune %s: B=%lld Sq=%lld Sk=%lld threads=%d: %.3f ms, defaults %.3f ms",
                today().c_str(), static_cast<long long>(o.batch), static_cast<long long>(o.seq_q),
                static_cast<long long>(o.seq_k), o.threads, best_ms, default_ms);
  const std::string merged = merge_tuning(existing, {id, lanes, winner}, comment);
  std::ofstream out(o.out_file, std::ios::trunc);
  if (!(out << merged)) return fail("cannot write '" + o.out_file + "'");
  std::printf("wrote %s\n", o.out_file.c_str());
  return 0;
}

}  // namespace attnc::tool

// attn-run: runs a kernel of a generated shared library on .npy files, and benchmarks it.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "attn/runtime.h"
#include "attn/runtime.hpp"
#include "arg_text.h"
#include "flops.h"
#include "input_dtype.h"
#include "npy.h"
#include "output_files.h"

namespace {

using attn::run_tool::shape_text;


constexpr int exit_error = 1;
constexpr int exit_usage = 2;

constexpr const char *usage_text =
    "usage: attn-run LIB --list\n"
    "       attn-run LIB --kernel ID --input NAME=FILE.npy ... [--output NAME=FILE.npy ...]\n"
    "                [--threads N] [--max-isa ISA] [--bench [--json] [--warmup N] [--runs N]]\n"
    "                [--unverified]\n"
    "Files hold each argument's dtype (--list shows it): f32 '<f4', f16 '<f2', bf16 '<u2' (its bit\n"
    "patterns: NumPy has no bfloat16), i32 '<i4', u8 '|u1', u64 '<u8' (dropout's seed and offset). An f16 or bf16 input may also be '<f4',\n"
    "rounded to nearest even (said on stderr); outputs are written in the kernel's dtype.\n"
    "Inputs of a lower rank broadcast as the kernel allows (--list shows it); optional inputs (a\n"
    "run-time scale: --input scale=FILE.npy, shape () or (1,)) may be left out; every output is\n"
    "computed, and written only where --output names a file (all of them, or none on an error).\n"
    "In-out tensors (a KV cache's k_cache, v_cache; '(in-out)' in --list) are given with --input\n"
    "and, where --output names them, written back as they are after the call.\n"
    "--max-isa (amx, avx512bf16, avx512, avx2, avx, sse41, x86-64; armv8.2, neon on AArch64)\n"
    "caps the variant that runs, as ATTN_MAX_ISA does.\n"
    "LIB (DIR/NAME.so, from `attnc gen --shared`) must be the file its manifest DIR/NAME.json (written\n"
    "beside it by attnc gen) records the SHA-256 of; --unverified skips that check and needs no manifest.\n";

struct NamedFile {
  std::string name, path;
};

struct Options {
  std::string library;
  std::string kernel;
  std::vector<NamedFile> inputs;
  std::vector<attn::run_tool::OutputFile> outputs;
  std::optional<int> threads;
  std::optional<std::string> max_isa;
  bool list = false, bench = false, json = false, unverified = false;
  int warmup = 3, runs = 10;
};

// A failure travels back to main as a value, which prints it once and exits with its code.
struct Failure {
  int code;
  std::string message;
};

std::optional<int> parse_count(std::string_view text) {
  int value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<Failure> parse_options(int argc, char **argv, Options *options) {
  auto usage = [](std::string text) { return Failure{exit_usage, std::move(text)}; };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    bool has_value = false;
    if (arg.starts_with("--") && arg.find('=') != std::string::npos) {
      value = arg.substr(arg.find('=') + 1);  // --runs=5 as well as --runs 5
      arg.resize(arg.find('='));
      has_value = true;
    }
    auto next = [&](std::string *out) -> bool {
      if (has_value) return *out = value, true;
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    auto count = [&](int minimum, int *out) -> std::optional<Failure> {
      std::string text;
      if (!next(&text)) return usage(arg + " needs a number");
      const std::optional<int> n = parse_count(text);
      if (!n || *n < minimum) {
        return usage(arg + " is '" + text + "', expected an integer of at least " + std::to_string(minimum));
      }
      *out = *n;
      return std::nullopt;
    };
    auto named_file = [&](auto *list) -> std::optional<Failure> {
      std::string text;
      if (!next(&text)) return usage(arg + " needs NAME=FILE.npy");
      const size_t eq = text.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
        return usage(arg + " is '" + text + "', expected NAME=FILE.npy");
      }
      list->push_back({text.substr(0, eq), text.substr(eq + 1)});
      return std::nullopt;
    };
    std::optional<Failure> failure;
    const bool is_flag = arg == "--help" || arg == "-h" || arg == "--list" || arg == "--bench" ||
                         arg == "--json" || arg == "--unverified";
    if (is_flag && has_value) {
      failure = usage(arg + " takes no value");
    } else if (arg == "--help" || arg == "-h") {
      std::fputs(usage_text, stdout);
      std::exit(0);
    } else if (arg == "--list") {
      options->list = true;
    } else if (arg == "--bench") {
      options->bench = true;
    } else if (arg == "--json") {
      options->json = true;
    } else if (arg == "--unverified") {
      options->unverified = true;
    } else if (arg == "--kernel") {
      if (!next(&options->kernel) || options->kernel.empty()) failure = usage("--kernel needs an id");
    } else if (arg == "--input") {
      failure = named_file(&options->inputs);
    } else if (arg == "--output") {
      failure = named_file(&options->outputs);
    } else if (arg == "--threads") {
      int threads = 0;
      failure = count(0, &threads);
      options->threads = threads;
    } else if (arg == "--max-isa") {
      std::string isa;
      // An empty value would lift the limit (attn_set_max_isa("")): a typo, not a request.
      if (!next(&isa) || isa.empty())
        failure = usage("--max-isa needs an instruction set (amx, avx512bf16, avx512, avx2, avx, sse41, x86-64; "
                        "armv8.2, neon)" +
                        std::string(isa.empty() ? ", got ''" : ""));
      options->max_isa = isa;
    } else if (arg == "--warmup") {
      failure = count(0, &options->warmup);
    } else if (arg == "--runs") {
      failure = count(1, &options->runs);
    } else if (arg.starts_with("-")) {
      failure = usage("unknown option '" + arg + "'");
    } else if (options->library.empty()) {
      options->library = arg;
    } else {
      failure = usage("unexpected argument '" + arg + "' (the library is '" + options->library + "')");
    }
    if (failure) return failure;
  }
  if (options->library.empty()) return usage("no library given");
  if (options->list) return std::nullopt;
  if (options->kernel.empty()) return usage("no --kernel given (--list shows the library's kernels)");
  if (options->json && !options->bench) return usage("--json needs --bench");
  return std::nullopt;
}

Failure runtime_failure(attn_status status) {
  return {exit_error, std::string(attn_last_error()) + " (" + attn_status_name(status) + ")"};
}

std::vector<attn_arg_info> arg_infos(const attn_kernel *kernel) {
  std::vector<attn_arg_info> infos(static_cast<size_t>(attn_kernel_arg_count(kernel)));
  for (size_t i = 0; i < infos.size(); ++i) attn_kernel_arg(kernel, static_cast<int>(i), &infos[i]);
  return infos;
}

// The variant attn_run picks here, or why none can run.
std::string selected_target(const attn_kernel *kernel) {
  const std::string target = attn_kernel_selected_target(kernel);
  return target.empty() ? std::string("none: ") + attn_last_error() : target;
}

// For a kernel with GPU variants: what would run under each device choice (attn_set_device),
// or why nothing would. The choice ATTN_DEVICE gives is restored after.
void list_devices(const attn_kernel *kernel) {
  const std::string targets = attn_kernel_target(kernel);
  bool any_gpu = false;
  for (const char *device : {"cuda", "opencl", "cpu"}) {
    const bool cpu = std::string(device) == "cpu";
    if (cpu ? !any_gpu : targets.find(std::string("-") + device) == std::string::npos) continue;
    any_gpu = true;
    attn_set_device(device);
    std::printf("  %-7s %s\n", (std::string(device) + ":").c_str(), selected_target(kernel).c_str());
  }
  if (any_gpu) attn_set_device(std::getenv("ATTN_DEVICE"));
}

void list_kernels(const attn_library *library) {
  for (int i = 0; i < attn_library_kernel_count(library); ++i) {
    const attn_kernel *kernel = attn_library_kernel_at(library, i);
    std::printf("%s\n  spec:   %s\n  target: %s\n  runs:   %s\n", attn_kernel_id(kernel),
                attn_kernel_spec(kernel), attn_kernel_target(kernel), selected_target(kernel).c_str());
    list_devices(kernel);
    const char *label = "  args:   ";
    for (const attn_arg_info &info : arg_infos(kernel)) {
      std::printf("%s%s\n", label, attn::run_tool::arg_text(info).c_str());
      label = "          ";
    }
  }
}

// Every tensor of one call, owning its data; args views them in the kernel's order.
struct CallTensors {
  std::vector<attn::npy::Array> arrays;
  std::vector<attn_arg> args;
  std::map<std::string, int64_t> sizes;  // dim name -> size, as the inputs set them
  std::set<std::string> broadcast_only;  // dim names only broadcast inputs mention (size 1)
  std::string rank_problem;              // the last input of a rank the kernel does not take
};

// Records the runtime sizes an input sets. A lower-rank input's dims sit where the runtime puts
// them; a dim given as 1 where it broadcasts sets nothing. An input of a rank the kernel does not
// take sets nothing: the runtime refuses it, unless an output cannot be sized without it.
void record_sizes(const attn_arg_info &info, const attn::npy::Array &array, CallTensors *call) {
  if (info.rank == 0) return;  // a scalar (shape () or (1,): the runtime checks which) sets no size
  const int rank = static_cast<int>(array.shape.size());
  const std::vector<int> declared = attn::rt::declared_dims(info, rank);
  if (declared.empty()) {
    const int lowest = attn::rt::lowest_rank(info);
    const std::string ranks = lowest < info.rank ? std::to_string(lowest) + " to " + std::to_string(info.rank)
                                                 : std::to_string(info.rank);
    call->rank_problem = "input '" + std::string(info.name) + "' has rank " + std::to_string(rank) +
                         ", kernel expects " + ranks + " (" + shape_text(info) + ")";
    return;
  }
  std::vector<int64_t> full(static_cast<size_t>(info.rank), 1);  // a dim left out counts as 1
  for (size_t j = 0; j < declared.size(); ++j) full[static_cast<size_t>(declared[j])] = array.shape[j];
  for (int d = 0; d < info.rank; ++d) {
    if (info.fixed_shape[d] > 0 || info.dim_names[d] == nullptr) continue;
    const int64_t size = full[static_cast<size_t>(d)];
    if (attn::rt::dim_broadcasts(info, d) && size == 1) {
      call->broadcast_only.insert(info.dim_names[d]);
    } else {
      call->sizes.emplace(info.dim_names[d], size);
    }
  }
}

// Kernels take no zero-sized tensors (the runtime refuses a size below 1); an empty .npy is named
// as such rather than as the null data pointer its empty buffer would give.
std::optional<Failure> zero_sized_dim(const NamedFile &input, const attn_arg_info &info,
                                      const attn::npy::Array &array) {
  const int rank = static_cast<int>(array.shape.size());
  const std::vector<int> declared = attn::rt::declared_dims(info, rank);
  for (int j = 0; j < rank; ++j) {
    if (array.shape[static_cast<size_t>(j)] != 0) continue;
    const int d = j < static_cast<int>(declared.size()) ? declared[static_cast<size_t>(j)] : -1;
    const std::string label = d >= 0 && info.fixed_shape[d] == 0 && info.dim_names[d] != nullptr
                                  ? std::string(" (") + info.dim_names[d] + ")"
                                  : "";
    return Failure{exit_error, "input '" + input.name + "' ('" + input.path + "') has size 0 in dim " +
                                   std::to_string(j) + label +
                                   "; zero-sized tensors are not allowed, every size must be at least 1"};
  }
  return std::nullopt;
}

std::optional<Failure> load_inputs(const Options &options, const std::vector<attn_arg_info> &infos,
                                   CallTensors *call) {
  const std::string kernel = options.kernel;
  call->arrays.resize(infos.size());
  std::vector<bool> given(infos.size(), false);
  for (const NamedFile &input : options.inputs) {
    const auto info = std::find_if(infos.begin(), infos.end(),
                                   [&](const attn_arg_info &a) { return input.name == a.name; });
    // In-out tensors (a KV cache) are given with --input and may be written back with --output.
    if (info == infos.end() || info->is_output == 1) {
      std::string inputs;
      for (const attn_arg_info &a : infos) {
        if (a.is_output != 1) inputs += (inputs.empty() ? "" : ", ") + std::string(a.name);
      }
      return Failure{exit_error,
                     "kernel '" + kernel + "' has no input '" + input.name + "' (inputs: " + inputs + ")"};
    }
    const size_t index = static_cast<size_t>(info - infos.begin());
    if (given[index]) return Failure{exit_error, "input '" + input.name + "' is given twice"};
    given[index] = true;
    std::string error;
    if (!attn::npy::read(input.path, &call->arrays[index], &error)) return Failure{exit_error, error};
    attn::run_tool::InputConversion conversion;
    if (std::optional<std::string> refused = attn::run_tool::match_input_dtype(
            input.name, input.path, info->dtype, &call->arrays[index], &conversion)) {
      return Failure{exit_error, *refused};
    }
    if (conversion == attn::run_tool::InputConversion::rounded_from_f32) {
      std::fprintf(stderr, "attn-run: input '%s' ('%s') is f32; rounded to %s, to nearest even\n",
                   input.name.c_str(), input.path.c_str(), attn_dtype_name(info->dtype));
    }
    const attn::npy::Array &array = call->arrays[index];
    if (std::optional<Failure> zero = zero_sized_dim(input, *info, array)) return zero;
    record_sizes(*info, array, call);
  }
  for (size_t i = 0; i < infos.size(); ++i) {
    if (infos[i].is_output != 1 && !infos[i].is_optional && !given[i]) {
      return Failure{exit_error, "kernel '" + kernel + "' needs input '" + infos[i].name + "' (--input " +
                                     infos[i].name + "=FILE.npy)"};
    }
  }
  return std::nullopt;
}

// Every output is allocated, whether or not --output writes it: the kernel writes them all.
// Outputs take the kernel's fixed sizes and the runtime sizes the inputs set; they never broadcast.
std::optional<Failure> allocate_outputs(const Options &options, const std::vector<attn_arg_info> &infos,
                                        CallTensors *call) {
  for (size_t o = 0; o < options.outputs.size(); ++o) {
    const attn::run_tool::OutputFile &output = options.outputs[o];
    for (size_t earlier = 0; earlier < o; ++earlier) {
      if (options.outputs[earlier].name == output.name) {
        return Failure{exit_error, "output '" + output.name + "' is given twice"};
      }
    }
    const bool known = std::any_of(infos.begin(), infos.end(), [&](const attn_arg_info &a) {
      return a.is_output && output.name == a.name;
    });
    if (!known) {
      std::string outputs;
      for (const attn_arg_info &a : infos) {
        if (a.is_output) outputs += (outputs.empty() ? "" : ", ") + std::string(a.name);
      }
      return Failure{exit_error, "kernel '" + options.kernel + "' has no output '" + output.name +
                                     "' (outputs: " + outputs + ")"};
    }
  }
  for (size_t i = 0; i < infos.size(); ++i) {
    const attn_arg_info &info = infos[i];
    if (info.is_output != 1) continue;  // inputs, and in-outs (given by --input, written in place)
    attn::npy::Array &array = call->arrays[i];
    array.dtype = info.dtype;
    for (int d = 0; d < info.rank; ++d) {
      int64_t size = info.fixed_shape[d];
      if (size == 0) {
        const auto found =
            info.dim_names[d] != nullptr ? call->sizes.find(info.dim_names[d]) : call->sizes.end();
        if (found == call->sizes.end() && info.dim_names[d] != nullptr &&
            call->broadcast_only.count(info.dim_names[d]) > 0) {
          array.shape.push_back(1);  // as the runtime sizes it: only broadcast inputs name it
          continue;
        }
        if (found == call->sizes.end() && !call->rank_problem.empty()) {
          return Failure{exit_error, call->rank_problem};
        }
        if (found == call->sizes.end()) {
          return Failure{exit_error, "cannot size output '" + std::string(info.name) + "': dim " +
                                         std::to_string(d) + " (" +
                                         (info.dim_names[d] ? info.dim_names[d] : "unnamed") +
                                         ") is not set by any input"};
        }
        size = found->second;
      }
      array.shape.push_back(size);
    }
    const size_t element = attn::npy::element_size(info.dtype);
    const int64_t count = array.element_count();
    if (count <= 0 || count > INT32_MAX) {
      return Failure{exit_error, "output '" + std::string(info.name) + "' would have " +
                                     std::to_string(count) + " elements, kernels address 1.." +
                                     std::to_string(INT32_MAX)};
    }
    try {
      array.data.assign(static_cast<size_t>(count) * element, 0);
    } catch (const std::bad_alloc &) {
      return Failure{exit_error, "cannot allocate output '" + std::string(info.name) + "' (" +
                                     std::to_string(static_cast<size_t>(count) * element) + " bytes)"};
    }
  }
  for (size_t i = 0; i < infos.size(); ++i) {
    const attn::npy::Array &array = call->arrays[i];
    // An optional input without --input is left out: the kernel reads its default.
    if (infos[i].is_optional && array.data.empty()) continue;
    call->args.push_back(attn_arg{
        infos[i].name, attn_tensor{const_cast<uint8_t *>(array.data.data()), array.dtype,
                                   static_cast<int32_t>(array.shape.size()), array.shape.data(), nullptr}});
  }
  return std::nullopt;
}

void print_written(const std::vector<attn::run_tool::OutputFile> &outputs,
                   const std::vector<const attn::npy::Array *> &arrays) {
  for (size_t i = 0; i < outputs.size() && i < arrays.size(); ++i) {
    std::string shape;
    for (int64_t extent : arrays[i]->shape) shape += (shape.empty() ? "" : ",") + std::to_string(extent);
    std::printf("wrote %s [%s] to %s\n", outputs[i].name.c_str(), shape.c_str(), outputs[i].path.c_str());
  }
}

std::optional<Failure> write_outputs(const Options &options, const std::vector<attn_arg_info> &infos,
                                     const CallTensors &call) {
  std::vector<const attn::npy::Array *> arrays;
  for (const attn::run_tool::OutputFile &output : options.outputs) {
    for (size_t i = 0; i < infos.size(); ++i) {
      if (output.name == infos[i].name) arrays.push_back(&call.arrays[i]);
    }
  }
  std::string error;
  if (!attn::run_tool::write_outputs_atomically(options.outputs, arrays, &error))
    return Failure{exit_error, error};
  // A plain run says what it wrote; --bench prints its timings instead (--json: JSON only).
  if (!options.bench) print_written(options.outputs, arrays);
  return std::nullopt;
}

// The threads a run uses: the --threads value, else Halide's default (HL_NUM_THREADS or cores).
int threads_used(const Options &options) {
  if (options.threads && *options.threads > 0) return *options.threads;
  if (const char *env = std::getenv("HL_NUM_THREADS")) {
    if (const std::optional<int> n = parse_count(env); n && *n > 0) return *n;
  }
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

attn::run_tool::CallSizes call_sizes(const CallTensors &call, const std::vector<attn_arg_info> &infos) {
  auto size_of = [&](const char *name, const char *arg, int dim) -> int64_t {
    if (const auto found = call.sizes.find(name); found != call.sizes.end()) return found->second;
    for (size_t i = 0; i < infos.size(); ++i) {  // pinned by the spec: read the tensor itself
      if (std::string_view(infos[i].name) == arg && static_cast<int>(call.arrays[i].shape.size()) > dim) {
        return call.arrays[i].shape[static_cast<size_t>(dim)];
      }
    }
    return 0;
  };
  attn::run_tool::CallSizes sizes;
  const bool cross = std::any_of(infos.begin(), infos.end(), [](const attn_arg_info &info) {
    return std::string_view(info.name) == "x_kv";
  });
  if (cross) {  // cross-attention: x [B,Sq,M], x_kv [B,Sk,M]
    sizes.batch = size_of("B", "x", 0);
    sizes.seq_q = size_of("Sq", "x", 1);
    sizes.seq_k = size_of("Sk", "x_kv", 1);
  } else if (call.sizes.count("S") || size_of("S", "x", 1) > 0) {
    sizes.batch = size_of("B", "x", 0);
    sizes.seq_q = sizes.seq_k = size_of("S", "x", 1);
  } else {
    sizes.batch = size_of("B", "q", 0);
    sizes.seq_q = size_of("Sq", "q", 1);
    sizes.seq_k = size_of("Sk", "k", 1);
  }
  return sizes;
}

// KV cache and varlen kernels (issue 24): the work of each sequence, with Lk = cache_seqlens[b] +
// Sq, or the lengths the prefix sums give; nullopt for the other kernels.
std::optional<double> sequence_flops(const attn::run_tool::SpecNumbers &spec, const CallTensors &call,
                                     const std::vector<attn_arg_info> &infos) {
  auto values = [&](const char *name) {
    std::vector<int32_t> out;
    for (size_t i = 0; i < infos.size(); ++i)
      if (std::string_view(infos[i].name) == name) {
        out.resize(call.arrays[i].data.size() / sizeof(int32_t));
        std::memcpy(out.data(), call.arrays[i].data.data(), out.size() * sizeof(int32_t));
      }
    return out;
  };
  double flops = 0;
  if (const std::vector<int32_t> cached = values("cache_seqlens"); !cached.empty()) {
    const int64_t seq_q = call_sizes(call, infos).seq_q;
    for (int32_t n : cached) flops += attn::run_tool::call_flops(spec, {1, seq_q, n + seq_q});
    return flops;
  }
  const std::vector<int32_t> cu_q = values("cu_seqlens_q"), cu_k = values("cu_seqlens_k");
  if (cu_q.empty() || cu_q.size() != cu_k.size()) return std::nullopt;
  for (size_t b = 0; b + 1 < cu_q.size(); ++b)
    flops += attn::run_tool::call_flops(spec, {1, cu_q[b + 1] - cu_q[b], cu_k[b + 1] - cu_k[b]});
  return flops;
}

std::optional<Failure> bench(const Options &options, const attn_kernel *kernel, const CallTensors &call,
                             const std::vector<attn_arg_info> &infos) {
  const int count = static_cast<int>(call.args.size());
  for (int i = 0; i < options.warmup; ++i) {
    if (attn_status s = attn_run(kernel, call.args.data(), count); s != ATTN_OK) return runtime_failure(s);
  }
  std::vector<double> ms;
  for (int i = 0; i < options.runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const attn_status s = attn_run(kernel, call.args.data(), count);
    const auto stop = std::chrono::steady_clock::now();
    if (s != ATTN_OK) return runtime_failure(s);
    ms.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
  }
  std::sort(ms.begin(), ms.end());
  const size_t n = ms.size();
  const double median = n % 2 == 1 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
  std::string why;
  const auto spec = attn::run_tool::parse_spec_numbers(attn_kernel_spec(kernel), &why);
  std::optional<double> gflops;
  if (spec && median > 0) {
    const std::optional<double> per_sequence = sequence_flops(*spec, call, infos);
    gflops = (per_sequence ? *per_sequence : attn::run_tool::call_flops(*spec, call_sizes(call, infos))) /
             (median * 1e6);
  }
  const int threads = threads_used(options);
  if (options.json) {
    const std::string gflops_text = gflops ? std::to_string(*gflops) : "null";
    std::printf(
        "{\"kernel\":\"%s\",\"median_ms\":%.6f,\"min_ms\":%.6f,\"gflops\":%s,\"runs\":%d,\"threads\":%d,"
        "\"variant\":\"%s\"}\n",
        attn_kernel_id(kernel), median, ms.front(), gflops_text.c_str(), options.runs, threads,
        attn_kernel_selected_target(kernel));
  } else {
    std::printf("%s: median %.4f ms, min %.4f ms over %d runs, %d threads\n  variant %s\n",
                attn_kernel_id(kernel), median, ms.front(), options.runs, threads,
                attn_kernel_selected_target(kernel));
    if (gflops)
      std::printf("%.2f GFLOP/s\n", *gflops);
    else
      std::printf("GFLOP/s unknown: %s\n", why.c_str());
  }
  return std::nullopt;
}

std::optional<Failure> run_tool(const Options &options) {
  if (options.max_isa) {
    if (attn_status s = attn_set_max_isa(options.max_isa->c_str()); s != ATTN_OK) return runtime_failure(s);
  }
  // Every output path is checked before anything runs, so that a bad one leaves no file written.
  if (std::string error; !attn::run_tool::check_output_paths(options.outputs, &error)) {
    return Failure{exit_error, error};
  }
  attn_library *library = nullptr;
  const attn_status opened = options.unverified
                                 ? attn_library_open_unverified(options.library.c_str(), &library)
                                 : attn_library_open(options.library.c_str(), &library);
  if (opened != ATTN_OK) return runtime_failure(opened);
  struct Closer {
    attn_library *library;
    ~Closer() { attn_library_close(library); }
  } closer{library};
  if (options.list) {
    list_kernels(library);
    return std::nullopt;
  }
  const attn_kernel *kernel = nullptr;
  if (attn_status s = attn_library_find_kernel(library, options.kernel.c_str(), &kernel); s != ATTN_OK) {
    return runtime_failure(s);
  }
  if (options.threads) {
    if (attn_status s = attn_kernel_set_threads(kernel, *options.threads); s != ATTN_OK)
      return runtime_failure(s);
  }
  const std::vector<attn_arg_info> infos = arg_infos(kernel);
  CallTensors call;
  if (auto failure = load_inputs(options, infos, &call)) return failure;
  if (auto failure = allocate_outputs(options, infos, &call)) return failure;
  if (options.bench) {
    if (auto failure = bench(options, kernel, call, infos)) return failure;
  } else if (attn_status s = attn_run(kernel, call.args.data(), static_cast<int>(call.args.size()));
             s != ATTN_OK) {
    return runtime_failure(s);
  }
  return write_outputs(options, infos, call);
}

}  // namespace

int main(int argc, char **argv) {
  Options options;
  if (const std::optional<Failure> failure = parse_options(argc, argv, &options)) {
    std::fprintf(stderr, "attn-run: %s\n%s", failure->message.c_str(), usage_text);
    return failure->code;
  }
  if (const std::optional<Failure> failure = run_tool(options)) {
    std::fprintf(stderr, "attn-run: %s\n", failure->message.c_str());
    return failure->code;
  }
  return 0;
}

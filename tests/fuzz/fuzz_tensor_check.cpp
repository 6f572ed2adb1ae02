// Fuzzes attn_run's argument checks with random names, dtypes, ranks, shapes, strides and null
// pointers, against an oracle kernel: a call either fails with a named status and a message,
// leaving the outputs untouched, or hands the kernel buffers that fit the declared arguments and
// lie inside the memory the caller described (outputs without overlapping elements).
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "HalideRuntime.h"
#include "attn/kernel_abi.h"
#include "fuzz_check.h"

namespace {

constexpr int heads = 2, head_dim = 4, head_dim_v = 3;
constexpr uint32_t batch_and_heads = 0x3;

// mask u8 [B, H, Sq, Sk] (B and H broadcast, down to rank 2), q, k, v, key_lengths i32 [B] -> out, lse.
constexpr attn_arg_info oracle_args[] = {
    {"mask", ATTN_U8, 4, 0, {0, heads, 0, 0}, {"B", "H", "Sq", "Sk"}, batch_and_heads, 2},
    {"q", ATTN_F32, 4, 0, {0, 0, heads, head_dim}, {"B", "Sq", "heads", "head_dim"}, 0, 0},
    {"k", ATTN_F32, 4, 0, {0, 0, 1, head_dim}, {"B", "Sk", nullptr, nullptr}, 0, 0},
    {"v", ATTN_F32, 4, 0, {0, 0, 1, head_dim_v}, {"B", "Sk", nullptr, nullptr}, 0, 0},
    {"key_lengths", ATTN_I32, 1, 0, {0}, {"B"}, 0, 0},
    {"out", ATTN_F32, 4, 1, {0, 0, heads, head_dim_v}, {"B", "Sq", "heads", "head_dim_v"}, 0, 0},
    {"lse", ATTN_F32, 3, 1, {0, 0, heads}, {"B", "Sq", "heads"}, 0, 0},
};
constexpr int oracle_arg_count = sizeof(oracle_args) / sizeof(oracle_args[0]);

// One tensor as the harness built it: the bytes it described (offsets from data, in bytes) and,
// when those are few enough, memory holding exactly them.
struct Described {
  std::string name;
  bool is_output = false;
  bool backed = false;                // real memory covers [lowest, highest]
  __int128 lowest = 0, highest = -1;  // byte offsets from data of the described elements
  std::vector<uint8_t> memory;
  uint8_t *data = nullptr;
};

constexpr uint8_t untouched = 0xAB;
constexpr size_t max_backed_bytes = 1 << 16;

std::vector<Described> described;  // the current call's tensors
int oracle_runs = 0;
// How many calls were made and how many got past the checks, printed at exit: a harness whose
// calls never reach the kernel tests only the first checks.
long calls = 0, calls_run = 0;

// Whether an output's described bytes [data + lowest, data + highest] meet another tensor's.
bool output_overlaps() {
  for (const Described &w : described) {
    if (!w.is_output || w.data == nullptr || w.highest < w.lowest) continue;
    for (const Described &o : described) {
      if (&o == &w || o.data == nullptr || o.highest < o.lowest) continue;
      const __int128 w_first = static_cast<__int128>(reinterpret_cast<uintptr_t>(w.data)) + w.lowest;
      const __int128 o_first = static_cast<__int128>(reinterpret_cast<uintptr_t>(o.data)) + o.lowest;
      if (w_first <= o_first + (o.highest - o.lowest) && o_first <= w_first + (w.highest - w.lowest)) return true;
    }
  }
  return false;
}

const Described *described_named(const char *name) {
  for (const Described &d : described)
    if (d.name == name) return &d;
  return nullptr;
}

// Checks each buffer against its declaration and the caller's description, then reads every
// input element and writes every output element (ASan sees any stray access).
int oracle_run(attn_call_context *, void **buffers) {
  ++oracle_runs;
  std::map<std::string, int32_t> named_sizes;
  for (int i = 0; i < oracle_arg_count; ++i) {
    const attn_arg_info &info = oracle_args[i];
    const auto *buffer = static_cast<const halide_buffer_t *>(buffers[i]);
    FUZZ_CHECK(buffer != nullptr && buffer->host != nullptr, "'%s': no buffer or no host", info.name);
    FUZZ_CHECK(buffer->dimensions == info.rank, "'%s': %d dims, declared %d", info.name, buffer->dimensions,
               info.rank);
    const Described *d = described_named(info.name);
    FUZZ_CHECK(d != nullptr, "'%s' ran without being given", info.name);
    FUZZ_CHECK(buffer->host == d->data, "'%s': another host pointer", info.name);
    const int bytes = (buffer->type.bits + 7) / 8;
    __int128 lowest = 0, highest = 0;
    int64_t elements = 1;
    for (int h = 0; h < info.rank; ++h) {  // Halide order: innermost first
      const int caller_dim = info.rank - 1 - h;
      const halide_dimension_t &dim = buffer->dim[h];
      FUZZ_CHECK(dim.min == 0 && dim.extent >= 0, "'%s' dim %d: min %d extent %d", info.name, caller_dim,
                 dim.min, dim.extent);
      if (info.fixed_shape[caller_dim] > 0)
        FUZZ_CHECK(dim.extent == info.fixed_shape[caller_dim], "'%s' dim %d: extent %d, fixed %lld",
                   info.name, caller_dim, dim.extent, static_cast<long long>(info.fixed_shape[caller_dim]));
      if (const char *dim_name = info.dim_names[caller_dim]; dim_name != nullptr) {
        const auto [known, inserted] = named_sizes.emplace(dim_name, dim.extent);
        FUZZ_CHECK(inserted || known->second == dim.extent, "'%s' dim %s: %d, elsewhere %d", info.name,
                   dim_name, dim.extent, known->second);
      }
      elements *= dim.extent;
      if (dim.extent > 0) {
        const __int128 span = static_cast<__int128>(dim.extent - 1) * dim.stride * bytes;
        (span < 0 ? lowest : highest) += span;
      }
    }
    if (elements == 0) continue;
    highest += bytes - 1;
    FUZZ_CHECK(lowest >= d->lowest && highest <= d->highest,
               "'%s': the kernel's buffer reaches bytes [%lld, %lld], the caller described [%lld, %lld]",
               info.name, static_cast<long long>(lowest), static_cast<long long>(highest),
               static_cast<long long>(d->lowest), static_cast<long long>(d->highest));
    if (!d->backed) continue;
    // Every element's offset; outputs must not give two elements one address.
    std::vector<int64_t> offsets;
    offsets.reserve(static_cast<size_t>(elements));
    for (int64_t n = 0; n < elements; ++n) {
      int64_t rest = n, offset = 0;
      for (int h = 0; h < info.rank; ++h) {
        offset += (rest % buffer->dim[h].extent) * buffer->dim[h].stride;
        rest /= buffer->dim[h].extent;
      }
      offsets.push_back(offset * bytes);
    }
    uint8_t *host = buffer->host;
    if (info.is_output) {
      std::sort(offsets.begin(), offsets.end());
      FUZZ_CHECK(std::adjacent_find(offsets.begin(), offsets.end()) == offsets.end(),
                 "output '%s' has two elements at one address", info.name);
      for (int64_t offset : offsets) std::memset(host + offset, 0, static_cast<size_t>(bytes));
    } else {
      volatile uint8_t sink = 0;
      for (int64_t offset : offsets) sink = sink + host[offset];
    }
  }
  return 0;
}

void no_threads(int) {}

constexpr attn_kernel_desc oracle = {
    ATTN_ABI_VERSION,
    "fuzz_oracle",
    "form=core heads=2 kv_heads=1 head_dim=4 head_dim_v=3 mask=padding&tensor lse=true dtype=f32",
    "host",
    "",
    oracle_arg_count,
    oracle_args,
    oracle_run,
    no_threads,
    0,
    nullptr,
    nullptr,
    nullptr};

const attn_kernel *oracle_kernel() {
  static const attn_kernel *kernel = [] {
    attn_register_kernel(&oracle);
    std::atexit([] {
      std::fprintf(stderr, "fuzz_tensor_check: %ld calls, %ld reached the kernel\n", calls, calls_run);
    });
    const attn_kernel *found = nullptr;
    FUZZ_CHECK(attn_find_kernel("fuzz_oracle", &found) == ATTN_OK, "oracle not registered: %s",
               attn_last_error());
    return found;
  }();
  return kernel;
}

// The declared names first, in oracle_args order; then names no kernel takes.
const char *const names[] = {"mask", "q", "k", "v", "key_lengths", "out", "lse", "bogus", ""};
constexpr int name_count = sizeof(names) / sizeof(names[0]);

int64_t interesting_size(FuzzedDataProvider &in) {
  static const int64_t sizes[] = {
      0, 1, 2, 3, 4, 5, 7, -1, -2, INT32_MAX, int64_t{INT32_MAX} + 1, int64_t{1} << 40, INT64_MAX, INT64_MIN};
  return sizes[in.ConsumeIntegralInRange<size_t>(0, sizeof(sizes) / sizeof(sizes[0]) - 1)];
}

size_t bytes_of(int dtype) {
  switch (dtype) {
    case ATTN_F16:
    case ATTN_BF16:
      return 2;
    case ATTN_U8:
      return 1;
    default:
      return 4;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *input, size_t size) {
  FuzzedDataProvider in(input, size);
  const attn_kernel *kernel = oracle_kernel();
  // Sizes most tensors agree on, so that calls get past the checks often.
  const int64_t batch = in.ConsumeIntegralInRange<int64_t>(1, 3),
                seq_q = in.ConsumeIntegralInRange<int64_t>(1, 4),
                seq_k = in.ConsumeIntegralInRange<int64_t>(1, 5);
  // Half the calls give every argument once, in order (then maybe one more); the others any names.
  const bool every_argument = in.ConsumeBool();
  const int arg_count = every_argument ? oracle_arg_count + in.ConsumeIntegralInRange<int>(0, 1)
                                       : in.ConsumeIntegralInRange<int>(0, 9);

  described.clear();
  described.reserve(static_cast<size_t>(arg_count));
  std::vector<std::vector<int64_t>> shapes(static_cast<size_t>(arg_count)), strides(shapes.size());
  std::vector<attn_arg> args(static_cast<size_t>(arg_count));
  for (int a = 0; a < arg_count; ++a) {
    attn_arg &arg = args[static_cast<size_t>(a)];
    const int which = every_argument && a < oracle_arg_count
                          ? a
                          : in.ConsumeIntegralInRange<int>(0, name_count);  // name_count: a null name
    arg.name = which < name_count ? names[which] : nullptr;
    const attn_arg_info *info = nullptr;
    for (const attn_arg_info &candidate : oracle_args)
      if (arg.name != nullptr && std::strcmp(candidate.name, arg.name) == 0) info = &candidate;

    int dtype = info != nullptr ? info->dtype : ATTN_F32;
    if (in.ConsumeIntegralInRange<int>(0, 7) == 7) dtype = in.ConsumeIntegral<int8_t>();
    std::memcpy(&arg.tensor.dtype, &dtype, sizeof(dtype));  // any int, as a C caller may store

    // The declared shape at the agreed sizes, or a rank and sizes of its own.
    std::vector<int64_t> &shape = shapes[static_cast<size_t>(a)];
    if (info != nullptr && in.ConsumeBool()) {
      for (int d = 0; d < info->rank; ++d) {
        const char *dim = info->dim_names[d];
        int64_t s = info->fixed_shape[d];
        if (dim != nullptr && std::strcmp(dim, "B") == 0) s = batch;
        if (dim != nullptr && std::strcmp(dim, "Sq") == 0) s = seq_q;
        if (dim != nullptr && std::strcmp(dim, "Sk") == 0) s = seq_k;
        shape.push_back(s);
      }
      // Leading dims left out, or given as 1, where they broadcast.
      if (info->broadcast_dims != 0 && in.ConsumeBool())
        shape.erase(shape.begin(), shape.begin() + in.ConsumeIntegralInRange<int>(0, 2));
      if (info->broadcast_dims != 0 && in.ConsumeBool()) shape.front() = 1;
    } else {
      const int rank = in.ConsumeIntegralInRange<int>(0, ATTN_MAX_RANK + 1);
      for (int d = 0; d < rank; ++d)
        shape.push_back(in.ConsumeBool() ? in.ConsumeIntegralInRange<int64_t>(1, 5) : interesting_size(in));
    }
    // A few sizes changed to something odd.
    // (Rare choices are the range's top value: an exhausted input gives the bottom one.)
    for (int n = 0; n < 4 && !shape.empty() && in.ConsumeIntegralInRange<int>(0, 5) == 5; ++n)
      shape[in.ConsumeIntegralInRange<size_t>(0, shape.size() - 1)] = interesting_size(in);
    const int rank = static_cast<int>(shape.size());
    arg.tensor.rank =
        in.ConsumeIntegralInRange<int>(0, 15) == 15 ? in.ConsumeIntegralInRange<int>(-2, 10) : rank;
    if (arg.tensor.rank > rank)
      shape.resize(static_cast<size_t>(arg.tensor.rank), 1);  // rank entries, always
    arg.tensor.shape = shape.empty() ? nullptr : shape.data();

    // Strides: none (dense), dense, or dense with some changed.
    std::vector<int64_t> &stride = strides[static_cast<size_t>(a)];
    const int used_rank = std::max(arg.tensor.rank, 0);
    if (in.ConsumeBool()) {
      stride.resize(static_cast<size_t>(used_rank));
      __int128 dense = 1;
      for (int d = used_rank - 1; d >= 0; --d) {
        stride[static_cast<size_t>(d)] = dense > INT64_MAX ? INT64_MAX : static_cast<int64_t>(dense);
        dense = std::min<__int128>(dense * std::max<int64_t>(shape[static_cast<size_t>(d)], 1),
                                   __int128{1} << 64);
      }
      for (int n = 0; n < 4 && !stride.empty() && in.ConsumeIntegralInRange<int>(0, 2) == 2; ++n) {
        const size_t d = in.ConsumeIntegralInRange<size_t>(0, stride.size() - 1);
        const int64_t nudge = in.ConsumeIntegralInRange<int64_t>(-3, 3);
        stride[d] = in.ConsumeBool() && stride[d] < INT64_MAX - 3 && stride[d] > INT64_MIN + 3
                        ? stride[d] + nudge
                        : interesting_size(in);
      }
    }
    arg.tensor.strides = stride.empty() ? nullptr : stride.data();

    // The bytes this tensor describes: offsets [lowest, highest] from its data pointer.
    Described d;
    d.name = arg.name != nullptr ? arg.name : "";
    d.is_output = info != nullptr && info->is_output;
    const size_t bytes = bytes_of(dtype);
    // Exact while every size and step is below 2^60 (sums of ten such products fit in __int128);
    // beyond that the tensor counts as describing every byte (no containment check for it).
    constexpr __int128 exact_limit = __int128{1} << 60;
    __int128 lowest = 0, highest = 0, dense = 1;
    bool empty = false, unbounded = false;
    for (int dim = used_rank - 1; dim >= 0; --dim) {
      const __int128 extent = shape[static_cast<size_t>(dim)];
      const __int128 step = arg.tensor.strides != nullptr ? stride[static_cast<size_t>(dim)] : dense;
      if (extent <= 0) empty = true;
      if (extent > exact_limit || step > exact_limit || step < -exact_limit) unbounded = true;
      if (extent > 0 && !unbounded) {
        const __int128 span = (extent - 1) * step * static_cast<__int128>(bytes);
        (span < 0 ? lowest : highest) += span;
      }
      dense = std::min(dense * (extent > 0 && extent <= exact_limit ? extent : 1), exact_limit + 1);
    }
    if (empty) {
      lowest = 0;
      highest = -1;
    } else if (unbounded) {
      lowest = -(__int128{1} << 120);
      highest = __int128{1} << 120;
    } else {
      highest += static_cast<__int128>(bytes) - 1;
    }
    d.lowest = lowest;
    d.highest = highest;
    const bool overflow = unbounded && !empty;
    const __int128 span = d.highest - d.lowest + 1;
    d.backed = !overflow && span <= static_cast<__int128>(max_backed_bytes);
    const size_t allocated = d.backed && span > 0 ? static_cast<size_t>(span) : 16;
    d.memory.assign(allocated, untouched);
    d.data = d.memory.data() - (d.backed ? static_cast<ptrdiff_t>(lowest) : 0);
    if (in.ConsumeIntegralInRange<int>(0, 31) == 31) d.data = nullptr;
    arg.tensor.data = d.data;
    described.push_back(std::move(d));
  }

  oracle_runs = 0;
  const attn_status status = attn_run(kernel, args.empty() ? nullptr : args.data(), arg_count);
  ++calls;
  if (status == ATTN_OK) {
    ++calls_run;
    FUZZ_CHECK(oracle_runs == 1, "attn_run returned ATTN_OK after %d kernel runs", oracle_runs);
    return 0;
  }
  FUZZ_CHECK(oracle_runs == 0, "attn_run failed (%s) after running the kernel", attn_status_name(status));
  FUZZ_CHECK((status >= ATTN_ERR_INVALID_ARGUMENT && status <= ATTN_ERR_INVALID_VALUE) || status == ATTN_ERR_ALIASED,
             "status %d is not named", static_cast<int>(status));
  // An aliasing refusal needs an output whose described bytes meet another tensor's (a tensor too
  // large to back with memory describes bytes past its small allocation, which may meet another).
  if (status == ATTN_ERR_ALIASED) FUZZ_CHECK(output_overlaps(), "ATTN_ERR_ALIASED without an overlap: %s", attn_last_error());
  FUZZ_CHECK(attn_last_error()[0] != '\0', "%s without a message", attn_status_name(status));
  for (const Described &d : described)
    FUZZ_CHECK(std::all_of(d.memory.begin(), d.memory.end(), [](uint8_t b) { return b == untouched; }),
               "a failed call (%s) wrote into '%s'", attn_status_name(status), d.name.c_str());
  return 0;
}

// isa_limit.cpp: attn_set_max_isa, ATTN_MAX_ISA and the choice of a kernel's variant.
#include "isa_limit.h"

#include <array>
#include <atomic>
#include <cstdlib>
#include <string_view>

#include "cpu_features.h"
#include "device.h"
#include "status_internal.h"

namespace {

// Each level allows the features of the ones below it; the first allows every feature.
struct Level {
  const char *name;
  const char *allowed;  // comma-separated feature names; null for all
};
#if defined(__aarch64__)
// armv8.2: dot product and fp16 arithmetic (the arm64 set's first variant); neon: baseline AArch64.
constexpr std::array<Level, 2> levels = {{
    {"armv8.2", nullptr},
    {"neon", ""},
}};
constexpr const char *level_names = "armv8.2 or neon";
#else
// amx: no limit. avx512bf16: AVX-512 with its later extensions (BF16, VNNI, FP16) and vendor ones
// (AMD's SSE4a: the Zen 4 class variant), no AMX. avx512: Skylake / Cannon Lake class AVX-512, so
// a bf16 kernel converts to fp32 there. Names as cpu_features.cpp spells them.
constexpr std::array<Level, 7> levels = {{
    {"amx", nullptr},
    {"avx512bf16",
     "avx512vbmi2,avx512vnni,avx512bitalg,avx512vpopcntdq,avx512bf16,avx512fp16,gfni,vaes,vpclmulqdq,sse4a"},
    {"avx512", "adx,sha,avx512f,avx512cd,avx512bw,avx512dq,avx512vl,avx512ifma,avx512vbmi"},
    {"avx2", "avx2,fma,f16c,bmi,bmi2,lzcnt,movbe,avxvnni"},
    {"avx", "avx,pclmul,aes"},
    {"sse41", "sse3,ssse3,sse41,sse42,popcnt"},
    {"x86-64", ""},
}};
constexpr const char *level_names = "amx, avx512bf16, avx512, avx2, avx, sse41 or x86-64";
#endif

constexpr int unread = -3;   // ATTN_MAX_ISA not read yet
constexpr int invalid = -2;  // ATTN_MAX_ISA holds an unknown name
constexpr int no_limit = -1;
std::atomic<int> current{unread};

int level_of(std::string_view name) {
  if (name.empty()) return no_limit;
  for (size_t i = 0; i < levels.size(); ++i)
    if (name == levels[i].name) return static_cast<int>(i);
  return invalid;
}

const char *environment_text() {
  const char *text = std::getenv("ATTN_MAX_ISA");
  return text == nullptr ? "" : text;
}

int limit() {
  int value = current.load(std::memory_order_acquire);
  if (value != unread) return value;
  int from_environment = level_of(environment_text());
  // A concurrent attn_set_max_isa wins over the environment.
  current.compare_exchange_strong(value, from_environment, std::memory_order_acq_rel);
  return current.load(std::memory_order_acquire);
}

// A level allows its own features and those of every level below it.
bool allowed(int level, const char *features) {
  if (level == no_limit || levels[static_cast<size_t>(level)].allowed == nullptr) return true;
  bool all = true;
  attn::detail::for_each_feature(features, [&](std::string_view name) {
    const std::string_view normal = name == "sse4.1" ? "sse41" : name == "sse4.2" ? "sse42" : name;
    bool found = false;
    for (size_t below = static_cast<size_t>(level); below < levels.size() && !found; ++below)
      attn::detail::for_each_feature(levels[below].allowed,
                                     [&](std::string_view a) { found = found || a == normal; });
    all = all && found;
  });
  return all;
}

}  // namespace

namespace attn::detail {

uint32_t cpu_variant_bits(const attn_kernel_desc &desc) {
  uint32_t bits = 0;
  for (int v = 0; v < desc.variant_count && v < 32; ++v)
    if (cpu_supports_all(desc.variants[v].required_cpu_features, nullptr)) bits |= 1u << v;
  return bits;
}

namespace {

// The GPU variant to run, if any: under auto the first whose device is there, under a forced
// device the first of that API. *missing collects why each GPU variant cannot run.
int gpu_variant(const attn_kernel_desc &desc, DeviceChoice choice, std::string *missing) {
  if (choice == DeviceChoice::cpu) return -1;
  for (int v = 0; v < desc.variant_count; ++v) {
    const DeviceApi api = device_api_of(desc.variants[v].target);
    if (api == DeviceApi::none) continue;
    if ((choice == DeviceChoice::cuda && api != DeviceApi::cuda) ||
        (choice == DeviceChoice::opencl && api != DeviceApi::opencl))
      continue;
    std::string why;
    if (device_available(api, &why)) return v;
    *missing += std::string(missing->empty() ? "" : "; ") + desc.variants[v].target + " (" + why + ")";
  }
  return -1;
}

}  // namespace

namespace {

// The variant for device tensors of one API: the first of that API whose device is here.
attn_status device_tensor_variant(const attn_kernel_desc &desc, DeviceChoice choice, DeviceApi tensors,
                                  int *variant) {
  const char *name = device_api_name(tensors);
  const char *memory = tensors == DeviceApi::cuda ? "CUDA device pointers" : "OpenCL buffers";
  if (choice != DeviceChoice::auto_choice && !(choice == DeviceChoice::cuda && tensors == DeviceApi::cuda) &&
      !(choice == DeviceChoice::opencl && tensors == DeviceApi::opencl)) {
    return fail(ATTN_ERR_DEVICE_TENSOR, "kernel '%s': the call passes %s, but the device is forced to %s",
                desc.id, memory,
                choice == DeviceChoice::cpu    ? "cpu"
                : choice == DeviceChoice::cuda ? "cuda"
                                               : "opencl");
  }
  std::string variants;
  for (int v = 0; v < desc.variant_count; ++v) {
    variants += std::string(v ? ", " : "") + desc.variants[v].target;
    if (device_api_of(desc.variants[v].target) != tensors) continue;
    std::string missing;
    if (!device_available(tensors, &missing)) {
      return fail(ATTN_ERR_NO_DEVICE, "kernel '%s': the call passes %s, but %s cannot run here: %s", desc.id,
                  memory, name, missing.c_str());
    }
    *variant = v;
    return ATTN_OK;
  }
  if (desc.variant_count <= 0) variants = desc.target;
  return fail(ATTN_ERR_DEVICE_TENSOR,
              "kernel '%s': the call passes %s, but the kernel has no %s variant (it has %s)", desc.id,
              memory, name, variants.c_str());
}

}  // namespace

attn_status select_variant(const attn_kernel &kernel, DeviceApi tensors, int *variant) {
  const attn_kernel_desc &desc = *kernel.desc;
  *variant = -1;
  const int level = limit();
  if (level == invalid) {
    return fail(ATTN_ERR_INVALID_ARGUMENT, "ATTN_MAX_ISA is '%s', not an instruction set: use %s",
                environment_text(), level_names);
  }
  const DeviceChoice choice = device_choice();
  if (choice == DeviceChoice::invalid) {
    return fail(ATTN_ERR_INVALID_ARGUMENT, "ATTN_DEVICE is '%s', not a device: use cpu, cuda, opencl or auto",
                device_environment_text());
  }
  if (tensors != DeviceApi::none) return device_tensor_variant(desc, choice, tensors, variant);
  if (desc.variant_count <= 0) {
    *variant = 0;
    return ATTN_OK;
  }
  // A GPU variant first where its device is there ("host cuda": the CPU variants otherwise).
  std::string missing;
  if (const int gpu = gpu_variant(desc, choice, &missing); gpu >= 0) {
    *variant = gpu;
    return ATTN_OK;
  }
  if (choice == DeviceChoice::cuda || choice == DeviceChoice::opencl) {
    const char *name = choice == DeviceChoice::cuda ? "cuda" : "opencl";
    if (missing.empty())
      return fail(ATTN_ERR_NO_DEVICE, "kernel '%s': the device is forced to %s but the kernel has no %s variant",
                  desc.id, name, name);
    return fail(ATTN_ERR_NO_DEVICE, "kernel '%s': the device is forced to %s, which cannot run here: %s", desc.id,
                name, missing.c_str());
  }
  bool any_cpu = false;
  for (int v = 0; v < desc.variant_count; ++v) {
    const attn_kernel_variant &candidate = desc.variants[v];
    if (device_api_of(candidate.target) != DeviceApi::none) continue;
    any_cpu = true;
    const bool on_cpu = v < 32 ? (kernel.cpu_variants >> v & 1u) != 0
                               : cpu_supports_all(candidate.required_cpu_features, nullptr);
    if (on_cpu && allowed(level, candidate.required_cpu_features)) {
      *variant = v;
      return ATTN_OK;
    }
  }
  if (!any_cpu) {
    if (choice == DeviceChoice::cpu)
      return fail(ATTN_ERR_NO_DEVICE, "kernel '%s': the device is forced to cpu but the kernel has GPU variants only",
                  desc.id);
    return fail(ATTN_ERR_NO_DEVICE, "kernel '%s': no GPU device to run it: %s", desc.id, missing.c_str());
  }
  // None runs: say why for each.
  std::string refused;
  for (int v = 0; v < desc.variant_count; ++v) {
    const attn_kernel_variant &candidate = desc.variants[v];
    if (device_api_of(candidate.target) != DeviceApi::none) continue;
    std::string lacking;
    if (!allowed(level, candidate.required_cpu_features)) {
      refused += std::string(refused.empty() ? "" : "; ") + candidate.target + " (above the limit)";
    } else if (!cpu_supports_all(candidate.required_cpu_features, &lacking)) {
      refused +=
          std::string(refused.empty() ? "" : "; ") + candidate.target + " (this CPU lacks " + lacking + ")";
    }
  }
  return fail(ATTN_ERR_UNSUPPORTED_CPU, "kernel '%s': no variant runs here under max isa '%s': %s", desc.id,
              level == no_limit ? "none" : levels[static_cast<size_t>(level)].name, refused.c_str());
}

}  // namespace attn::detail

extern "C" attn_status attn_set_max_isa(const char *isa) {
  const int level = level_of(isa == nullptr ? "" : isa);
  if (level == invalid) {
    return attn::detail::fail(ATTN_ERR_INVALID_ARGUMENT, "max isa '%s' is not an instruction set: use %s",
                              isa, level_names);
  }
  current.store(level, std::memory_order_release);
  return ATTN_OK;
}

extern "C" const char *attn_max_isa(void) {
  const int level = limit();
  if (level == invalid) return nullptr;
  return level == no_limit ? "" : levels[static_cast<size_t>(level)].name;
}

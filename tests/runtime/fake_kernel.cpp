// fake_kernel.cpp: the fake kernel tables and the contiguous call the runtime tests start from.
#include "fake_kernel.h"

#include <algorithm>

#include "HalideRuntime.h"

namespace fake {
namespace {

// The element at caller coordinates (outermost first), addressed as a Halide kernel would.
float *element(const halide_buffer_t *buffer, int64_t b, int64_t s, int64_t h, int64_t e) {
  const int64_t coords[4] = {e, h, s, b};  // Halide order: innermost first
  int64_t offset = 0;
  for (int d = 0; d < 4; ++d) offset += (coords[d] - buffer->dim[d].min) * buffer->dim[d].stride;
  return reinterpret_cast<float *>(buffer->host) + offset;
}

float at(const halide_buffer_t *buffer, int64_t b, int64_t s, int64_t h, int64_t e) {
  return *element(buffer, b, s, h, e);
}

int run_core(attn_call_context *, void **buffers) {
  auto *q = static_cast<halide_buffer_t *>(buffers[0]);
  auto *k = static_cast<halide_buffer_t *>(buffers[1]);
  auto *v = static_cast<halide_buffer_t *>(buffers[2]);
  auto *out = static_cast<halide_buffer_t *>(buffers[3]);
  observed.runs++;
  observed.dimensions = out->dimensions;
  for (int d = 0; d < 4 && d < out->dimensions; ++d) {
    observed.extent[d] = out->dim[d].extent;
    observed.stride[d] = out->dim[d].stride;
  }
  observed.type_code = out->type.code;
  observed.type_bits = out->type.bits;
  observed.type_lanes = out->type.lanes;
  observed.host = out->host;
  const int32_t seq_k = k->dim[2].extent;
  for (int32_t b = 0; b < out->dim[3].extent; ++b) {
    for (int32_t s = 0; s < out->dim[2].extent; ++s) {
      for (int32_t h = 0; h < out->dim[1].extent; ++h) {
        for (int32_t e = 0; e < out->dim[0].extent; ++e) {
          *element(out, b, s, h, e) =
              at(q, b, s, h, e) + 10 * at(v, b, seq_k - 1, 0, e) + 100 * at(k, b, 0, 0, 3);
        }
      }
    }
  }
  return 0;
}

int run_failing(attn_call_context *context, void **) {
  attn_abi_record_error(context, "fake kernel ran out of memory");
  return -1;
}

int run_silent_failure(attn_call_context *, void **) {
  return -3;
}

void set_threads(int threads) {
  observed.threads = threads;
}

constexpr attn_arg_info core_args[] = {
    {"q", ATTN_F32, 4, 0, {0, 0, heads, head_dim}, {"B", "Sq", "heads", "head_dim"}},
    {"k", ATTN_F32, 4, 0, {0, 0, 1, head_dim}, {"B", "Sk", nullptr, nullptr}},
    {"v", ATTN_F32, 4, 0, {0, 0, 1, head_dim_v}, {"B", "Sk", nullptr, nullptr}},
    {"out", ATTN_F32, 4, 1, {0, 0, heads, head_dim_v}, {"B", "Sq", "heads", "head_dim_v"}},
};

constexpr const char *core_spec = "form=core heads=2 kv_heads=1 head_dim=4 head_dim_v=3 mask=none dtype=f32";

constexpr attn_kernel_desc make_desc(const char *id, int (*run)(attn_call_context *, void **)) {
  return attn_kernel_desc{ATTN_ABI_VERSION, id, core_spec, "host", "", 4, core_args, run, set_threads};
}

}  // namespace

Observed observed;
const attn_kernel_desc core = make_desc("fake_core", run_core);
const attn_kernel_desc failing = make_desc("fake_failing", run_failing);
const attn_kernel_desc silent_failure = make_desc("fake_silent_failure", run_silent_failure);

namespace {
// Generated entries register from a constructor; this one does the same.
const bool core_registered = (attn_register_kernel(&core), true);
}  // namespace

CoreCall::CoreCall() {
  q_shape = {batch, seq_q, heads, head_dim};
  k_shape = {batch, seq_k, 1, head_dim};
  v_shape = {batch, seq_k, 1, head_dim_v};
  out_shape = {batch, seq_q, heads, head_dim_v};
  q.resize(static_cast<size_t>(batch * seq_q * heads * head_dim));
  k.resize(static_cast<size_t>(batch * seq_k * head_dim));
  v.resize(static_cast<size_t>(batch * seq_k * head_dim_v));
  out.assign(static_cast<size_t>(batch * seq_q * heads * head_dim_v), sentinel);
  for (size_t i = 0; i < q.size(); ++i) q[i] = 0.5f * static_cast<float>(i);
  for (size_t i = 0; i < k.size(); ++i) k[i] = 1.0f + static_cast<float>(i);
  for (size_t i = 0; i < v.size(); ++i) v[i] = -2.0f * static_cast<float>(i);
  bind();
}

void CoreCall::bind() {
  auto tensor = [](std::vector<float> &data, const std::vector<int64_t> &shape) {
    return attn_tensor{data.data(), ATTN_F32, static_cast<int32_t>(shape.size()), shape.data(), nullptr};
  };
  args = {{"q", tensor(q, q_shape)},
          {"k", tensor(k, k_shape)},
          {"v", tensor(v, v_shape)},
          {"out", tensor(out, out_shape)}};
}

attn_status CoreCall::run(const attn_kernel_desc &desc) {
  attn_register_kernel(&desc);  // a no-op for a table already registered
  return attn_run(find(desc.id), args.data(), static_cast<int>(args.size()));
}

bool CoreCall::out_untouched() const {
  return std::all_of(out.begin(), out.end(), [](float x) { return x == sentinel; });
}

float CoreCall::expected(int64_t b, int64_t s, int64_t h, int64_t e) const {
  const float q_value = q[static_cast<size_t>(((b * seq_q + s) * heads + h) * head_dim + e)];
  const float v_value = v[static_cast<size_t>((b * seq_k + seq_k - 1) * head_dim_v + e)];
  const float k_value = k[static_cast<size_t>((b * seq_k + 0) * head_dim + 3)];
  return q_value + 10 * v_value + 100 * k_value;
}

const attn_kernel *find(const char *id) {
  const attn_kernel *kernel = nullptr;
  attn_find_kernel(id, &kernel);
  return kernel;
}

}  // namespace fake

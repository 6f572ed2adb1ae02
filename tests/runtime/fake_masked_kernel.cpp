// fake_masked_kernel.cpp: the broadcast and value-check kernel tables, and the masked call.
#include "fake_masked_kernel.h"

#include "HalideRuntime.h"

namespace fake {
namespace {

// The element at Halide coordinates c (innermost first) of a buffer of any dimensions <= 4.
template <class T>
T *element(const halide_buffer_t *buffer, std::initializer_list<int32_t> c) {
  int64_t offset = 0;
  int d = 0;
  for (int32_t x : c) {
    offset += static_cast<int64_t>(x - buffer->dim[d].min) * buffer->dim[d].stride;
    ++d;
  }
  return reinterpret_cast<T *>(buffer->host) + offset;
}

void record(const halide_buffer_t *buffer, BufferSeen *seen) {
  seen->runs++;
  seen->dimensions = buffer->dimensions;
  for (int d = 0; d < 4 && d < buffer->dimensions; ++d) {
    seen->extent[d] = buffer->dim[d].extent;
    seen->stride[d] = buffer->dim[d].stride;
  }
  seen->host = buffer->host;
}

int run_masked(attn_call_context *, void **buffers) {
  auto *mask = static_cast<halide_buffer_t *>(buffers[0]);
  auto *q = static_cast<halide_buffer_t *>(buffers[1]);
  auto *v = static_cast<halide_buffer_t *>(buffers[3]);
  auto *out = static_cast<halide_buffer_t *>(buffers[4]);
  record(mask, &mask_seen);
  const int32_t seq_k = v->dim[2].extent;
  for (int32_t b = 0; b < out->dim[3].extent; ++b)
    for (int32_t s = 0; s < out->dim[2].extent; ++s)
      for (int32_t h = 0; h < out->dim[1].extent; ++h)
        for (int32_t e = 0; e < out->dim[0].extent; ++e) {
          float sum = *element<float>(q, {e, h, s, b});
          for (int32_t j = 0; j < seq_k; ++j) {
            if (*element<uint8_t>(mask, {j, s, h, b}) != 0) sum += *element<float>(v, {e, 0, j, b});
          }
          *element<float>(out, {e, h, s, b}) = sum;
        }
  return 0;
}

int run_group_bias(attn_call_context *, void **buffers) {
  auto *bias = static_cast<halide_buffer_t *>(buffers[0]);
  auto *out = static_cast<halide_buffer_t *>(buffers[1]);
  record(bias, &bias_seen);
  for (int32_t e = 0; e < out->dim[0].extent; ++e) {
    float sum = 0;
    for (int32_t g = 0; g < bias->dim[1].extent; ++g) sum += *element<float>(bias, {e, g});
    *element<float>(out, {e}) = sum;
  }
  return 0;
}

int run_invalid_value(attn_call_context *context, void **) {
  attn_abi_record_error(context, requirement_message);
  return halide_error_code_requirement_failed;
}

int run_invalid_value_silent(attn_call_context *, void **) {
  return halide_error_code_requirement_failed;
}

constexpr uint32_t batch_and_heads = 0x3, heads_only = 0x2;

constexpr attn_arg_info masked_args[] = {
    {"mask", ATTN_U8, 4, 0, {0, heads, 0, 0}, {"B", "H", "Sq", "Sk"}, batch_and_heads, 2},
    {"q", ATTN_F32, 4, 0, {0, 0, heads, head_dim}, {"B", "Sq", "heads", "head_dim"}, 0, 0},
    {"k", ATTN_F32, 4, 0, {0, 0, 1, head_dim}, {"B", "Sk", nullptr, nullptr}, 0, 0},
    {"v", ATTN_F32, 4, 0, {0, 0, 1, head_dim_v}, {"B", "Sk", nullptr, nullptr}, 0, 0},
    {"out", ATTN_F32, 4, 1, {0, 0, heads, head_dim_v}, {"B", "Sq", "heads", "head_dim_v"}, 0, 0},
};

constexpr attn_arg_info masked_h_only_args[] = {
    {"mask", ATTN_U8, 4, 0, {0, heads, 0, 0}, {"B", "H", "Sq", "Sk"}, heads_only, 3},
    masked_args[1],
    masked_args[2],
    masked_args[3],
    masked_args[4],
};

constexpr attn_arg_info group_bias_args[] = {
    {"bias", ATTN_F32, 2, 0, {0, 4}, {"G", nullptr}, 0x1, 1},
    {"out", ATTN_F32, 1, 1, {4}, {nullptr}, 0, 0},
};

constexpr const char *masked_spec =
    "form=core heads=2 kv_heads=1 head_dim=4 head_dim_v=3 mask=tensor dtype=f32";

void set_no_threads(int) {}

}  // namespace

BufferSeen mask_seen, bias_seen;

const attn_kernel_desc masked = {ATTN_ABI_VERSION, "fake_masked", masked_spec,   "host", "", 5,
                                 masked_args,      run_masked,    set_no_threads};
const attn_kernel_desc masked_h_only = {
    ATTN_ABI_VERSION,   "fake_masked_h_only", masked_spec,   "host", "", 5,
    masked_h_only_args, run_masked,           set_no_threads};
const attn_kernel_desc group_bias = {ATTN_ABI_VERSION, "fake_group_bias", "form=test",   "host", "", 2,
                                     group_bias_args,  run_group_bias,    set_no_threads};
const attn_kernel_desc invalid_value = {ATTN_ABI_VERSION, "fake_invalid_value", core.spec,     "host", "", 4,
                                        core.args,        run_invalid_value,    set_no_threads};
const attn_kernel_desc invalid_value_silent = {
    ATTN_ABI_VERSION, "fake_invalid_value_silent", core.spec,     "host", "", 4,
    core.args,        run_invalid_value_silent,    set_no_threads};

MaskedCall::MaskedCall(std::vector<int64_t> shape) : mask_shape(std::move(shape)) {
  int64_t count = 1;
  for (int64_t size : mask_shape) count *= size;
  mask.resize(static_cast<size_t>(count > 0 ? count : 1));  // never null, even for a size-0 shape
  for (size_t i = 0; i < mask.size(); ++i) mask[i] = (i * 7 + 3) % 3 != 0 ? 1 : 0;
}

attn_status MaskedCall::run(const attn_kernel_desc &desc) {
  attn_register_kernel(&desc);
  args = {
      {"mask", {mask.data(), ATTN_U8, static_cast<int32_t>(mask_shape.size()), mask_shape.data(), nullptr}}};
  args.insert(args.end(), core.args.begin(), core.args.end());
  return attn_run(find(desc.id), args.data(), static_cast<int>(args.size()));
}

float MaskedCall::expected(const std::vector<int> &declared, int64_t b, int64_t s, int64_t h,
                           int64_t e) const {
  const int64_t coords[4] = {b, h, s, 0};  // declared order; the key index is filled in below
  float sum = core.q[static_cast<size_t>(((b * core.seq_q + s) * heads + h) * head_dim + e)];
  for (int64_t j = 0; j < core.seq_k; ++j) {
    int64_t offset = 0;
    for (size_t c = 0; c < declared.size(); ++c) {
      const int64_t coord = declared[c] == 3 ? j : coords[declared[c]];
      offset = offset * mask_shape[c] + (mask_shape[c] == 1 ? 0 : coord);
    }
    if (mask[static_cast<size_t>(offset)] != 0) {
      sum += core.v[static_cast<size_t>((b * core.seq_k + j) * head_dim_v + e)];
    }
  }
  return sum;
}

}  // namespace fake

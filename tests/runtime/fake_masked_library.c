/* fake_masked_library.c: a stand-in for a generated library whose kernel takes a broadcast mask,
 * an i32 input whose values it checks, and two outputs; for the attn-run tests.
 * Its kernel "fake_lib_masked": q [B, Sq, 2, 4], k [B, Sk, 1, 4], v [B, Sk, 1, 3], key_lengths i32 [B],
 * mask u8 [B, H = 2, Sq, Sk] (B and H broadcast, min rank 2) -> out [B, Sq, 2, 3], lse [B, Sq, 2]:
 *   kept(b, h, s, j) = j < key_lengths[b] and mask[b, h, s, j] != 0
 *   out[b, s, h, e]  = q[b, s, h, e] + sum over kept j of v[b, j, 0, e]
 *   lse[b, s, h]     = the number of kept j
 * A key length above Sk fails as a generated kernel's require() does, before any output is written.
 * Its kernel "fake_lib_scaled": x [4], scale [] (optional, default 0.5) -> out [4] = x * scale. */
#include "HalideRuntime.h"
#include "attn/kernel_abi.h"

/* The element at Halide coordinates c (innermost first), of size bytes. */
static void *element(const halide_buffer_t *buffer, int dims, const int32_t *c, int size) {
  int64_t offset = 0;
  for (int d = 0; d < dims; ++d) offset += (int64_t)(c[d] - buffer->dim[d].min) * buffer->dim[d].stride;
  return buffer->host + offset * size;
}

static int run(attn_call_context *context, void **buffers) {
  const halide_buffer_t *q = (const halide_buffer_t *)buffers[0];
  const halide_buffer_t *v = (const halide_buffer_t *)buffers[2];
  const halide_buffer_t *key_lengths = (const halide_buffer_t *)buffers[3];
  const halide_buffer_t *mask = (const halide_buffer_t *)buffers[4];
  const halide_buffer_t *out = (const halide_buffer_t *)buffers[5];
  const halide_buffer_t *lse = (const halide_buffer_t *)buffers[6];
  const int32_t seq_k = v->dim[2].extent;
  for (int32_t b = 0; b < out->dim[3].extent; ++b) {
    if (*(const int32_t *)element(key_lengths, 1, &b, 4) > seq_k) {
      attn_abi_record_error(context,
                            "Requirement Failed: (key_lengths(b) <= Sk) key_lengths must be at most Sk");
      return halide_error_code_requirement_failed;
    }
  }
  for (int32_t b = 0; b < out->dim[3].extent; ++b)
    for (int32_t s = 0; s < out->dim[2].extent; ++s)
      for (int32_t h = 0; h < out->dim[1].extent; ++h) {
        const int32_t length = *(const int32_t *)element(key_lengths, 1, &b, 4);
        float kept = 0;
        for (int32_t e = 0; e < out->dim[0].extent; ++e) {
          const int32_t at[4] = {e, h, s, b};
          float sum = *(const float *)element(q, 4, at, 4);
          kept = 0;
          for (int32_t j = 0; j < length; ++j) {
            const int32_t at_mask[4] = {j, s, h, b}, at_v[4] = {e, 0, j, b};
            if (*(const uint8_t *)element(mask, 4, at_mask, 1) == 0) continue;
            sum += *(const float *)element(v, 4, at_v, 4);
            kept += 1;
          }
          *(float *)element(out, 4, at, 4) = sum;
        }
        const int32_t at_lse[3] = {h, s, b};
        *(float *)element(lse, 3, at_lse, 4) = kept;
      }
  return 0;
}

static const attn_arg_info args[7] = {
    {"q", ATTN_F32, 4, 0, {0, 0, 2, 4}, {"B", "Sq", 0, 0}, 0, 0},
    {"k", ATTN_F32, 4, 0, {0, 0, 1, 4}, {"B", "Sk", 0, 0}, 0, 0},
    {"v", ATTN_F32, 4, 0, {0, 0, 1, 3}, {"B", "Sk", 0, 0}, 0, 0},
    {"key_lengths", ATTN_I32, 1, 0, {0}, {"B"}, 0, 0},
    {"mask", ATTN_U8, 4, 0, {0, 2, 0, 0}, {"B", 0, "Sq", "Sk"}, 0x3u, 2},
    {"out", ATTN_F32, 4, 1, {0, 0, 2, 3}, {"B", "Sq", 0, 0}, 0, 0},
    {"lse", ATTN_F32, 3, 1, {0, 0, 2}, {"B", "Sq", 0}, 0, 0},
};

static const attn_kernel_desc masked = {
    ATTN_ABI_VERSION,
    "fake_lib_masked",
    "form=core heads=2 kv_heads=1 head_dim=4 head_dim_v=3 mask=padding&tensor lse=true dtype=f32",
    "x86-64-linux",
    "",
    7,
    args,
    run,
    0,
};

static int run_scaled(attn_call_context *context, void **buffers) {
  const halide_buffer_t *x = (const halide_buffer_t *)buffers[0];
  const halide_buffer_t *scale = (const halide_buffer_t *)buffers[1];
  const halide_buffer_t *out = (const halide_buffer_t *)buffers[2];
  (void)context;
  for (int32_t e = 0; e < 4; ++e) {
    *(float *)element(out, 1, &e, 4) = *(const float *)element(x, 1, &e, 4) * *(const float *)scale->host;
  }
  return 0;
}

static const attn_arg_info scaled_args[3] = {
    {"x", ATTN_F32, 1, 0, {4}, {0}, 0, 0, 0, 0.0},
    {"scale", ATTN_F32, 0, 0, {0}, {0}, 0, 0, 1, 0.5},
    {"out", ATTN_F32, 1, 1, {4}, {0}, 0, 0, 0, 0.0},
};

static const attn_kernel_desc scaled = {
    ATTN_ABI_VERSION,
    "fake_lib_scaled",
    "form=test runtime_scale=true",
    "x86-64-linux",
    "",
    3,
    scaled_args,
    run_scaled,
    0,
};

__attribute__((visibility("default"))) const attn_kernel_desc *const *attn_library_table_v1(
    int *count, int *abi_version) {
  static const attn_kernel_desc *const table[2] = {&masked, &scaled};
  *count = 2;
  *abi_version = ATTN_ABI_VERSION;
  return table;
}

/* fake_library.c: a stand-in for `attnc gen --shared` output, built in variants for the loader tests.
 *   FAKE_TABLE_ABI     the abi version the table reports (default ATTN_ABI_VERSION)
 *   FAKE_DESC_ABI      the abi version of its kernel (default ATTN_ABI_VERSION)
 *   FAKE_CPU_FEATURES  the kernel's required_cpu_features (default "")
 *   FAKE_NO_TABLE      define to leave out attn_library_table_v1
 * Its kernel "fake_lib_core": q [B, Sq, 2, 4], k [B, Sk, 1, 4], v [B, Sk, 1, 3] -> out [B, Sq, 2, 3],
 *   out[b, s, h, e] = q[b, s, h, e] + v[b, Sk - 1, 0, e].
 * Like a generated kernel it keeps a scratch block per call until release_memory frees them
 * (fake_library_held_blocks() counts them), so tests can see whether closing the library
 * releases what its kernels hold. */
#include <stdlib.h>

#include "HalideRuntime.h"
#include "attn/kernel_abi.h"

#ifndef FAKE_TABLE_ABI
#define FAKE_TABLE_ABI ATTN_ABI_VERSION
#endif
#ifndef FAKE_DESC_ABI
#define FAKE_DESC_ABI ATTN_ABI_VERSION
#endif
#ifndef FAKE_CPU_FEATURES
#define FAKE_CPU_FEATURES ""
#endif

/* The float at Halide coordinates c (innermost first). */
static float *element(const halide_buffer_t *buffer, const int32_t c[4]) {
  int64_t offset = 0;
  for (int d = 0; d < 4; ++d) offset += (int64_t)(c[d] - buffer->dim[d].min) * buffer->dim[d].stride;
  return (float *)buffer->host + offset;
}

/* The stand-in for a workspace cache: blocks kept between calls, under a spin lock. */
#define FAKE_HELD_SLOTS 256
static void *held[FAKE_HELD_SLOTS];
static int held_count;
static int held_lock;

static void lock_held(void) {
  while (__atomic_exchange_n(&held_lock, 1, __ATOMIC_ACQUIRE)) {
  }
}

static void unlock_held(void) {
  __atomic_store_n(&held_lock, 0, __ATOMIC_RELEASE);
}

static void keep_scratch_block(void) {
  void *block = malloc(4096);
  lock_held();
  if (block != 0 && held_count < FAKE_HELD_SLOTS) {
    held[held_count++] = block;
    block = 0;
  }
  unlock_held();
  free(block);
}

static void release_memory(void) {
  lock_held();
  for (int i = 0; i < held_count; ++i) free(held[i]);
  held_count = 0;
  unlock_held();
}

__attribute__((visibility("default"))) int fake_library_held_blocks(void) {
  lock_held();
  const int count = held_count;
  unlock_held();
  return count;
}

static int run(attn_call_context *context, void **buffers) {
  const halide_buffer_t *q = (const halide_buffer_t *)buffers[0];
  const halide_buffer_t *v = (const halide_buffer_t *)buffers[2];
  const halide_buffer_t *out = (const halide_buffer_t *)buffers[3];
  if (out->dimensions != 4) {
    attn_abi_record_error(context, "fake_lib_core: out is not 4-d");
    return -1;
  }
  keep_scratch_block();
  const int32_t last_key = v->dim[2].extent - 1;
  for (int32_t b = 0; b < out->dim[3].extent; ++b)
    for (int32_t s = 0; s < out->dim[2].extent; ++s)
      for (int32_t h = 0; h < out->dim[1].extent; ++h)
        for (int32_t e = 0; e < out->dim[0].extent; ++e) {
          const int32_t at[4] = {e, h, s, b}, at_v[4] = {e, 0, last_key, b};
          *element(out, at) = *element(q, at) + *element(v, at_v);
        }
  return 0;
}

static const attn_arg_info args[4] = {
    {"q", ATTN_F32, 4, 0, {0, 0, 2, 4}, {"B", "Sq", 0, 0}},
    {"k", ATTN_F32, 4, 0, {0, 0, 1, 4}, {"B", "Sk", 0, 0}},
    {"v", ATTN_F32, 4, 0, {0, 0, 1, 3}, {"B", "Sk", 0, 0}},
    {"out", ATTN_F32, 4, 1, {0, 0, 2, 3}, {"B", "Sq", 0, 0}},
};

static const attn_kernel_desc core = {
    FAKE_DESC_ABI,
    "fake_lib_core",
    "form=core heads=2 kv_heads=1 head_dim=4 head_dim_v=3 mask=causal dtype=f32",
    "x86-64-linux",
    FAKE_CPU_FEATURES,
    4,
    args,
    run,
    0,
    0,
    0,
    0,
    release_memory,
};

#ifndef FAKE_NO_TABLE
__attribute__((visibility("default"))) const attn_kernel_desc *const *attn_library_table_v1(
    int *count, int *abi_version) {
  static const attn_kernel_desc *const table[1] = {&core};
  *count = 1;
  *abi_version = FAKE_TABLE_ABI;
  return table;
}
#else
__attribute__((visibility("default"))) int fake_library_without_table(void) {
  return (int)sizeof(core);
}
#endif

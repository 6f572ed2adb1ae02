/* attn/kernel_views.h: views into the halide_buffer_t tensors of a call (one sequence's rows, one
 * page's slots) that generated entries hand to a kernel's per-sequence pipelines (KV cache,
 * varlen). Header-only C for generated code; applications never need it. */
#ifndef ATTN_KERNEL_VIEWS_H
#define ATTN_KERNEL_VIEWS_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "attn/kernel_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The Halide runtime ABI's halide_dimension_t and halide_buffer_t, field for field. */
typedef struct attn_view_dim {
  int32_t min, extent, stride;
  uint32_t flags;
} attn_view_dim;
typedef struct attn_view_buffer {
  uint64_t device;
  const void *device_interface;
  uint8_t *host;
  uint64_t flags;
  uint8_t type_code, type_bits;
  uint16_t type_lanes;
  int32_t dimensions;
  attn_view_dim *dim;
  void *padding;
} attn_view_buffer;

/* A buffer with room for its own dims; &view->buffer is what a pipeline takes. */
#define ATTN_VIEW_MAX_RANK 4
typedef struct attn_view {
  attn_view_buffer buffer;
  attn_view_dim dims[ATTN_VIEW_MAX_RANK];
} attn_view;

/* halide_error_code_requirement_failed: attn_run reports it as ATTN_ERR_INVALID_VALUE. */
#define ATTN_VIEW_INVALID_VALUE (-27)

static inline const attn_view_buffer *attn_view_of(const void *buffer) {
  return (const attn_view_buffer *)buffer;
}

static inline int32_t attn_view_extent(const void *buffer, int dim) {
  return attn_view_of(buffer)->dim[dim].extent;
}

/* Element i of an int32 tensor of rank 1, or element (row, i) of one of rank 2 (Halide dim 0 is
 * the innermost). */
static inline int32_t attn_view_i32(const void *buffer, int32_t row, int32_t i) {
  const attn_view_buffer *b = attn_view_of(buffer);
  int64_t offset = (int64_t)i * b->dim[0].stride;
  if (b->dimensions > 1) offset += (int64_t)row * b->dim[1].stride;
  return ((const int32_t *)b->host)[offset];
}

/* A host f32 scalar's value (an fp8_e4m3 cache's k_scale / v_scale). */
static inline float attn_view_f32_scalar(const void *buffer) {
  return ((const float *)attn_view_of(buffer)->host)[0];
}

/* A copy of `buffer` (rank <= ATTN_VIEW_MAX_RANK) whose dims live in the view. */
static inline void attn_view_copy(attn_view *view, const void *buffer) {
  const attn_view_buffer *b = attn_view_of(buffer);
  view->buffer = *b;
  for (int d = 0; d < b->dimensions && d < ATTN_VIEW_MAX_RANK; ++d) view->dims[d] = b->dim[d];
  view->buffer.dim = view->dims;
}

/* Keeps elements [first, first + extent) of Halide dim `dim` and numbers them from new_min: host
 * points at the view's element at its mins, as halide_buffer_t requires. */
static inline void attn_view_crop(attn_view *view, int dim, int32_t first, int32_t extent, int32_t new_min) {
  attn_view_dim *d = &view->dims[dim];
  const int64_t bytes = (view->buffer.type_bits + 7) / 8;
  view->buffer.host += ((int64_t)first - d->min) * d->stride * bytes;
  d->min = new_min;
  d->extent = extent;
}

/* One sequence's rows of a packed (varlen) tensor [total, ...] as a batch of one, [1, count, ...]:
 * rows [first, first + count) numbered from 0, then an outer dim of extent 1. */
static inline void attn_view_rows(attn_view *view, const void *buffer, int32_t first, int32_t count) {
  attn_view_copy(view, buffer);
  const int outer = view->buffer.dimensions - 1;
  attn_view_crop(view, outer, first, count, 0);
  view->dims[outer + 1].min = 0;
  view->dims[outer + 1].extent = 1;
  view->dims[outer + 1].stride = view->dims[outer].stride * (count > 0 ? count : 1);
  view->dims[outer + 1].flags = 0;
  view->buffer.dimensions = outer + 2;
}

/* Element (batch b) of a dense tensor: its outermost dim cropped to [b, b + 1), numbered 0. */
static inline void attn_view_batch(attn_view *view, const void *buffer, int32_t b) {
  attn_view_copy(view, buffer);
  attn_view_crop(view, view->buffer.dimensions - 1, b, 1, 0);
}

/* Records why a call is refused (before anything is written) and returns the status attn_run
 * reports as ATTN_ERR_INVALID_VALUE. */
static inline int attn_view_refuse(attn_call_context *context, const char *format, ...) {
  char message[512];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof message, format, args);
  va_end(args);
  attn_abi_record_error(context, message);
  return ATTN_VIEW_INVALID_VALUE;
}

/* Fills rows [first, first + count) of out [total, H, Dv] with zeros and of lse [total, H] (may
 * be null) with -inf: a sequence with queries but no keys, like any fully masked row. */
static inline void attn_view_no_keys(void *out, void *lse, int32_t first, int32_t count) {
  attn_view o;
  attn_view_copy(&o, out);
  const int64_t bytes = (o.buffer.type_bits + 7) / 8;
  for (int32_t i = first; i < first + count; ++i)
    for (int32_t h = 0; h < o.dims[1].extent; ++h)
      memset(o.buffer.host + ((int64_t)i * o.dims[2].stride + (int64_t)h * o.dims[1].stride) * bytes, 0,
             (size_t)(o.dims[0].extent * bytes));
  if (lse == 0) return;
  const attn_view_buffer *l = attn_view_of(lse);
  for (int32_t i = first; i < first + count; ++i)
    for (int32_t h = 0; h < l->dim[0].extent; ++h)
      ((float *)l->host)[(int64_t)i * l->dim[1].stride + (int64_t)h * l->dim[0].stride] = -__builtin_inff();
}

#ifdef __cplusplus
}
#endif

#endif /* ATTN_KERNEL_VIEWS_H */

/* attn/kernel_abi.h: the table a generated kernel entry hands the runtime. Used by code that
 * attnc generates and by the runtime; applications never need it. */
#ifndef ATTN_KERNEL_ABI_H
#define ATTN_KERNEL_ABI_H

#include <stdint.h>
#include <string.h>

#include "attn/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Passed to the kernel as its Halide user_context; the entry's error handler fills it.
 * The GPU fields are what attn_set_cuda_context / attn_set_opencl_context gave (or the runtime's
 * defaults, see runtime.h); the entry's Halide context hooks hand them to Halide's GPU runtime
 * (NULL: Halide's own CUDA context). Device tensors reach the entry as buffers with host NULL,
 * device the caller's handle (CUdeviceptr or cl_mem) and device_interface NULL: the entry wraps
 * them for its variant's API before the pipeline runs and detaches them after. */
typedef struct attn_call_context {
  int32_t has_error;
  char message[1024];
  void *cuda_context;   /* CUcontext */
  void *cuda_stream;    /* CUstream */
  void *opencl_context; /* cl_context */
  void *opencl_queue;   /* cl_command_queue */
} attn_call_context;

/* One compiled variant of a kernel: its Halide target and the CPU features it needs. */
typedef struct attn_kernel_variant {
  const char *target;                /* a Halide target string */
  const char *required_cpu_features; /* x86 names, comma separated; "" for none */
} attn_kernel_variant;

typedef struct attn_kernel_desc {
  int32_t abi_version; /* ATTN_ABI_VERSION when generated */
  const char *id;
  const char *spec;   /* text form */
  const char *target; /* Halide targets, comma separated, most capable first */
  /* CPU features (x86 names as in __builtin_cpu_supports, comma separated) that the least
   * capable variant needs; "" for none. The runtime refuses kernels this CPU cannot run. */
  const char *required_cpu_features;
  int32_t arg_count;
  const attn_arg_info *args; /* in call order */
  /* buffers[i] is a halide_buffer_t* for args[i]; returns the Halide status (0 on success).
   * With variants, runs the least capable one; the runtime calls run_variant instead. */
  int (*run)(attn_call_context *context, void **buffers);
  void (*set_num_threads)(int threads);
  /* The variants, most capable first; 0 and null for a kernel with only run. The runtime picks
   * the first this CPU has the features for and attn_set_max_isa allows, and runs it by index. */
  int32_t variant_count;
  const attn_kernel_variant *variants;
  int (*run_variant)(attn_call_context *context, void **buffers, int32_t variant);
  /* Frees the scratch blocks the kernel's cache keeps between calls (attn/workspace_cache.h);
   * null where it keeps none. The runtime also calls it when it closes a shared library, whose
   * cache would otherwise be out of reach once unloaded. */
  void (*release_memory)(void);
} attn_kernel_desc;

/* Static applications: each generated entry registers itself at load time. */
void attn_register_kernel(const attn_kernel_desc *desc);

/* Shared libraries export this symbol: their kernels and the ABI version they were built for. */
typedef const attn_kernel_desc *const *(*attn_library_table_fn)(int *count, int *abi_version);
#define ATTN_LIBRARY_TABLE_SYMBOL "attn_library_table_v1"

/* The error handler every generated entry installs in its Halide runtime. */
static inline void attn_abi_record_error(void *user_context, const char *message) {
  attn_call_context *context = (attn_call_context *)user_context;
  if (context == 0 || message == 0) return;
  context->has_error = 1;
  strncpy(context->message, message, sizeof(context->message) - 1);
  context->message[sizeof(context->message) - 1] = '\0';
}

#ifdef __cplusplus
}
#endif

#endif /* ATTN_KERNEL_ABI_H */

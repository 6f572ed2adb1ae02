/* attn/runtime.h: the attnc runtime C ABI: find kernels, describe them, run them on tensors. */
#ifndef ATTN_RUNTIME_H
#define ATTN_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 5: attn_arg_info gained is_optional and default_value (optional scalar inputs: a run-time
 *    scale).
 * 6: attn_tensor gained memory (device tensors: a CUDA device pointer or an OpenCL buffer) and
 *    the kernels' call context the application's GPU context and stream. Libraries and kernels of
 *    an earlier version are refused (ATTN_ERR_ABI_MISMATCH): regenerate them. */
#define ATTN_ABI_VERSION 6

/* Every call returns one of these; attn_last_error() holds the message of the last failure on
 * the calling thread. */
typedef enum attn_status {
  ATTN_OK = 0,
  ATTN_ERR_INVALID_ARGUMENT = 1,   /* a null handle or pointer, or an unusable option */
  ATTN_ERR_UNKNOWN_KERNEL = 2,     /* no kernel with that id */
  ATTN_ERR_MISSING_TENSOR = 3,     /* a tensor the kernel needs was not given */
  ATTN_ERR_UNKNOWN_TENSOR = 4,     /* a tensor name the kernel does not take, or given twice */
  ATTN_ERR_NULL_DATA = 5,          /* a tensor with a null data pointer */
  ATTN_ERR_DTYPE = 6,              /* a tensor of the wrong element type */
  ATTN_ERR_RANK = 7,               /* a tensor of the wrong rank */
  ATTN_ERR_SHAPE = 8,              /* a dimension of the wrong size, or sizes that disagree */
  ATTN_ERR_STRIDE = 9,             /* innermost stride not 1, negative, overlapping output, too large */
  ATTN_ERR_KERNEL_FAILED = 10,     /* the kernel itself reported an error */
  ATTN_ERR_LOAD = 11,              /* a library could not be opened or has no attnc table */
  ATTN_ERR_ABI_MISMATCH = 12,      /* a library built for another attnc ABI version */
  ATTN_ERR_UNSUPPORTED_CPU = 13,   /* the kernel needs CPU features this machine lacks */
  ATTN_ERR_MANIFEST_MISMATCH = 14, /* a library whose manifest does not match its kernels */
  ATTN_ERR_INVALID_VALUE = 15,     /* a tensor value out of its range (key_lengths > Sk, ...) */
  ATTN_ERR_LIBRARY_INTEGRITY = 16, /* a library file that is truncated, has no manifest, or is not
                                      the file its manifest's SHA-256 names */
  ATTN_ERR_NO_DEVICE = 17,         /* a GPU kernel with no usable driver or device here (the message
                                      says what is missing), or a forced device the kernel lacks */
  ATTN_ERR_DEVICE_TENSOR = 18,     /* a device tensor the call cannot take: no variant for its memory,
                                      tensors of two GPU APIs, a pointer outside any allocation of the
                                      context in use, an allocation smaller than the tensor, ... */
  ATTN_ERR_ALIASED = 19            /* an output or in-out tensor whose memory overlaps another tensor
                                      of the call (out given as q, k_cache as v_cache, ...) */
} attn_status;

/* ATTN_I8: int8 KV cache codes (kv_dtype=int8); fp8_e4m3 caches are ATTN_U8 bytes. */
/* ATTN_U64: dropout's seed and offset (issue 33). */
typedef enum attn_dtype {
  ATTN_F32 = 1,
  ATTN_F16 = 2,
  ATTN_BF16 = 3,
  ATTN_I32 = 4,
  ATTN_U8 = 5,
  ATTN_I8 = 6,
  ATTN_U64 = 7
} attn_dtype;

#define ATTN_MAX_RANK 8

/* Where a tensor's data lives. */
typedef enum attn_memory {
  ATTN_HOST = 0,         /* data is a host pointer */
  ATTN_CUDA_DEVICE = 1,  /* data is a CUdeviceptr (cast to void *) of the CUDA context in use */
  ATTN_OPENCL_BUFFER = 2 /* data is a cl_mem of the OpenCL context in use; the tensor starts at
                            its offset 0 */
} attn_memory;

/* A tensor as the caller holds it: shape and strides outermost first, strides in elements.
 * strides may be NULL for a row-major contiguous tensor. memory (ATTN_HOST when left zero) says
 * where data points: a device tensor goes to the kernel's GPU variant without a copy (see
 * attn_run). */
typedef struct attn_tensor {
  void *data;
  attn_dtype dtype;
  int32_t rank;
  const int64_t *shape;
  const int64_t *strides;
  attn_memory memory;
} attn_tensor;

/* A tensor passed to a kernel by its argument name ("q", "k", "v", "out", "x", "w_qkv", ...). */
typedef struct attn_arg {
  const char *name;
  attn_tensor tensor;
} attn_arg;

/* One argument as a kernel declares it. A dim is either a fixed size (> 0) or a runtime size
 * named by dim_names[i] ("B", "Sq", "Sk", "S"); equal names must get equal sizes.
 * Broadcasting (the mask and score_bias tensors): a dim whose bit i is set in broadcast_dims
 * (i counts the declared dims, outermost = bit 0) may also be given with size 1. The kernel then
 * sees the dim at its full size (the fixed size, else the size the other tensors give that
 * name; 1 when only broadcast dims name it) with stride 0. A dim given as 1 where it broadcasts
 * sets no runtime size; given in full it must match the others.
 * A caller may also give fewer dims than rank, down to min_rank. Shapes align from the right, as
 * NumPy and PyTorch broadcast them: the dims left out are the outermost ones, each must be a
 * broadcast dim, and a dim left out broadcasts as if given with size 1. So for mask
 * [B, H, Sq, Sk] with B and H broadcast (0x3) and min_rank 2, rank 4 is [B, H, Sq, Sk], rank 3
 * is [H, Sq, Sk] (B left out) and rank 2 is [Sq, Sk] (B, then H left out); a per-batch mask is
 * [B, 1, Sq, Sk]. Any other rank, or one that would leave out a dim that does not broadcast, is
 * ATTN_ERR_RANK. Outputs never broadcast.
 * Optional inputs (is_optional, such as "scale" with runtime_scale=true) are rank 0, f32: a caller
 * gives them with rank 0 (shape and strides may be NULL) or as one element, rank 1 shape [1], or
 * leaves them out of the argument list, and the kernel then reads default_value. */
#define ATTN_ARG_INOUT 2 /* is_output of an in-out tensor (k_cache, v_cache) */
typedef struct attn_arg_info {
  const char *name;
  attn_dtype dtype;
  int32_t rank;
  /* 0: an input; 1: an output (written, never read); ATTN_ARG_INOUT (2): given by the caller,
   * read and written in place by the kernel (a KV cache). Outputs and in-outs are checked for
   * self-overlap; neither broadcasts. */
  int32_t is_output;
  int64_t fixed_shape[ATTN_MAX_RANK]; /* 0 where the size is a runtime value */
  const char *dim_names[ATTN_MAX_RANK];
  uint32_t broadcast_dims; /* 0: every dim must have its full size */
  int32_t min_rank;        /* 0: exactly rank dims */
  int32_t is_optional;     /* 1: the caller may leave it out (rank 0 f32 inputs only) */
  double default_value;    /* what the kernel reads for an optional input left out */
} attn_arg_info;

typedef struct attn_kernel attn_kernel;   /* opaque; owned by the registry or a library */
typedef struct attn_library attn_library; /* opaque; a shared kernel library opened by path */

/* The message of the last failed call on this thread ("" when none). */
const char *attn_last_error(void);
const char *attn_status_name(attn_status status);
/* A dtype's short name: "f32", "f16", "bf16", "i32", "u8", "i8" ("dtype N" outside the enum). */
const char *attn_dtype_name(attn_dtype dtype);
int attn_runtime_abi_version(void);

/* Kernels linked into the application (attn_add_kernels in CMake). */
attn_status attn_find_kernel(const char *id, const attn_kernel **out);
int attn_kernel_count(void);
const attn_kernel *attn_kernel_at(int index);

/* A shared kernel library (attnc gen --shared). Before any of its code runs, the file must be a
 * complete ELF file whose SHA-256 is the one its manifest (the .json attnc wrote beside it)
 * records, else ATTN_ERR_LIBRARY_INTEGRITY; the file checked is the file loaded. Then its ABI
 * version, the CPU and every field of the manifest (ABI version, kernels, args, CPU features,
 * variants) are checked against what the library exports before any kernel is handed out.
 * attn_library_open_unverified skips the hash and needs no manifest (one present is still
 * checked, all but its hash): for libraries the caller built or checked itself. Closing a
 * library frees the scratch blocks its kernels keep (attn_kernel_release_memory) and unloads it;
 * its kernel handles are then invalid. */
attn_status attn_library_open(const char *path, attn_library **out);
attn_status attn_library_open_unverified(const char *path, attn_library **out);
void attn_library_close(attn_library *library);
attn_status attn_library_find_kernel(const attn_library *library, const char *id, const attn_kernel **out);
int attn_library_kernel_count(const attn_library *library);
const attn_kernel *attn_library_kernel_at(const attn_library *library, int index);

/* What a kernel is. Strings live as long as the kernel. */
const char *attn_kernel_id(const attn_kernel *kernel);
const char *attn_kernel_spec(const attn_kernel *kernel);   /* the spec's text form */
const char *attn_kernel_target(const attn_kernel *kernel); /* Halide targets, comma separated */
int attn_kernel_arg_count(const attn_kernel *kernel);
attn_status attn_kernel_arg(const attn_kernel *kernel, int index, attn_arg_info *out);

/* Threads the kernel's pool uses (0: one per core), 0 to ATTN_MAX_THREADS: Halide's pool holds at
 * most that many (more used to be clamped to it silently, starting 256 threads on a 2-core
 * machine); a negative count or one above it is ATTN_ERR_INVALID_ARGUMENT and changes nothing.
 * Applies to every kernel sharing the pool. */
#define ATTN_MAX_THREADS 256
attn_status attn_kernel_set_threads(const attn_kernel *kernel, int threads);

/* Kernels keep their large scratch blocks (64 KiB and up, such as a head's packed keys and
 * values) between calls, so that later calls do not fault fresh pages in: at most 64 MiB in one
 * cache for all statically linked kernel libraries of a program, and one per shared library.
 * This frees the blocks held by the kernel's cache now; calls in flight keep theirs. Later calls
 * allocate and hold again. */
attn_status attn_kernel_release_memory(const attn_kernel *kernel);

/* The most capable instruction set kernels may use, for every kernel in the process: "avx512"
 * (no limit), "avx2", "avx", "sse41" or "x86-64" on x86; "armv8.2" (no limit: dot product and
 * fp16) or "neon" (baseline) on AArch64; NULL or "" removes the limit. Without a call,
 * the environment variable ATTN_MAX_ISA gives it. Each run picks the first variant (most capable
 * first) that this CPU has the features for and the limit allows; a limit that leaves no variant
 * makes attn_run fail with ATTN_ERR_UNSUPPORTED_CPU. An unknown name is
 * ATTN_ERR_INVALID_ARGUMENT and leaves the limit as it was. */
attn_status attn_set_max_isa(const char *isa);
/* The limit in force ("" for none), or NULL when ATTN_MAX_ISA holds an unknown name. */
const char *attn_max_isa(void);
/* The device kernels run on, for every kernel in the process: "cuda", "opencl", "cpu" or "auto"
 * (NULL or "": auto). Without a call, the environment variable ATTN_DEVICE gives it. Under auto a
 * kernel with a GPU variant (TARGETS host cuda) runs it where that GPU's driver and a device are
 * there, and its CPU variants otherwise; a GPU-only kernel without its device fails with
 * ATTN_ERR_NO_DEVICE, whose message says what is missing. Forced, a kernel without a variant for
 * that device, or whose device is missing, fails with ATTN_ERR_NO_DEVICE. Tensors stay on the
 * host either way: a GPU variant copies them to the device and the outputs back before attn_run
 * returns. An unknown name is ATTN_ERR_INVALID_ARGUMENT and leaves the choice as it was. */
attn_status attn_set_device(const char *device);
/* The Halide target of the variant attn_run would run now ("" when none can run here). */
const char *attn_kernel_selected_target(const attn_kernel *kernel);

/* The application's own GPU context for every later call of a GPU variant, process-wide, so that
 * attnc kernels work inside a program that already drives the GPU (PyTorch, TensorRT, ...).
 * CUDA: a CUcontext and a CUstream (NULL: the legacy default stream), both cast to void *; the
 * kernels run on that stream and attn_run returns once their work is queued there, after the
 * copies back of host outputs. OpenCL: a cl_context and a cl_command_queue of it; the kernels
 * queue their work there in order. The runtime does not retain or release them: they must stay
 * valid while kernels run. context NULL goes back to the default: for OpenCL a context and queue
 * the runtime creates once (the first platform, or the one whose name contains
 * HL_OCL_PLATFORM_NAME; the device with the most compute units of the type HL_OCL_DEVICE_TYPE
 * names, any type when unset); for CUDA, calls with CUDA device tensors use the calling thread's
 * current context, else device 0's primary context (the one the CUDA runtime API uses), and
 * calls without them Halide's own context. An OpenCL context without its queue (or a queue of
 * another context) is ATTN_ERR_INVALID_ARGUMENT. OpenCL keeps one context per process: Halide's
 * OpenCL runtime builds each kernel's program in the context of its first call, so once OpenCL
 * kernels ran, setting another context (or NULL, when the first was the application's) is
 * ATTN_ERR_INVALID_ARGUMENT; set the application's before the first OpenCL call. */
attn_status attn_set_cuda_context(void *cu_context, void *cu_stream);
attn_status attn_set_opencl_context(void *cl_context, void *cl_queue);

/* Runs the kernel. Every argument is checked first; on any error the outputs are untouched.
 * Device tensors (attn_tensor.memory): all of one GPU API, and the kernel must have a variant for
 * it that can run here (under ATTN_DEVICE=auto it is chosen; a forced device of another kind, or
 * a kernel without such a variant, is ATTN_ERR_DEVICE_TENSOR; its driver or device missing,
 * ATTN_ERR_NO_DEVICE). Each device tensor must lie inside one allocation (CUDA) or buffer
 * (OpenCL) of the context in use that holds all its elements, else ATTN_ERR_DEVICE_TENSOR. Host
 * and device tensors mix freely: host ones are copied over and back. Device outputs are written
 * in place and stay on the device; with an application stream or queue the call may return
 * before they are complete (synchronize on it). Device index and mask tensors (i32, u8 inputs:
 * their values bound the key loops on the host) are read back to the host first, on the call's
 * stream or queue, and the call waits for that copy. Kernels that read tensor values on the host
 * (kv_cache and layout=varlen kernels, which dispatch per sequence) take host tensors only. */
attn_status attn_run(const attn_kernel *kernel, const attn_arg *args, int arg_count);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_RUNTIME_H */

// The entry source's GPU part: device tensors wrapped for a variant's API, outputs copied back,
// device copies freed, and the Halide context hooks that hand kernels the application's context.
#include "attnc/emit_device.h"

namespace attnc {
namespace {

bool target_has(const std::string &target, const char *feature) {
  const std::string token = std::string("-") + feature;
  for (size_t at = target.find(token); at != std::string::npos; at = target.find(token, at + 1)) {
    const size_t end = at + token.size();
    if (end == target.size() || target[end] == '-') return true;
  }
  return false;
}

bool library_has(const std::vector<KernelRecord> &kernels, const char *feature) {
  for (const KernelRecord &k : kernels)
    for (const std::string &t : k.targets)
      if (target_has(t, feature)) return true;
  return false;
}

void write_copies(std::ostringstream &o) {
  o << "extern int halide_copy_to_host(void *, struct halide_buffer_t *);\n"
    << "extern int halide_device_free(void *, struct halide_buffer_t *);\n"
    << "extern int halide_device_wrap_native(void *, struct halide_buffer_t *, uint64_t, const void *);\n"
    << "extern int halide_device_detach_native(void *, struct halide_buffer_t *);\n"
    << "extern int halide_reuse_device_allocations(void *, _Bool);\n\n"
    << "/* Before a GPU variant: each device tensor (host NULL, the caller's handle in device, no\n"
    << " * interface yet: attn/kernel_abi.h) wrapped for the variant's device interface. */\n"
    << "static int attn_device_wrap(attn_call_context *context, void **buffers, int count,\n"
    << "                            const void *device_interface) {\n"
    << "  for (int i = 0; i < count; ++i) {\n"
    << "    struct attn_halide_buffer_view *b = (struct attn_halide_buffer_view *)buffers[i];\n"
    << "    if (b->host != 0 || b->device == 0 || b->device_interface != 0) continue;\n"
    << "    const uint64_t handle = b->device;\n"
    << "    b->device = 0;\n"
    << "    const int status = halide_device_wrap_native(context, (struct halide_buffer_t *)b, handle,\n"
    << "                                                 device_interface);\n"
    << "    if (status != 0) {\n"
    << "      b->device = handle; /* attn_device_finish leaves it alone */\n"
    << "      return status;\n"
    << "    }\n"
    << "  }\n"
    << "  return 0;\n"
    << "}\n\n"
    << "/* After a GPU variant: host outputs copied back (on success), every device copy of a host\n"
    << " * tensor freed, and device tensors detached (theirs stays the caller's, written in place). */\n"
    << "static int attn_device_finish(attn_call_context *context, void **buffers, int count,\n"
    << "                              const unsigned char *is_output, int status) {\n"
    << "  for (int i = 0; i < count && status == 0; ++i) {\n"
    << "    struct attn_halide_buffer_view *b = (struct attn_halide_buffer_view *)buffers[i];\n"
    << "    if (is_output[i] && b->host != 0) status = halide_copy_to_host(context, (struct halide_buffer_t "
       "*)b);\n"
    << "  }\n"
    << "  for (int i = 0; i < count; ++i) {\n"
    << "    struct attn_halide_buffer_view *b = (struct attn_halide_buffer_view *)buffers[i];\n"
    << "    int released = 0;\n"
    << "    if (b->host == 0) {\n"
    << "      if (b->device_interface != 0) released = halide_device_detach_native(context, (struct "
       "halide_buffer_t *)b);\n"
    << "    } else {\n"
    << "      released = halide_device_free(context, (struct halide_buffer_t *)b);\n"
    << "    }\n"
    << "    if (status == 0) status = released;\n"
    << "  }\n"
    << "  return status;\n"
    << "}\n\n"
    << "/* GPU variants of f16/bf16 kernels take those tensors as uint16 bits: their buffers' type code\n"
    << " * (halide_type_t's first byte) is set to uint (1) for the call, then back to the caller's. */\n"
    << "__attribute__((unused)) static void attn_retype(void **buffers, int count,\n"
    << "                                                const unsigned char *bits, unsigned char code) {\n"
    << "  for (int i = 0; i < count; ++i) {\n"
    << "    struct attn_halide_buffer_view *view = (struct attn_halide_buffer_view *)buffers[i];\n"
    << "    if (bits[i]) ((unsigned char *)&view->type)[0] = code;\n"
    << "  }\n"
    << "}\n\n";
}

// CUDA: Halide 21's runtime takes handlers (halide_set_cuda_acquire_context, ...). A call that
// carries a context (the application's, or the one its device tensors live in) runs there, on its
// stream; any other call goes to the handler installed before (Halide's own context).
void write_cuda_hooks(std::ostringstream &o, const std::string &basename) {
  const std::string p = basename + "_cuda_";
  o << "typedef int (*attn_cuda_acquire_fn)(void *, void **, _Bool);\n"
    << "typedef int (*attn_cuda_release_fn)(void *);\n"
    << "typedef int (*attn_cuda_stream_fn)(void *, void *, void **);\n"
    << "extern attn_cuda_acquire_fn halide_set_cuda_acquire_context(attn_cuda_acquire_fn);\n"
    << "extern attn_cuda_release_fn halide_set_cuda_release_context(attn_cuda_release_fn);\n"
    << "extern attn_cuda_stream_fn halide_set_cuda_get_stream(attn_cuda_stream_fn);\n"
    << "extern const void *halide_cuda_device_interface(void);\n"
    << "static attn_cuda_acquire_fn " << p << "next_acquire;\n"
    << "static attn_cuda_release_fn " << p << "next_release;\n"
    << "static attn_cuda_stream_fn " << p << "next_stream;\n"
    << "static void *" << p << "of(void *user_context) {\n"
    << "  return user_context != 0 ? ((attn_call_context *)user_context)->cuda_context : 0;\n"
    << "}\n"
    << "static int " << p << "acquire(void *user_context, void **context, _Bool create) {\n"
    << "  void *given = " << p << "of(user_context);\n"
    << "  if (given == 0) return " << p << "next_acquire(user_context, context, create);\n"
    << "  *context = given;\n"
    << "  return 0;\n"
    << "}\n"
    << "static int " << p << "release(void *user_context) {\n"
    << "  return " << p << "of(user_context) != 0 ? 0 : " << p << "next_release(user_context);\n"
    << "}\n"
    << "static int " << p << "stream(void *user_context, void *context, void **stream) {\n"
    << "  if (" << p << "of(user_context) == 0) return " << p
    << "next_stream(user_context, context, stream);\n"
    << "  *stream = ((attn_call_context *)user_context)->cuda_stream;\n"
    << "  return 0;\n"
    << "}\n"
    << "static void " << p << "install(void) {\n"
    << "  " << p << "next_acquire = halide_set_cuda_acquire_context(" << p << "acquire);\n"
    << "  " << p << "next_release = halide_set_cuda_release_context(" << p << "release);\n"
    << "  " << p << "next_stream = halide_set_cuda_get_stream(" << p << "stream);\n"
    << "}\n\n";
}

// OpenCL: Halide 21 has no handler setters, so the entry defines halide_acquire_cl_context and
// halide_release_cl_context over the runtime's weak ones: strong in a shared library (one entry),
// weak where entries link statically (the first linked wins; all are this code). A call hands the
// context and queue the runtime chose (attn/kernel_abi.h); a call without one (Halide's release at
// exit) gets none, so it never touches a context the application may have released by then. Like
// Halide's own, a spin lock holds from acquire to release.
void write_opencl_hooks(std::ostringstream &o) {
  o << "extern const void *halide_opencl_device_interface(void);\n"
    << "#if defined(ATTN_LIBRARY_TABLE)\n#define ATTN_CL_HOOK\n#else\n"
    << "#define ATTN_CL_HOOK __attribute__((weak))\n#endif\n"
    << "static volatile char attn_cl_lock;\n"
    << "ATTN_CL_HOOK int halide_acquire_cl_context(void *user_context, void **context, void **queue,\n"
    << "                                            _Bool create) {\n"
    << "  (void)create;\n"
    << "  const attn_call_context *call = (const attn_call_context *)user_context;\n"
    << "  while (__atomic_test_and_set(&attn_cl_lock, __ATOMIC_ACQUIRE)) {\n  }\n"
    << "  *context = call != 0 ? call->opencl_context : 0;\n"
    << "  *queue = call != 0 ? call->opencl_queue : 0;\n"
    << "  return 0; /* none: Halide reports a null context where it needs one (and still releases) */\n"
    << "}\n"
    << "ATTN_CL_HOOK int halide_release_cl_context(void *user_context) {\n"
    << "  (void)user_context;\n"
    << "  __atomic_clear(&attn_cl_lock, __ATOMIC_RELEASE);\n"
    << "  return 0;\n"
    << "}\n\n";
}

}  // namespace

bool has_gpu_variant(const std::vector<KernelRecord> &kernels) {
  for (const KernelRecord &k : kernels)
    for (const VariantTiles &t : k.variant_tiles)
      if (t.gpu) return true;
  return false;
}

const char *device_interface_call(const std::string &target) {
  return target_has(target, "cuda") ? "halide_cuda_device_interface()" : "halide_opencl_device_interface()";
}

void write_device_support(std::ostringstream &o, const std::vector<KernelRecord> &kernels,
                          const std::string &basename) {
  write_copies(o);
  if (library_has(kernels, "cuda")) write_cuda_hooks(o, basename);
  if (library_has(kernels, "opencl")) write_opencl_hooks(o);
}

void write_device_install(std::ostringstream &o, const std::vector<KernelRecord> &kernels,
                          const std::string &basename) {
  o << "  halide_reuse_device_allocations(0, 1);\n";
  if (library_has(kernels, "cuda")) o << "  " << basename << "_cuda_install();\n";
}

}  // namespace attnc

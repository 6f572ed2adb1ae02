/* tsan_memory_calls.c: __tsan_memset/memcpy/memmove for kernels Halide's LLVM instruments for TSan.
 * Halide 21's LLVM emits these calls where newer TSan runtimes define them; the TSan runtime of
 * Clang 14 does not, but its interceptors of memset, memcpy and memmove check the same ranges. */
#include <stddef.h>
#include <string.h>

void *__tsan_memset(void *dest, int value, size_t bytes) {
  return memset(dest, value, bytes);
}
void *__tsan_memcpy(void *dest, const void *src, size_t bytes) {
  return memcpy(dest, src, bytes);
}
void *__tsan_memmove(void *dest, const void *src, size_t bytes) {
  return memmove(dest, src, bytes);
}

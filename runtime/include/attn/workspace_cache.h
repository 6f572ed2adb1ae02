/* attn/workspace_cache.h: keeps the large Halide scratch blocks of kernels between calls.
 *
 * Included once by each generated kernel entry, which installs
 * attn_workspace_malloc/attn_workspace_free as the Halide runtime's allocator. Why: a task of a
 * packed pipeline copies its head's keys and values into blocks of 64 KiB to 4 MiB. glibc serves
 * blocks that size by mmap, or from arenas it trims on free, so every call faulted its pages in
 * again: 1,461 page faults per W1 call (B1 H12 S1024 D64), 2.9% of that call's time in the
 * kernel. Blocks of ATTN_WORKSPACE_MIN_BYTES and up are kept here instead and handed to the next
 * request they fit; smaller ones go straight to Halide's default allocator. At most
 * ATTN_WORKSPACE_MAX_HELD bytes stay held between calls; attn_workspace_release() frees them
 * (the runtime's attn_kernel_release_memory). Every block comes from halide_default_malloc, so a
 * pointer this cache does not know (allocated before the cache was installed, or once its slots
 * were full) is returned to halide_default_free.
 * One cache per Halide runtime: the functions and their state are weak symbols, so the entries
 * of several libraries linked into one program (which share one Halide runtime, and each
 * install their allocator per call) share one cache rather than switching the runtime between
 * caches mid-call, where one cache would free another's block and keep a stale slot for it. A
 * shared library's entry is compiled with hidden visibility and keeps its own, with its own
 * Halide runtime. Applications never include this header. */
#ifndef ATTN_WORKSPACE_CACHE_H
#define ATTN_WORKSPACE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef ATTN_WORKSPACE_SLOTS
#define ATTN_WORKSPACE_SLOTS 64 /* blocks tracked at once: two per task on 32 threads */
#endif
#ifndef ATTN_WORKSPACE_MIN_BYTES
#define ATTN_WORKSPACE_MIN_BYTES ((size_t)64 << 10)
#endif
#ifndef ATTN_WORKSPACE_MAX_HELD
#define ATTN_WORKSPACE_MAX_HELD ((size_t)64 << 20)
#endif

void *halide_default_malloc(void *user_context, size_t bytes);
void halide_default_free(void *user_context, void *ptr);

/* One block: in use by a running kernel, or held for the next request (ptr set, in_use 0), or
 * empty (ptr null, in_use 0). A slot reserved for a block being allocated is in use with a null
 * ptr. */
typedef struct attn_workspace_slot {
  void *ptr;
  size_t bytes;
  uint64_t last_use; /* attn_workspace_v1_clock when last handed out or given back */
  int32_t in_use;
} attn_workspace_slot;

/* Weak: one definition per program however many entries include this header. */
#define ATTN_WORKSPACE_SHARED __attribute__((weak))
ATTN_WORKSPACE_SHARED attn_workspace_slot attn_workspace_v1_slots[ATTN_WORKSPACE_SLOTS];
ATTN_WORKSPACE_SHARED uint64_t attn_workspace_v1_clock;
ATTN_WORKSPACE_SHARED int32_t attn_workspace_v1_lock_word;

/* The critical sections scan the slots and nothing else, so a spin lock is enough. */
static void attn_workspace_lock(void) {
  while (__atomic_exchange_n(&attn_workspace_v1_lock_word, 1, __ATOMIC_ACQUIRE)) {
    while (__atomic_load_n(&attn_workspace_v1_lock_word, __ATOMIC_RELAXED)) {
    }
  }
}

static void attn_workspace_unlock(void) {
  __atomic_store_n(&attn_workspace_v1_lock_word, 0, __ATOMIC_RELEASE);
}

/* Bytes held for later requests. Call with the lock held. */
static size_t attn_workspace_held_locked(void) {
  size_t held = 0;
  for (int i = 0; i < ATTN_WORKSPACE_SLOTS; ++i)
    if (attn_workspace_v1_slots[i].ptr != 0 && !attn_workspace_v1_slots[i].in_use)
      held += attn_workspace_v1_slots[i].bytes;
  return held;
}

/* The held block used longest ago, or -1. Call with the lock held. */
static int attn_workspace_oldest_held_locked(void) {
  int oldest = -1;
  for (int i = 0; i < ATTN_WORKSPACE_SLOTS; ++i) {
    const attn_workspace_slot *s = &attn_workspace_v1_slots[i];
    if (s->ptr != 0 && !s->in_use && (oldest < 0 || s->last_use < attn_workspace_v1_slots[oldest].last_use))
      oldest = i;
  }
  return oldest;
}

ATTN_WORKSPACE_SHARED void *attn_workspace_malloc(void *user_context, size_t bytes) {
  if (bytes < ATTN_WORKSPACE_MIN_BYTES || bytes > ATTN_WORKSPACE_MAX_HELD)
    return halide_default_malloc(user_context, bytes);
  void *evicted = 0;
  int reserved = -1, fit = -1;
  attn_workspace_lock();
  /* The smallest held block that fits and wastes at most half of itself. */
  for (int i = 0; i < ATTN_WORKSPACE_SLOTS; ++i) {
    const attn_workspace_slot *s = &attn_workspace_v1_slots[i];
    if (s->ptr != 0 && !s->in_use && s->bytes >= bytes && s->bytes / 2 <= bytes &&
        (fit < 0 || s->bytes < attn_workspace_v1_slots[fit].bytes))
      fit = i;
  }
  if (fit >= 0) {
    attn_workspace_slot *s = &attn_workspace_v1_slots[fit];
    s->in_use = 1;
    s->last_use = ++attn_workspace_v1_clock;
    attn_workspace_unlock();
    return s->ptr;
  }
  /* None fits: take an empty slot, else the slot of the block held longest. */
  for (int i = 0; i < ATTN_WORKSPACE_SLOTS && reserved < 0; ++i)
    if (attn_workspace_v1_slots[i].ptr == 0 && !attn_workspace_v1_slots[i].in_use) reserved = i;
  if (reserved < 0) {
    reserved = attn_workspace_oldest_held_locked();
    if (reserved >= 0) evicted = attn_workspace_v1_slots[reserved].ptr;
  }
  if (reserved >= 0) {
    attn_workspace_slot *s = &attn_workspace_v1_slots[reserved];
    s->ptr = 0;
    s->bytes = 0;
    s->in_use = 1;
    s->last_use = ++attn_workspace_v1_clock;
  }
  attn_workspace_unlock();
  if (evicted != 0) halide_default_free(user_context, evicted);
  void *block = halide_default_malloc(user_context, bytes);
  if (reserved < 0) return block; /* every slot in use: an untracked block */
  attn_workspace_lock();
  attn_workspace_v1_slots[reserved].ptr = block;
  attn_workspace_v1_slots[reserved].bytes = bytes;
  attn_workspace_v1_slots[reserved].in_use = block != 0;
  attn_workspace_unlock();
  return block;
}

ATTN_WORKSPACE_SHARED void attn_workspace_free(void *user_context, void *ptr) {
  if (ptr == 0) return;
  int found = 0;
  void *excess[ATTN_WORKSPACE_SLOTS];
  int excess_count = 0;
  attn_workspace_lock();
  for (int i = 0; i < ATTN_WORKSPACE_SLOTS && !found; ++i) {
    if (attn_workspace_v1_slots[i].ptr == ptr && attn_workspace_v1_slots[i].in_use) {
      attn_workspace_v1_slots[i].in_use = 0;
      attn_workspace_v1_slots[i].last_use = ++attn_workspace_v1_clock;
      found = 1;
    }
  }
  /* Over the cap: free the blocks held longest (this one last, being the newest). */
  while (found && attn_workspace_held_locked() > ATTN_WORKSPACE_MAX_HELD) {
    attn_workspace_slot *s = &attn_workspace_v1_slots[attn_workspace_oldest_held_locked()];
    excess[excess_count++] = s->ptr;
    s->ptr = 0;
    s->bytes = 0;
  }
  attn_workspace_unlock();
  if (!found) halide_default_free(user_context, ptr);
  for (int i = 0; i < excess_count; ++i) halide_default_free(user_context, excess[i]);
}

/* Frees every held block; blocks in use by a running call stay with it and are held when it
 * frees them. */
ATTN_WORKSPACE_SHARED void attn_workspace_release(void) {
  void *held[ATTN_WORKSPACE_SLOTS];
  int count = 0;
  attn_workspace_lock();
  for (int i = 0; i < ATTN_WORKSPACE_SLOTS; ++i) {
    attn_workspace_slot *s = &attn_workspace_v1_slots[i];
    if (s->ptr != 0 && !s->in_use) {
      held[count++] = s->ptr;
      s->ptr = 0;
      s->bytes = 0;
    }
  }
  attn_workspace_unlock();
  for (int i = 0; i < count; ++i) halide_default_free(0, held[i]);
}

#ifdef __cplusplus
}
#endif

#endif /* ATTN_WORKSPACE_CACHE_H */

// Small limits for the cache tests, so that each rule is reachable; every test unit that
// includes the cache includes it through here, so they agree.
#ifndef ATTNC_TESTS_WORKSPACE_CACHE_LIMITS_H
#define ATTNC_TESTS_WORKSPACE_CACHE_LIMITS_H

#include <cstddef>

#define ATTN_WORKSPACE_SLOTS 4
#define ATTN_WORKSPACE_MIN_BYTES ((size_t)1024)
#define ATTN_WORKSPACE_MAX_HELD ((size_t)16384)
#include "attn/workspace_cache.h"

typedef void *(*halide_malloc_fn)(void *, size_t);
typedef void (*halide_free_fn)(void *, void *);

#endif

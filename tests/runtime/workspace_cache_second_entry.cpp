// A second unit including the cache, as the entry of a second kernel library linked into the
// same program does: its functions and state must be the first unit's (weak symbols).
#include "workspace_cache_limits.h"

extern "C" halide_malloc_fn second_entry_malloc(void) {
  return &attn_workspace_malloc;
}
extern "C" halide_free_fn second_entry_free(void) {
  return &attn_workspace_free;
}

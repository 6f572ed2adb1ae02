// attention.h: the decoder's attention step over a paged KV cache, and the cache's storage.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "page_pool.h"

namespace llama {

// One sequence being decoded: its tokens, its cache pages, and (for the fp64 check) every
// layer's un-rotated keys and values so far.
struct Sequence {
  std::vector<int> tokens;  // prompt, then the generated tokens
  SequencePages cache;      // cache.length: tokens whose keys and values are in the cache
  std::vector<std::vector<float>> k_history, v_history;  // per layer: [length, KVH, D]
};

// Every layer's k_cache and v_cache [pages, P, KVH, D] (the NHD page layout), one page pool.
struct PagedCache {
  int layers, pages, page_tokens, kv_heads, head_dim;
  std::vector<std::vector<float>> k, v;  // per layer

  PagedCache(int layers, int pages, int page_tokens, int kv_heads, int head_dim);
  size_t bytes() const { return 2 * k.size() * k[0].size() * sizeof(float); }
  size_t bytes_per_page() const { return bytes() / pages; }
  // The cache row of layer `layer`'s token t of a sequence: [KVH, D] floats.
  float *k_row(int layer, const SequencePages &s, int t);
  float *v_row(int layer, const SequencePages &s, int t);
};

// One call: the batch's sq newest tokens per sequence, all at the same Sq. q [B,Sq,H,D] and
// k_new, v_new [B,Sq,KVH,D] un-rotated, as projected; out [B,Sq,H,D]. Query i of sequence b sits
// at position cache.length + i and attends causally over its cache plus the new tokens.
struct AttentionStep {
  int layer, sq;
  const std::vector<Sequence *> &batch;
  const float *q, *k_new, *v_new;
  float *out;
};

// A paged kernel call's index tensors for a step: cache_seqlens [B] and block_table [B, max_pages]
// (max_pages: the most pages a sequence of the batch spans after the step).
struct StepTables {
  std::vector<int32_t> cache_seqlens, block_table;
  int64_t max_pages = 1;
};
StepTables step_tables(const AttentionStep &step, int page_tokens);

// Stores the step's keys and values in the cache and attends. Returns an error message, or "".
class Attention {
 public:
  virtual ~Attention() = default;
  virtual const char *name() const = 0;
  virtual std::string attend(const AttentionStep &step) = 0;
};

}  // namespace llama

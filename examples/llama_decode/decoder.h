// decoder.h: the Llama-style forward pass over a batch of sequences, attention delegated.
#pragma once

#include <string>
#include <vector>

#include "attention.h"
#include "config.h"
#include "weights.h"

namespace llama {

// The largest |attention out − fp64 reference| of a checked step, over every layer and sequence.
struct CheckResult {
  double max_error = 0, max_reference = 0;
  int rows = 0;  // query rows compared (per layer and head)
};

class Decoder {
 public:
  Decoder(const Config &config, const Weights &weights) : c_(config), w_(weights) {}

  // Runs tokens [cache.length, cache.length + sq) of every sequence in the batch through the
  // model (pages taken from the pool first), appends them to the cache, and returns each
  // sequence's greedy next token in `next`. With `check`, compares every layer's attention output
  // with the fp64 reference over the sequence's whole history. Returns an error message or "".
  std::string step(const std::vector<Sequence *> &batch, int sq, PagePool &pool, Attention &attention,
                   std::vector<int> &next, CheckResult *check = nullptr);

  double attention_seconds = 0, total_seconds = 0;

 private:
  const Config &c_;
  const Weights &w_;
  std::vector<float> x_, h_, q_, k_, v_, attn_, gate_, up_, logits_;
};

}  // namespace llama

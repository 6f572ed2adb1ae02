// main.cpp: a small Llama-style decoder with random weights: prefills prompts of different
// lengths in chunks, then decodes them together one token at a time through a paged KV cache,
// with attention in attnc kernels; prints tokens/s and cache occupancy and checks attention
// against fp64 (exit 1 beyond the tolerance).
#include <attn/kernel_id.h>
#include <attn/runtime.h>
#include <attn/spec_text.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>
#include <random>

#include "attention.h"
#include "config.h"
#include "decoder.h"
#include "gathered_attention.h"
#include "paged_attention.h"
#include "quantized_attention.h"
#include "weights.h"

namespace {

using llama::Config;

// On max |attention out − fp64|, relative to max(1, max |fp64|). The reference reads the model's
// exact keys and values, so a quantized cache's tolerance is its format's error: int8 rounds each
// element by up to scale / 2 (0.4% of the head's max |x|), E4M3 by up to 2^-4 of the value.
double tolerance_of(const std::string &kv) {
  return kv == "int8" ? 2e-2 : kv == "fp8" ? 1e-1 : 1e-4;
}

const attn_kernel *find_kernel(const char *spec_text) {
  const attn::ParseResult parsed = attn::parse_spec(spec_text);
  if (!parsed.ok) return std::fprintf(stderr, "llama_decode: %s\n", parsed.message.c_str()), nullptr;
  const attn_kernel *kernel = nullptr;
  if (attn_find_kernel(attn::kernel_id(parsed.spec).c_str(), &kernel) != ATTN_OK)
    return std::fprintf(stderr, "llama_decode: %s\n", attn_last_error()), nullptr;
  return kernel;
}

std::unique_ptr<llama::Attention> make_attention(const Config &c, const std::string &kv,
                                                 llama::PagedCache &cache) {
  if (kv != "f32") {
    const attn_kernel *kernel = find_kernel(kv == "int8" ? LLAMA_PAGED_INT8_SPEC : LLAMA_PAGED_FP8_SPEC);
    return kernel ? std::make_unique<llama::QuantizedPagedAttention>(kernel, cache, c.heads, kv == "int8")
                  : nullptr;
  }
  if (c.attention == "gathered") {
    const attn_kernel *kernel = find_kernel(LLAMA_CORE_SPEC);
    return kernel ? std::make_unique<llama::GatheredAttention>(kernel, cache, c.heads, c.rope_theta)
                  : nullptr;
  }
  const attn_kernel *kernel = find_kernel(LLAMA_PAGED_SPEC);
  return kernel ? std::make_unique<llama::PagedAttention>(kernel, cache, c.heads) : nullptr;
}

// cache_bytes: the whole cache's K and V (codes and scales when quantized).
void print_occupancy(const char *when, const llama::PagePool &pool, const llama::PagedCache &cache,
                     size_t cache_bytes, const std::vector<llama::Sequence> &sequences) {
  int tokens = 0;
  for (const llama::Sequence &s : sequences) tokens += s.cache.length;
  const double mib = 1.0 / (1 << 20);
  std::printf(
      "  cache %s: %d of %d pages used (%.1f of %.1f MiB, K and V of %d layers), %d tokens in them (%.0f%% "
      "of "
      "the used slots)\n",
      when, pool.used(), pool.pages(), pool.used() * double(cache_bytes) / pool.pages() * mib,
      cache_bytes * mib, cache.layers, tokens,
      pool.used() ? 100.0 * tokens / (pool.used() * pool.page_tokens()) : 0.0);
}

bool report(const char *what, const llama::CheckResult &check, double relative_tolerance) {
  const double tolerance = relative_tolerance * std::max(1.0, check.max_reference);
  const bool ok = std::isfinite(check.max_error) && check.max_error <= tolerance;
  std::printf(
      "  check %s: max |attention out - fp64 reference| = %.3g over %d query rows of every layer "
      "(max |reference| %.3g, tolerance %.3g): %s\n",
      what, check.max_error, check.rows, check.max_reference, tolerance, ok ? "ok" : "FAILED");
  return ok;
}

}  // namespace

// One whole run (prefill, then batched decode) on a cache of type kv: f32, int8 or fp8. Returns
// the exit status; rates gets prefill and decode tokens/s (0 when nothing was timed).
int run(const Config &c, const std::string &kv, double rates[2]) {
  const int pages = c.pages > 0 ? c.pages : llama::pages_needed(c);
  std::mt19937 rng(c.seed);
  std::vector<int32_t> order(pages);  // a scattered free list: sequences get pages out of order
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  llama::PagePool pool(pages, c.page_tokens, order);
  llama::PagedCache cache(c.layers, pages, c.page_tokens, c.kv_heads, c.head_dim);
  const std::unique_ptr<llama::Attention> attention = make_attention(c, kv, cache);
  if (!attention) return 1;
  const auto *quantized = dynamic_cast<const llama::QuantizedPagedAttention *>(attention.get());
  const size_t cache_bytes = quantized != nullptr ? quantized->bytes() : cache.bytes();
  const double tolerance = tolerance_of(kv);
  const llama::Weights weights = llama::random_weights(c);
  llama::Decoder decoder(c, weights);

  std::vector<llama::Sequence> sequences(c.prompts.size());
  std::uniform_int_distribution<int> token(0, c.vocab - 1);
  int prompt_tokens = 0;
  for (size_t i = 0; i < sequences.size(); ++i) {
    for (int t = 0; t < c.prompts[i]; ++t) sequences[i].tokens.push_back(token(rng));
    prompt_tokens += c.prompts[i];
  }
  std::printf(
      "llama_decode: %d layers, d_model %d, %d heads / %d KV heads of %d, SwiGLU %d, vocab %d (%.0f MiB of "
      "weights)\n  attention: %s\n  %zu sequences, prompts of",
      c.layers, c.d_model, c.heads, c.kv_heads, c.head_dim, c.ffn, c.vocab, weights.bytes() / double(1 << 20),
      attention->name(), sequences.size());
  for (int p : c.prompts) std::printf(" %d", p);
  std::printf(" tokens (prefill chunks of %d), %d-token pages\n  %s\n", c.chunk, c.page_tokens,
              llama::generation_plan(c).c_str());

  bool ok = true;
  auto fail = [](const std::string &error) {
    return std::fprintf(stderr, "llama_decode: %s\n", error.c_str()), 1;
  };
  // Prefill: each sequence alone, in chunks (Sq > 1 appends through the cache, causal); every
  // chunk is checked against fp64.
  llama::CheckResult prefill_check;
  std::vector<int> next;
  for (llama::Sequence &s : sequences) {
    const int length = static_cast<int>(s.tokens.size());
    while (s.cache.length < length) {
      const int sq = std::min(c.chunk, length - s.cache.length);
      if (const std::string error = decoder.step({&s}, sq, pool, *attention, next, &prefill_check);
          !error.empty())
        return fail(error);
    }
    s.tokens.push_back(next[0]);
  }
  const double prefill_seconds = decoder.total_seconds, prefill_attention = decoder.attention_seconds;
  std::printf("  prefill: %d tokens in %.3f s: %.1f tokens/s (attention %.1f%% of the time)\n", prompt_tokens,
              prefill_seconds, prompt_tokens / prefill_seconds, 100 * prefill_attention / prefill_seconds);
  print_occupancy("after prefill", pool, cache, cache_bytes, sequences);
  ok &= report("of every prefill chunk", prefill_check, tolerance);
  rates[0] = prompt_tokens / prefill_seconds;

  // Decode: every sequence one token per step, in one batch; the last step is checked.
  std::vector<llama::Sequence *> batch;
  for (llama::Sequence &s : sequences) batch.push_back(&s);
  llama::CheckResult decode_check;
  double decode_seconds = 0, decode_attention = 0;
  for (int step = 1; step < c.tokens; ++step) {
    const bool last = step + 1 == c.tokens;
    const double before = decoder.total_seconds, attention_before = decoder.attention_seconds;
    if (const std::string error =
            decoder.step(batch, 1, pool, *attention, next, last ? &decode_check : nullptr);
        !error.empty())
      return fail(error);
    if (!last) {  // the checked step's time includes the reference
      decode_seconds += decoder.total_seconds - before;
      decode_attention += decoder.attention_seconds - attention_before;
    }
    for (size_t b = 0; b < batch.size(); ++b) batch[b]->tokens.push_back(next[b]);
  }
  const int timed_steps = c.tokens - 2;
  rates[1] = timed_steps > 0 ? timed_steps * batch.size() / decode_seconds : 0.0;
  if (timed_steps > 0)
    std::printf(
        "  decode: %d timed steps of %zu sequences in %.3f s: %.1f tokens/s, %.2f ms per step (attention %.1f%%)\n",
        timed_steps, batch.size(), decode_seconds, timed_steps * batch.size() / decode_seconds,
        1e3 * decode_seconds / timed_steps, 100 * decode_attention / decode_seconds);
  print_occupancy("at the end", pool, cache, cache_bytes, sequences);
  if (c.tokens > 1) ok &= report("of the last decode step", decode_check, tolerance);
  for (size_t i = 0; i < sequences.size(); ++i) {
    std::printf("  sequence %zu (%d cached tokens, pages", i, sequences[i].cache.length);
    for (int32_t p : sequences[i].cache.pages) std::printf(" %d", p);
    std::printf("): generated");
    for (size_t t = c.prompts[i]; t < sequences[i].tokens.size(); ++t)
      std::printf(" %d", sequences[i].tokens[t]);
    std::printf("\n");
  }
  for (llama::Sequence &s : sequences) s.cache.release(pool);
  std::printf("  released: %d pages used\n", pool.used());
  return ok && pool.used() == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
  Config c;
  if (const std::string error = llama::parse_args(argc, argv, c); !error.empty()) {
    std::fprintf(stderr,
                 "llama_decode: %s\nusage: llama_decode [--layers 2] [--ffn 1024] [--vocab 512] [--prompts "
                 "37,100,13,64]\n"
                 "         [--tokens 16] [--chunk 32] [--pages N] [--threads N] [--seed N] [--attention "
                 "fused|gathered]\n"
                 "         [--kv f32|int8|fp8, or a list: f32,int8,fp8]\n",
                 error.c_str());
    return 2;
  }
  // One run per cache type, then their rates side by side.
  std::vector<std::array<double, 2>> rates(c.kv.size());
  int status = 0;
  for (size_t i = 0; i < c.kv.size(); ++i) {
    std::printf("%s== KV cache: %s\n", i > 0 ? "\n" : "", c.kv[i].c_str());
    status |= run(c, c.kv[i], rates[i].data());
  }
  std::printf("\ntokens/s by KV cache type (prefill, batched decode):\n");
  for (size_t i = 0; i < c.kv.size(); ++i)
    std::printf("  %-4s  prefill %8.1f  decode %8.1f\n", c.kv[i].c_str(), rates[i][0], rates[i][1]);
  return status;
}

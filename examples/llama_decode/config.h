// config.h: the decoder's sizes and the run's settings, from the command line.
#pragma once

#include <string>
#include <vector>

namespace llama {

struct Config {
  // Model (the attention shape is fixed by the kernel's spec: 16 query heads, 4 KV heads of 128).
  int layers = 2;
  int d_model = 2048;
  int heads = 16;
  int kv_heads = 4;
  int head_dim = 128;
  int ffn = 1024;  // SwiGLU intermediate size (Llama's is ~2.7 d_model; small keeps the example fast)
  int vocab = 512;
  float rope_theta = 10000.0f;
  float norm_eps = 1e-5f;
  // Run.
  std::vector<int> prompts = {37, 100, 13, 64};  // prompt length of each sequence
  int tokens = 16;                               // tokens generated per sequence
  int chunk = 32;                                // prefill chunk (Sq of one prefill call)
  int page_tokens = 16;                          // P: tokens per cache page (the kernel's spec)
  int pages = 0;                                 // pages in the pool; 0: enough for every sequence
  int threads = 0;                               // projection / MLP threads; 0: one per core
  unsigned seed = 2024;
  std::string attention = "fused";  // fused (the paged kernel) or gathered (the unfused path)
  // The KV cache types to run, one whole run each: f32, int8 (kv_dtype=int8), fp8 (fp8_e4m3);
  // int8 and fp8 need the fused path.
  std::vector<std::string> kv = {"f32"};
};

// Parses --layers N --ffn N --vocab N --prompts 37,100,13 --tokens N --chunk N --pages N
// --threads N --seed N --attention fused|gathered --kv f32,int8,fp8; returns an error message, empty when the
// line is good.
std::string parse_args(int argc, char **argv, Config &config);

// The tokens a pool for these prompts and generation lengths needs at most, rounded to pages.
int pages_needed(const Config &config);

// How the generated tokens come about, in one sentence: the first from the prefill, the others
// one per batched decode step, all timed but the last (checked against fp64).
std::string generation_plan(const Config &config);

}  // namespace llama

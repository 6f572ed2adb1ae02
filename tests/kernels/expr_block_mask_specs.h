// expr_block_mask_specs.h: the run-time block-mask kernels (block_mask=input and its pass) of the
// suite expr_block_mask_test.cpp, built by expr_block_mask_specs_export.cpp.
#pragma once

namespace attnc::test {

// Each mask_mod twice: the attention kernel reading a block mask, then its pass. Small: each
// attention kernel takes ~4 s to generate, each pass well under one.
struct BlockMaskSpecs {
  const char *attention, *pass;
};
inline const BlockMaskSpecs block_mask_specs[] = {
    // a document mask: per batch element, the same for every head (the pass writes [B, 1, ., .])
    {R"x(heads=2 head_dim=16 inputs=doc:i32[B,Sk] mask_mod="doc[b, q] == doc[b, k]" block_mask=input)x",
     R"x(heads=2 head_dim=16 inputs=doc:i32[B,Sk] mask_mod="doc[b, q] == doc[b, k]" block_mask=pass)x"},
    // per head as well (flag[h, .]), ANDed with mask=causal, GQA, lse
    {R"x(heads=2 kv_heads=1 head_dim=16 mask=causal inputs=doc:i32[B,Sk];flag:u8[H,Sk] mask_mod="doc[b, q] == doc[b, k] && (flag[h, k] != 0 || q == k)" lse=true block_mask=input)x",
     R"x(heads=2 kv_heads=1 head_dim=16 mask=causal inputs=doc:i32[B,Sk];flag:u8[H,Sk] mask_mod="doc[b, q] == doc[b, k] && (flag[h, k] != 0 || q == k)" lse=true block_mask=pass)x"},
};

// The block core (a built-in window with a left edge picks it) on a mask_mod that interval
// arithmetic proves true near the diagonal: those blocks run in the sweep without the mask_mod.
inline const char *const provably_true_spec =
    R"x(heads=2 kv_heads=1 head_dim=16 mask=window(1000,0) mask_mod="q - k < 150 || k % 7 == 3" lse=true)x";

}  // namespace attnc::test

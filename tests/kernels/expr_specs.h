// expr_specs.h: the score_mod / mask_mod kernels of the example suite (attnc_expr_kernels, built
// from this list by expr_specs_export.cpp) and the built-in kernels they must match.
#pragma once

namespace attnc::test {

// The issue's examples, each family's path, and the masked-pair guarantees. Sizes stay small:
// each kernel takes ~3 s to generate.
inline const char *const expr_example_specs[] = {
    // relative position bias from a captured [H, 2*S-1] table (S = 32; longer rows clamp)
    R"x(heads=4 kv_heads=2 head_dim=16 inputs=rel:f32[H,63] score_mod="s + rel[h, q - k + 31]" mask_mod="q >= k")x",
    // T5-style bucketed bias
    R"x(heads=2 head_dim=16 inputs=t5:f32[H,32] score_mod="s + t5[h, select(q >= k, 0, 16) + min(15, select(abs(q - k) < 8, abs(q - k), 8 + int(log(float(abs(q - k)) / 8.0) / log(20.0) * 8.0)))]")x",
    // ALiBi by hand, against alibi=true
    R"x(heads=4 kv_heads=1 head_dim=16 inputs=slopes:f32[H] score_mod="s - slopes[h] * float(abs(q - k))" mask_mod="q >= k")x",
    // a dilated sliding window
    R"x(heads=2 head_dim=16 mask_mod="q >= k && q - k < 24 && (q - k) % 2 == 0")x",
    // prefix-LM: a per-batch prefix, then causal
    R"x(heads=2 head_dim=32 inputs=prefix:i32[B] mask_mod="k < prefix[b] || q >= k" lse=true)x",
    // a document mask from per-token ids
    R"x(heads=2 head_dim=16 inputs=doc:i32[B,Sk] mask_mod="doc[b, q] == doc[b, k]")x",
    // tanh softcap by hand, against softcap=30
    R"x(heads=2 head_dim=16 score_mod="30.0 * tanh(s / 30.0)")x",
    // StreamingLLM: sink tokens and a window
    R"x(heads=2 head_dim=16 mask_mod="q >= k && (k < 4 || q - k < 8)")x",
    // q >= k against mask=causal; the window against window(15,0)
    R"x(heads=2 head_dim=16 mask_mod="q >= k")x",
    R"x(heads=2 head_dim=16 mask_mod="q - k < 16 && q >= k")x",
    // the block core (a built-in window with a left edge picks it), mask_mod ANDed with the mask
    R"x(heads=2 kv_heads=1 head_dim=16 mask=window(1000,1000) inputs=flag:u8[B,Sk] mask_mod="(q / 16 == k / 16 || flag[b, k] != 0) && q >= k" score_mod="s * 0.5 + float(kvh)" lse=true)x",
    // probs and lse with a score_mod over i, Sq, Sk and a tensor of the mask's shape
    R"x(heads=2 head_dim=16 inputs=bias:f32[H,Sq,Sk] score_mod="s + bias[h, i, k] + float(Sk - Sq) * 0.25" mask_mod="(q + k) % 3 != 0 || k == 0" lse=true probs=true)x",
    // a NaN made by score_mod at a kept pair (key 2 for rows 0 and 1); a fully masked row (i = 2)
    R"x(heads=2 head_dim=16 score_mod="select(k == 2, sqrt(-1.0 - float(q)), s)" mask_mod="(k != 2 || i < 2) && i != 2" lse=true)x",
    // the block form: relative bias and a causal mask_mod, top-left aligned
    R"x(d_model=32 heads=2 form=block inputs=rel:f32[H,63] score_mod="s + rel[h, q - k + 31]" mask_mod="q >= k" align=top_left lse=true)x",
    // C's / and % on negative operands (truncation, the dividend's sign), and x / 0 = x % 0 = 0
    R"x(heads=2 head_dim=16 score_mod="s + float((q - k) / 3) * 0.25 + float((k - q) % 5) * 0.125 + float(k / (q - k)) * 0.5" mask_mod="(q - k) % 3 != -1")x",
    // built-ins composed after score_mod: softcap, alibi and score_bias
    R"x(heads=2 head_dim=16 mask=causal softcap=2 alibi=true score_bias=tensor inputs=g:f32[KVH,4] score_mod="s * g[kvh, h % 4] + 1.0" mask_mod="k % 5 != 4")x",
};

// Built-in twins: {hand-written spec, built-in spec} must agree within the pass rule.
struct ExprTwin {
  const char *hand, *built_in;
};
inline const ExprTwin expr_twins[] = {
    {expr_example_specs[8], "heads=2 head_dim=16 mask=causal"},
    {expr_example_specs[9], "heads=2 head_dim=16 mask=window(15,0)"},
    {expr_example_specs[6], "heads=2 head_dim=16 softcap=30"},
    {expr_example_specs[2], "heads=4 kv_heads=1 head_dim=16 mask=causal alibi=true"},
};

}  // namespace attnc::test

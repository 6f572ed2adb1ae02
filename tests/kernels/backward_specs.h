// backward_specs.h: the specs of attnc_backward_kernels (tests/kernels/CMakeLists.txt): each backward
// kernel and its forward (the same spec with lse=true instead of backward=true), dropout in some.
#pragma once

namespace attnc::test {

inline const char *const backward_specs[] = {
    "heads=4 kv_heads=2 head_dim=24 mask=causal backward=true",
    "heads=2 head_dim=16 head_dim_v=24 mask=(window(3,1)|global(1))&tensor softcap=2 alibi=true "
    "score_bias=tensor dropout=0.5 backward=true",
    "heads=3 kv_heads=1 head_dim=32 mask=document&padding backward=true",
    "heads=2 head_dim=8 mask=prefix|window(5,3) scale=0.3 runtime_scale=true backward=true",
    "heads=2 head_dim=64 mask=none backward=true",
    "heads=4 kv_heads=2 head_dim=32 mask=causal&padding dtype=bf16 backward=true",
    "heads=2 head_dim=16 head_dim_v=24 mask=window(8,4) softcap=2 alibi=true dtype=f16 backward=true",
    "heads=4 kv_heads=2 head_dim=16 mask=causal rope=neox backward=true",
    "heads=2 head_dim=16 head_dim_v=8 mask=window(6,2) rope=interleaved rope_dim=8 rope_theta=500 "
    "backward=true",
    "heads=2 kv_heads=1 head_dim=16 mask=causal&tensor softcap=2 score_bias=tensor backward=true "
    "dscore_bias=true",
    "heads=2 head_dim=16 head_dim_v=24 mask=(window(3,1)|global(1))&tensor softcap=2 alibi=true "
    "score_bias=tensor backward=true",
    "heads=4 kv_heads=2 head_dim=32 mask=causal&padding dtype=bf16 dropout=0.1 backward=true",
    "heads=2 kv_heads=1 head_dim=16 mask=causal&tensor softcap=2 score_bias=tensor dropout=0.3 backward=true "
    "dscore_bias=true",
};

inline const char *const backward_forward_specs[] = {
    "heads=4 kv_heads=2 head_dim=24 mask=causal lse=true",
    "heads=2 head_dim=16 head_dim_v=24 mask=(window(3,1)|global(1))&tensor softcap=2 alibi=true "
    "score_bias=tensor dropout=0.5 lse=true",
    "heads=3 kv_heads=1 head_dim=32 mask=document&padding lse=true",
    "heads=2 head_dim=8 mask=prefix|window(5,3) scale=0.3 runtime_scale=true lse=true",
    "heads=2 head_dim=64 mask=none lse=true",
    "heads=4 kv_heads=2 head_dim=32 mask=causal&padding dtype=bf16 lse=true",
    "heads=2 head_dim=16 head_dim_v=24 mask=window(8,4) softcap=2 alibi=true dtype=f16 lse=true",
    "heads=4 kv_heads=2 head_dim=16 mask=causal rope=neox lse=true",
    "heads=2 head_dim=16 head_dim_v=8 mask=window(6,2) rope=interleaved rope_dim=8 rope_theta=500 lse=true",
    "heads=2 kv_heads=1 head_dim=16 mask=causal&tensor softcap=2 score_bias=tensor lse=true",
    "heads=2 head_dim=16 head_dim_v=24 mask=(window(3,1)|global(1))&tensor softcap=2 alibi=true "
    "score_bias=tensor lse=true",
    "heads=4 kv_heads=2 head_dim=32 mask=causal&padding dtype=bf16 dropout=0.1 lse=true",
    "heads=2 kv_heads=1 head_dim=16 mask=causal&tensor softcap=2 score_bias=tensor dropout=0.3 lse=true",
};

// layout=varlen (packed sequences): its backward and forward, beside the lists above.
inline const char *const varlen_backward_spec =
    "heads=4 kv_heads=2 head_dim=24 head_dim_v=16 mask=causal layout=varlen backward=true";

}  // namespace attnc::test

# The KV cache, RoPE and varlen kernels (issue 24), this machine's variant only; keep in step with
# sequence_specs.h.
set(attnc_sequence_specs
    "heads=4 kv_heads=2 head_dim=16 mask=causal kv_cache=contiguous rope=neox rope_dim=8 lse=true"
    "heads=3 kv_heads=1 head_dim=16 head_dim_v=8 mask=causal kv_cache=paged(4) rope=interleaved rope_dim=12 rope_theta=500"
    "heads=2 head_dim=16 mask=window(5,0) kv_cache=paged(8) softcap=30 alibi=true lse=true"
    "heads=3 kv_heads=1 head_dim=16 mask=causal layout=varlen rope=neox lse=true"
    "heads=2 head_dim=16 mask=causal rope=interleaved"
    "heads=4 kv_heads=2 head_dim=16 mask=causal kv_cache=paged(4) rope=neox dtype=bf16 lse=true"
    "heads=2 head_dim=16 mask=causal kv_cache=contiguous rope=interleaved rope_dim=8 dtype=f16"
    "heads=2 head_dim=16 mask=window(4,0) layout=varlen rope=neox dtype=bf16 lse=true")
attn_add_kernels(attnc_sequence_kernels SPECS ${attnc_sequence_specs} TARGETS native)
attnc_add_test(kernels_sequence_test LABEL sequence SOURCES sequence_test.cpp
  LIBS attnc_sequence_kernels attnc_kernel_test_support)

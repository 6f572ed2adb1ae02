# The KV cache, RoPE and varlen kernels (issue 24), this machine's variant only; keep in step with
# sequence_specs.h.
set(attnc_sequence_specs
    "heads=4 kv_heads=2 head_dim=16 mask=causal kv_cache=contiguous rope=neox rope_dim=8 lse=true"
    "heads=3 kv_heads=1 head_dim=16 head_dim_v=8 mask=causal kv_cache=paged(4) rope=interleaved rope_dim=12 rope_theta=500"
    "heads=2 head_dim=16 mask=window(5,0) kv_cache=paged(8) softcap=30 alibi=true lse=true"
    "heads=3 kv_heads=1 head_dim=16 mask=causal layout=varlen rope=neox lse=true"
    "heads=2 head_dim=16 mask=causal rope=interleaved"
    "heads=4 kv_heads=2 head_dim=64 mask=causal rope=neox"
    "heads=2 head_dim=64 rope=neox rope_dim=32"
    "heads=4 kv_heads=2 head_dim=16 mask=causal kv_cache=paged(4) rope=neox dtype=bf16 lse=true"
    "heads=2 head_dim=16 mask=causal kv_cache=contiguous rope=interleaved rope_dim=8 dtype=f16"
    "heads=2 head_dim=16 mask=window(4,0) layout=varlen rope=neox dtype=bf16 lse=true")
attn_add_kernels(attnc_sequence_kernels SPECS ${attnc_sequence_specs} TARGETS native)
attnc_add_test(kernels_sequence_test LABEL sequence SOURCES sequence_test.cpp
  LIBS attnc_sequence_kernels attnc_kernel_test_support)
# The same kernels with index values at the int32 and int64 edges, every tensor in guarded memory
# (issue 32): refused with nothing written, or the result of the call without the edge value.
attnc_add_test(kernels_sequence_bounds_test LABEL sequence SOURCES sequence_bounds_test.cpp guarded_memory.cpp
  LIBS attnc_sequence_kernels attnc_kernel_test_support)
attnc_add_refused_calls_test(kernels_sequence_refused_calls_test LABEL sequence LIBS attnc_sequence_kernels)
# The same suite on the OpenCL variant (PoCL; label opencl): the cache append, the paged gather,
# RoPE and the per-sequence calls on the GPU schedules. f32 specs only, as GPU variants take
# dtype=f32 (SEQUENCE_F32_ONLY skips the others).
if(ATTNC_GPU_TESTS)
  set(attnc_sequence_f32_specs ${attnc_sequence_specs})
  list(FILTER attnc_sequence_f32_specs EXCLUDE REGEX "dtype=")
  attn_add_kernels(attnc_opencl_sequence_kernels SPECS ${attnc_sequence_f32_specs} TARGETS opencl)
  attnc_add_test(kernels_opencl_sequence_test LABEL opencl SOURCES sequence_test.cpp
    LIBS attnc_opencl_sequence_kernels attnc_kernel_test_support)
  target_compile_definitions(kernels_opencl_sequence_test PRIVATE SEQUENCE_F32_ONLY=1)
  attnc_add_refused_calls_test(kernels_opencl_sequence_refused_calls_test LABEL opencl GPU OPENCL
    LIBS attnc_opencl_sequence_kernels)
  # attn-run on the OpenCL variant of tests/runtime's cache kernel: the in-out cache comes back
  # from the device into the caller's host tensors.
  attnc_generated_test_library(attnc_runtime_opencl_cache_kernels opencl_cache_library opencl_cache_library
    TARGET opencl SPECS "heads=2 head_dim=16 mask=causal kv_cache=contiguous rope=neox")
  set(runtime_dir ${PROJECT_SOURCE_DIR}/tests/runtime)
  attnc_add_test(runtime_attn_run_opencl_cache_test LABEL opencl
    SOURCES ${runtime_dir}/test_attn_run_cache.cpp ${PROJECT_SOURCE_DIR}/tools/attn_run/npy.cpp
    LIBS attnc_runtime_headers attnc_reference)
  target_include_directories(runtime_attn_run_opencl_cache_test PRIVATE ${PROJECT_SOURCE_DIR}/tools/attn_run)
  target_compile_definitions(runtime_attn_run_opencl_cache_test PRIVATE
    CACHE_LIB="${opencl_cache_library}" ATTN_RUN_PATH="$<TARGET_FILE:attn_run>")
  add_dependencies(runtime_attn_run_opencl_cache_test attnc_runtime_opencl_cache_kernels_gen attn_run)
endif()

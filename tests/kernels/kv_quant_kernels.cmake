# The quantized KV cache kernels (issue 37: kv_dtype=int8, fp8_e4m3), this machine's variant only;
# keep in step with kv_quant_specs.h.
set(attnc_kv_quant_specs
    "heads=8 kv_heads=2 head_dim=16 mask=causal kv_cache=contiguous kv_dtype=int8 rope=neox rope_dim=8 lse=true"
    "heads=3 kv_heads=1 head_dim=24 head_dim_v=8 mask=window(5,0) kv_cache=paged(4) kv_dtype=int8 dtype=bf16 lse=true"
    "heads=4 kv_heads=2 head_dim=16 mask=window(5,0) kv_cache=paged(8) kv_dtype=fp8_e4m3 rope=interleaved lse=true"
    "heads=2 head_dim=16 mask=causal kv_cache=contiguous kv_dtype=fp8_e4m3 dtype=bf16")
# The AArch64 tree (arm_suites.cmake, label arm) runs a share: the int8 paged and fp8 paged specs
# (every spec with ATTNC_FULL_TESTS).
if(CMAKE_CROSSCOMPILING)
  list(GET attnc_kv_quant_specs 1 kv_quant_int8)
  list(GET attnc_kv_quant_specs 2 kv_quant_fp8)
  set(arm_kv_quant_specs "${kv_quant_int8}" "${kv_quant_fp8}")
  if(ATTNC_FULL_TESTS)
    set(arm_kv_quant_specs ${attnc_kv_quant_specs})
  endif()
  attn_add_kernels(attnc_arm_kv_quant_kernels SPECS ${arm_kv_quant_specs} TARGETS ${ATTNC_TEST_TARGETS})
  attnc_add_test(kernels_arm_kv_quant_test LABEL arm SOURCES kv_quant_test.cpp kv_codes.cpp
    LIBS attnc_arm_kv_quant_kernels attnc_kernel_test_support)
  target_compile_definitions(kernels_arm_kv_quant_test PRIVATE KV_QUANT_SUBSET=1)
  return()
endif()
attn_add_kernels(attnc_kv_quant_kernels SPECS ${attnc_kv_quant_specs} TARGETS native)
attnc_add_test(kernels_kv_quant_test LABEL sequence SOURCES kv_quant_test.cpp kv_codes.cpp
  LIBS attnc_kv_quant_kernels attnc_kernel_test_support)
attnc_add_refused_calls_test(kernels_kv_quant_refused_calls_test LABEL sequence LIBS attnc_kv_quant_kernels)
# The same suite on the OpenCL variant (PoCL; label opencl): the quantizing append and the
# decoding reads on the GPU schedules, f32 specs only (GPU variants take dtype=f32).
if(ATTNC_GPU_TESTS)
  set(attnc_kv_quant_f32_specs ${attnc_kv_quant_specs})
  list(FILTER attnc_kv_quant_f32_specs EXCLUDE REGEX "dtype=[bf]")
  attn_add_kernels(attnc_opencl_kv_quant_kernels SPECS ${attnc_kv_quant_f32_specs} TARGETS opencl)
  attnc_add_test(kernels_opencl_kv_quant_test LABEL opencl SOURCES kv_quant_test.cpp kv_codes.cpp
    LIBS attnc_opencl_kv_quant_kernels attnc_kernel_test_support)
  target_compile_definitions(kernels_opencl_kv_quant_test PRIVATE KV_QUANT_SUBSET=1)
  attnc_add_refused_calls_test(kernels_opencl_kv_quant_refused_calls_test LABEL opencl GPU OPENCL
    LIBS attnc_opencl_kv_quant_kernels)
endif()

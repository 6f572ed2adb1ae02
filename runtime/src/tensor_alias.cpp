// tensor_alias.cpp: the memory each tensor of a call spans, and overlaps involving a written one.
#include "tensor_alias.h"

#include <cinttypes>
#include <cstdint>

#include "status_internal.h"

namespace {

int64_t element_bytes(attn_dtype dtype) {
  switch (dtype) {
    case ATTN_F16:
    case ATTN_BF16:
      return 2;
    case ATTN_U8:
    case ATTN_I8:
      return 1;
    case ATTN_U64:
      return 8;
    default:
      return 4;
  }
}

// Bytes [first, end) of a checked tensor: sizes >= 1, strides >= 0 and the span below 2^31
// elements (tensor_check.cpp), so nothing here overflows. A declared scalar is one element, its
// shape and strides not read (a caller may give it rank 1 with strides that are not valid).
struct Span {
  uintptr_t first, end;
};

Span span_of(const attn_arg_info &info, const attn_tensor &t) {
  int64_t last = 0, stride = 1;
  for (int j = info.rank == 0 ? -1 : t.rank - 1; j >= 0; --j) {
    const int64_t step = t.strides != nullptr ? t.strides[j] : stride;
    last += (t.shape[j] - 1) * step;
    stride *= t.shape[j];
  }
  const uintptr_t first = reinterpret_cast<uintptr_t>(t.data);
  return {first, first + static_cast<uintptr_t>((last + 1) * element_bytes(t.dtype))};
}

bool overlap(const attn_arg_info &a_info, const attn_tensor &a, const attn_arg_info &b_info,
             const attn_tensor &b) {
  if (a.memory != b.memory) return false;  // host memory and device memory never alias
  if (a.memory == ATTN_OPENCL_BUFFER) return a.data == b.data;
  const Span x = span_of(a_info, a), y = span_of(b_info, b);
  return x.first < y.end && y.first < x.end;
}

}  // namespace

namespace attn::detail {

attn_status check_no_aliasing(const attn_kernel_desc &desc, const std::vector<const attn_arg *> &given) {
  for (int w = 0; w < desc.arg_count; ++w) {
    if (given[static_cast<size_t>(w)] == nullptr || !desc.args[w].is_output) continue;
    const attn_tensor &written = given[static_cast<size_t>(w)]->tensor;
    for (int o = 0; o < desc.arg_count; ++o) {
      // A pair of written tensors is reported once, at the first of the two.
      if (o == w || given[static_cast<size_t>(o)] == nullptr || (desc.args[o].is_output && o < w)) continue;
      const attn_tensor &other = given[static_cast<size_t>(o)]->tensor;
      if (!overlap(desc.args[w], written, desc.args[o], other)) continue;
      const char *role = desc.args[w].is_output == ATTN_ARG_INOUT ? "in-out" : "output";
      const Span ws = span_of(desc.args[w], written), os = span_of(desc.args[o], other);
      return fail(
          ATTN_ERR_ALIASED,
          "%s tensor '%s' shares memory with tensor '%s' (their bytes [%p, +%" PRId64 ") and [%p, +%" PRId64
          ") overlap): outputs and in-outs need memory no other tensor of the call uses",
          role, desc.args[w].name, desc.args[o].name, written.data, static_cast<int64_t>(ws.end - ws.first),
          other.data, static_cast<int64_t>(os.end - os.first));
    }
  }
  return ATTN_OK;
}

}  // namespace attn::detail

// layout_hint.cpp: the sentence a shape error adds for a PyTorch-style [B,H,S,D] tensor.
#include "layout_hint.h"

namespace attn::detail {
namespace {

std::string layout(const attn_arg_info &info, int first, int second) {
  return std::string("[") + info.dim_names[0] + "," + info.dim_names[first] + "," + info.dim_names[second] + "," +
         info.dim_names[3] + "]";
}

}  // namespace

std::string head_major_hint(const attn_arg_info &info, const attn_tensor &t) {
  if (info.rank != 4 || t.rank != 4 || t.shape == nullptr) return "";
  for (int d = 0; d < 4; ++d) {
    if (info.dim_names[d] == nullptr || info.dim_names[d][0] == '\0') return "";
  }
  const int64_t heads = info.fixed_shape[2];
  if (info.fixed_shape[1] != 0 || heads <= 0 || t.shape[1] != heads || t.shape[2] == heads) return "";
  return "; this looks like " + layout(info, 2, 1) + " (heads before the sequence, as PyTorch's attention "
         "takes it): the kernel takes " + layout(info, 1, 2) + ", so swap dims 1 and 2 (a strided view "
         "such as x.transpose(1, 2) is enough: only the innermost dim must be contiguous)";
}

}  // namespace attn::detail

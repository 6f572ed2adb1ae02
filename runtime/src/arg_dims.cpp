// arg_dims.cpp: declared dims in messages, and the rule that maps a lower-rank tensor onto them.
#include "arg_dims.h"

#include <algorithm>

#include "status_internal.h"

namespace attn::detail {

bool dim_broadcasts(const attn_arg_info &info, int dim) {
  return dim >= 0 && dim < 32 && ((info.broadcast_dims >> dim) & 1u) != 0;
}

int leading_broadcast_dims(const attn_arg_info &info) {
  int count = 0;
  while (count < info.rank && dim_broadcasts(info, count)) ++count;
  return count;
}

int lowest_rank(const attn_arg_info &info) {
  const int declared = info.min_rank > 0 && info.min_rank < info.rank ? info.min_rank : info.rank;
  return std::max(declared, info.rank - leading_broadcast_dims(info));
}

std::string dim_label(const attn_arg_info &info, int dim) {
  std::string label = "dim " + std::to_string(dim);
  const char *name = info.dim_names[dim];
  if (name != nullptr && name[0] != '\0') label += std::string(" (") + name + ")";
  return label;
}

std::string dims_text(const attn_arg_info &info) {
  std::string text = "[";
  for (int d = 0; d < info.rank; ++d) {
    if (d > 0) text += ", ";
    const char *name = info.dim_names[d];
    text += name != nullptr && name[0] != '\0' ? std::string(name)
            : info.fixed_shape[d] > 0          ? std::to_string(info.fixed_shape[d])
                                               : std::string("?");
  }
  return text + "]";
}

namespace {

// "4 ([B, Sk, 1, 4])", or "2 to 4: [B, H, Sq, Sk], a lower rank leaving out dim 0 (B), then
// dim 1 (H)" for an argument that broadcasts.
std::string expected_ranks(const attn_arg_info &info) {
  const int lowest = lowest_rank(info);
  if (lowest == info.rank) return std::to_string(info.rank) + " (" + dims_text(info) + ")";
  std::string text = std::to_string(lowest) + " to " + std::to_string(info.rank) + ": " + dims_text(info) +
                     ", a lower rank leaving out ";
  for (int left_out = 0; left_out < info.rank - lowest; ++left_out) {
    if (left_out > 0) text += ", then ";
    text += dim_label(info, left_out);
  }
  return text;
}

}  // namespace

attn_status map_caller_dims(const attn_arg_info &info, int rank, int *declared) {
  const char *name = info.name;
  const int declared_min = info.min_rank > 0 && info.min_rank < info.rank ? info.min_rank : info.rank;
  if (rank > info.rank || rank < declared_min) {
    return fail(ATTN_ERR_RANK, "tensor '%s' has rank %d, kernel expects %s", name, rank,
                expected_ranks(info).c_str());
  }
  const int missing = info.rank - rank, leading = leading_broadcast_dims(info);
  if (missing > leading) {
    // The table allows this rank, but one of the outer dims it leaves out must be given.
    return fail(ATTN_ERR_RANK,
                "tensor '%s' has rank %d, but %s cannot be left out: it does not broadcast "
                "(kernel expects %s)",
                name, rank, dim_label(info, leading).c_str(), expected_ranks(info).c_str());
  }
  // As NumPy and PyTorch align shapes: from the right, the missing dims being the outermost.
  for (int j = 0; j < rank; ++j) declared[j] = missing + j;
  return ATTN_OK;
}

}  // namespace attn::detail

// arg_dims.h: how a kernel's declared dims read in messages, and how a caller's dims map onto them.
#pragma once

#include <string>

#include "attn/runtime.h"

namespace attn::detail {

// Whether declared dim `dim` may be given with size 1 (broadcast).
bool dim_broadcasts(const attn_arg_info &info, int dim);

// The outermost dims whose broadcast bits are all set: the only dims a caller may leave out.
int leading_broadcast_dims(const attn_arg_info &info);

// The fewest dims a caller may give: min_rank, but never fewer than leaving out every leading
// broadcast dim allows (min_rank 0 means exactly rank).
int lowest_rank(const attn_arg_info &info);

// "dim 3 (head_dim)" when the kernel names declared dim `dim`, "dim 3" otherwise.
std::string dim_label(const attn_arg_info &info, int dim);

// "[B, H, Sq, Sk]": each declared dim's name, else its fixed size.
std::string dims_text(const attn_arg_info &info);

// Maps a caller's `rank` dims (outermost first) onto declared dims: declared[j] is the declared
// dim of caller dim j. Shapes align from the right, as in NumPy and PyTorch: a lower rank leaves
// out the outermost dims, which must broadcast (rank 3 of [B, H, Sq, Sk] with B and H broadcast
// is [H, Sq, Sk]; a per-batch mask is [B, 1, Sq, Sk]). Records
// ATTN_ERR_RANK naming the tensor and the ranks it may have when rank is not accepted.
attn_status map_caller_dims(const attn_arg_info &info, int rank, int *declared);

}  // namespace attn::detail

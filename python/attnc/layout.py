"""The sentence a shape error adds when a tensor looks head-major ([B,H,S,D], PyTorch's order)
where the kernel takes [B,S,H,D]; the C runtime adds the same (runtime/src/layout_hint.cpp)."""


def head_major_hint(arg, shape):
    """'; this looks like [B,H,Sq,D] ...' when `shape` is arg's layout with dims 1 and 2 swapped
    (dim 1 a run-time size, dim 2 fixed, and shape[1] holding that fixed size where shape[2] does
    not); '' otherwise."""
    if len(arg.shape) != 4 or len(shape) != 4:
        return ""
    heads = arg.shape[2]
    if not isinstance(heads, int) or isinstance(arg.shape[1], int) or shape[1] != heads or shape[2] == heads:
        return ""
    b, s, h, d = arg.labels
    return (f"; this looks like [{b},{h},{s},{d}] (heads before the sequence, as PyTorch's attention takes "
            f"it): the kernel takes [{b},{s},{h},{d}], so swap dims 1 and 2 (a strided view such as "
            f"np.swapaxes(x, 1, 2) or x.transpose(1, 2) is enough: only the innermost dim must be contiguous)")

"""Checks on a call's arrays that the binding makes before it copies or passes any of them: sizes
the runtime would refuse (ShapeError before a broadcast view is materialized) and written arrays
that share memory with another array of the call (AliasedError)."""
import math

import numpy as np

from . import _capi
from .errors import AliasedError, ShapeError


def layout(array):
    """What makes an array unusable as an output: "read-only", "not C-contiguous", or both."""
    problems = [p for p, bad in (("read-only", not array.flags.writeable),
                                 ("not C-contiguous", not array.flags.c_contiguous)) if bad]
    return " and ".join(problems) or "fine"


def check_sizes(shapes):
    """ShapeError for a tensor ({name: shape}: the inputs given, the outputs to allocate) of more
    elements than a kernel addresses (2^31 - 1), before np.ascontiguousarray copies an input or
    np.empty allocates an output: a broadcast view of 2^32 elements costs nothing to make and
    gigabytes to copy."""
    for name, shape in shapes.items():
        elements = math.prod(int(n) for n in shape)
        if elements > _capi.MAX_ELEMENTS:
            raise ShapeError(f"tensor '{name}' has shape {tuple(shape)}, {elements} elements; kernels address at "
                             f"most {_capi.MAX_ELEMENTS}")


def check_no_aliasing(tensors, outputs, inouts):
    """AliasedError where an output or in-out (names in outputs, inouts) shares memory with any
    other NumPy array of the call: out=q, or k_cache and v_cache one array, would give wrong
    results. Written arrays are C-contiguous, so overlapping bounds are overlapping elements."""
    arrays = [(name, a) for name, a in tensors.items() if isinstance(a, np.ndarray)]
    for i, (first, a) in enumerate(arrays):
        for second, b in arrays[i + 1:]:
            if (first in outputs or first in inouts or second in outputs or second in inouts) and \
                    np.may_share_memory(a, b):
                name, other = (first, second) if first in outputs or first in inouts else (second, first)
                role = "in-out" if name in inouts else "output"
                raise AliasedError(f"{role} tensor '{name}' shares memory with tensor '{other}': outputs and "
                                   f"in-outs need memory no other tensor of the call uses")

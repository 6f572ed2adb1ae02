"""attnc: run attnc-generated attention kernels (shared kernel libraries, `attnc gen --shared`) on
NumPy arrays, through the C runtime libattnc_runtime.so (ctypes; no compiler at run time).

    import attnc
    lib = attnc.Library("build/kernels/attn_kernels.so")      # runtime: see runtime_path()
    k = lib.kernels[0]                                         # or lib["attn_core_h2_..."]
    print(k.id, [str(a) for a in k.args])
    outs = k.run(q=q, k=keys, v=v)                             # {"out": ndarray, ...}

Where libattnc_runtime.so comes from, in order: the runtime= argument of Library (or load_runtime),
the environment variable ATTNC_RUNTIME, the file beside this package, the source tree's
build/runtime/ (an editable install from the repository), the loader's search path.
Errors are AttnError subclasses, one per attn_status (ShapeError, InvalidValueError, ...), with
.status, .status_name and the runtime's .message. bf16 tensors are uint16 arrays of bit patterns
(to_bf16, from_bf16); f16 tensors are float16 arrays.
"""
import numpy as np

from . import _capi
from .errors import *  # noqa: F401,F403 (the exception classes)
from .errors import AttnError, error_for
from .library import Argument, DeviceArray, Kernel, Library

RUNTIME_ENV = _capi.RUNTIME_ENV


def load_runtime(path=None):
    """Loads libattnc_runtime.so now (from path, else as the module docstring says) and returns the
    path it was loaded from."""
    _capi.runtime(path)
    return str(_capi._runtime[0])


def set_cuda_context(context, stream=None):
    """Kernels run in this CUDA context (a CUcontext as an int; None: the defaults of attn/runtime.h)
    and on this stream (a CUstream as an int, such as torch.cuda.current_stream().cuda_stream;
    None: the legacy default stream). attn_run returns once the work is queued on the stream."""
    lib = _capi.runtime()
    status = lib.attn_set_cuda_context(context or None, stream or None)
    if status != 0:
        raise error_for(status, lib.attn_last_error().decode())


def set_max_isa(isa):
    """Caps the instruction set of every kernel in the process ("avx2", ...; None: no cap)."""
    lib = _capi.runtime()
    status = lib.attn_set_max_isa(None if isa is None else isa.encode())
    if status != 0:
        raise error_for(status, lib.attn_last_error().decode())


def to_bf16(x):
    """float32 (or anything NumPy converts to it) -> bf16 bit patterns (uint16), rounded to nearest
    even; NaN stays a quiet NaN."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    rounded = ((bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    return np.where(nan, ((bits >> 16) | np.uint32(0x40)).astype(np.uint16), rounded)


def from_bf16(bits):
    """bf16 bit patterns (uint16) -> float32, exactly."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


__all__ = ["Library", "Kernel", "Argument", "AttnError", "load_runtime", "set_max_isa", "to_bf16", "from_bf16",
           "RUNTIME_ENV"] + [n for n in dir() if n.endswith("Error") and n != "AttnError"]

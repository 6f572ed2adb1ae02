"""The attnc runtime's C ABI (attn/runtime.h, ABI version 6) as ctypes declarations, and where the
runtime shared library is found."""
import ctypes
import ctypes.util
import os
import pathlib
import threading

ABI_VERSION = 6
ARG_INOUT = 2  # attn_arg_info.is_output of an in-out tensor (ATTN_ARG_INOUT)
MAX_RANK = 8
MAX_THREADS = 256  # ATTN_MAX_THREADS: the most threads attn_kernel_set_threads takes
MAX_ELEMENTS = 2**31 - 1  # the most elements a tensor of a call may hold

# attn_dtype
F32, F16, BF16, I32, U8, I8, U64 = 1, 2, 3, 4, 5, 6, 7
# attn_memory
HOST, CUDA_DEVICE, OPENCL_BUFFER = 0, 1, 2


class Tensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("dtype", ctypes.c_int),
        ("rank", ctypes.c_int32),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("memory", ctypes.c_int),  # attn_memory: 0 host, 1 CUDA device pointer, 2 OpenCL buffer
    ]


class Arg(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("tensor", Tensor)]


class ArgInfo(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("dtype", ctypes.c_int),
        ("rank", ctypes.c_int32),
        ("is_output", ctypes.c_int32),
        ("fixed_shape", ctypes.c_int64 * MAX_RANK),
        ("dim_names", ctypes.c_char_p * MAX_RANK),
        ("broadcast_dims", ctypes.c_uint32),
        ("min_rank", ctypes.c_int32),
        ("is_optional", ctypes.c_int32),  # ABI 5: an input the caller may leave out (rank 0 f32)
        ("default_value", ctypes.c_double),  # what the kernel reads when it is left out
    ]


_PROTOTYPES = {
    # name: (restype, argtypes)
    "attn_last_error": (ctypes.c_char_p, []),
    "attn_status_name": (ctypes.c_char_p, [ctypes.c_int]),
    "attn_runtime_abi_version": (ctypes.c_int, []),
    "attn_library_open": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]),
    "attn_library_open_unverified": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]),
    "attn_library_close": (None, [ctypes.c_void_p]),
    "attn_library_find_kernel": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]),
    "attn_library_kernel_count": (ctypes.c_int, [ctypes.c_void_p]),
    "attn_library_kernel_at": (ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_int]),
    "attn_kernel_id": (ctypes.c_char_p, [ctypes.c_void_p]),
    "attn_kernel_spec": (ctypes.c_char_p, [ctypes.c_void_p]),
    "attn_kernel_target": (ctypes.c_char_p, [ctypes.c_void_p]),
    "attn_kernel_arg_count": (ctypes.c_int, [ctypes.c_void_p]),
    "attn_kernel_arg": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ArgInfo)]),
    "attn_kernel_set_threads": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int]),
    "attn_kernel_selected_target": (ctypes.c_char_p, [ctypes.c_void_p]),
    "attn_set_max_isa": (ctypes.c_int, [ctypes.c_char_p]),
    "attn_set_cuda_context": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p]),
    "attn_run": (ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(Arg), ctypes.c_int]),
}

RUNTIME_ENV = "ATTNC_RUNTIME"
_RUNTIME_NAME = "libattnc_runtime.so"
_lock = threading.Lock()
_runtime = None  # (path, ctypes.CDLL): one runtime per process, its state is process-wide


def _candidates():
    """Where the runtime is looked for when no path is given, in order."""
    env = os.environ.get(RUNTIME_ENV)
    if env:
        return [pathlib.Path(env)]
    here = pathlib.Path(__file__).resolve().parent
    found = [here / _RUNTIME_NAME, here.parent.parent / "build" / "runtime" / _RUNTIME_NAME]
    system = ctypes.util.find_library("attnc_runtime")
    if system:
        found.append(pathlib.Path(system))
    return found


def runtime(path=None):
    """The loaded runtime (a ctypes.CDLL with prototypes set). path, or else $ATTNC_RUNTIME, or
    else libattnc_runtime.so beside this package, in the source tree's build/runtime (an editable
    install), or on the loader's path. Only one runtime may be loaded in a process."""
    global _runtime
    from .errors import AbiMismatchError, LoadError

    with _lock:
        if _runtime is not None:
            if path is not None and pathlib.Path(path).resolve() != _runtime[0]:
                raise LoadError(f"attnc: a runtime is already loaded from {_runtime[0]}; one per process", 11)
            return _runtime[1]
        tried = [pathlib.Path(path)] if path is not None else _candidates()
        for candidate in tried:
            # A bare name from find_library is for the loader to resolve.
            if candidate.is_file() or str(candidate) == candidate.name:
                try:
                    lib = ctypes.CDLL(str(candidate))
                except OSError as e:
                    raise LoadError(f"attnc: cannot load the runtime {candidate}: {e}", 11) from e
                break
        else:
            raise LoadError(
                "attnc: libattnc_runtime.so not found (tried "
                + ", ".join(str(t) for t in tried)
                + f"); build the target attnc_runtime_shared and pass its path, or set {RUNTIME_ENV}",
                11,
            )
        for name, (restype, argtypes) in _PROTOTYPES.items():
            fn = getattr(lib, name)
            fn.restype = restype
            fn.argtypes = argtypes
        version = lib.attn_runtime_abi_version()
        if version != ABI_VERSION:
            raise AbiMismatchError(
                f"attnc: the runtime {candidate} has ABI version {version}; this binding speaks {ABI_VERSION}", 12
            )
        _runtime = (candidate.resolve(), lib)
        return lib

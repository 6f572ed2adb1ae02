"""Kernel libraries (attnc gen --shared) opened through the runtime, their kernels, and runs on NumPy arrays."""
import ctypes
import contextlib
import re
import threading
from dataclasses import dataclass

import numpy as np

from . import _capi, _tensor_checks
from .errors import (AttnError, DTypeError, InvalidArgumentError, MissingTensorError, RankError, ShapeError,
                     StrideError, UnknownTensorError, error_for)
from .layout import head_major_hint

# attn_dtype -> (name, the NumPy dtype an array of it has). bf16 travels as its bit patterns (uint16).
DTYPES = {
    _capi.F32: ("f32", np.dtype(np.float32)),
    _capi.F16: ("f16", np.dtype(np.float16)),
    _capi.BF16: ("bf16", np.dtype(np.uint16)),
    _capi.I32: ("i32", np.dtype(np.int32)),
    _capi.U8: ("u8", np.dtype(np.uint8)),
    _capi.I8: ("i8", np.dtype(np.int8)),
    _capi.U64: ("u64", np.dtype(np.uint64)),
}


class DeviceArray:
    """A CUDA array as its __cuda_array_interface__ describes it (a PyTorch CUDA tensor, a CuPy or
    Numba array): passed to attn_run as a device tensor, without a copy. bf16 goes as its bits:
    a torch.bfloat16 tensor .view(torch.int16) (typestr <i2) or an uint16 array."""

    def __init__(self, obj):
        interface = obj.__cuda_array_interface__
        self.obj = obj  # keeps the memory alive
        self.shape = tuple(int(n) for n in interface["shape"])
        self.ndim = len(self.shape)
        self.dtype = np.dtype(interface["typestr"])
        self.ptr, self.readonly = int(interface["data"][0]), bool(interface["data"][1])
        itemsize = self.dtype.itemsize
        strides = interface.get("strides")
        if strides is None:
            elements, step = [], 1
            for n in reversed(self.shape):
                elements.insert(0, step)
                step *= n
            self.strides = tuple(elements)
        else:
            if any(int(b) % itemsize for b in strides):
                raise StrideError(f"device array strides {tuple(strides)} (bytes) are not multiples of its "
                                  f"{itemsize}-byte elements")
            self.strides = tuple(int(b) // itemsize for b in strides)


def as_device_array(x):
    """x as a DeviceArray where it exposes __cuda_array_interface__, else None."""
    return DeviceArray(x) if hasattr(x, "__cuda_array_interface__") else None


def _text(raw):
    return raw.decode("utf-8", "replace") if raw is not None else ""


def _size(name, sizes):
    """A run-time size by name; "ceil(Sq/128)" (a block mask's blocks) from the size it names."""
    derived = re.fullmatch(r"ceil\((\w+)/(\d+)\)", name)
    if derived and derived.group(1) in sizes:
        return -(-sizes[derived.group(1)] // int(derived.group(2)))
    return sizes.get(name, 1)


def _check(lib, status):
    if status != 0:
        raise error_for(status, _text(lib.attn_last_error()))


@dataclass(frozen=True)
class Argument:
    """One argument as the kernel declares it. shape: outermost first, an int where the spec fixes
    the size, else the run-time size's name ("B", "Sq", "Sk", "S"); labels: every dim's name ("H",
    "D", ... for fixed sizes). broadcast: the dims (outermost = 0) a caller may give as 1;
    min_rank: the fewest dims a caller may give (leading ones left out), 0 when all are needed."""

    name: str
    dtype: str
    numpy_dtype: np.dtype
    code: int  # attn_dtype
    shape: tuple
    labels: tuple
    is_output: bool
    broadcast: tuple
    min_rank: int
    is_inout: bool = False  # given by the caller and written in place (k_cache, v_cache)
    is_optional: bool = False  # an input the caller may leave out (runtime_scale's scale)
    default: float = 0.0  # what the kernel reads for an optional input left out

    def __str__(self):
        dims = ",".join(str(d) for d in self.shape)
        role = "i/o" if self.is_inout else "out" if self.is_output else "in "
        return f"{role} {self.name} {self.dtype}[{dims}]" + (f" (optional, default {self.default})" if self.is_optional else "")


class Kernel:
    """A kernel of an open Library; valid while the library is open."""

    def __init__(self, library, handle):
        self._library = library
        self._handle = handle
        lib = library._lib
        self.id = _text(lib.attn_kernel_id(handle))
        self.spec = _text(lib.attn_kernel_spec(handle))
        self.target = _text(lib.attn_kernel_target(handle))
        self.args = tuple(self._argument(i) for i in range(lib.attn_kernel_arg_count(handle)))

    def _argument(self, index):
        info = _capi.ArgInfo()
        _check(self._library._lib, self._library._lib.attn_kernel_arg(self._handle, index, ctypes.byref(info)))
        names = [_text(info.dim_names[d]) for d in range(info.rank)]
        shape = tuple(int(info.fixed_shape[d]) if info.fixed_shape[d] > 0 else names[d] for d in range(info.rank))
        dtype_name, numpy_dtype = DTYPES[info.dtype]
        broadcast = tuple(d for d in range(info.rank) if info.broadcast_dims >> d & 1)
        return Argument(_text(info.name), dtype_name, numpy_dtype, int(info.dtype), shape, tuple(names),
                        bool(info.is_output),
                        broadcast, int(info.min_rank), info.is_output == _capi.ARG_INOUT,
                        bool(info.is_optional), float(info.default_value))

    @property
    def selected_target(self):
        """The Halide target of the variant a run would use now ('' when none can run here);
        target is the whole dispatch list."""
        return _text(self._library._lib.attn_kernel_selected_target(self._handle))

    @property
    def inputs(self):
        return tuple(a for a in self.args if not a.is_output or a.is_inout)

    @property
    def outputs(self):
        return tuple(a for a in self.args if a.is_output and not a.is_inout)

    def __repr__(self):
        return f"<attnc.Kernel {self.id}>"

    def set_threads(self, threads):
        """Threads of the kernel's pool (0: one per core) up to 256 (_capi.MAX_THREADS, the most
        Halide's pool holds), for every kernel sharing the pool. Another count raises
        InvalidArgumentError (and would not fit the C int it travels as)."""
        threads = int(threads)
        if not 0 <= threads <= _capi.MAX_THREADS:
            raise InvalidArgumentError(f"kernel '{self.id}': threads is {threads}, must be 0 (one per core) to "
                                       f"{_capi.MAX_THREADS} (the most a kernel's thread pool holds)")
        lib = self._library._lib
        with self._library._call():
            _check(lib, lib.attn_kernel_set_threads(self._handle, threads))

    def sizes(self, **inputs):
        """The run-time sizes ({"B": 2, "Sq": 7, ...}) the inputs give, checked as attn_run checks
        them: dtype, rank (leading dims left out only where they broadcast), fixed sizes, equal
        sizes for equal names. Raises DTypeError, RankError, ShapeError, MissingTensorError or
        UnknownTensorError."""
        known = {a.name: a for a in self.args}
        for name in inputs:
            if name not in known:
                raise UnknownTensorError(f"kernel '{self.id}' takes no tensor '{name}' (it takes "
                                         + ", ".join(a.name for a in self.args) + ")")
        sizes = {}
        for arg in self.inputs:
            if arg.name not in inputs:
                if arg.is_optional:
                    continue
                raise MissingTensorError(f"kernel '{self.id}' needs the tensor '{arg.name}' ({arg})")
            self._bind(arg, inputs[arg.name], sizes)
        return sizes

    def _bind(self, arg, array, sizes):
        if not isinstance(array, np.ndarray):
            array = as_device_array(array)
            if array is None:
                raise DTypeError(f"'{arg.name}' must be a NumPy array or a CUDA array "
                                 f"(__cuda_array_interface__)")
        same_bits = arg.dtype == "bf16" and isinstance(array, DeviceArray) and array.dtype == np.dtype("<i2")
        if array.dtype != arg.numpy_dtype and not same_bits:
            hint = " (bf16 as its bit patterns: attnc.to_bf16(x))" if arg.dtype == "bf16" else ""
            raise DTypeError(f"'{arg.name}' must be {arg.dtype} (NumPy {arg.numpy_dtype}){hint}, "
                             f"got {array.dtype}")
        rank = len(arg.shape)
        if rank == 0 and array.shape == (1,):
            return  # a scalar as one element (a run-time scale, dropout's seed), as the runtime takes it
        lowest = arg.min_rank or rank
        left_out = rank - array.ndim
        if array.ndim > rank or array.ndim < lowest or any(d not in arg.broadcast for d in range(max(left_out, 0))):
            allowed = f"{rank}" if lowest == rank else f"{lowest} to {rank}"
            raise RankError(f"'{arg.name}' must have {allowed} dims ({arg}), got shape {array.shape}")
        for d in range(left_out, rank):
            given = int(array.shape[d - left_out])
            want = arg.shape[d]
            if given == 1 and d in arg.broadcast:
                continue
            if isinstance(want, int):
                if given != want:
                    raise ShapeError(f"'{arg.name}' dim {d} ({arg.labels[d]}) must be {want} ({arg}), "
                                     f"got shape {array.shape}{head_major_hint(arg, array.shape)}")
            elif sizes.setdefault(want, given) != given:
                raise ShapeError(f"'{arg.name}' dim {d} is {want} = {given}, but another tensor gives "
                                 f"{want} = {sizes[want]}")

    def output_shapes(self, **inputs):
        """{name: shape} of every output for these inputs."""
        sizes = self.sizes(**inputs)
        return {a.name: tuple(d if isinstance(d, int) else _size(d, sizes) for d in a.shape) for a in self.outputs}

    def __call__(self, **tensors):
        return self.run(**tensors)

    def bind(self, **tensors):
        """Checks the tensors and builds the call once, as run() does: returns (call, outputs),
        where each call() runs the kernel again on the same arrays (a timing loop: keep them alive,
        as they are) and outputs is run()'s result."""
        return self._prepare(tensors)

    def run(self, **tensors):
        """Runs the kernel on NumPy arrays given by argument name and returns {name: array} of its
        outputs: those given (C-contiguous, writeable, of the kernel's dtype and shape) are written
        in place, the others allocated. CUDA arrays (__cuda_array_interface__: PyTorch, CuPy) go to
        the kernel's CUDA variant as device tensors, without copies, mixed with NumPy ones as
        wished; a CUDA output is written in place (set_cuda_context: the stream). Inputs are
        checked here first (see sizes()); what the runtime refuses (a value out of range, an
        unsupported CPU, ...) raises its status's exception with its message."""
        call, results = self._prepare(tensors)
        call()
        return results

    def _prepare(self, tensors):
        lib = self._library._lib
        self._library._check_open()
        outputs = {a.name for a in self.outputs}
        inputs = {k: v for k, v in tensors.items() if k not in outputs}
        shapes = self.output_shapes(**inputs)
        given_shapes = {name: a.shape if isinstance(a, np.ndarray) else as_device_array(a).shape
                        for name, a in inputs.items()}
        _tensor_checks.check_sizes({**given_shapes, **shapes})
        results = {}
        for arg in self.outputs:
            given = tensors.get(arg.name)
            if given is None:
                results[arg.name] = np.empty(shapes[arg.name], dtype=arg.numpy_dtype)
                continue
            device = as_device_array(given) if not isinstance(given, np.ndarray) else None
            if device is not None:
                if device.dtype != arg.numpy_dtype and not (arg.dtype == "bf16" and device.dtype == np.dtype("<i2")):
                    raise DTypeError(f"output '{arg.name}' must be {arg.dtype} ({arg}), got {device.dtype}")
                if device.shape != shapes[arg.name]:
                    raise ShapeError(f"output '{arg.name}' must have shape {shapes[arg.name]}, got {device.shape}")
                if device.readonly:
                    raise StrideError(f"output '{arg.name}' is a read-only device array")
                results[arg.name] = given
                continue
            if not isinstance(given, np.ndarray) or given.dtype != arg.numpy_dtype:
                raise DTypeError(f"output '{arg.name}' must be a {arg.numpy_dtype} NumPy array ({arg})")
            if given.shape != shapes[arg.name]:
                raise ShapeError(f"output '{arg.name}' must have shape {shapes[arg.name]}, got {given.shape}")
            if not given.flags.c_contiguous or not given.flags.writeable:
                raise StrideError(f"output '{arg.name}' must be C-contiguous and writeable (it is "
                                  f"{_tensor_checks.layout(given)})")
            results[arg.name] = given
        inouts = {a.name for a in self.inputs if a.is_inout}
        for name in inouts & inputs.keys():
            given = inputs[name]
            if not isinstance(given, np.ndarray):
                raise AttnError(f"in-out tensor '{name}' must be a NumPy array (kv_cache kernels take host tensors)", 18)
            if not given.flags.c_contiguous or not given.flags.writeable:
                raise StrideError(f"in-out tensor '{name}' must be C-contiguous and writeable (written in place; "
                                  f"it is {_tensor_checks.layout(given)})")
            results[name] = given
        _tensor_checks.check_no_aliasing(tensors, outputs, inouts)

        def host_or_device(name, a):
            if isinstance(a, np.ndarray):
                return a if name in inouts else np.ascontiguousarray(a)
            return as_device_array(a)

        arrays = {name: host_or_device(name, a) for name, a in inputs.items()}
        arrays.update({name: a if isinstance(a, np.ndarray) else as_device_array(a) for name, a in results.items()})
        keep = []  # the shape and stride arrays, alive until attn_run returns
        c_args = (_capi.Arg * len(arrays))()
        for n, (name, array) in enumerate(arrays.items()):
            shape = (ctypes.c_int64 * max(array.ndim, 1))(*array.shape)
            keep.append(shape)
            c_args[n].name = name.encode()
            if isinstance(array, DeviceArray):
                strides = (ctypes.c_int64 * max(array.ndim, 1))(*array.strides)
                keep.append(strides)
                c_args[n].tensor = _capi.Tensor(array.ptr, self._arg(name).code, array.ndim, shape, strides,
                                                _capi.CUDA_DEVICE)
            else:
                c_args[n].tensor = _capi.Tensor(array.ctypes.data, self._arg(name).code, array.ndim, shape, None)
        handle, count = self._handle, len(arrays)

        def call():
            with self._library._call():
                _check(lib, lib.attn_run(handle, c_args, count))
            return keep  # (the closure holds the arrays, shapes and strides c_args points at)

        keep.append(arrays)
        return call, results

    def _arg(self, name):
        return next(a for a in self.args if a.name == name)


class Library:
    """A shared kernel library (attnc gen --shared), opened by the runtime. verify=False opens it
    without checking the file's SHA-256 against its manifest (attn_library_open_unverified).
    runtime: the path of libattnc_runtime.so (else $ATTNC_RUNTIME, ...: see attnc.runtime_path)."""

    def __init__(self, path, verify=True, runtime=None):
        # Calls in flight (attn_run, set_threads): close() waits for them, since unmapping the
        # library under a running kernel crashes the process.
        self._calls = threading.Condition()
        self._running = 0
        self._closing = False
        self._handle = None
        self._lib = _capi.runtime(runtime)
        self.path = str(path)
        handle = ctypes.c_void_p()
        opener = self._lib.attn_library_open if verify else self._lib.attn_library_open_unverified
        _check(self._lib, opener(self.path.encode(), ctypes.byref(handle)))
        self._handle = handle
        count = self._lib.attn_library_kernel_count(handle)
        self.kernels = tuple(Kernel(self, self._lib.attn_library_kernel_at(handle, i)) for i in range(count))

    def _check_open(self):
        if self._handle is None:
            raise InvalidArgumentError(f"the library {self.path} is closed")

    @contextlib.contextmanager
    def _call(self):
        """Around every call into one of the library's kernels: refused once the library is closed,
        and close() waits until it is done."""
        with self._calls:
            if self._closing:
                raise InvalidArgumentError(f"the library {self.path} is being closed")
            self._check_open()
            self._running += 1
        try:
            yield
        finally:
            with self._calls:
                self._running -= 1
                if self._running == 0:
                    self._calls.notify_all()

    def kernel(self, kernel_id):
        """The kernel with that id (UnknownKernelError names the ids there are)."""
        self._check_open()
        for k in self.kernels:
            if k.id == kernel_id:
                return k
        handle = ctypes.c_void_p()
        with self._call():
            _check(self._lib, self._lib.attn_library_find_kernel(self._handle, kernel_id.encode(), ctypes.byref(handle)))
        raise AttnError(f"kernel '{kernel_id}' found by the runtime but not listed", 2)

    def __getitem__(self, kernel_id):
        return self.kernel(kernel_id)

    def close(self):
        """Unloads the library once the calls in flight in other threads have returned (later calls
        raise InvalidArgumentError); its kernels are invalid afterwards."""
        with self._calls:
            self._closing = True
            while self._running:
                self._calls.wait()
            if self._handle is not None:
                self._lib.attn_library_close(self._handle)
                self._handle = None
            self._closing = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

"""The runtime's statuses (attn_status) as Python exceptions: AttnError and one subclass per status."""

# code: (status name, exception class name), as attn/runtime.h numbers them.
_STATUSES = {
    1: ("ATTN_ERR_INVALID_ARGUMENT", "InvalidArgumentError"),
    2: ("ATTN_ERR_UNKNOWN_KERNEL", "UnknownKernelError"),
    3: ("ATTN_ERR_MISSING_TENSOR", "MissingTensorError"),
    4: ("ATTN_ERR_UNKNOWN_TENSOR", "UnknownTensorError"),
    5: ("ATTN_ERR_NULL_DATA", "NullDataError"),
    6: ("ATTN_ERR_DTYPE", "DTypeError"),
    7: ("ATTN_ERR_RANK", "RankError"),
    8: ("ATTN_ERR_SHAPE", "ShapeError"),
    9: ("ATTN_ERR_STRIDE", "StrideError"),
    10: ("ATTN_ERR_KERNEL_FAILED", "KernelFailedError"),
    11: ("ATTN_ERR_LOAD", "LoadError"),
    12: ("ATTN_ERR_ABI_MISMATCH", "AbiMismatchError"),
    13: ("ATTN_ERR_UNSUPPORTED_CPU", "UnsupportedCpuError"),
    14: ("ATTN_ERR_MANIFEST_MISMATCH", "ManifestMismatchError"),
    15: ("ATTN_ERR_INVALID_VALUE", "InvalidValueError"),
    16: ("ATTN_ERR_LIBRARY_INTEGRITY", "LibraryIntegrityError"),
    17: ("ATTN_ERR_NO_DEVICE", "NoDeviceError"),
    18: ("ATTN_ERR_DEVICE_TENSOR", "DeviceTensorError"),
    19: ("ATTN_ERR_ALIASED", "AliasedError"),
}


class AttnError(Exception):
    """A failed runtime call, or a call the binding refused before making it for the same reason.
    .status is the attn_status code, .status_name its name ("ATTN_ERR_SHAPE"), .message the text."""

    status = None

    def __init__(self, message, status=None):
        super().__init__(message)
        if status is not None:
            self.status = status
        self.message = message

    @property
    def status_name(self):
        return _STATUSES.get(self.status, (f"ATTN_STATUS_{self.status}", None))[0]

    def __str__(self):
        return f"{self.status_name}: {self.message}"


_BY_STATUS = {}
for _code, (_status_name, _class_name) in _STATUSES.items():
    _class = type(_class_name, (AttnError,), {"status": _code, "__doc__": f"{_status_name} from the attnc runtime."})
    globals()[_class_name] = _class
    _BY_STATUS[_code] = _class

__all__ = ["AttnError", "error_for"] + [name for name, _ in (v[::-1] for v in _STATUSES.values())]


def error_for(status, message):
    """The exception for a status code and message (AttnError for a code this binding does not know)."""
    cls = _BY_STATUS.get(status, AttnError)
    return cls(message, status)

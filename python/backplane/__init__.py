"""backplane: a tensor library whose backends are plugins, from Python.

    import backplane as bp
    a = bp.asarray([[1.0, 2.0], [3.0, 4.0]], dtype="float32")
    b = bp.softmax(a @ a.T, axis=-1)
    print(b.numpy())

Tensors are immutable and live on one backend (``backplane.backends()``
lists those that open here); ``Tensor.to(backend)`` copies explicitly and
nothing ever moves by itself. Every op of the C library is a function here,
with NumPy's and ONNX's keyword names; errors are ``backplane.Error``
subclasses carrying the library's detailed message. docs/python.md has the
whole API.
"""
import builtins as _builtins

from . import _backplane
from ._backplane import *  # noqa: F401,F403  (the Tensor type, exceptions, every op)
from ._backplane import (  # noqa: F401  (names star-import skips or that shadow builtins)
    Backend,
    Context,
    Error,
    IndexError,
    IOError,
    Tensor,
    abs,
    max,
    min,
    pow,
    round,
    slice,
    sum,
)

__version__ = _backplane._version()


def _tensor_repr(t):
    """repr(Tensor) as NumPy prints an array: Tensor([...], dtype=..., backend=...)."""
    prefix = "Tensor("
    try:
        import numpy as np

        try:
            a = t.numpy()
        except Error:  # bfloat16 without ml_dtypes: show the float32 values
            a = cast(t, "float32").numpy()  # noqa: F405
        if a.size == 0 and a.shape != (0,):  # NumPy shows an empty array's shape
            body = f"[], shape={a.shape}"
        else:
            body = np.array2string(a, separator=", ", prefix=prefix)
            if a.size > np.get_printoptions()["threshold"]:  # and a summarised one's (2.2+)
                body += f", shape={a.shape}"
    except ImportError:
        body = str(t)
    return f"{prefix}{body}, dtype={t.dtype}, backend='{t.backend}')"


_backplane._set_repr(_tensor_repr)


# ---- NumPy's habits: dtypes, indexing, protocols, conveniences -----------------------

from . import _dtypes, _functions, _indexing, _jit, _messages, _numpy_protocols  # noqa: E402
from ._jit import Jitted, Lowered, Profile, RecompilationWarning, jit  # noqa: E402,F401
from ._grad import grad, value_and_grad  # noqa: E402,F401
from . import optim  # noqa: E402,F401
from ._dtypes import dtype  # noqa: E402,F401
from ._functions import (  # noqa: E402,F401
    all,
    any,
    astype,
    copy,
    flatten,
    full_like,
    linspace,
    ones_like,
    ravel,
    stack,
    std,
    var,
    zeros_like,
)

_backplane._set_dtypes(_dtypes.DTYPES)
_backplane._set_index_hook(_indexing.getitem)
_backplane._set_message_hook(_messages.python_message)
_functions.install(Tensor, globals())
_numpy_protocols.install(Tensor)
Tensor.at = property(_indexing._At, doc="x.at[key].set(v) / .add(v): a new tensor with "
                                         "the indexed elements replaced (or added to).")
clip = _functions.clip  # Python numbers take x's dtype; either bound may be None

_arange = arange  # noqa: F405
_eye = eye  # noqa: F405
_full = full  # noqa: F405


def _is_int(v):
    return _functions._is_int(v) and not isinstance(v, Tensor)


def _int_dtype(dtype):
    return dtype is None or _dtypes.dtype(dtype).kind in "iu"


def arange(start, stop=None, step=1, dtype=None, backend=None):
    """Values from start to stop (excluded) by step; arange(n) is 0..n-1.
    dtype None: int64 when every argument is an int, else float64. Integer
    arguments into an integer dtype are exact for every int64."""
    if stop is None:
        start, stop = 0, start
    if _is_int(start) and _is_int(stop) and _is_int(step) and _int_dtype(dtype):
        return _backplane._arange_i64(int(start), int(stop), int(step), dtype=dtype,
                                      backend=backend)
    return _arange(start, stop, step, dtype=dtype, backend=backend)


def full(shape, value, dtype=None, backend=None):
    """value in every element of a new tensor of shape. dtype None: int64 for
    an int, float64 otherwise (bool for a bool). An int into an integer
    dtype keeps every bit of an int64."""
    if _is_int(value) and _int_dtype(dtype):
        return _backplane._full_i64(shape, int(value), dtype=dtype, backend=backend)
    return _full(shape, value, dtype=dtype, backend=backend)


def eye(rows, cols=None, dtype="float64", backend=None):
    """rows x cols (cols defaults to rows) with ones on the main diagonal."""
    return _eye(rows, rows if cols is None else cols, dtype=dtype, backend=backend)


_stats = stats  # noqa: F405


def stats(backend=None, reset=False):
    """A dict of the backend's counters: ops, transfers (h2d, d2h, copies),
    sync_reads, allocs, bytes_in_use, peak_bytes_in_use (the most in use at
    once since the backend opened or the last reset: a training step's
    peak), and jit_compiles (the plans backplane.jit compiled for the
    backend). reset: zero them after reading (the peak restarts from
    bytes_in_use)."""
    d = _stats(backend, reset)
    d["jit_compiles"] = _jit.compiles(d["backend"], reset)
    return d


stats.__wrapped__ = _stats
arange.__wrapped__ = _arange
eye.__wrapped__ = _eye
full.__wrapped__ = _full

__all__ = [n for n in dir(_backplane) if not n.startswith("_")] + [
    "__version__", "dtype", "all", "any", "astype", "copy", "flatten", "full_like", "linspace",
    "ones_like", "ravel", "stack", "std", "var", "zeros_like", "jit", "Jitted", "Lowered",
    "Profile",
    "grad", "value_and_grad", "optim", "RecompilationWarning"]
__all__ = sorted(set(__all__))
_ = _builtins  # the builtins stay reachable although sum, max, ... are ours here

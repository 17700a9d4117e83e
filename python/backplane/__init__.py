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
        body = np.array2string(a, separator=", ", prefix=prefix)
    except ImportError:
        body = str(t)
    return f"{prefix}{body}, dtype={t.dtype}, backend='{t.backend}')"


_backplane._set_repr(_tensor_repr)


# ---- methods that read like NumPy's (each one of the functions above) ---------------

def _shape_args(shape):
    if len(shape) == 1 and not isinstance(shape[0], int):
        return tuple(shape[0])
    return shape


def _reshape(self, *shape):
    return reshape(self, _shape_args(shape))  # noqa: F405


def _transpose(self, *axes):
    return transpose(self, _shape_args(axes) if axes else None)  # noqa: F405


def _astype(self, dtype):
    return cast(self, dtype)  # noqa: F405


def _reduction(fn):
    def method(self, axis=None, keepdims=False):
        return fn(self, axis=axis, keepdims=keepdims)

    method.__name__ = fn.__name__
    method.__doc__ = f"self.{fn.__name__}(axis=None, keepdims=False): backplane.{fn.__name__}(self, ...)"
    return method


Tensor.reshape = _reshape
Tensor.transpose = _transpose
Tensor.astype = _astype
for _fn in (sum, mean, max, min, argmax, argmin, prod):  # noqa: F405
    setattr(Tensor, _fn.__name__, _reduction(_fn))
del _fn

__all__ = [n for n in dir(_backplane) if not n.startswith("_")] + ["__version__"]
__all__ = sorted(set(__all__))
_ = _builtins  # the builtins stay reachable although sum, max, ... are ours here

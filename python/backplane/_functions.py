"""NumPy's conveniences, written with backplane's ops: each runs on the
tensors' backend and returns a Tensor.

flatten/ravel, copy, clip, any, all, std, var, astype, stack, linspace,
zeros_like/ones_like/full_like, arange(n), eye(n), and the Tensor methods
that read like NumPy's.
"""
import builtins
import operator

from . import _backplane as _bp
from ._dtypes import dtype as _dtype

_NoValue = object()


def _backend_of(x, backend):
    if backend is not None:
        return backend
    return x.backend if isinstance(x, _bp.Tensor) else None


def _tensor(x, backend=None, dtype=None):
    if isinstance(x, _bp.Tensor) and (dtype is None or x.dtype == dtype):
        return x
    return _bp.asarray(x, backend=backend, dtype=dtype)


def ravel(x):
    """x as one axis, in C order (free: a reshape)."""
    x = _tensor(x)
    return _bp.reshape(x, (x.size,))


flatten = ravel


def copy(x):
    """A tensor with x's values (tensors are immutable, so x itself would
    do; this makes one that owns its memory, e.g. after asarray(copy=False))."""
    x = _tensor(x)
    return _bp._from_bytes(x.tobytes(), x.dtype, x.shape, backend=x.backend)


def any(x, axis=None, keepdims=False):  # noqa: A001  (NumPy's name)
    """Whether any element (over axis) is nonzero."""
    x = _tensor(x)
    if x.dtype != "bool":
        x = _bp.ne(x, 0)
    return _bp.reduce_any(x, axis=axis, keepdims=keepdims)


def all(x, axis=None, keepdims=False):  # noqa: A001
    """Whether every element (over axis) is nonzero."""
    x = _tensor(x)
    if x.dtype != "bool":
        x = _bp.ne(x, 0)
    return _bp.reduce_all(x, axis=axis, keepdims=keepdims)


def var(x, axis=None, ddof=0, keepdims=False):
    """The variance over axis (NumPy's ddof: divide by n - ddof)."""
    return _bp.reduce_var(_tensor(x), axis=axis, keepdims=keepdims, correction=float(ddof))


def std(x, axis=None, ddof=0, keepdims=False):
    """The standard deviation over axis (NumPy's ddof)."""
    return _bp.reduce_std(_tensor(x), axis=axis, keepdims=keepdims, correction=float(ddof))


def astype(x, dtype):
    """x converted to dtype (backplane.cast)."""
    return _bp.cast(_tensor(x), dtype)


def stack(xs, axis=0):
    """Tensors of one shape joined along a new axis."""
    xs = list(xs)
    if not xs:
        raise ValueError("need at least one tensor to stack")
    first = next((x for x in xs if isinstance(x, _bp.Tensor)), None)
    be = first.backend if first is not None else None
    ts = [_tensor(x, backend=be, dtype=first.dtype if first is not None else None) for x in xs]
    nd = ts[0].ndim + 1
    ax = operator.index(axis)
    if not -nd <= ax < nd:
        raise _bp.ShapeError(f"stack: axis {ax} is out of range for a result of rank {nd}")
    ax %= nd
    return _bp.concat([_bp.unsqueeze(t, ax) for t in ts], axis=ax)


def linspace(start, stop, num=50, endpoint=True, dtype="float64", backend=None):
    """num evenly spaced values from start to stop (stop included unless
    endpoint=False), computed in float64 as NumPy does, then cast."""
    num = operator.index(num)
    if num < 0:
        raise _bp.InvalidArgumentError(f"linspace: num is {num}; it must be >= 0")
    div = (num - 1) if endpoint else num
    i = _bp.arange(0, num, dtype="float64", backend=backend)
    if div > 0:
        step = (float(stop) - float(start)) / div
        y = _bp.add(_bp.mul(i, step), float(start))
        if endpoint and num > 1:  # the last value is stop exactly, as NumPy's
            y = _bp.where(_bp.eq(i, float(num - 1)), float(stop), y)
    else:
        y = _bp.add(_bp.mul(i, 0.0), float(start))
    return y if _dtype(dtype) == "float64" else _bp.cast(y, dtype)


def zeros_like(x, dtype=None, backend=None):
    """Zeros of x's shape, dtype and backend (each may be overridden)."""
    x = _tensor(x)
    return _bp.zeros(x.shape, dtype=dtype or x.dtype, backend=backend or x.backend)


def ones_like(x, dtype=None, backend=None):
    """Ones of x's shape, dtype and backend."""
    x = _tensor(x)
    return _bp.ones(x.shape, dtype=dtype or x.dtype, backend=backend or x.backend)


def full_like(x, fill_value, dtype=None, backend=None):
    """fill_value in x's shape, dtype and backend."""
    x = _tensor(x)
    return _bp.full(x.shape, fill_value, dtype=dtype or x.dtype, backend=backend or x.backend)


def clip(x, min=None, max=None):  # noqa: A002  (NumPy's and ONNX's names)
    """x limited to [min, max]; either bound may be None. Python numbers take
    x's dtype."""
    x = _tensor(x)
    lo = None if min is None else _tensor(min, backend=x.backend,
                                          dtype=None if isinstance(min, _bp.Tensor) else x.dtype)
    hi = None if max is None else _tensor(max, backend=x.backend,
                                          dtype=None if isinstance(max, _bp.Tensor) else x.dtype)
    return _bp.clip(x, lo, hi)


def _method_reduction(fn):
    def method(self, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        _no_out(fn.__name__, out)
        _no_kwargs(fn.__name__, kwargs)
        r = fn(self, axis=axis, keepdims=keepdims)
        return r if dtype is None else _bp.cast(r, dtype)

    method.__name__ = fn.__name__
    method.__doc__ = (f"self.{fn.__name__}(axis=None, keepdims=False): "
                      f"backplane.{fn.__name__}(self, ...)")
    return method


def _method_arg(fn):
    def method(self, axis=None, out=None, keepdims=False):
        _no_out(fn.__name__, out)
        return fn(self, axis=axis, keepdims=keepdims)

    method.__name__ = fn.__name__
    method.__doc__ = f"self.{fn.__name__}(axis=None, keepdims=False)"
    return method


def _no_out(name, out):
    if out is not None:
        raise TypeError(f"{name}: out= is not supported: backplane tensors are immutable, "
                        f"so every op returns a new tensor")


def _no_kwargs(name, kwargs):
    for k, v in kwargs.items():
        if k in ("initial", "where") and v is _NoValue:
            continue
        if k == "where" and v is True:
            continue
        raise TypeError(f"{name}: the keyword {k}= is not supported by backplane")


def _shape_args(shape):
    """reshape(2, 3), reshape((2, 3)), reshape([2, 3]), reshape(np.int64(6))."""
    if len(shape) == 1 and not _is_int(shape[0]):
        return tuple(shape[0])
    return tuple(operator.index(s) for s in shape)


def _is_int(v):
    if isinstance(v, builtins.bool):
        return False
    try:
        operator.index(v)
        return True
    except TypeError:
        return False


def _reshape(self, *shape, order="C"):
    if order != "C":
        raise _bp.InvalidArgumentError("reshape: only order='C' is supported")
    return _bp.reshape(self, _shape_args(shape))


def _transpose(self, *axes):
    if not axes or (len(axes) == 1 and axes[0] is None):
        return _bp.transpose(self, None)
    return _bp.transpose(self, _shape_args(axes))


def _squeeze(self, axis=None):
    return _bp.squeeze(self, axis)


def _format(self, spec):
    """f"{t:.2f}" for a one-element tensor; f"{t}" for any."""
    if not spec:
        return str(self)
    if self.size != 1:
        raise TypeError(f"unsupported format string passed to backplane.Tensor.__format__: "
                        f"a format spec ({spec!r}) needs a one-element tensor, not shape "
                        f"{self.shape}")
    return format(self.item(), spec)


def _index(self):
    """operator.index(t): an integer tensor of one element, any rank 0."""
    if self.ndim != 0 or self.dtype not in ("uint8", "int8", "int16", "uint16", "int32", "uint32",
                                               "int64", "uint64", "bool"):
        raise TypeError("only integer 0-d tensors can be converted to an index")
    return int(self.item())


def _reduce(self):
    """Pickling: the backend's name, the dtype, the shape and the bytes."""
    return (_unpickle, (self.backend, str(self.dtype), self.shape, self.tobytes()))


def _unpickle(backend, dtype, shape, data):
    try:
        be = _bp.backend(backend)
    except _bp.Error as e:
        raise _bp.NotFoundError(
            f"unpickling a tensor of backend '{backend}', which does not open here ({e}); "
            f"load it with the pickled data onto another backend: "
            f"backplane.asarray(...) or pass the tensors through safetensors") from None
    return _bp._from_bytes(data, dtype, shape, backend=be)


def install(Tensor, ns):
    """Attach the methods to Tensor; ns is the package's namespace (its
    reductions)."""
    Tensor.reshape = _reshape
    Tensor.transpose = _transpose
    Tensor.squeeze = _squeeze
    Tensor.astype = lambda self, dtype, copy=True: _bp.cast(self, dtype) \
        if self.dtype != dtype or copy else self
    Tensor.astype.__doc__ = "self.astype(dtype): backplane.cast(self, dtype)"
    Tensor.flatten = ravel
    Tensor.ravel = ravel
    Tensor.copy = copy
    Tensor.clip = clip
    Tensor.any = lambda self, axis=None, keepdims=False: any(self, axis, keepdims)
    Tensor.all = lambda self, axis=None, keepdims=False: all(self, axis, keepdims)
    Tensor.var = lambda self, axis=None, dtype=None, out=None, ddof=0, keepdims=False: \
        (_no_out("var", out), var(self, axis, ddof, keepdims))[1]
    Tensor.std = lambda self, axis=None, dtype=None, out=None, ddof=0, keepdims=False: \
        (_no_out("std", out), std(self, axis, ddof, keepdims))[1]
    for name in ("sum", "mean", "max", "min", "prod"):
        setattr(Tensor, name, _method_reduction(ns[name]))
    for name in ("argmax", "argmin"):
        setattr(Tensor, name, _method_arg(ns[name]))
    Tensor.__format__ = _format
    Tensor.__index__ = _index
    Tensor.__reduce__ = _reduce
    Tensor.__copy__ = lambda self: self  # immutable: a copy is the same tensor
    Tensor.__deepcopy__ = lambda self, memo: copy(self)

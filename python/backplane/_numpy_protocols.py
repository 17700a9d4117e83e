"""NumPy's dispatch protocols on Tensor: ``__array_ufunc__`` and
``__array_function__``.

A NumPy function or ufunc that backplane has (``np.exp(t)``, ``np.add(t, 1)``,
``np.sum(t, axis=0)``, ``np.concatenate([t, t])``, ``np.where(c, t, u)``)
runs on the tensors' backend and returns a Tensor, with backplane's rules (no
implicit promotion: ``np.add(t_f32, array_f64)`` is a DTypeError, as
``t_f32 + array_f64`` is). Anything else (a ufunc method such as
``np.add.reduce``, an ``out=`` argument, a function backplane lacks) converts
the tensors to NumPy arrays explicitly, one copy each, and returns NumPy's
result: an ``ndarray``, never a Tensor.
"""
from . import _backplane as _bp
from . import _functions as _fn

_UFUNCS = {
    "add": "add", "subtract": "sub", "multiply": "mul", "divide": "div",
    "true_divide": "div", "power": "pow", "remainder": "mod", "fmod": "fmod",
    "maximum": "maximum", "minimum": "minimum", "matmul": "matmul",
    "equal": "eq", "not_equal": "ne", "less": "lt", "less_equal": "le", "greater": "gt",
    "greater_equal": "ge", "logical_and": "logical_and", "logical_or": "logical_or",
    "logical_xor": "logical_xor", "bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or",
    "bitwise_xor": "bitwise_xor", "left_shift": "bitshift_left",
    "right_shift": "bitshift_right",
    "negative": "neg", "absolute": "abs", "fabs": "abs", "sign": "sign", "exp": "exp",
    "expm1": "expm1", "log": "log", "log1p": "log1p", "sqrt": "sqrt", "square": "square",
    "reciprocal": "reciprocal", "sin": "sin", "cos": "cos", "tan": "tan", "arcsin": "asin",
    "arccos": "acos", "arctan": "atan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh",
    "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh", "floor": "floor",
    "ceil": "ceil", "rint": "round", "isnan": "isnan", "isinf": "isinf",
    "logical_not": "logical_not", "invert": None,  # bitwise_not / logical_not by dtype
}

# np.FUNC -> (backplane function, how its arguments map)
_REDUCTIONS = ("sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "any",
               "all", "std", "var")


def _to_numpy(obj):
    """Tensors (also inside lists, tuples and dicts) as NumPy arrays."""
    if isinstance(obj, _bp.Tensor):
        return obj.numpy()
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_numpy(o) for o in obj)
    if isinstance(obj, dict):
        return {k: _to_numpy(v) for k, v in obj.items()}
    return obj


def _first_tensor(objs):
    for o in objs:
        if isinstance(o, _bp.Tensor):
            return o
        if isinstance(o, (list, tuple)):
            t = _first_tensor(o)
            if t is not None:
                return t
    return None


def _operand(o, peer):
    """A ufunc operand as a tensor on peer's backend: Python and NumPy
    scalars take peer's dtype, as they do beside an operator."""
    if isinstance(o, _bp.Tensor):
        return o
    return _bp._operand(o, peer)


def array_ufunc(self, ufunc, method, *inputs, **kwargs):
    name = _UFUNCS.get(ufunc.__name__, False)
    if method == "__call__" and name is not False and not kwargs:
        peer = _first_tensor(inputs)
        args = [_operand(i, peer) for i in inputs]
        if ufunc.__name__ == "invert":
            fn = _bp.logical_not if args[0].dtype == "bool" else _bp.bitwise_not
        else:
            fn = getattr(_bp, name)
        return fn(*args)
    # Explicitly through NumPy: a copy of each tensor, NumPy's result.
    ins = _to_numpy(inputs)
    kw = _to_numpy(kwargs)
    if "out" in kwargs:
        if any(isinstance(o, _bp.Tensor) for o in kwargs["out"]):
            raise TypeError("out= cannot be a backplane Tensor: tensors are immutable")
    return getattr(ufunc, method)(*ins, **kw)


def _reduction(name):
    bp_name = {"amax": "max", "amin": "min"}.get(name, name)

    def run(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
        if out is not None or kw.get("initial", _fn._NoValue) is not _fn._NoValue or \
                kw.get("where", True) is not True:
            return None
        extra = {k: v for k, v in kw.items() if k not in ("initial", "where")}
        if name in ("std", "var"):
            r = getattr(_fn, name)(a, axis=axis, ddof=extra.pop("ddof", 0), keepdims=keepdims)
        elif name in ("any", "all"):
            r = getattr(_fn, name)(a, axis=axis, keepdims=keepdims)
        else:
            r = getattr(_bp, bp_name)(_fn._tensor(a), axis=axis, keepdims=keepdims)
        if extra:
            return None
        return r if dtype is None else _bp.cast(r, dtype)

    return run


def _concatenate(arrays, axis=0, out=None, dtype=None, casting=None):
    if out is not None or casting is not None or axis is None:
        return None
    peer = _first_tensor(arrays)
    ts = [a if isinstance(a, _bp.Tensor) else _bp.asarray(a, backend=peer.backend)
          for a in arrays]
    r = _bp.concat(ts, axis=axis)
    return r if dtype is None else _bp.cast(r, dtype)


def _stack(arrays, axis=0, out=None, dtype=None, casting=None):
    if out is not None or casting is not None:
        return None
    r = _fn.stack(arrays, axis=axis)
    return r if dtype is None else _bp.cast(r, dtype)


def _where(condition, x=None, y=None):
    if x is None or y is None:
        return None  # np.where(c) is nonzero: NumPy's
    peer = _first_tensor([x, y])
    if peer is None:
        peer = _first_tensor([condition])
    c = condition if isinstance(condition, _bp.Tensor) else \
        _bp.asarray(condition, backend=peer.backend)
    return _bp.where(c, _operand(x, peer), _operand(y, peer))


def _unary(fn):
    return lambda a, *args, **kw: None if args or kw else fn(_fn._tensor(a))


def _transpose(a, axes=None):
    return _bp.transpose(_fn._tensor(a), axes)


def _reshape(a, *args, **kw):
    shape = args[0] if args else kw.pop("newshape", kw.pop("shape", None))
    if kw.get("order", "C") != "C" or shape is None or len(args) > 1:
        return None
    return _bp.reshape(_fn._tensor(a), (shape,) if isinstance(shape, int) else tuple(shape))


def _clip(a, a_min=None, a_max=None, out=None, **kw):
    if out is not None or kw:
        return None
    return _fn.clip(a, a_min, a_max)


def _result_type(*args):
    import numpy as np

    return np.result_type(*[a.dtype.numpy if isinstance(a, _bp.Tensor) else a for a in args])


def _shape(a):
    return a.shape


def _ndim(a):
    return a.ndim


def _size(a, axis=None):
    return a.size if axis is None else a.shape[axis]


_FUNCTIONS = {
    "concatenate": _concatenate, "stack": _stack, "where": _where, "transpose": _transpose,
    "reshape": _reshape, "clip": _clip, "ravel": _unary(_fn.ravel), "copy": _unary(_fn.copy),
    "matmul": lambda a, b, **kw: None if kw else _bp.matmul(*_pair(a, b)),
    "squeeze": lambda a, axis=None: _bp.squeeze(_fn._tensor(a), axis),
    "expand_dims": lambda a, axis: _bp.unsqueeze(_fn._tensor(a), axis),
    "zeros_like": lambda a, dtype=None, **kw: None if kw else _fn.zeros_like(a, dtype),
    "ones_like": lambda a, dtype=None, **kw: None if kw else _fn.ones_like(a, dtype),
    "full_like": lambda a, v, dtype=None, **kw: None if kw else _fn.full_like(a, v, dtype),
    "result_type": _result_type, "shape": _shape, "ndim": _ndim, "size": _size,
}
for _r in _REDUCTIONS:
    _FUNCTIONS[_r] = _reduction(_r)


def _pair(a, b):
    peer = _first_tensor([a, b])
    return _operand(a, peer), _operand(b, peer)


def _is_numpy_function(func):
    import numpy as np

    return getattr(np, func.__name__, None) is func


def array_function(self, func, types, args, kwargs):
    impl = _FUNCTIONS.get(func.__name__)
    if impl is not None and _is_numpy_function(func):
        r = impl(*args, **kwargs)
        if r is not None:
            return r
    # Explicitly through NumPy: copies of the tensors, NumPy's result.
    return func(*_to_numpy(args), **_to_numpy(kwargs))


def install(Tensor):
    Tensor.__array_ufunc__ = array_ufunc
    Tensor.__array_function__ = array_function

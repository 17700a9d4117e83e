"""A property-based differential test against NumPy (hypothesis; skipped
without it): random arrays in the layouts NumPy hands out (strided,
negative-stride, Fortran-order, read-only, big-endian), random ops, random
indices. Values must agree within the dtype's tolerance, shapes and dtypes
exactly. Bounded so that the whole module takes well under a minute."""
import warnings

import numpy as np
import pytest

import backplane as bp

hyp = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True,
                    suppress_health_check=list(HealthCheck))
DTYPES = ["float32", "float64", "int32", "int64"]
RTOL = {"float32": 2e-6, "float64": 1e-12, "int32": 0, "int64": 0}


@st.composite
def arrays(draw, dtypes=DTYPES, min_dims=0, max_dims=3):
    dt = draw(st.sampled_from(dtypes))
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=0, max_side=5))
    if dt.startswith("float"):
        elems = st.floats(-1e3, 1e3, width=32 if dt == "float32" else 64, allow_nan=False)
    else:
        elems = st.integers(-1000, 1000)
    a = draw(hnp.arrays(dt, shape, elements=elems))
    layout = draw(st.sampled_from(["c", "fortran", "strided", "reversed", "readonly",
                                   "bigendian"]))
    if layout == "fortran":
        a = np.asfortranarray(a)
    elif layout == "strided" and a.ndim:
        a = np.repeat(a, 2, axis=-1)[..., ::2]
    elif layout == "reversed" and a.ndim:
        a = a[..., ::-1]
    elif layout == "readonly":
        a = a.copy()
        a.flags.writeable = False
    elif layout == "bigendian":
        a = a.astype(a.dtype.newbyteorder(">"))
    return a


def agree(t, want):
    got = t.numpy()
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype.newbyteorder("="), (got.dtype, want.dtype)
    tol = RTOL.get(str(got.dtype), 0)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@SETTINGS
@given(arrays())
def test_asarray_keeps_every_layouts_values(a):
    agree(bp.asarray(a), a.astype(a.dtype.newbyteorder("=")))


UNARY = {"neg": np.negative, "abs": np.abs, "square": np.square, "sign": np.sign}
FLOAT_UNARY = {"exp": lambda a: np.exp(a / 1000), "floor": np.floor,
               "sqrt": lambda a: np.sqrt(np.abs(a)), "tanh": np.tanh}


@SETTINGS
@given(arrays(), st.sampled_from(sorted(UNARY) + sorted(FLOAT_UNARY)))
def test_unary_ops_agree(a, name):
    a = a.astype(a.dtype.newbyteorder("="))
    t = bp.asarray(a)
    if name in UNARY:
        agree(getattr(bp, name)(t), UNARY[name](a))
    elif a.dtype.kind == "f":
        arg = {"exp": lambda x: x / 1000, "sqrt": bp.abs}.get(name, lambda x: x)(t)
        got = getattr(bp, name)(arg)
        want = FLOAT_UNARY[name](a)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5 if a.dtype == np.float32
                                   else 1e-12, atol=1e-6)


@st.composite
def broadcast_pair(draw):
    a = draw(arrays(min_dims=1))
    a = a.astype(a.dtype.newbyteorder("="))
    shape = list(a.shape)
    for i in range(len(shape)):
        if draw(st.booleans()):
            shape[i] = 1
    shape = shape[draw(st.integers(0, len(shape))):]
    b = draw(hnp.arrays(a.dtype, tuple(shape), elements=st.integers(-100, 100)))
    if draw(st.booleans()):
        a, b = b, a
    return a, b


BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum,
          "minimum": np.minimum}


@SETTINGS
@given(broadcast_pair(), st.sampled_from(sorted(BINARY)))
def test_binary_ops_broadcast_and_agree(pair, name):
    a, b = pair
    agree(getattr(bp, name)(bp.asarray(a), bp.asarray(b)), BINARY[name](a, b))


@SETTINGS
@given(arrays(min_dims=1), st.sampled_from(["sum", "max", "min", "mean"]), st.data())
def test_reductions_over_random_axes_agree(a, name, data):
    a = a.astype(a.dtype.newbyteorder("="))
    if name == "mean" and a.dtype.kind != "f":
        return
    axis = data.draw(st.sampled_from([None] + list(range(-a.ndim, a.ndim))))
    keep = data.draw(st.booleans())
    if name in ("max", "min") and (a.size == 0 or (axis is not None and a.shape[axis] == 0)):
        out_shape = np.sum(a, axis=axis, keepdims=keep).shape
        if np.prod(out_shape) > 0 or axis is None:  # an element without an identity
            with pytest.raises(bp.Error):
                getattr(bp, name)(bp.asarray(a), axis=axis, keepdims=keep)
        else:  # nothing to compute: an empty result (NumPy refuses this too)
            assert getattr(bp, name)(bp.asarray(a), axis=axis, keepdims=keep).shape == out_shape
        return
    # backplane's sums keep the dtype (NumPy widens int32 to int64): on purpose
    extra = {"dtype": a.dtype} if name == "sum" else {}
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the mean of nothing is nan
        want = getattr(np, name)(a, axis=axis, keepdims=keep, **extra)
    got = getattr(bp, name)(bp.asarray(a), axis=axis, keepdims=keep)
    if name in ("sum", "mean") and a.dtype.kind == "f":
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5 if a.dtype == np.float32
                                   else 1e-12, atol=1e-3 if a.dtype == np.float32 else 1e-9)
    else:
        agree(got, want)


@st.composite
def index_keys(draw, shape):
    keys = []
    for n in shape:
        kind = draw(st.sampled_from(["slice", "int", "all", "array"] if n else ["slice", "all"]))
        if kind == "int":
            keys.append(draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            bound = st.one_of(st.none(), st.integers(-n - 2, n + 2))
            step = draw(st.one_of(st.none(), st.integers(-3, 3).filter(lambda s: s != 0)))
            keys.append(slice(draw(bound), draw(bound), step))
        elif kind == "array":
            keys.append(draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=4)))
        else:
            keys.append(slice(None))
    # at most one array, so that NumPy's rules for where its axis goes stay simple
    arrays = [i for i, k in enumerate(keys) if isinstance(k, list)]
    for i in arrays[1:]:
        keys[i] = slice(None)
    if draw(st.booleans()) and keys:
        keys.insert(draw(st.integers(0, len(keys))), None)
    return tuple(keys)


@SETTINGS
@given(arrays(min_dims=1), st.data())
def test_indexing_agrees(a, data):
    key = data.draw(index_keys(a.shape))
    if any(isinstance(k, list) for k in key) and None in key:
        key = tuple(k for k in key if k is not None)
    agree(bp.asarray(a)[key], a.astype(a.dtype.newbyteorder("="))[key])


@SETTINGS
@given(arrays(min_dims=1), st.data())
def test_transpose_and_reshape_agree(a, data):
    a = a.astype(a.dtype.newbyteorder("="))
    perm = data.draw(st.permutations(range(a.ndim)))
    agree(bp.asarray(a).transpose(perm), a.transpose(perm))
    agree(bp.asarray(a).reshape(-1), a.reshape(-1))

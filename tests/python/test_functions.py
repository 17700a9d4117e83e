"""Every op function against NumPy, on small random inputs, in every dtype it
accepts (bfloat16 where ml_dtypes is installed). The references are written
out here, independently of the library; test_every_function_has_a_reference
keeps the table complete as ops are added."""
import inspect
import math

import numpy as np
import pytest

import backplane as bp
from conftest import ATOL, FLOATS, HAVE_ML_DTYPES, INTS, NUMERIC, RTOL, np_dtype

SIGNED = ["int8", "int16", "int32", "int64"]


def arr(dtype, shape, seed=0, low=-3.0, high=3.0):
    r = np.random.default_rng(seed)
    if dtype == "bool":
        return r.random(shape) < 0.5
    if dtype in INTS:
        lo = 0 if dtype.startswith("uint") else int(low)
        return r.integers(lo, max(int(high), lo + 1), shape).astype(dtype)
    return r.uniform(low, high, shape).astype(np_dtype(dtype))


def f64(a):
    return np.asarray(a).astype(np.float64)


def check(got, want, dtype):
    got_np = got.numpy() if isinstance(got, bp.Tensor) else got
    want = np.asarray(want)
    assert got_np.shape == want.shape, (got_np.shape, want.shape)
    if dtype in FLOATS and got_np.dtype.kind not in "biu":
        np.testing.assert_allclose(f64(got_np), f64(want), rtol=RTOL[dtype], atol=ATOL[dtype],
                                   equal_nan=True)
    else:
        np.testing.assert_array_equal(got_np, want)


def erf(a):
    return np.vectorize(math.erf)(a)


def _schema_domains():
    """Each op's domains in the op table's schema (opcodes.h), read by the
    Python functions' generator: {op: {input: (lo, hi)}}."""
    import importlib.util
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("gen_ops", root / "python" / "gen_ops.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    text = (root / "core" / "include" / "backplane" / "opcodes.h").read_text()
    table = gen.macro_rows(text, "BP_OP_TABLE", "opcodes.h")
    out = {}
    for row, (_, _, _, domains) in zip(table, gen.macro_rows(text, "BP_OP_SCHEMA", "opcodes.h")):
        for entry in filter(None, (e.strip() for e in domains.split(";"))):
            name, _, rng = entry.partition(":")
            if rng.strip().startswith("["):
                lo, hi = rng.strip()[1:].split("]")[0].split(",")
                out.setdefault(row[1], {})[name.strip()] = (float(lo), float(hi))
    return out


DOMAINS = _schema_domains()


def domain(name, dt):
    """arr()'s range for op name's x: its schema domain; integer dtypes stay
    within [-3, 3] (NumPy's float-to-int conversion of a wrapped result is
    not C's)."""
    lo, hi = DOMAINS[name]["x"]
    if dt in INTS:
        lo, hi = max(lo, -3), min(hi, 3)
    return {"low": lo, "high": hi}


# ---- elementwise -----------------------------------------------------------------------
# name: (reference on float64 input, dtypes); x is drawn from the op's domain in
# the op table's schema (DOMAINS below)
UNARY = {
    "neg": (np.negative, SIGNED + FLOATS),
    "abs": (np.abs, SIGNED + FLOATS),
    "sign": (np.sign, SIGNED + FLOATS),
    "relu": (lambda x: np.maximum(x, 0), SIGNED + FLOATS),
    "square": (np.square, NUMERIC),
    "exp": (np.exp, FLOATS),
    "log": (np.log, FLOATS),
    "sqrt": (np.sqrt, FLOATS),
    "rsqrt": (lambda x: 1 / np.sqrt(x), FLOATS),
    "reciprocal": (lambda x: 1 / x, FLOATS),
    "sin": (np.sin, FLOATS),
    "cos": (np.cos, FLOATS),
    "tan": (np.tan, FLOATS),
    "tanh": (np.tanh, FLOATS),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), FLOATS),
    "gelu": (lambda x: 0.5 * x * (1 + erf(x / math.sqrt(2))), FLOATS),
    "erf": (erf, FLOATS),
    "floor": (np.floor, FLOATS),
    "ceil": (np.ceil, FLOATS),
    "round": (np.round, FLOATS),
    "isnan": (np.isnan, FLOATS),
    "isinf": (np.isinf, FLOATS),
    "acos": (np.arccos, FLOATS),
    "asin": (np.arcsin, FLOATS),
    "atan": (np.arctan, FLOATS),
    "acosh": (np.arccosh, FLOATS),
    "asinh": (np.arcsinh, FLOATS),
    "atanh": (np.arctanh, FLOATS),
    "sinh": (np.sinh, FLOATS),
    "cosh": (np.cosh, FLOATS),
    "log1p": (np.log1p, FLOATS),
    "expm1": (np.expm1, FLOATS),
    "softplus": (lambda x: np.log1p(np.exp(x)), FLOATS),
    "softsign": (lambda x: x / (1 + np.abs(x)), FLOATS),
    "silu": (lambda x: x / (1 + np.exp(-x)), FLOATS),
    "mish": (lambda x: x * np.tanh(np.log1p(np.exp(x))), FLOATS),
    "hardswish": (lambda x: x * np.clip(x / 6 + 0.5, 0, 1), FLOATS),
}


# The ops with parameters: name: (reference(x, **parameters) on float64 input,
# dtypes, other parameter values), x drawn from the schema's domain. Each is checked at its
# defaults, read from the function's signature (generated from the op
# table's schema), and at the other values, so that a kernel that ignores a
# parameter, or a default that drifts from ONNX's, fails.
WITH_PARAMETERS = {
    "elu": (lambda x, alpha: np.where(x < 0, alpha * np.expm1(x), x), FLOATS, {"alpha": 0.5}),
    "celu": (lambda x, alpha: np.maximum(x, 0) + np.minimum(0, alpha * np.expm1(x / alpha)),
             FLOATS, {"alpha": 2.0}),
    "selu": (lambda x, alpha, gamma: gamma * np.where(x > 0, x, alpha * np.expm1(x)), FLOATS, {"alpha": 1.5, "gamma": 2.0}),
    "leaky_relu": (lambda x, alpha: np.where(x < 0, alpha * x, x), FLOATS, {"alpha": 0.25}),
    "thresholded_relu": (lambda x, alpha: np.where(x > alpha, x, 0), FLOATS, {"alpha": 0.5}),
    "hard_sigmoid": (lambda x, alpha, beta: np.clip(alpha * x + beta, 0, 1), FLOATS, {"alpha": 0.3, "beta": 0.4}),
    "shrink": (lambda x, bias, lambd: np.where(x < -lambd, x + bias,
                                               np.where(x > lambd, x - bias, 0)),
               FLOATS + SIGNED, {"bias": 1.0, "lambd": 1.5}),
}


def defaults_of(fn):
    return {p.name: p.default for p in inspect.signature(fn).parameters.values()
            if p.default is not inspect.Parameter.empty}


@pytest.mark.parametrize("values", ["defaults", "other"])
@pytest.mark.parametrize("name", sorted(WITH_PARAMETERS))
def test_unary_with_parameters(name, values):
    ref, dtypes, other = WITH_PARAMETERS[name]
    fn = getattr(bp, name)
    params = defaults_of(fn)
    assert set(params) == set(other), (name, params)
    if values == "other":
        params = other
    for dt in dtypes:
        a = arr(dt, (3, 5), seed=len(name), **domain(name, dt))
        want = ref(f64(a), **params)
        check(fn(a, **params), want.astype(dt if dt in INTS else np_dtype(dt)), dt)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name):
    ref, dtypes = UNARY[name]
    for dt in dtypes:
        a = arr(dt, (3, 5), seed=len(name), **domain(name, dt))
        if name in ("isnan", "isinf"):
            a = a.copy()
            a[0, 0], a[1, 1] = np.nan, np.inf
        got = getattr(bp, name)(a)
        want = ref(f64(a))
        if dt in INTS:
            want = want.astype(dt) if want.dtype != bool else want
        elif want.dtype != bool:
            want = want.astype(np_dtype(dt))
        check(got, want, dt)


def test_unary_bool_and_integer_only():
    b = arr("bool", (7,))
    check(bp.logical_not(b), ~b, "bool")
    for dt in INTS:
        a = arr(dt, (7,))
        check(bp.bitwise_not(a), ~a, dt)


BINARY = {
    "add": (np.add, NUMERIC), "sub": (np.subtract, NUMERIC), "mul": (np.multiply, NUMERIC),
    "maximum": (np.maximum, NUMERIC), "minimum": (np.minimum, NUMERIC),
    "div": (None, NUMERIC), "mod": (np.mod, NUMERIC), "fmod": (np.fmod, NUMERIC),
    "pow": (None, NUMERIC),
    "eq": (np.equal, ["bool"] + NUMERIC), "ne": (np.not_equal, ["bool"] + NUMERIC),
    "lt": (np.less, ["bool"] + NUMERIC), "le": (np.less_equal, ["bool"] + NUMERIC),
    "gt": (np.greater, ["bool"] + NUMERIC), "ge": (np.greater_equal, ["bool"] + NUMERIC),
    "logical_and": (np.logical_and, ["bool"]), "logical_or": (np.logical_or, ["bool"]),
    "logical_xor": (np.logical_xor, ["bool"]),
    "bitwise_and": (np.bitwise_and, INTS), "bitwise_or": (np.bitwise_or, INTS),
    "bitwise_xor": (np.bitwise_xor, INTS),
    "bitshift_left": (None, INTS), "bitshift_right": (None, INTS),
    "prelu": (lambda x, s: np.where(x < 0, x * s, x), SIGNED + FLOATS),
}


def binary_ref(name, a, b, dt):
    if name == "div":
        if dt in INTS:
            return np.trunc(f64(a) / f64(b)).astype(dt)
        return (f64(a) / f64(b)).astype(np_dtype(dt))
    if name == "pow":
        return (f64(a) ** f64(b)).astype(np_dtype(dt))
    if name == "bitshift_left":
        return np.left_shift(a, b)
    if name == "bitshift_right":
        return np.right_shift(a, b)
    ref = BINARY[name][0]
    if dt in INTS or dt == "bool":
        return ref(a, b)
    w = ref(f64(a), f64(b))
    return w if w.dtype == bool else w.astype(np_dtype(dt))


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_broadcasts_like_numpy(name):
    for dt in BINARY[name][1]:
        a = arr(dt, (2, 3, 4), seed=1)
        b = arr(dt, (3, 1), seed=2)
        if name in ("div", "mod", "fmod"):
            b = np.where(b == 0, np.array(1, b.dtype), b)  # x / 0 is 0 for integers: not NumPy's
        if name == "pow":
            a = np.abs(a) + np.array(1 if dt in INTS else 0.5, a.dtype)
            b = arr(dt, (3, 1), seed=2, low=0, high=3)
        if name.startswith("bitshift"):
            b = arr(dt, (3, 1), seed=2, low=0, high=3)
            if not dt.startswith("uint"):
                a = np.abs(a)
        check(getattr(bp, name)(a, b), binary_ref(name, a, b, dt), dt)


def test_numpy_names_are_the_same_functions():
    a, b = arr("float32", (4,)), arr("float32", (4,), 1)
    for alias, name in [("subtract", "sub"), ("multiply", "mul"), ("divide", "div"),
                        ("true_divide", "div"), ("power", "pow"), ("equal", "eq"),
                        ("not_equal", "ne"), ("less", "lt"), ("less_equal", "le"),
                        ("greater", "gt"), ("greater_equal", "ge")]:
        x, y = (np.abs(a) + 1, b) if alias in ("power",) else (a, b)
        check(getattr(bp, alias)(x, y), getattr(bp, name)(x, y).numpy(), "float32")
    check(bp.negative(a), -a, "float32")
    check(bp.absolute(a), np.abs(a), "float32")
    check(bp.concatenate([a, b]), np.concatenate([a, b]), "float32")
    check(bp.amax(a), np.max(a), "float32")
    check(bp.amin(a), np.min(a), "float32")


def test_where_clip_and_scalars():
    for dt in NUMERIC:
        a, b = arr(dt, (3, 4), 1), arr(dt, (4,), 2)
        c = arr("bool", (3, 1), 3)
        check(bp.where(c, a, b), np.where(c, a, b), dt)
        lo = np.array(1 if dt.startswith("uint") else -1, a.dtype)
        hi = np.array(2, a.dtype)
        check(bp.clip(a, lo, hi), np.clip(a, lo, hi), dt)
        check(bp.clip(a, None, hi), np.minimum(a, hi), dt)
        check(bp.clip(a, min=lo), np.maximum(a, lo), dt)
    x = bp.asarray(arr("float32", (5,)))
    check(bp.where(x > 0, x, 0.0), np.where(x.numpy() > 0, x.numpy(), 0), "float32")
    check(bp.clip(x, -1.0, 1.0), np.clip(x.numpy(), -1, 1), "float32")


# ---- reductions ------------------------------------------------------------------------
def npvar(x, axis, keepdims):
    return np.var(x, axis=axis, keepdims=keepdims)


REDUCE = {
    "sum": (np.sum, NUMERIC), "prod": (np.prod, NUMERIC), "mean": (np.mean, FLOATS),
    "max": (np.max, NUMERIC), "min": (np.min, NUMERIC),
    "logsumexp": (lambda x, axis, keepdims: np.log(np.sum(np.exp(x), axis=axis,
                                                          keepdims=keepdims)), FLOATS),
    "reduce_l1": (lambda x, axis, keepdims: np.sum(np.abs(x), axis=axis, keepdims=keepdims),
                  NUMERIC),
    "reduce_l2": (lambda x, axis, keepdims: np.sqrt(np.sum(x * x, axis=axis,
                                                           keepdims=keepdims)), FLOATS),
    "reduce_sum_square": (lambda x, axis, keepdims: np.sum(x * x, axis=axis,
                                                           keepdims=keepdims), NUMERIC),
    "reduce_log_sum": (lambda x, axis, keepdims: np.log(np.sum(x, axis=axis,
                                                               keepdims=keepdims)), FLOATS),
    "reduce_var": (npvar, FLOATS),
    "reduce_std": (lambda x, axis, keepdims: np.std(x, axis=axis, keepdims=keepdims), FLOATS),
    "reduce_any": (np.any, ["bool"]), "reduce_all": (np.all, ["bool"]),
}


def flat_arg(fn, x, axis, keepdims, last):
    """NumPy's argmax over several axes: the row-major index within them."""
    axes = tuple(range(x.ndim)) if axis is None else (axis,) if isinstance(axis, int) else axis
    axes = tuple(a % x.ndim for a in axes)
    rest = [a for a in range(x.ndim) if a not in axes]
    y = np.transpose(x, rest + list(axes)).reshape([x.shape[a] for a in rest] + [-1])
    if last:
        r = y.shape[-1] - 1 - fn(y[..., ::-1], axis=-1)
    else:
        r = fn(y, axis=-1)
    if keepdims:
        r = r.reshape([1 if a in axes else x.shape[a] for a in range(x.ndim)])
    return r.astype(np.int64)


@pytest.mark.parametrize("name", sorted(REDUCE) + ["argmax", "argmin", "argmax_last",
                                                     "argmin_last"])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2)], ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions(name, axis, keepdims):
    dtypes = REDUCE[name][1] if name in REDUCE else NUMERIC
    for dt in dtypes:
        low = 0.5 if name in ("reduce_log_sum",) else -2
        x = arr(dt, (2, 3, 4), seed=5, low=low, high=2)
        if name == "prod" and dt in FLOATS:
            x = arr(dt, (2, 3, 4), seed=5, low=0.8, high=1.2)
        got = getattr(bp, name)(x, axis=axis, keepdims=keepdims)
        if name.startswith("arg"):
            fn = np.argmax if "max" in name else np.argmin
            want = flat_arg(fn, x, axis, keepdims, name.endswith("_last"))
            check(got, want, "int64")
            continue
        ref = REDUCE[name][0]
        if dt in INTS or dt == "bool":
            want = np.asarray(ref(x, axis=axis, keepdims=keepdims))
            want = want.astype(dt) if dt != "bool" else want
        else:
            want = np.asarray(ref(f64(x), axis=axis, keepdims=keepdims)).astype(np_dtype(dt))
        check(got, want, dt)


def test_var_correction_and_method_shorthands():
    x = arr("float64", (4, 5))
    check(bp.reduce_var(x, axis=1, correction=1.0), np.var(x, axis=1, ddof=1), "float64")
    check(bp.reduce_std(x, correction=1.0), np.std(x, ddof=1), "float64")
    t = bp.asarray(x)
    check(t.sum(axis=0), x.sum(axis=0), "float64")
    check(t.mean(), x.mean(), "float64")
    check(t.max(axis=1, keepdims=True), x.max(axis=1, keepdims=True), "float64")
    check(t.argmin(), np.argmin(x), "int64")
    check(t.reshape(5, 4), x.reshape(5, 4), "float64")
    check(t.transpose(), x.T, "float64")
    check(t.astype("float32"), x.astype(np.float32), "float32")


def softmax_ref(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("dt", FLOATS)
def test_softmax_family_and_scans(dt):
    x = arr(dt, (3, 5), seed=7)
    xf = f64(x)
    check(bp.softmax(x), softmax_ref(xf, -1).astype(np_dtype(dt)), dt)
    check(bp.softmax(x, axis=0), softmax_ref(xf, 0).astype(np_dtype(dt)), dt)
    check(bp.log_softmax(x), np.log(softmax_ref(xf, -1)).astype(np_dtype(dt)), dt)
    hm = np.zeros_like(xf)
    hm[np.arange(3), np.argmax(xf, axis=1)] = 1
    check(bp.hardmax(x), hm.astype(np_dtype(dt)), dt)


@pytest.mark.parametrize("dt", NUMERIC)
def test_cumsum_cumprod(dt):
    x = arr(dt, (3, 4), seed=8, low=0 if dt in INTS else 0.5, high=3 if dt in INTS else 1.5)
    xf = x if dt in INTS else f64(x)
    out = (lambda w: w.astype(dt) if dt in INTS else w.astype(np_dtype(dt)))
    check(bp.cumsum(x, axis=1), out(np.cumsum(xf, axis=1)), dt)
    check(bp.cumprod(x, axis=0), out(np.cumprod(xf, axis=0)), dt)
    ex = np.concatenate([np.zeros((3, 1), xf.dtype), np.cumsum(xf, axis=1)[:, :-1]], axis=1)
    check(bp.cumsum(x, axis=1, exclusive=True), out(ex), dt)
    rev = np.cumsum(xf[:, ::-1], axis=1)[:, ::-1]
    check(bp.cumsum(x, axis=1, reverse=True), out(rev), dt)


@pytest.mark.parametrize("dt", NUMERIC)
def test_sort_argsort_topk(dt):
    x = np.random.default_rng(9).permutation(24).reshape(4, 6)
    x = (x - 8).astype(dt) if dt in SIGNED or dt in FLOATS and dt != "bfloat16" else \
        x.astype(np_dtype(dt))
    v, i = bp.sort(x, axis=1)
    check(v, np.sort(x, axis=1, kind="stable"), dt)
    check(i, np.argsort(x, axis=1, kind="stable"), "int64")
    check(bp.argsort(x, axis=0, descending=True), np.argsort(-f64(x), axis=0, kind="stable"),
          "int64")
    v, i = bp.topk(x, 2, axis=-1)
    order = np.argsort(-f64(x), axis=-1, kind="stable")[:, :2]
    check(i, order, "int64")
    check(v, np.take_along_axis(x, order, axis=-1), dt)
    v, i = bp.topk(x, 3, axis=0, largest=False)
    order = np.argsort(f64(x), axis=0, kind="stable")[:3]
    check(v, np.take_along_axis(x, order, axis=0), dt)


# ---- movement and indexing -------------------------------------------------------------
@pytest.mark.parametrize("dt", ["bool"] + NUMERIC)
def test_movement(dt):
    x = arr(dt, (2, 3, 4), seed=10)
    check(bp.transpose(x), x.T, dt)
    check(bp.transpose(x, axes=(1, 0, 2)), np.transpose(x, (1, 0, 2)), dt)
    check(bp.reshape(x, (4, -1)), x.reshape(4, -1), dt)
    check(bp.squeeze(x[:1]), np.squeeze(x[:1]), dt)
    check(bp.squeeze(x[:, :1], axes=1), np.squeeze(x[:, :1], axis=1), dt)
    check(bp.unsqueeze(x, -1), x[..., None], dt)
    check(bp.slice(x, [0, 1, -1], [2, 3, 0], [1, 1, -2]), x[0:2, 1:3, -1:0:-2], dt)
    check(bp.slice(x, [1, 0, 0]), x[1:], dt)
    check(bp.concat([x, x[:1]], axis=0), np.concatenate([x, x[:1]], axis=0), dt)
    check(bp.broadcast_to(x[:, :1], (2, 3, 4)), np.broadcast_to(x[:, :1], (2, 3, 4)), dt)
    check(bp.pad(x, [0, 1, 2], [1, 0, 0]), np.pad(x, [(0, 1), (1, 0), (2, 0)]), dt)
    check(bp.tile(x, [1, 2, 1]), np.tile(x, (1, 2, 1)), dt)
    parts = bp.split(x, 2, axis=2)
    assert isinstance(parts, list) and len(parts) == 2
    for p, w in zip(parts, np.split(x, 2, axis=2)):
        check(p, w, dt)
    for p, w in zip(bp.split(x, [1, 2], axis=1), np.split(x, [1], axis=1)):
        check(p, w, dt)
    check(bp.trilu(x), np.triu(x), dt)
    check(bp.trilu(x, upper=False, k=-1), np.tril(x, -1), dt)
    idx = np.array([2, 0, -1])
    check(bp.gather(x, idx, axis=1), np.take(x, idx, axis=1), dt)
    ie = np.random.default_rng(1).integers(0, 3, (2, 2, 4))
    check(bp.gather_elements(x, ie, axis=1), np.take_along_axis(x, ie, axis=1), dt)
    ind = np.array([[0, 1], [1, 2]])
    check(bp.gather_nd(x, ind), x[ind[:, 0], ind[:, 1]], dt)


@pytest.mark.parametrize("dt", NUMERIC)
def test_scatter_and_one_hot(dt):
    x = arr(dt, (3, 4), seed=11)
    upd = arr(dt, (1, 4), seed=12)
    ind = np.array([[2, 0, 1, 2]])
    want = x.copy()
    want[ind[0], np.arange(4)] = upd[0]
    check(bp.scatter_elements(x, ind, upd, axis=0), want, dt)
    want = x.copy()
    np.add.at(want, (ind[0], np.arange(4)), upd[0])
    check(bp.scatter_elements(x, ind, upd, axis=0, reduction="add"), want, dt)
    ind_nd = np.array([[1], [0]])
    upd_nd = arr(dt, (2, 4), seed=13)
    want = x.copy()
    want[[1, 0]] = upd_nd
    check(bp.scatter_nd(x, ind_nd, upd_nd), want, dt)
    values = np.array([0, 1]).astype(np_dtype(dt))
    labels = np.array([0, 2, 1, -1])
    check(bp.one_hot(labels, 3, values), np.eye(3, dtype=np_dtype(dt))[labels % 3], dt)


@pytest.mark.parametrize("dt", NUMERIC)
def test_space_depth_and_n_ary(dt):
    x = arr(dt, (1, 4, 2, 3), seed=14)
    b = 2
    dcr = x.reshape(1, b, b, 1, 2, 3).transpose(0, 3, 4, 1, 5, 2).reshape(1, 1, 4, 6)
    check(bp.depth_to_space(x, 2), dcr, dt)
    crd = x.reshape(1, 1, b, b, 2, 3).transpose(0, 1, 4, 2, 5, 3).reshape(1, 1, 4, 6)
    check(bp.depth_to_space(x, 2, crd=True), crd, dt)
    y = arr(dt, (1, 1, 4, 6), seed=15)
    s2d = y.reshape(1, 1, 2, b, 3, b).transpose(0, 3, 5, 1, 2, 4).reshape(1, 4, 2, 3)
    check(bp.space_to_depth(y, 2), s2d, dt)
    xs = [arr(dt, (2, 3), seed=s) for s in range(3)]
    check(bp.max_n(xs), np.maximum.reduce(xs), dt)
    check(bp.min_n(xs), np.minimum.reduce(xs), dt)
    if dt in INTS:
        check(bp.sum_n(xs), (xs[0] + xs[1] + xs[2]).astype(dt), dt)
    else:
        check(bp.sum_n(xs), (f64(xs[0]) + f64(xs[1]) + f64(xs[2])).astype(np_dtype(dt)), dt)
        check(bp.mean_n(xs), ((f64(xs[0]) + f64(xs[1]) + f64(xs[2])) / 3).astype(np_dtype(dt)), dt)


@pytest.mark.parametrize("dt", ["bool"] + NUMERIC)
def test_cast_to_every_dtype(dt):
    x = arr(dt, (3, 4), seed=16, low=-3, high=3)
    for to in ["bool"] + NUMERIC:
        if to in INTS and dt in FLOATS:
            want = np.trunc(f64(x))
            info = np.iinfo(to)
            want = np.clip(want, info.min, info.max).astype(to)
        elif to in INTS and dt in INTS:
            info = np.iinfo(to)
            want = np.clip(x.astype(np.int64), info.min, info.max).astype(to)
        else:
            want = x.astype(np_dtype(to)) if to != "bool" else (f64(x) != 0)
        got = bp.cast(x, to)
        assert got.dtype == to
        check(got, want, to if to in FLOATS and dt != "float64" or to in FLOATS else to)


# ---- linear algebra --------------------------------------------------------------------
@pytest.mark.parametrize("dt", NUMERIC)
def test_matmul_gemm_einsum(dt):
    a, b = arr(dt, (2, 3, 4), seed=17, low=-2, high=2), arr(dt, (4, 5), seed=18, low=-2, high=2)
    cast = (lambda w: w.astype(dt)) if dt in INTS else (lambda w: w.astype(np_dtype(dt)))
    aa, bb = (a.astype(np.int64), b.astype(np.int64)) if dt in INTS else (f64(a), f64(b))
    check(bp.matmul(a, b), cast(aa @ bb), dt)
    a2 = a[0]
    c = arr(dt, (5,), seed=19, low=0, high=2)
    cc = c.astype(np.int64) if dt in INTS else f64(c)
    check(bp.gemm(a2, b, c, alpha=2.0, beta=1.0), cast(2 * (aa[0] @ bb) + cc), dt)
    check(bp.gemm(b, a2, trans_a=True, trans_b=True), cast(bb.T @ aa[0].T), dt)
    check(bp.einsum("ij,jk->ik", a2, b), cast(aa[0] @ bb), dt)
    check(bp.einsum("bij->bji", a), np.transpose(a, (0, 2, 1)), dt)


# ---- creation -------------------------------------------------------------------------
def test_creation():
    check(bp.zeros((2, 3)), np.zeros((2, 3)), "float64")
    check(bp.ones(4, dtype="int32"), np.ones(4, np.int32), "int32")
    check(bp.full((2,), 7), np.full((2,), 7), "int64")
    check(bp.full((2,), 1.5, dtype="float32"), np.full((2,), 1.5, np.float32), "float32")
    check(bp.eye(3, 4, dtype="float32"), np.eye(3, 4, dtype=np.float32), "float32")
    check(bp.arange(0, 5), np.arange(5), "int64")
    check(bp.arange(1.0, 2.0, 0.25), np.arange(1.0, 2.0, 0.25), "float64")
    check(bp.arange(5, 0, -2, dtype="int8"), np.arange(5, 0, -2, dtype=np.int8), "int8")
    for fn in (bp.random_uniform, bp.random_normal):
        for dt in FLOATS:
            a = fn((100,), seed=3, dtype=dt)
            b = fn((100,), seed=3, dtype=dt)
            c = fn((100,), seed=4, dtype=dt)
            assert a.dtype == dt and a.shape == (100,)
            assert a.numpy().tobytes() == b.numpy().tobytes()
            assert a.numpy().tobytes() != c.numpy().tobytes()
    u = bp.random_uniform((1000,), seed=1, low=2.0, high=3.0).numpy()
    assert u.min() >= 2.0 and u.max() < 3.0 and abs(u.mean() - 2.5) < 0.05
    n = bp.random_normal((4000,), seed=1, mean=1.0, stddev=2.0).numpy()
    assert abs(n.mean() - 1.0) < 0.15 and abs(n.std() - 2.0) < 0.15
    # offset continues the stream: element i of offset k is element k + i of offset 0
    np.testing.assert_array_equal(bp.random_uniform((5,), seed=2, offset=3).numpy(),
                                  bp.random_uniform((8,), seed=2).numpy()[3:])


# ---- neural-network ops ----------------------------------------------------------------
def conv2d_ref(x, w, b=None, stride=1, pad=0, dil=1, groups=1):
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    xp = np.pad(x, [(0, 0), (0, 0), (pad, pad), (pad, pad)])
    oh = (h + 2 * pad - dil * (kh - 1) - 1) // stride + 1
    ow = (wd + 2 * pad - dil * (kw - 1) - 1) // stride + 1
    y = np.zeros((n, m, oh, ow))
    mg = m // groups
    for o in range(m):
        g = o // mg
        for i in range(oh):
            for j in range(ow):
                patch = xp[:, g * cg:(g + 1) * cg, i * stride:i * stride + dil * (kh - 1) + 1:dil,
                           j * stride:j * stride + dil * (kw - 1) + 1:dil]
                y[:, o, i, j] = (patch * w[o]).sum(axis=(1, 2, 3))
    if b is not None:
        y += b[None, :, None, None]
    return y


def pool_ref(x, k, stride, fn):
    n, c, h, w = x.shape
    oh, ow = (h - k) // stride + 1, (w - k) // stride + 1
    y = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            y[:, :, i, j] = fn(x[:, :, i * stride:i * stride + k, j * stride:j * stride + k],
                               axis=(2, 3))
    return y


@pytest.mark.parametrize("dt", FLOATS)
def test_conv_and_conv_transpose(dt):
    x, w, b = arr(dt, (2, 4, 5, 6), 20), arr(dt, (6, 2, 3, 3), 21), arr(dt, (6,), 22)
    got = bp.conv(x, w, b, strides=[2, 1], pads=[1, 1, 1, 1], groups=2)
    want = conv2d_ref(f64(x), f64(w), f64(b), stride=1, pad=1, groups=2)[:, :, ::2, :]
    check(got, want.astype(np_dtype(dt)), dt)
    got = bp.conv(x, w[:, :, :2, :2].copy(), dilations=2, groups=2)
    check(got, conv2d_ref(f64(x), f64(w[:, :, :2, :2]), dil=2, groups=2).astype(np_dtype(dt)), dt)
    # conv_transpose is conv's gradient with respect to x: <conv(x, w), y> = <x, convT(y, w)>
    wt = arr(dt, (3, 4, 3, 3), 23)
    y = arr(dt, (2, 3, 5, 6), 24)
    xt = bp.conv_transpose(y, wt)
    assert xt.shape == (2, 4, 7, 8)
    z = arr(dt, (2, 4, 7, 8), 25)
    lhs = (conv2d_ref(f64(z), f64(wt)) * f64(y)).sum()
    rhs = (f64(xt.numpy()) * f64(z)).sum()
    assert abs(lhs - rhs) <= 50 * RTOL[dt] * (abs(lhs) + 1)


@pytest.mark.parametrize("dt", FLOATS)
def test_pools_lrn_and_norms(dt):
    x = arr(dt, (2, 3, 6, 6), 26)
    xf = f64(x)
    check(bp.max_pool(x, kernel_shape=2, strides=2), pool_ref(xf, 2, 2, np.max).astype(np_dtype(dt)), dt)
    y, idx = bp.max_pool(x, [3, 3], return_indices=True)
    check(y, pool_ref(xf, 3, 1, np.max).astype(np_dtype(dt)), dt)
    flat = xf.reshape(2, 3, -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, idx.numpy().reshape(2, 3, -1) % 36,
                                                     axis=2), f64(y.numpy()).reshape(2, 3, -1))
    check(bp.average_pool(x, kernel_shape=[2, 3], strides=[2, 3]),
          xf.reshape(2, 3, 3, 2, 2, 3).mean(axis=(3, 5)).astype(np_dtype(dt)), dt)
    check(bp.global_max_pool(x), xf.max(axis=(2, 3), keepdims=True).astype(np_dtype(dt)), dt)
    check(bp.global_average_pool(x), xf.mean(axis=(2, 3), keepdims=True).astype(np_dtype(dt)), dt)
    size = 3
    sq = np.pad(xf ** 2, [(0, 0), (1, 1), (0, 0), (0, 0)])
    s = sq[:, 0:3] + sq[:, 1:4] + sq[:, 2:5]
    check(bp.lrn(x, size), (xf / (1 + 1e-4 / size * s) ** 0.75).astype(np_dtype(dt)), dt)
    scale, bias = arr(dt, (3,), 27), arr(dt, (3,), 28)
    mean, var = arr(dt, (3,), 29), arr(dt, (3,), 30, low=0.5, high=2)
    c = (lambda v: f64(v)[None, :, None, None])
    check(bp.batch_norm(x, scale, bias, mean, var),
          (c(scale) * (xf - c(mean)) / np.sqrt(c(var) + 1e-5) + c(bias)).astype(np_dtype(dt)), dt)
    mu, sd = xf.mean(axis=(2, 3), keepdims=True), xf.var(axis=(2, 3), keepdims=True)
    check(bp.instance_norm(x, scale, bias),
          (c(scale) * (xf - mu) / np.sqrt(sd + 1e-5) + c(bias)).astype(np_dtype(dt)), dt)
    mu, sd = xf.mean(axis=-1, keepdims=True), xf.var(axis=-1, keepdims=True)
    ln = (xf - mu) / np.sqrt(sd + 1e-5)
    check(bp.layer_norm(x), ln.astype(np_dtype(dt)), dt)
    g, h = arr(dt, (6,), 31), arr(dt, (6,), 32)
    check(bp.layer_norm(x, axis=-1, scale=g, bias=h), (ln * f64(g) + f64(h)).astype(np_dtype(dt)), dt)
    y, m, inv = bp.layer_norm(x, return_mean=True, return_inv_std=True)
    check(m, mu.astype(m.dtype), dt)
    rms = xf / np.sqrt((xf ** 2).mean(axis=(2, 3), keepdims=True) + 1e-5)
    check(bp.rms_norm(x, axis=2), rms.astype(np_dtype(dt)), dt)
    check(bp.rms_norm(x, axis=-1, scale=g),
          (xf / np.sqrt((xf ** 2).mean(axis=-1, keepdims=True) + 1e-5) * f64(g)).astype(np_dtype(dt)), dt)


@pytest.mark.parametrize("dt", FLOATS)
def test_losses_dropout_and_resize(dt):
    scores = arr(dt, (4, 5), 33)
    labels = np.array([0, 4, 2, 1])
    sf = f64(scores)
    logp = np.log(softmax_ref(sf, 1))
    per = -logp[np.arange(4), labels]
    check(bp.nll_loss(logp.astype(np_dtype(dt)), labels, reduction="none"), per.astype(np_dtype(dt)), dt)
    check(bp.softmax_cross_entropy_loss(scores, labels), np.array(per.mean()).astype(np_dtype(dt)), dt)
    w = arr(dt, (5,), 34, low=0.5, high=2)
    wf = f64(w)[labels]
    check(bp.softmax_cross_entropy_loss(scores, labels, weights=w, reduction="sum"),
          np.array((per * wf).sum()).astype(np_dtype(dt)), dt)
    loss, lp = bp.softmax_cross_entropy_loss(scores, labels, reduction="mean", ignore_index=4,
                                             return_log_prob=True)
    keep = labels != 4
    check(loss, np.array(per[keep].mean()).astype(np_dtype(dt)), dt)
    check(lp, logp.astype(np_dtype(dt)), dt)
    x = arr(dt, (50,), 35)
    check(bp.dropout(x), x, dt)
    y, mask = bp.dropout(x, ratio=0.4, training=True, seed=5, return_mask=True)
    keep = bp.random_uniform((50,), seed=5, dtype="float32").numpy() >= np.float32(0.4)
    np.testing.assert_array_equal(mask.numpy(), keep)
    check(y, np.where(keep, f64(x) / 0.6, 0).astype(np_dtype(dt)), dt)
    img = arr(dt, (1, 1, 2, 3), 36)
    check(bp.resize(img, scales=[1, 1, 2, 2]), np.repeat(np.repeat(img, 2, axis=2), 2, axis=3), dt)
    check(bp.resize(img, sizes=[1, 1, 4, 6], mode="nearest"),
          np.repeat(np.repeat(img, 2, axis=2), 2, axis=3), dt)
    lin = bp.resize(img, scales=[1, 1, 1, 2], mode="linear",
                    coordinate_transformation_mode="align_corners")
    xs = np.linspace(0, 2, 6)
    want = np.stack([np.interp(xs, np.arange(3), f64(img)[0, 0, r]) for r in range(2)])[None, None]
    check(lin, want.astype(np_dtype(dt)), dt)


def test_every_function_has_a_reference():
    """A new op gets a Python function from the generator; it must get a test here too."""
    covered = set(UNARY) | set(WITH_PARAMETERS) | set(BINARY) | set(REDUCE) | {
        "logical_not", "bitwise_not", "where", "clip", "argmax", "argmin", "argmax_last",
        "argmin_last", "softmax", "log_softmax", "hardmax", "cumsum", "cumprod", "sort",
        "argsort", "topk", "transpose", "reshape", "squeeze", "unsqueeze", "slice", "concat",
        "broadcast_to", "pad", "tile", "split", "trilu", "gather", "gather_elements",
        "gather_nd", "scatter_elements", "scatter_nd", "one_hot", "depth_to_space",
        "space_to_depth", "max_n", "min_n", "sum_n", "mean_n", "cast", "matmul", "gemm",
        "einsum", "zeros", "ones", "full", "eye", "arange", "random_uniform", "random_normal",
        "conv", "conv_transpose", "max_pool", "average_pool", "global_max_pool",
        "global_average_pool", "lrn", "batch_norm", "instance_norm", "layer_norm", "rms_norm",
        "nll_loss", "softmax_cross_entropy_loss", "dropout", "resize",
        # NumPy's names, checked against the library's in test_numpy_names_are_the_same_functions
        "subtract", "multiply", "divide", "true_divide", "power", "equal", "not_equal", "less",
        "less_equal", "greater", "greater_equal", "negative", "absolute", "concatenate",
        "amax", "amin"}
    not_ops = {"backends", "backend", "synchronize", "stats", "info", "load_safetensors",
               "save_safetensors", "asarray", "from_dlpack"}
    functions = {n for n in dir(bp._backplane) if not n.startswith("_")
                 and callable(getattr(bp._backplane, n)) and not isinstance(getattr(bp._backplane, n), type)}
    missing = functions - covered - not_ops
    assert not missing, f"functions without a NumPy reference in test_functions.py: {missing}"


@pytest.mark.skipif(not HAVE_ML_DTYPES, reason="bfloat16 needs ml_dtypes")
def test_bfloat16_round_trips():
    import ml_dtypes
    a = np.array([1.5, -2.25, 3.0], dtype=ml_dtypes.bfloat16)
    t = bp.asarray(a)
    assert t.dtype == "bfloat16"
    assert t.numpy().tobytes() == a.tobytes()

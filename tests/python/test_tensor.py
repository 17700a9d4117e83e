"""Tensors: attributes, printing, indexing, operators and scalars, NumPy in
and out, bad input."""
import sys

import numpy as np
import pytest

import backplane as bp
from conftest import ALL, FLOATS, INTS, NUMERIC, np_dtype


def rng_array(dtype, shape, seed=0, low=-4, high=4):
    r = np.random.default_rng(seed)
    if dtype == "bool":
        return r.random(shape) < 0.5
    if dtype in ("uint8", "uint16", "uint32", "uint64"):
        return r.integers(0, 8, shape).astype(dtype)
    if dtype in ("int8", "int16", "int32", "int64"):
        return r.integers(low, high, shape).astype(dtype)
    return r.uniform(low, high, shape).astype(np_dtype(dtype))


@pytest.mark.parametrize("dtype", ALL)
def test_numpy_round_trip_keeps_values_shape_and_dtype(dtype, backend):
    a = rng_array(dtype, (2, 3, 4))
    t = bp.asarray(a, backend=backend)
    assert t.shape == (2, 3, 4) and t.dtype == dtype and t.backend == backend.name
    assert t.ndim == 3 and t.size == 24 and t.nbytes == a.nbytes and len(t) == 2
    back = t.numpy()
    assert back.dtype == a.dtype and back.shape == a.shape
    assert back.tobytes() == a.tobytes()
    assert np.asarray(t).tobytes() == a.tobytes()


HOST = "blas_cpu" if "blas_cpu" in bp.backends() else "binary"


def test_asarray_copies_an_array_so_changing_it_later_leaves_the_tensor_alone():
    a = np.arange(6, dtype=np.float32)
    t = bp.asarray(a, backend=HOST)
    copied = t.to("binary")  # a copy made before the change, memoised by the library
    a[0] = 42.0
    assert t[0].item() == 0.0
    assert t.to("binary")[0].item() == copied[0].item() == 0.0


def test_asarray_copy_false_shares_the_memory_of_a_contiguous_array():
    a = np.arange(6, dtype=np.float32)
    t = bp.asarray(a, backend=HOST, copy=False)
    a[0] = 42.0  # the tensor is the array's memory (documented: keep it unchanged)
    assert t[0].item() == 42.0
    assert bp.asarray(a, backend=HOST, copy=None)[0].item() == 42.0


def test_asarray_copy_false_refuses_an_array_it_cannot_share():
    a = np.arange(6, dtype=np.float32)[::2]
    with pytest.raises(ValueError, match="copy=True"):
        bp.asarray(a, backend=HOST, copy=False)


@pytest.mark.parametrize("make", [
    lambda a: a.T,
    lambda a: a[:, ::-1],
    lambda a: a[::-2, 1:],
    lambda a: a[:, 1],
    lambda a: np.asfortranarray(a),
    lambda a: a.astype(a.dtype.newbyteorder(">")),
])
def test_non_contiguous_and_negative_stride_arrays_are_copied(make):
    base = np.arange(20, dtype=np.float64).reshape(4, 5)
    a = make(base)
    t = bp.asarray(a)
    np.testing.assert_array_equal(t.numpy(), a)
    base[...] = -1  # the tensor holds a copy
    assert (t.numpy() >= 0).all()


def test_read_only_arrays_are_copied():
    a = np.arange(4.0)
    a.flags.writeable = False
    np.testing.assert_array_equal(bp.asarray(a).numpy(), a)


def test_lists_infer_numpy_dtypes():
    assert bp.asarray([1, 2]).dtype == "int64"
    assert bp.asarray([1, 2.5]).dtype == "float64"
    assert bp.asarray([True, False]).dtype == "bool"
    assert bp.asarray(3).shape == ()
    assert bp.asarray([[1, 2], [3, 4]], dtype="float32").dtype == "float32"
    assert bp.asarray([]).shape == (0,)
    np.testing.assert_array_equal(bp.asarray(((1, 2), (3, 4))).numpy(), [[1, 2], [3, 4]])


@pytest.mark.parametrize("bad,cls,words", [
    ([[1, 2], [3]], bp.ShapeError, "ragged"),
    ([[1, 2], 3], bp.ShapeError, "ragged"),
    ([1, [2, 3]], bp.ShapeError, "ragged"),
    (np.zeros(3, "m8[s]"), bp.DTypeError, "timedelta64"),
    (np.zeros(3, np.complex64), bp.DTypeError, "complex64"),
    ([1 + 2j], bp.DTypeError, "complex"),
    (2j, bp.DTypeError, "complex"),
    ("abc", TypeError, "str"),
    (object(), TypeError, "object"),
    ([None], TypeError, "NoneType"),
])
def test_bad_input_raises_an_exception_naming_the_problem(bad, cls, words):
    with pytest.raises(cls, match=words):
        bp.asarray(bad)


def test_dtypes_refused_by_name():
    with pytest.raises(bp.DTypeError, match="timedelta64"):
        bp.zeros(3, dtype="timedelta64[s]")
    with pytest.raises(bp.DTypeError, match="complex"):
        bp.zeros(3, dtype=complex)
    assert bp.zeros(3, dtype=np.float32).dtype == "float32"
    assert bp.zeros(3, dtype=np.dtype("int8")).dtype == "int8"
    assert bp.zeros(3, dtype=float).dtype == "float64"


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "bool", "uint8"])
def test_str_and_repr_print_as_numpy_does(dtype):
    a = rng_array(dtype, (3, 4), seed=3)
    t = bp.asarray(a)
    assert str(t) == str(a)
    assert repr(t) == "Tensor(" + np.array2string(a, separator=", ", prefix="Tensor(") + \
        f", dtype={dtype}, backend='{t.backend}')"
    s = bp.asarray(np.float32(2.5))
    assert str(s) == str(np.float32(2.5).reshape(()))


KEYS = [0, -1, 2, slice(None), slice(1, 3), slice(None, None, -1), slice(3, 0, -2),
        slice(-2, None), slice(None, None, 2), (1, 2), (slice(None), 1), (Ellipsis, 0),
        (None, 1), (slice(None), None, slice(None, None, -1)), (1, Ellipsis, None),
        (slice(4, None),), (-1, slice(None, -5, -1))]


@pytest.mark.parametrize("key", KEYS, ids=[repr(k) for k in KEYS])
def test_getitem_matches_numpy(key):
    a = np.arange(20, dtype=np.float32).reshape(4, 5)
    t = bp.asarray(a)
    r = t[key]
    np.testing.assert_array_equal(r.numpy(), a[key])
    assert r.shape == a[key].shape


def test_getitem_out_of_range_and_iteration():
    t = bp.asarray([1.0, 2.0, 3.0])
    with pytest.raises(bp.IndexError, match="out of range"):
        t[3]
    with pytest.raises(IndexError):
        t[-4]
    with pytest.raises(bp.IndexError):
        t[0, 0]
    assert [x.item() for x in t] == [1.0, 2.0, 3.0]
    with pytest.raises(TypeError):
        len(bp.asarray(1.0))


OPS = [
    ("+", lambda a, b: a + b), ("-", lambda a, b: a - b), ("*", lambda a, b: a * b),
    ("/", lambda a, b: a / b), ("**", lambda a, b: a ** b), ("%", lambda a, b: a % b),
    ("<", lambda a, b: a < b), ("<=", lambda a, b: a <= b), ("==", lambda a, b: a == b),
    ("!=", lambda a, b: a != b), (">", lambda a, b: a > b), (">=", lambda a, b: a >= b),
]


@pytest.mark.parametrize("name,op", OPS, ids=[o[0] for o in OPS])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_operators_match_numpy(name, op, dtype):
    a = rng_array(dtype, (3, 4), 1, 0.5, 3)
    b = rng_array(dtype, (4,), 2, 0.5, 3)
    ta, tb = bp.asarray(a), bp.asarray(b)
    tol = 1e-6 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(op(ta, tb).numpy(), op(a, b), rtol=tol)
    np.testing.assert_allclose(op(ta, 2.0).numpy(), op(a, np.array(2.0, dtype)), rtol=tol)
    np.testing.assert_allclose(op(2.0, ta).numpy(), op(np.array(2.0, dtype), a), rtol=tol)
    assert op(ta, 2.0).dtype == (dtype if name not in "<<===!=>>=" else "bool")


@pytest.mark.parametrize("dtype", INTS)
def test_integer_operators_keep_the_dtype_and_refuse_float_scalars(dtype):
    a = rng_array(dtype, (5,), 1, 1, 5)
    t = bp.asarray(a)
    assert (t + 1).dtype == dtype
    np.testing.assert_array_equal((t * 2).numpy(), a * np.array(2, dtype))
    np.testing.assert_array_equal((t % 3).numpy(), a % np.array(3, dtype))
    np.testing.assert_array_equal((t / 2).numpy(), a // np.array(2, dtype))  # truncates (a > 0)
    with pytest.raises(bp.DTypeError, match="float"):
        t + 0.5
    with pytest.raises(OverflowError):
        t + 10**20


def test_matmul_unary_bitwise_and_bool_operators():
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    t = bp.asarray(a)
    np.testing.assert_allclose((t @ t.T).numpy(), a @ a.T)
    np.testing.assert_array_equal((-t).numpy(), -a)
    np.testing.assert_array_equal(abs(-t).numpy(), a)
    assert (+t) is t
    i = bp.asarray(np.array([1, 2, 12], np.int32))
    np.testing.assert_array_equal((i & 6).numpy(), np.array([1, 2, 12]) & 6)
    np.testing.assert_array_equal((i | 1).numpy(), np.array([1, 2, 12]) | 1)
    np.testing.assert_array_equal((i ^ 3).numpy(), np.array([1, 2, 12]) ^ 3)
    np.testing.assert_array_equal((i << 1).numpy(), np.array([1, 2, 12]) << 1)
    np.testing.assert_array_equal((~i).numpy(), ~np.array([1, 2, 12], np.int32))
    m = bp.asarray([True, False])
    np.testing.assert_array_equal((~m).numpy(), [False, True])
    np.testing.assert_array_equal((m & True).numpy(), [True, False])
    assert bool(bp.asarray([3.0])) and not bool(bp.asarray(0))
    assert float(bp.asarray([[2.5]])) == 2.5 and int(bp.asarray(7)) == 7
    with pytest.raises(bp.ShapeError):
        bool(t)


def test_numpy_arrays_meet_tensors_on_the_tensors_backend():
    a = np.arange(3.0)
    t = bp.asarray(a, backend="binary")
    r = a + t  # NumPy defers (Tensor.__array_ufunc__ = None)
    assert isinstance(r, bp.Tensor) and r.backend == "binary:0"
    np.testing.assert_array_equal(r.numpy(), 2 * a)


def test_item_and_to():
    t = bp.asarray([[4.0]])
    assert t.item() == 4.0 and isinstance(t.item(), float)
    assert bp.asarray(3).item() == 3 and isinstance(bp.asarray(3).item(), int)
    assert bp.asarray(True).item() is True
    with pytest.raises(bp.ShapeError):
        bp.asarray([1.0, 2.0]).item()
    names = bp.backends()
    b = bp.asarray([1.0, 2.0], backend=names[0])
    assert b.to(names[0]) .backend == b.backend
    for n in names:
        c = b.to(n)
        assert c.backend == bp.backend(n).name
        np.testing.assert_array_equal(c.numpy(), [1.0, 2.0])


def test_refcounts_are_right():
    t = bp.asarray(np.arange(4.0))
    a = np.arange(4.0)
    rt, ra = sys.getrefcount(t), sys.getrefcount(a)
    for _ in range(100):
        u = t + t
        v = bp.asarray(a)  # zero-copy: holds a reference to a while it lives
        w = t[1:]
        del u, v, w
    assert sys.getrefcount(t) == rt
    assert sys.getrefcount(a) == ra
    with pytest.raises(bp.ShapeError):
        t + bp.asarray([1.0, 2.0])
    assert sys.getrefcount(t) == rt
    b = bp.backend()
    rb = sys.getrefcount(b)
    bp.zeros(2, backend=b)
    assert sys.getrefcount(b) == rb


@pytest.mark.parametrize("dtype", NUMERIC)
def test_scalars_take_the_tensors_dtype(dtype):
    t = bp.zeros(3, dtype=dtype)
    assert (t + 1).dtype == dtype and (1 + t).dtype == dtype
    if dtype in FLOATS:
        assert (t * 0.5).dtype == dtype

"""What a NumPy user reaches for in the first hour, against NumPy."""
import copy
import operator
import pickle

import numpy as np
import pytest

import backplane as bp

from conftest import HAVE_ML_DTYPES


def same(t, a):
    got = t.numpy() if isinstance(t, bp.Tensor) else np.asarray(t)
    assert got.shape == np.shape(a), (got.shape, np.shape(a))
    np.testing.assert_array_equal(got, a)


# ---- iteration and scalar indices -------------------------------------------------------

def test_iterating_a_0d_tensor_is_a_type_error_as_in_numpy():
    with pytest.raises(TypeError, match="0-d"):
        list(bp.asarray(5.0))
    with pytest.raises(TypeError):
        iter(bp.asarray(5.0))


def test_iterating_goes_over_the_first_axis():
    a = np.arange(6.0).reshape(3, 2)
    rows = list(bp.asarray(a))
    assert len(rows) == 3
    for r, w in zip(rows, a):
        same(r, w)


@pytest.mark.parametrize("key", [True, False, (True, 1), (0, False), (Ellipsis, True),
                                 np.bool_(True), np.bool_(False)])
def test_a_bool_index_adds_an_axis_as_in_numpy_not_index_one(key):
    a = np.arange(6.0).reshape(2, 3)
    same(bp.asarray(a)[key], a[key])


@pytest.mark.parametrize("n", [0, 1, 3, 5])
def test_every_small_slice_matches_numpy_including_empty_negative_steps(n):
    a = np.arange(float(n))
    t = bp.asarray(a)
    vals = [None, -10, -4, -3, -1, 0, 1, 2, 3, 4, 10]
    for start in vals:
        for stop in vals:
            for step in (None, -3, -2, -1, 1, 2, 3):
                s = slice(start, stop, step)
                same(t[s], a[s])


# ---- advanced indexing (read) and .at updates ---------------------------------------------

KEYS = [
    [1, 0], [[0, 1], [1, 0]], np.array([-1, 0]), (slice(None), [2, 0]), ([0, 1], [2, 0]),
    ([0, 1], slice(None), [1, 1]), (1, [0, 2]), ([[0], [1]], [0, 2]), (Ellipsis, [0]),
    (slice(None), [0, 1], 1),
]


@pytest.mark.parametrize("key", KEYS, ids=[str(i) for i in range(len(KEYS))])
def test_integer_array_indexing_matches_numpy(key):
    a = np.arange(24.0).reshape(2, 3, 4)
    same(bp.asarray(a)[key], a[key])


def test_indices_may_be_an_integer_tensor():
    a = np.arange(12.0).reshape(3, 4)
    idx = bp.asarray([2, 0], dtype="int32")
    same(bp.asarray(a)[idx], a[[2, 0]])


def test_a_boolean_mask_selects_as_in_numpy():
    a = np.arange(12.0).reshape(3, 4)
    t = bp.asarray(a)
    same(t[t > 4], a[a > 4])
    same(t[a[:, 0] > 0], a[a[:, 0] > 0])
    same(t[:, [True, False, True, False]], a[:, [True, False, True, False]])
    same(t[t > 100], a[a > 100])


def test_an_index_out_of_range_in_an_array_is_an_index_error():
    with pytest.raises(IndexError):
        bp.asarray(np.arange(3.0))[[0, 3]].numpy()


def test_a_float_array_is_not_an_index():
    with pytest.raises(IndexError, match="integer or boolean"):
        bp.asarray(np.arange(3.0))[np.array([0.0])]


def test_item_assignment_is_a_type_error_that_shows_the_functional_form():
    t = bp.zeros(3)
    with pytest.raises(TypeError, match=r"x\.at\[i\]\.set\(v\)"):
        t[0] = 1.0
    with pytest.raises(TypeError, match="immutable"):
        del t[0]


@pytest.mark.parametrize("key", [0, (1, 2), (slice(None), 1), [0, 2], (Ellipsis, [1, 1])])
def test_at_set_and_add_match_numpys_in_place_updates(key):
    a = np.arange(12.0).reshape(3, 4)
    t = bp.asarray(a)
    want = a.copy()
    want[key] = -1.0
    same(t.at[key].set(-1.0), want)
    want = a.copy()
    np.add.at(want, key, 10.0)
    same(t.at[key].add(10.0), want)
    same(t, a)  # the original is unchanged


def test_at_set_refuses_values_of_another_dtype():
    with pytest.raises(bp.DTypeError, match="astype"):
        bp.zeros(3, dtype="float32").at[0].set(bp.ones(1, dtype="float64"))


# ---- NumPy scalars and dtypes ---------------------------------------------------------------

@pytest.mark.parametrize("scalar", [np.float32(2), np.float64(2), np.int64(2), np.int32(2),
                                    np.uint8(2)])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_numpy_scalars_take_the_tensors_dtype_on_either_side(scalar, dtype):
    t = bp.asarray([1, 2, 3], dtype=dtype)
    for r in (t * scalar, scalar * t, t + scalar, scalar - t):
        assert isinstance(r, bp.Tensor) and r.dtype == dtype
    same(t * scalar, np.array([2, 4, 6], dtype=dtype))


def test_a_numpy_float_beside_an_integer_tensor_names_astype():
    with pytest.raises(bp.DTypeError, match="astype"):
        bp.asarray([1, 2], dtype="int32") + np.float32(0.5)


def test_a_numpy_int_that_does_not_fit_is_an_overflow_error():
    with pytest.raises(OverflowError):
        bp.asarray([1, 2], dtype="uint8") + np.int64(300)


def test_a_numpy_bool_beside_a_bool_tensor_is_a_bool():
    same(bp.asarray([True, False]) & np.bool_(True), np.array([True, False]))


@pytest.mark.parametrize("spelling", ["float32", "f4", "<f4", "=f4", np.float32,
                                      np.dtype("float32"), "f32"])
def test_dtype_compares_equal_to_every_numpy_spelling(spelling):
    t = bp.ones(2, dtype="float32")
    assert t.dtype == spelling
    assert not (t.dtype != spelling)
    assert bp.ones(2, dtype=spelling).dtype == "float32"


def test_dtype_is_unequal_to_other_types_and_still_a_string():
    t = bp.ones(2, dtype="float32")
    assert t.dtype != np.float64 and t.dtype != "int32" and t.dtype != ">f4"
    assert str(t.dtype) == "float32" and f"{t.dtype}" == "float32"
    assert repr(t.dtype) == "dtype('float32')"
    assert {"float32": 1}[t.dtype] == 1
    assert t.dtype.itemsize == 4 and t.dtype.kind == "f" and t.dtype.name == "float32"
    assert bp.asarray(1.0).dtype == float and bp.asarray(1).dtype == int
    assert bp.dtype("f8") is bp.asarray(1.0).dtype


def test_numpy_reads_the_dtype():
    t = bp.ones(2, dtype="int32")
    assert np.result_type(t) == np.int32
    assert np.dtype(t.dtype) == np.int32
    assert np.result_type(t, np.float32(1)) == np.result_type(np.int32, np.float32)


@pytest.mark.skipif(not HAVE_ML_DTYPES, reason="bfloat16 needs ml_dtypes")
def test_bfloat16_dtype_compares_to_ml_dtypes():
    import ml_dtypes

    t = bp.ones(2, dtype="bfloat16")
    assert t.dtype == ml_dtypes.bfloat16 and t.dtype == "bfloat16"


@pytest.mark.parametrize("value,dtype", [(300, "uint8"), (-1, "uint8"), (128, "int8"),
                                         (2**31, "int32"), ([1, 256], "uint8"),
                                         (-32769, "int16"), (65536, "uint16"), (-1, "uint16"),
                                         (2**32, "uint32"), ([0, -1], "uint32"),
                                         (-1, "uint64"), (2**64, "uint64"), (2**63, "int64")])
def test_explicit_integer_dtypes_never_saturate_silently(value, dtype):
    with pytest.raises(OverflowError):
        bp.asarray(value, dtype=dtype)


def test_python_ints_above_int64_become_uint64_and_read_back_exactly():
    assert bp.asarray([2**64 - 1, 2**63]).dtype == "uint64" == np.asarray([2**64 - 1, 2**63]).dtype
    # NumPy makes [2**63, 5] float64 (int64 and uint64 promote to it), losing
    # the low bits; backplane keeps them exact in uint64 when every int fits
    t = bp.asarray([2**64 - 1, 2**63, 5])
    assert t.dtype == "uint64"
    assert t.tolist() == [2**64 - 1, 2**63, 5]
    assert int(t[0]) == 2**64 - 1 and t[1].item() == 2**63
    assert (t + 1).tolist() == [0, 2**63 + 1, 6]  # wraps, as NumPy's uint64
    assert t.max().item() == 2**64 - 1 and t.argmax().item() == 0
    with pytest.raises(OverflowError):
        bp.asarray([-1, 2**63])  # NumPy has no integer dtype for both


def test_explicit_integer_dtypes_still_truncate_floats_as_astype_does():
    same(bp.asarray([1.7, -1.7], dtype="int32"), np.array([1, -1], np.int32))


# ---- NumPy's functions on tensors ------------------------------------------------------------

@pytest.mark.parametrize("fn", [np.sum, np.mean, np.max, np.min, np.prod, np.argmax, np.argmin,
                                np.std, np.var, np.any, np.all, np.amax, np.amin])
def test_numpy_reductions_run_on_backplane(fn):
    a = np.arange(1.0, 7.0).reshape(2, 3)
    t = bp.asarray(a)
    r = fn(t)
    assert isinstance(r, bp.Tensor)
    np.testing.assert_allclose(r.numpy(), fn(a))
    r = fn(t, axis=0, keepdims=True)
    np.testing.assert_allclose(r.numpy(), fn(a, axis=0, keepdims=True))


def test_numpy_ufuncs_run_on_backplane_and_return_tensors():
    a = np.linspace(0.1, 0.9, 6).reshape(2, 3)
    t = bp.asarray(a)
    for uf in (np.exp, np.log, np.sqrt, np.sin, np.tanh, np.negative, np.abs, np.floor):
        r = uf(t)
        assert isinstance(r, bp.Tensor)
        np.testing.assert_allclose(r.numpy(), uf(a), rtol=1e-12)
    r = np.add(t, 1.0)
    assert isinstance(r, bp.Tensor)
    same(np.maximum(t, 0.5), np.maximum(a, 0.5))
    same(a + t, a + a)  # an ndarray on the left defers to the tensor


def test_numpy_functions_backplane_has_return_tensors():
    a = np.arange(6.0).reshape(2, 3)
    t = bp.asarray(a)
    for got, want in [
        (np.concatenate([t, t]), np.concatenate([a, a])),
        (np.concatenate([t, t], axis=1), np.concatenate([a, a], axis=1)),
        (np.stack([t, t], axis=1), np.stack([a, a], axis=1)),
        (np.transpose(t), a.T), (np.reshape(t, (3, 2)), a.reshape(3, 2)),
        (np.where(t > 2, t, 0.0), np.where(a > 2, a, 0.0)), (np.clip(t, 1, 4), np.clip(a, 1, 4)),
        (np.ravel(t), a.ravel()), (np.zeros_like(t), np.zeros_like(a)),
        (np.expand_dims(t, 0), np.expand_dims(a, 0)),
    ]:
        assert isinstance(got, bp.Tensor)
        same(got, want)
    assert np.shape(t) == (2, 3) and np.ndim(t) == 2 and np.size(t) == 6


def test_what_backplane_lacks_goes_through_numpy_explicitly():
    a = np.arange(6.0).reshape(2, 3)
    t = bp.asarray(a)
    r = np.add.reduce(t)  # a ufunc method: NumPy's result
    assert isinstance(r, np.ndarray)
    same(r, np.add.reduce(a))
    r = np.median(t)
    assert float(r) == np.median(a)


def test_from_dlpack_with_copy_gives_numpy_its_own_array():
    t = bp.asarray([1.0, 2.0])
    a = np.from_dlpack(t, copy=True)
    same(a, np.array([1.0, 2.0]))


def test_one_element_formats_and_integer_0d_is_an_index():
    assert f"{bp.asarray(3.14159):.2f}" == "3.14"
    assert f"{bp.asarray([1.0, 2.0])}" == "[1. 2.]"
    with pytest.raises(TypeError, match="one-element"):
        f"{bp.asarray([1.0, 2.0]):.2f}"
    assert operator.index(bp.asarray(2)) == 2
    assert [10, 20, 30][bp.asarray(1)] == 20
    with pytest.raises(TypeError):
        operator.index(bp.asarray(2.0))


def test_method_spellings_numpy_code_uses():
    a = np.arange(6.0).reshape(2, 3)
    t = bp.asarray(a)
    same(t.transpose(None), a.transpose(None))
    same(t.reshape(np.int64(6)), a.reshape(np.int64(6)))
    same(t.reshape([3, 2]), a.reshape([3, 2]))
    same(t.sum(axis=0, dtype="float32"), a.sum(axis=0, dtype="float32"))
    with pytest.raises(TypeError, match="out="):
        t.sum(out=np.zeros(3))


# ---- conveniences -----------------------------------------------------------------------------

def test_conveniences_match_numpy():
    a = np.arange(1.0, 7.0).reshape(2, 3)
    t = bp.asarray(a)
    same(t.flatten(), a.flatten())
    same(bp.ravel(t), np.ravel(a))
    same(t.copy(), a)
    same(t.clip(2, 5), a.clip(2, 5))
    same(bp.clip(t, max=3), np.clip(a, None, 3))
    same((t > 3).any(axis=1), (a > 3).any(axis=1))
    same((t > 0).all(), (a > 0).all())
    np.testing.assert_allclose(t.std(axis=0).numpy(), a.std(axis=0))
    np.testing.assert_allclose(bp.var(t, ddof=1).numpy(), np.var(a, ddof=1))
    same(t.astype("int32"), a.astype("int32"))
    same(bp.stack([t, t]), np.stack([a, a]))
    same(bp.stack([t, t], axis=-1), np.stack([a, a], axis=-1))
    np.testing.assert_allclose(bp.linspace(0, 1, 7).numpy(), np.linspace(0, 1, 7), rtol=0,
                               atol=0)
    np.testing.assert_allclose(bp.linspace(-3, 2, 5, endpoint=False).numpy(),
                               np.linspace(-3, 2, 5, endpoint=False), rtol=0, atol=1e-15)
    same(bp.linspace(2, 3, 1), np.linspace(2, 3, 1))
    same(bp.linspace(2, 3, 0), np.linspace(2, 3, 0))
    same(bp.zeros_like(t), np.zeros_like(a))
    same(bp.ones_like(t, dtype="int8"), np.ones_like(a, dtype="int8"))
    same(bp.full_like(t, 7), np.full_like(a, 7))
    same(bp.arange(5), np.arange(5))
    same(bp.arange(2, 8, 3), np.arange(2, 8, 3))
    same(bp.eye(3), np.eye(3))
    same(bp.eye(2, 3), np.eye(2, 3))


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int64", "float16", "float32", "float64"])
def test_tensors_pickle_and_deepcopy_with_backend_dtype_shape_and_bytes(dtype):
    a = (np.arange(6) % 3).reshape(2, 3).astype(dtype)
    t = bp.asarray(a, backend="binary")
    for back in (pickle.loads(pickle.dumps(t)), copy.deepcopy(t), copy.copy(t)):
        assert back.backend == t.backend and back.dtype == t.dtype
        same(back, a)


def test_unpickling_onto_a_backend_that_does_not_open_here_says_so():
    rebuild, args = bp.ones(2).__reduce__()
    with pytest.raises(bp.NotFoundError, match="nowhere"):
        rebuild("nowhere:0", *args[1:])


# ---- printing -------------------------------------------------------------------------------------

PRINTED = [np.array(0.0), np.array(3.14159265), np.array(1e-5), np.array(0.1 + 0.2),
           np.array(123456789.0), np.array(1e16), np.array(-0.0), np.array(np.float32(0.1)),
           np.array(np.float32(1e6)), np.array(np.float32(123456789.0)),
           np.array(np.float16(1000)), np.array(np.float16(999)), np.array(np.nan), np.array(7),
           np.zeros((0, 3)), np.zeros((0,)), np.arange(2000.0).reshape(10, 10, 20),
           np.arange(1400).reshape(7, 2, 100), np.arange(1001.0), np.arange(24).reshape(2, 3, 4)]


@pytest.mark.parametrize("a", PRINTED, ids=[str(i) for i in range(len(PRINTED))])
def test_tensors_print_as_numpy_prints(a):
    t = bp.asarray(a)
    assert str(t) == str(a)
    want = np.array_repr(a)
    got = repr(t)
    assert got.startswith("Tensor(") and got.endswith(f", backend='{t.backend}')")
    # NumPy's repr without its implied dtype, realigned for the longer prefix
    body = got[len("Tensor("):got.rindex(", dtype=")]
    want_body = want[len("array("):]
    want_body = want_body[:want_body.rindex(", dtype=")] if ", dtype=" in want_body \
        else want_body[:-1]
    assert body.replace("\n ", "\n") == want_body

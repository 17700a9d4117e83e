"""Exchange: DLPack both ways with NumPy (and PyTorch where it is
installed), safetensors both ways with Hugging Face's package, bit for bit."""
import numpy as np
import pytest

import backplane as bp
from conftest import HAVE_ML_DTYPES, NUMERIC, np_dtype


def data(dtype, shape=(3, 4), seed=0):
    r = np.random.default_rng(seed)
    if dtype == "bool":
        return r.random(shape) < 0.5
    if dtype in ("uint8", "int8", "int16", "uint16", "int32", "uint32", "int64", "uint64"):
        return r.integers(0, 100, shape).astype(dtype)
    return r.standard_normal(shape).astype(np_dtype(dtype))


def host_backends():
    return [b for b in ("binary", "blas_cpu") if b in bp.backends()]


@pytest.mark.parametrize("dtype", ["bool"] + [d for d in NUMERIC if d != "bfloat16"])
@pytest.mark.parametrize("name", host_backends())
def test_numpy_takes_a_tensor_through_dlpack_without_a_copy(dtype, name):
    t = bp.asarray(data(dtype), backend=name)
    assert t.__dlpack_device__() == (1, 0)
    a = np.from_dlpack(t)
    b = np.from_dlpack(t)
    assert a.__array_interface__["data"][0] == b.__array_interface__["data"][0]  # t's memory
    np.testing.assert_array_equal(a, t.numpy())
    del t  # the capsule holds the tensor while NumPy uses it
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", ["bool"] + [d for d in NUMERIC if d != "bfloat16"])
def test_a_tensor_takes_a_numpy_array_through_dlpack_without_a_copy(dtype):
    a = data(dtype)
    t = bp.from_dlpack(a)
    assert t.dtype == dtype and t.shape == a.shape
    np.testing.assert_array_equal(t.numpy(), a)
    back = np.from_dlpack(t)
    assert back.__array_interface__["data"][0] == a.__array_interface__["data"][0]


def test_from_dlpack_takes_strided_arrays_as_copies():
    a = np.arange(12.0).reshape(3, 4)[:, ::-2]
    np.testing.assert_array_equal(bp.from_dlpack(a.copy()).numpy(), a)
    np.testing.assert_array_equal(bp.asarray(a).numpy(), a)
    with pytest.raises(TypeError):
        bp.from_dlpack([1, 2])


def test_pytorch_both_ways():
    torch = pytest.importorskip("torch")
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    t = bp.from_dlpack(x)
    np.testing.assert_array_equal(t.numpy(), x.numpy())
    y = torch.from_dlpack(bp.relu(t - 5.0))
    assert torch.equal(y, torch.relu(x - 5.0))
    bf = torch.tensor([1.5, -2.0], dtype=torch.bfloat16)
    assert bp.from_dlpack(bf).dtype == "bfloat16"




def _safetensors():
    return pytest.importorskip("safetensors.numpy")


DTYPES_ST = ["bool"] + NUMERIC


@pytest.mark.parametrize("name", host_backends())
def test_safetensors_written_here_read_by_the_reference_bit_for_bit(tmp_path, name):
    stn = _safetensors()
    tensors = {f"t_{d}": data(d, (2, 3), i) for i, d in enumerate(DTYPES_ST)}
    tensors["scalar"] = np.array(3.5, np.float32)
    path = tmp_path / "ours.safetensors"
    bp.save_safetensors(path, {k: bp.asarray(v, backend=name) for k, v in tensors.items()},
                        metadata={"step": "7"})
    theirs = stn.load_file(str(path))
    assert set(theirs) == set(tensors)
    for k, v in tensors.items():
        assert theirs[k].dtype == v.dtype and theirs[k].shape == v.shape
        assert theirs[k].tobytes() == v.tobytes()


@pytest.mark.parametrize("name", host_backends())
def test_safetensors_written_by_the_reference_read_here_bit_for_bit(tmp_path, name):
    stn = _safetensors()
    tensors = {f"t_{d}": data(d, (4, 2), i) for i, d in enumerate(DTYPES_ST)}
    path = tmp_path / "theirs.safetensors"
    stn.save_file(tensors, str(path), metadata={"model": "mlp"})
    ours, meta = bp.load_safetensors(path, backend=name, metadata=True)
    assert meta == {"model": "mlp"}
    assert set(ours) == set(tensors)
    for k, v in tensors.items():
        assert ours[k].backend == bp.backend(name).name
        assert ours[k].dtype == str(v.dtype) and ours[k].shape == v.shape
        assert ours[k].numpy().tobytes() == v.tobytes()


def test_safetensors_refuses_bad_arguments(tmp_path):
    with pytest.raises(TypeError):
        bp.save_safetensors(tmp_path / "x.safetensors", [1, 2])
    with pytest.raises(TypeError):
        bp.save_safetensors(tmp_path / "x.safetensors", {"a": [1.0]}, metadata={"k": 1})
    with pytest.raises(bp.InvalidArgumentError):
        bp.save_safetensors(tmp_path / "x.safetensors", {"": [1.0]})


@pytest.mark.skipif(not HAVE_ML_DTYPES, reason="bfloat16 in NumPy needs ml_dtypes")
def test_bfloat16_checkpoint_round_trip(tmp_path):
    import ml_dtypes
    a = np.array([[1.5, -3.0]], dtype=ml_dtypes.bfloat16)
    bp.save_safetensors(tmp_path / "bf.safetensors", {"w": a})
    got = bp.load_safetensors(tmp_path / "bf.safetensors")["w"]
    assert got.dtype == "bfloat16" and got.numpy().tobytes() == a.tobytes()

"""Every exception class, raised by a real mistake, with the library's
detailed message; each derives from backplane.Error and its builtin."""
import builtins

import numpy as np
import pytest

import backplane as bp
from conftest import devsim_path


def test_the_hierarchy():
    pairs = {bp.InvalidArgumentError: ValueError, bp.ShapeError: ValueError,
             bp.DTypeError: TypeError, bp.UnsupportedOpError: NotImplementedError,
             bp.OutOfMemoryError: MemoryError, bp.IndexError: builtins.IndexError,
             bp.IOError: OSError, bp.FormatError: ValueError, bp.NotFoundError: LookupError,
             bp.BackendError: RuntimeError}
    for cls, base in pairs.items():
        assert issubclass(cls, bp.Error) and issubclass(cls, base)
    for cls in (bp.BackendMismatchError, bp.UnsupportedDeviceError, bp.PluginError,
                bp.ConfigError):
        assert issubclass(cls, bp.Error)
    assert bp.ShapeError.status == "BP_ERR_SHAPE"


def test_invalid_argument():
    with pytest.raises(bp.InvalidArgumentError, match="step is 0"):
        bp.arange(0, 1, 0)
    with pytest.raises(bp.InvalidArgumentError, match="reduction"):
        bp.nll_loss([[0.0, 0.0]], [0], reduction="average")


def test_shape():
    with pytest.raises(bp.ShapeError, match=r"\(2, 2\) and \(3,\)"):
        bp.ones((2, 2)) + bp.ones(3)


def test_dtype():
    with pytest.raises(bp.DTypeError, match="f32 but b is i32"):
        bp.ones(2, dtype="float32") + bp.ones(2, dtype="int32")
    with pytest.raises(bp.DTypeError):
        bp.exp(bp.ones(2, dtype="int32"))


def test_backend_mismatch_names_both_and_the_fix_in_python_terms():
    names = bp.backends()
    if len(names) < 2:
        pytest.skip("one backend here")
    a, b = bp.ones(2, backend=names[0]), bp.ones(2, backend=names[1])
    with pytest.raises(bp.BackendMismatchError, match=r"b\.to\('") as e:
        a + b
    assert "bp_backend_copy" not in str(e.value)
    assert a.backend in str(e.value) and b.backend in str(e.value)
    np.testing.assert_array_equal((a + b.to(names[0])).numpy(), [2.0, 2.0])


def test_unsupported_op_on_a_backend_whose_memory_no_one_else_addresses():
    path = devsim_path()
    if not path:
        pytest.skip("the devsim test plugin is not built here (BPT_DEVSIM_PATH)")
    dev = bp.backend(path)
    t = bp.ones(3, backend=dev)
    with pytest.raises(bp.UnsupportedOpError):
        t.__dlpack__()
    np.testing.assert_array_equal(t.numpy(), [1.0, 1.0, 1.0])  # reads go through the host


def test_unsupported_device():
    if "cuda" not in [p["name"] for p in bp.info()["plugins"]]:
        pytest.skip("no cuda plugin built here")
    try:
        bp.backend("cuda")
    except bp.UnsupportedDeviceError as e:
        assert str(e)
    except bp.Error as e:  # no driver at all: another status, still with its reason
        pytest.skip(f"the cuda plugin refused for another reason: {type(e).__name__}")
    else:
        pytest.skip("a GPU this build runs on is here")


def test_info_marks_a_backend_key_used_once_its_plugin_declares_it(tmp_path):
    ini = tmp_path / "threads.ini"
    ini.write_text("[backend.blas_cpu]\nthreads = 1\n[backend.nobody]\nthreads = 1\n")
    info = bp.Context(ini).info()  # the first call: nothing loaded before it
    if "blas_cpu" not in [p["name"] for p in info["plugins"]]:
        pytest.skip("blas_cpu is not built here")
    used = {(s["section"], s["key"]): s["used"] for s in info["settings"]}
    assert used[("backend.blas_cpu", "threads")] is True
    assert used[("backend.nobody", "threads")] is False


def test_plugin(tmp_path):
    junk = tmp_path / "bp_junk.so"
    junk.write_bytes(b"not a shared object")
    with pytest.raises(bp.PluginError, match="ELF"):
        bp.backend(str(junk))


def test_config(tmp_path):
    ini = tmp_path / "bad.ini"
    ini.write_text("[backplane]\nbogus_key = 1\n")
    with pytest.raises(bp.ConfigError, match="bogus_key"):
        bp.Context(ini)
    good = tmp_path / "good.ini"
    good.write_text("[backplane]\ndefault_backend = binary\n")
    ctx = bp.Context(good)
    assert ctx.backend().name == "binary:0"
    assert "binary" in ctx.backends()
    assert ctx.info()["config"] == str(good)


def test_out_of_memory():
    with pytest.raises(bp.OutOfMemoryError):
        bp.zeros(2 ** 50, backend="binary")  # 8 PiB: beyond any address space


def test_io(tmp_path):
    with pytest.raises(bp.IOError, match="cannot open"):
        bp.load_safetensors(tmp_path / "missing.safetensors")
    with pytest.raises(OSError):
        bp.save_safetensors(tmp_path / "no_dir" / "x.safetensors", {"a": [1.0]})


def test_format(tmp_path):
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json}      ")
    with pytest.raises(bp.FormatError):
        bp.load_safetensors(bad)


def test_backend_error_carries_its_status():
    # No backend here can be made to fail inside (the class is for device
    # failures, a lost GPU): what is checked is that the status maps to it.
    assert bp.BackendError.status == "BP_ERR_BACKEND"


def test_not_found():
    with pytest.raises(bp.NotFoundError, match="nonexistent"):
        bp.backend("nonexistent")


def test_index():
    with pytest.raises(bp.IndexError, match="out of range"):
        bp.gather(bp.asarray([1.0, 2.0]), [5])
    with pytest.raises(IndexError):
        bp.asarray([1.0, 2.0])[2]


def test_wrong_python_types_are_type_errors():
    with pytest.raises(TypeError):
        bp.sum(bp.ones(2), axis="0")
    with pytest.raises(TypeError):
        bp.add(bp.ones(2))
    with pytest.raises(TypeError):
        bp.reshape(bp.ones(2), "a")
    with pytest.raises(TypeError):
        bp.asarray([1.0], backend=3)
    with pytest.raises(TypeError):
        bp.ones(2) + "a"
    with pytest.raises(TypeError):
        bp.cast(bp.ones(2), 5)

"""Inputs that once crashed the interpreter or were silently misread: each
test failed before its fix."""
import os

import numpy as np
import pytest

import backplane as bp


class HalfAnArray:
    """Claims 2^28 float32 elements through its shape, hands over 8 bytes."""

    __array_interface__ = {}
    dtype = np.dtype("float32")
    shape = (1 << 28,)

    def tobytes(self):
        return b"\0" * 8


def test_asarray_refuses_an_object_whose_bytes_do_not_match_its_shape():
    with pytest.raises(ValueError, match="need 1073741824 bytes but its tobytes"):
        bp.asarray(HalfAnArray())


def test_asarray_refuses_a_negative_extent_in_an_objects_shape():
    class Negative(HalfAnArray):
        shape = (-1,)

    with pytest.raises(ValueError, match="negative"):
        bp.asarray(Negative())


def test_save_safetensors_writes_the_dict_as_it_was_when_called(tmp_path):
    tensors = {}

    class GrowsTheDict:
        """A DLPack producer whose export adds entries to the dict being saved."""

        def __dlpack__(self, stream=None, **kw):
            for i in range(200):
                tensors[f"late{i}"] = np.zeros(1, np.float32)
            return np.ones(2, np.float32).__dlpack__()

        def __dlpack_device__(self):
            return (1, 0)

    tensors["a"] = GrowsTheDict()
    tensors["b"] = np.full(3, 2.0, np.float32)
    path = tmp_path / "grown.safetensors"
    bp.save_safetensors(path, tensors)
    back = bp.load_safetensors(path)
    assert sorted(back) == ["a", "b"]
    assert back["a"].tolist() == [1.0, 1.0] and back["b"].tolist() == [2.0, 2.0, 2.0]


def test_save_safetensors_snapshots_metadata_too(tmp_path):
    meta = {"k": "v"}
    path = tmp_path / "m.safetensors"
    bp.save_safetensors(path, {"a": bp.ones(1)}, meta)
    _, got = bp.load_safetensors(path, metadata=True)
    assert got == {"k": "v"}


@pytest.mark.parametrize("call", [
    lambda p: bp.save_safetensors(str(p) + "\0.st", {"a": bp.ones(1)}),
    lambda p: bp.save_safetensors(p, {"a\0b": bp.ones(1)}),
    lambda p: bp.save_safetensors(p, {"a": bp.ones(1)}, {"k\0x": "v"}),
    lambda p: bp.save_safetensors(p, {"a": bp.ones(1)}, {"k": "v\0x"}),
    lambda p: bp.load_safetensors(str(p) + "\0"),
    lambda p: bp.backend("binary\0evil"),
    lambda p: bp.Context(str(p) + "\0.ini"),
    lambda p: bp.einsum("i\0,i->", bp.ones(2), bp.ones(2)),
], ids=["path", "name", "meta-key", "meta-value", "load-path", "backend", "config", "einsum"])
def test_an_embedded_nul_is_refused_not_cut_at(tmp_path, call):
    p = tmp_path / "x.safetensors"
    with pytest.raises(ValueError, match="null"):
        call(p)
    assert not os.path.exists(str(tmp_path / "x"))
    assert os.listdir(tmp_path) == []


def test_a_non_ascii_character_in_an_einsum_equation_is_named_in_the_error():
    x = bp.ones(2)
    with pytest.raises(bp.InvalidArgumentError) as e:
        bp.einsum("ié,j->ij", x, x)
    assert "not a letter" in str(e.value)


def test_a_message_with_bytes_that_are_not_utf8_still_reads():
    # einsum quotes the offending byte of a multi-byte character back
    with pytest.raises(bp.Error) as e:
        bp.einsum("\u00e9", bp.ones(2))
    assert str(e.value)


@pytest.mark.parametrize("seed", [-1, 2**64, 2**70])
def test_a_seed_outside_0_to_2_pow_64_is_refused_not_wrapped(seed):
    with pytest.raises(OverflowError, match="2\\*\\*64"):
        bp.random_uniform((2,), seed=seed)
    with pytest.raises(OverflowError):
        bp.dropout(bp.ones(4), training=True, seed=seed)


def test_the_largest_seed_is_accepted():
    a = bp.random_uniform((3,), seed=2**64 - 1).numpy()
    assert a.shape == (3,)


@pytest.mark.parametrize("kw", [{"strides": 0}, {"strides": [1, 0]}, {"dilations": 0},
                                {"pads": -1}, {"kernel_shape": 0}])
def test_window_arguments_out_of_range_are_refused_not_taken_as_defaults(kw):
    x = bp.ones((1, 1, 4, 4))
    args = {"kernel_shape": 2}
    args.update(kw)
    with pytest.raises(bp.InvalidArgumentError, match="at least"):
        bp.max_pool(x, **args)


def test_rewriting_a_loaded_checkpoint_in_place_leaves_the_tensors_intact(tmp_path):
    path = tmp_path / "ckpt.safetensors"
    bp.save_safetensors(path, {"w": np.arange(4096, dtype=np.float32)})
    loaded = bp.load_safetensors(path)
    with open(path, "wb") as f:  # truncates the file the tensor came from
        f.write(b"x")
    assert loaded["w"].numpy()[4095] == 4095.0  # a SIGBUS here before: the pages were the file's
    np.save(path, np.zeros(3))
    assert float(bp.sum(loaded["w"]).item()) == float(np.arange(4096).sum())


def test_load_safetensors_mmap_maps_the_file_on_a_host_backend(tmp_path):
    path = tmp_path / "big.safetensors"
    bp.save_safetensors(path, {"w": np.arange(4096, dtype=np.float32)})
    before = bp.stats("binary")["h2d_bytes"]
    mapped = bp.load_safetensors(path, backend="binary", mmap=True)["w"]
    assert bp.stats("binary")["h2d_bytes"] == before  # no copy was written
    copied = bp.load_safetensors(path, backend="binary")["w"]
    assert bp.stats("binary")["h2d_bytes"] >= before + 4096 * 4
    assert mapped.numpy().tobytes() == copied.numpy().tobytes()


def test_full_and_arange_keep_every_bit_of_an_int64():
    assert bp.full((1,), 2**53 + 1).item() == 2**53 + 1
    assert bp.full((2,), 2**63 - 1, dtype="int64").tolist() == [2**63 - 1] * 2
    assert bp.full((1,), np.int64(-2**63)).item() == -2**63
    assert bp.arange(2**53, 2**53 + 4).tolist() == [2**53 + i for i in range(4)]
    assert bp.arange(2**63 - 3, 2**63 - 1).tolist() == [2**63 - 3, 2**63 - 2]
    assert bp.arange(-2**63, -2**63 + 6, 2).tolist() == [-2**63, -2**63 + 2, -2**63 + 4]
    assert bp.arange(10, 0, -3).tolist() == [10, 7, 4, 1]
    assert bp.arange(3, dtype="int32").dtype == "int32"
    assert bp.arange(0.5, 2).tolist() == [0.5, 1.5]  # floats still go through float64


def test_squeeze_refuses_an_axis_listed_twice():
    with pytest.raises(bp.Error, match="twice|repeat|more than once"):
        bp.squeeze(bp.ones((1, 2)), [0, 0])

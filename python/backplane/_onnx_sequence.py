"""backplane.onnx's mappings of ONNX's sequence ops: SequenceEmpty,
SequenceConstruct, SequenceInsert, SequenceErase, SequenceAt,
SequenceLength, ConcatFromSequence and SplitToSequence.

A sequence inside a model is a Python list of tensors while the graph is
recorded: its length and every position are known then (a position is read
on the host, as a Reshape's shape is, so a position that is a model input
becomes a constant of the signature), and each op is list manipulation. Only
ConcatFromSequence and SplitToSequence record nodes (a concat or stack, a
split). A sequence as a model's input or output stays out of scope: a model
takes and gives tensors.
"""

import numpy as np

from ._onnx_ops import ONNX_DTYPES, _fn, maps, unsupported


class Sequence(list):
    """A sequence value: its tensors, and the element dtype (which an empty
    sequence cannot show)."""

    def __init__(self, items=(), dtype=None):
        super().__init__(items)
        self.dtype = dtype if dtype is not None or not items else str(items[0].dtype)


def _sequence(n, i):
    s = n.tensor(i)
    if not isinstance(s, Sequence):
        raise unsupported(f"input {i} ('{n.proto.input[i]}') is a tensor where ONNX's "
                          f"{n.op_type} takes a sequence")
    return s


def _position(n, i, length, default, inserting=False):
    """Input i as a position in [0, length) ([0, length] to insert), from
    ONNX's [-length, length) ([-length, length]); `default` if left out."""
    if not n.has_input(i):
        return default
    (p,) = n.ints(i)
    hi = length + 1 if inserting else length
    if not -length <= p < hi:
        raise IndexError(f"backplane.onnx: {n.op_type} position {p} is outside a sequence of "
                         f"{length} tensor(s): ONNX allows [{-length}, {hi - 1}]")
    return p + length if p < 0 else p


def _same_dtype(n, seq, t):
    if seq.dtype is not None and str(t.dtype) != seq.dtype:
        raise TypeError(f"backplane.onnx: {n.op_type}: a {t.dtype} tensor into a sequence of "
                        f"{seq.dtype} (ONNX: one element type)")


@maps("SequenceEmpty")
def sequence_empty(n):
    code = n.attr("dtype", 1)  # ONNX's default: float
    if code not in ONNX_DTYPES:
        raise unsupported(f"SequenceEmpty of element type {code}, which backplane has no "
                          f"dtype for")
    return [Sequence(dtype=ONNX_DTYPES[code])]


@maps("SequenceConstruct")
def sequence_construct(n):
    items = n.tensors()
    seq = Sequence(items[:1])
    for t in items[1:]:
        _same_dtype(n, seq, t)
        seq.append(t)
    return [seq]


@maps("SequenceInsert")
def sequence_insert(n):
    seq, t = _sequence(n, 0), n.tensor(1)
    _same_dtype(n, seq, t)
    at = _position(n, 2, len(seq), len(seq), inserting=True)
    out = Sequence(seq, dtype=seq.dtype or str(t.dtype))
    out.insert(at, t)
    return [out]


@maps("SequenceErase")
def sequence_erase(n):
    seq = _sequence(n, 0)
    if not seq:
        raise IndexError("backplane.onnx: SequenceErase of an empty sequence")
    at = _position(n, 1, len(seq), len(seq) - 1)
    return [Sequence(seq[:at] + seq[at + 1:], dtype=seq.dtype)]


@maps("SequenceAt")
def sequence_at(n):
    seq = _sequence(n, 0)
    return [seq[_position(n, 1, len(seq), None)]]


@maps("SequenceLength")
def sequence_length(n):
    return [n.constant(np.array(len(_sequence(n, 0)), np.int64))]


@maps("ConcatFromSequence")
def concat_from_sequence(n):
    seq = _sequence(n, 0)
    if not seq:
        raise unsupported("ConcatFromSequence of an empty sequence (ONNX: at least one tensor)")
    axis = n.attr("axis")
    if n.attr("new_axis", 0):  # a new axis: [-rank - 1, rank]
        rank = len(seq[0].shape)
        return [_fn("stack")(list(seq), axis=axis + rank + 1 if axis < 0 else axis)]
    return [_fn("concat")(list(seq), axis=axis)]


@maps("SplitToSequence")
def split_to_sequence(n):
    x = n.tensor(0)
    axis = n.attr("axis", 0) % len(x.shape)
    extent = x.shape[axis]
    split = n.value(1) if n.has_input(1) else None
    if split is None:  # pieces of one, the axis kept or not
        parts = list(_fn("split")(x, extent, axis=axis)) if extent else []
        if not n.attr("keepdims", 1):
            parts = [_fn("squeeze")(p, axis) for p in parts]
        return [Sequence(parts, dtype=str(x.dtype))]
    if np.ndim(split) == 0:  # pieces of that length, the last one shorter
        size = int(split)
        if size < 1:
            raise ValueError(f"backplane.onnx: SplitToSequence of pieces of {size} (ONNX: at "
                             f"least 1)")
        sizes = [size] * (extent // size) + ([extent % size] if extent % size else [])
    else:
        sizes = [int(s) for s in np.asarray(split).ravel()]
    return [Sequence(list(_fn("split")(x, sizes, axis=axis)), dtype=str(x.dtype))]

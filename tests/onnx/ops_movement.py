"""Movement and views: Transpose, Slice, Concat, Expand, Pad, Split, Tile,
DepthToSpace/SpaceToDepth, Reshape, Flatten, Squeeze, Unsqueeze, Identity,
Cast/CastLike, and the shape queries Shape and Size."""
import math

import numpy as np

from dtypes import bp_dtype
from registry import maps
from scope import unsupported

INT64_MAX = 2**63 - 1


@maps("Transpose")
def transpose(n):
    return [n.call("transpose", n.tensor(0), n.attr("perm"))]


@maps("Slice")
def slice_(n):
    x = n.tensor(0)
    rank = len(x.shape)
    if n.opset >= 10:
        starts, ends, axes, steps = n.ints(1), n.ints(2), n.ints(3), n.ints(4)
    else:
        starts, ends, axes, steps = n.attr("starts"), n.attr("ends"), n.attr("axes"), None
    axes = axes if axes is not None else list(range(len(starts)))
    steps = steps if steps is not None else [1] * len(starts)
    # bp_slice takes every axis: the ones not named run whole, step 1.
    b, e, s = [0] * rank, [INT64_MAX] * rank, [1] * rank
    for ax, st, en, sp in zip(axes, starts, ends, steps):
        ax %= rank
        b[ax], e[ax], s[ax] = st, en, sp
    return [n.call("slice", x, b, e, s)]


@maps("Concat")
def concat(n):
    xs = n.tensors()
    return [n.call("concat", len(xs), xs, n.attr("axis"))]


@maps("Expand")
def expand(n):
    # ONNX Expand broadcasts both ways: the result has the broadcast shape of
    # the input and `shape`; bp_broadcast_to then makes it.
    x = n.tensor(0)
    shape = np.broadcast_shapes(tuple(x.shape), tuple(n.ints(1)))
    return [n.call("broadcast_to", x, len(shape), list(shape))]


@maps("Pad")
def pad(n):
    mode = n.attr("mode")
    if mode != "constant":
        raise unsupported(f"Pad mode '{mode}' (bp_pad pads with a constant)")
    if n.opset >= 11:
        pads = n.ints(1)
        value = n.value(2)
        value = 0.0 if value is None else float(np.asarray(value).ravel()[0])
    else:
        pads, value = n.attr("pads"), float(n.attr("value"))
    if min(pads) < 0:
        raise unsupported("Pad with negative pads (bp_pad only adds)")
    rank = len(pads) // 2
    return [n.call("pad", n.tensor(0), pads[:rank], pads[rank:], value)]


@maps("Split")
def split(n):
    x = n.tensor(0)
    sizes = n.ints(1) if n.opset >= 13 else n.attr("split")
    return n.arena.split(x, n.attr("axis"), n.n_outputs, sizes)


@maps("Tile")
def tile(n):
    return [n.call("tile", n.tensor(0), n.ints(1))]


@maps("DepthToSpace")
def depth_to_space(n):
    return [n.call("depth_to_space", n.tensor(0), n.attr("blocksize"), n.attr("mode") == "CRD")]


@maps("SpaceToDepth")
def space_to_depth(n):
    return [n.call("space_to_depth", n.tensor(0), n.attr("blocksize"))]


@maps("Reshape")
def reshape(n):
    x = n.tensor(0)
    shape = n.ints(1)
    if not n.attr("allowzero", 0):  # 0 copies the input's extent there
        shape = [x.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    return [n.call("reshape", x, len(shape), shape)]


@maps("Flatten")
def flatten(n):
    x = n.tensor(0)
    axis = n.attr("axis")
    axis += len(x.shape) if axis < 0 else 0  # in [-rank, rank]
    shape = [math.prod(x.shape[:axis]), math.prod(x.shape[axis:])]
    return [n.call("reshape", x, 2, shape)]


@maps("Squeeze")
def squeeze(n):
    axes = (n.ints(1) if n.opset >= 13 else n.attr("axes")) or []
    return [n.call("squeeze", n.tensor(0), len(axes), axes or None)]


@maps("Unsqueeze")
def unsqueeze(n):
    # Axes count in the output's rank; inserted one at a time in ascending order.
    axes = n.ints(1) if n.opset >= 13 else n.attr("axes")
    y = n.tensor(0)
    out_rank = len(y.shape) + len(axes)
    for ax in sorted(a % out_rank for a in axes):
        y = n.call("unsqueeze", y, ax)
    return [y]


@maps("Identity")
def identity(n):
    # The output is the input: what this checks is the round trip of the
    # value through the library (bp_tensor_from_host, bp_tensor_to_host).
    return [n.tensor(0)]


@maps("Cast")
def cast(n):
    return [n.call("cast", n.tensor(0), bp_dtype(n.attr("to")))]


@maps("CastLike")
def cast_like(n):
    return [n.call("cast", n.tensor(0), n.dtype(1))]


@maps("Shape")
def shape(n):
    # The shape as the library reports it (bp_tensor_rank / bp_tensor_shape),
    # sliced by start and end (opset 15) with Python's rules, as ONNX says.
    dims = list(n.tensor(0).shape)
    end = n.attr("end")
    dims = dims[n.attr("start", 0):end] if end is not None else dims[n.attr("start", 0):]
    return [n.arena.from_host("i64", np.array(dims, dtype=np.int64))]


@maps("Size")
def size(n):
    return [n.arena.from_host("i64", np.array(math.prod(n.tensor(0).shape), dtype=np.int64))]

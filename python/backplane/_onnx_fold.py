"""The ONNX importer's rewrites, each exact or within the rounding stated,
each when the values it depends on are known at record time
(initializers, constants). load(..., optimize=False) records the model
as written.

Conv + BatchNormalization: a BatchNormalization (inference form) right
after a Conv is folded into the Conv's weights and bias, as onnxruntime
and every inference engine do. One pass over the activations fewer per
pair.

    s  = scale / sqrt(var + epsilon)             (per output channel)
    W' = W * s       B' = (B - mean) * s + bias  (computed in float64, rounded once)

The result differs from the two ops run in turn by the rounding of W' and
B' (a few ulps of each output), well within ONNX's tolerances.

One-hot times a matrix: MatMul(Cast(Equal(x, iota)), W), where iota holds
0 .. K-1 along the last axis, x is integer with one value per row (a last
axis of 1, or an Expand of one), and W (K, N) is a constant with finite
values, is a lookup of W's rows: y[...] = W[x[...]], a row of zeros where
x is outside 0 .. K-1. It is recorded as a gather from W with a row of
zeros below it. Exact: each output of the product is one 1 * w and zeros
(only a -0 in W may come out +0 from the product). magika's first layer
(jax's one_hot before a dense layer) multiplies 131072 one-hot rows of
257 by 257 x 64 this way.
"""
import numpy as np
from onnx import helper

from . import _backplane

FLOATS = ("float32", "float64", "float16", "bfloat16")


def _is_inference_bn(node, opset, attr):
    if node.op_type != "BatchNormalization" or node.domain not in ("", "ai.onnx"):
        return False
    if opset >= 14:
        if attr(node, "training_mode", 0):
            return False
    elif any(o for o in node.output[1:]):
        return False
    return opset >= 9 or attr(node, "spatial", 1)


def conv_bn_pairs(graph, opset, attr):
    """{index of a Conv: index of the BatchNormalization that alone reads
    its output}, for pairs that may be folded."""
    readers = {}
    for j, node in enumerate(graph.node):
        for name in node.input:
            readers.setdefault(name, []).append(j)
    outputs = {o.name for o in graph.output}
    pairs = {}
    for k, node in enumerate(graph.node):
        if node.op_type != "Conv" or node.domain not in ("", "ai.onnx"):
            continue
        y = node.output[0]
        rd = readers.get(y, [])
        if y in outputs or len(rd) != 1:
            continue
        bn = graph.node[rd[0]]
        if bn.input[0] == y and _is_inference_bn(bn, opset, attr):
            pairs[k] = rd[0]
    return pairs


def fold(conv, bn, values, epsilon):
    """A Conv node computing conv then bn, reading folded weights that it
    adds to values; None when a parameter is not known now (a graph input's
    data) or the dtypes differ."""
    names = [conv.input[1]] + list(bn.input[1:5])
    if len(conv.input) > 2 and conv.input[2]:
        names.append(conv.input[2])
    ts = [values.get(n) for n in names]
    if any(t is None or _backplane._is_symbolic(t) for t in ts):
        return None
    dtypes = {str(t.dtype) for t in ts}
    if len(dtypes) != 1 or next(iter(dtypes)) not in FLOATS:
        return None
    import backplane as bp
    dtype = next(iter(dtypes))
    w = ts[0]
    scale, bias, mean, var = (bp.cast(t, "float64") for t in ts[1:5])
    b = bp.cast(ts[5], "float64") if len(ts) > 5 else None
    s = scale / bp.sqrt(var + epsilon)
    m = w.shape[0]
    s = bp.reshape(s, [m] + [1] * (len(w.shape) - 1))
    w2 = _scaled_rows(bp, w, s, dtype)
    b2 = bp.cast(((b - mean) if b is not None else -mean) * s.reshape([m]) + bias, dtype)
    wname, bname = f"{conv.output[0]}:folded_w", f"{conv.output[0]}:folded_b"
    values[wname], values[bname] = w2, b2
    node = helper.make_node("Conv", [conv.input[0], wname, bname], [bn.output[0]],
                            name=conv.name or bn.name)
    node.attribute.extend(conv.attribute)
    return node


# Filters folded at a time: each block's float64 products are a few MiB
# that the next block reuses (blas_cpu's buffer cache), where the whole
# weight in float64 (a cast, a product, a cast back) made three tensors the
# size of the weights, in fresh pages: ResNet-50's peak memory at load and
# first run was 489 MB that way, 398 in blocks.
_FOLD_BLOCK_BYTES = 4 << 20


def _scaled_rows(bp, w, s, dtype):
    """round(float64(w) * s) to dtype, s one float64 per filter (w's first
    axis), a block of filters at a time; the same values as one pass."""
    m = w.shape[0]
    per = 8 * max(1, int(np.prod(w.shape[1:], dtype=np.int64)))
    rows = max(1, _FOLD_BLOCK_BYTES // per)
    if rows >= m:
        return bp.cast(bp.cast(w, "float64") * s, dtype)
    parts = [bp.cast(bp.cast(w[k:k + rows], "float64") * s[k:k + rows], dtype)
             for k in range(0, m, rows)]
    return bp.concat(parts, axis=0)


def producers(graph):
    """{output name: node} for the graph's nodes."""
    return {o: node for node in graph.node for o in node.output if o}


def _default_domain(node, op_type):
    return node is not None and node.op_type == op_type and node.domain in ("", "ai.onnx")


def one_hot_matmul(node, made_by, values):
    """The MatMul node's result as a gather of its constant matrix's rows
    when its first input is a one-hot of integers (above); None otherwise."""
    if not _default_domain(node, "MatMul"):
        return None
    cast = made_by.get(node.input[0])
    if not _default_domain(cast, "Cast"):
        return None
    eq = made_by.get(cast.input[0])
    if not _default_domain(eq, "Equal"):
        return None
    w = values.get(node.input[1])
    sides = [values.get(name) for name in eq.input]
    if w is None or _backplane._is_symbolic(w) or len(w.shape) != 2 or any(t is None for t in sides):
        return None
    symbolic = [_backplane._is_symbolic(t) for t in sides]
    if symbolic.count(True) != 1:
        return None
    d = symbolic.index(True)
    data, iota = sides[d], sides[1 - d]
    K, N = int(w.shape[0]), int(w.shape[1])
    if str(w.dtype) not in ("float32", "float64") or str(values[node.input[0]].dtype) != str(w.dtype):
        return None
    if not str(data.dtype).startswith(("int", "uint")):
        return None
    # the data's one value per row: a last axis of 1, or the input of an
    # Expand along it
    expand = made_by.get(eq.input[d])
    if _default_domain(expand, "Expand") and values.get(expand.input[0]) is not None:
        src = values[expand.input[0]]
        if _backplane._is_symbolic(src) and len(src.shape) == len(data.shape) and \
                src.shape[-1] == 1 and tuple(src.shape[:-1]) == tuple(data.shape[:-1]):
            data = src
    if len(data.shape) < 1 or data.shape[-1] != 1:
        return None
    out_shape = np.broadcast_shapes(tuple(data.shape), tuple(iota.shape))
    if out_shape[-1] != K or tuple(out_shape[:-1]) != tuple(data.shape[:-1]):
        return None
    c = np.asarray(iota.numpy())
    if c.shape[-1] != K or not np.array_equal(c.reshape(-1, K),
                                             np.broadcast_to(np.arange(K), (c.size // K, K))):
        return None
    wv = np.asarray(w.numpy())
    if not np.isfinite(wv).all():
        return None
    import backplane as bp
    table = bp.asarray(np.concatenate([wv, np.zeros((1, N), wv.dtype)]), backend=w.backend)
    idx = bp.reshape(bp.cast(data, "int64"), list(data.shape[:-1]))
    inside = bp.logical_and(bp.greater_equal(idx, bp.zeros((), "int64", backend=w.backend)),
                            bp.less(idx, bp.full((), K, dtype="int64", backend=w.backend)))
    idx = bp.where(inside, idx, bp.full((), K, dtype="int64", backend=w.backend))
    return bp.gather(table, idx, axis=0)

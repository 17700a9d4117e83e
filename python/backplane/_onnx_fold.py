"""The ONNX importer's one rewrite: a BatchNormalization (inference form)
right after a Conv is folded into the Conv's weights and bias, as
onnxruntime and every inference engine do, when the weights and the
normalisation's parameters are known at record time (initializers,
constants). One pass over the activations fewer per pair.

    s  = scale / sqrt(var + epsilon)             (per output channel)
    W' = W * s       B' = (B - mean) * s + bias  (computed in float64, rounded once)

The result differs from the two ops run in turn by the rounding of W' and
B' (a few ulps of each output), well within ONNX's tolerances. load(...,
optimize=False) records the model as written.
"""
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
    w, scale, bias, mean, var = (bp.cast(t, "float64") for t in ts[:5])
    b = bp.cast(ts[5], "float64") if len(ts) > 5 else None
    s = scale / bp.sqrt(var + epsilon)
    m = w.shape[0]
    w2 = bp.cast(w * bp.reshape(s, [m] + [1] * (len(w.shape) - 1)), dtype)
    b2 = bp.cast(((b - mean) if b is not None else -mean) * s + bias, dtype)
    wname, bname = f"{conv.output[0]}:folded_w", f"{conv.output[0]}:folded_b"
    values[wname], values[bname] = w2, b2
    node = helper.make_node("Conv", [conv.input[0], wname, bname], [bn.output[0]],
                            name=conv.name or bn.name)
    node.attribute.extend(conv.attribute)
    return node

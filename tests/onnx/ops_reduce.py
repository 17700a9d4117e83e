"""Reductions, ArgMax/ArgMin, Softmax/LogSoftmax/Hardmax, CumSum and TopK."""
import math

from registry import maps

REDUCE = {
    "ReduceSum": "sum", "ReduceProd": "prod", "ReduceMean": "mean", "ReduceMax": "max",
    "ReduceMin": "min", "ReduceLogSumExp": "logsumexp",
    # ABI 1.4
    "ReduceL1": "reduce_l1", "ReduceL2": "reduce_l2", "ReduceSumSquare": "reduce_sum_square",
    "ReduceLogSum": "reduce_log_sum",
}


def _axes_input_since(op_type):
    """The opset from which the op takes its axes as an input, not an
    attribute: ReduceSum at 13; the others at 18 (after ONNX 1.12)."""
    return 13 if op_type == "ReduceSum" else 18


@maps(*REDUCE)
def reduce(n):
    if n.opset >= _axes_input_since(n.op_type):
        axes = n.ints(1) or []
    else:
        axes = n.attr("axes") or []
    keepdims = bool(n.attr("keepdims"))
    if not axes and n.attr("noop_with_empty_axes", 0):
        # ONNX: no axes and noop_with_empty_axes = 1 leave the input as it is
        # (the library reduces every axis when given none).
        return [n.tensor(0)]
    return [n.call(REDUCE[n.op_type], n.tensor(0), len(axes), axes or None, keepdims)]


@maps("ArgMax", "ArgMin")
def arg(n):
    fn = "argmax" if n.op_type == "ArgMax" else "argmin"
    if n.attr("select_last_index", 0):
        fn += "_last"
    return [n.call(fn, n.tensor(0), 1, [n.attr("axis")], bool(n.attr("keepdims")))]


def _along_axis(n, fn):
    """Softmax, LogSoftmax, Hardmax. Opset 13 and later: along one axis
    (default -1). Before 13: the input is coerced to 2-D at `axis` (default 1)
    and the op runs along the second of those axes, which is a reshape."""
    x = n.tensor(0)
    if n.opset >= 13:
        return [n.call(fn, x, n.attr("axis"))]
    shape = x.shape
    axis = n.attr("axis") % max(len(shape), 1)
    flat = n.call("reshape", x, 2, [math.prod(shape[:axis]), math.prod(shape[axis:])])
    y = n.call(fn, flat, 1)
    return [n.call("reshape", y, len(shape), list(shape))]


@maps("Softmax")
def softmax(n):
    return _along_axis(n, "softmax")


@maps("LogSoftmax")
def log_softmax(n):
    return _along_axis(n, "log_softmax")


@maps("Hardmax")
def hardmax(n):
    return _along_axis(n, "hardmax")


@maps("CumSum")
def cumsum(n):
    (axis,) = n.ints(1)
    return [n.call("cumsum", n.tensor(0), axis, bool(n.attr("exclusive")), bool(n.attr("reverse")))]


@maps("TopK")
def topk(n):
    k = n.attr("k") if n.opset < 10 else n.ints(1)[0]
    # sorted = 0 leaves the order to the runtime, and ONNX's expected outputs
    # are in one order (sorted): ask the library for that order.
    values, indices = n.call("topk", n.tensor(0), k, n.attr("axis"), bool(n.attr("largest", 1)),
                             True)
    return [values, indices]

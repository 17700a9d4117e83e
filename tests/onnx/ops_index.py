"""Indexing: Gather, GatherElements, GatherND, Scatter/ScatterElements,
ScatterND, OneHot, Trilu."""
from bplib import SCATTER
from registry import maps


@maps("Gather")
def gather(n):
    return [n.call("gather", n.tensor(0), n.tensor(1), n.attr("axis"))]


@maps("GatherElements")
def gather_elements(n):
    return [n.call("gather_elements", n.tensor(0), n.tensor(1), n.attr("axis"))]


@maps("GatherND")
def gather_nd(n):
    return [n.call("gather_nd", n.tensor(0), n.tensor(1), n.attr("batch_dims", 0))]


@maps("ScatterElements", "Scatter")
def scatter_elements(n):
    # Scatter (opset 9-10) is ScatterElements without a reduction.
    reduction = SCATTER[n.attr("reduction", "none")]
    return [n.call("scatter_elements", n.tensor(0), n.tensor(1), n.tensor(2), n.attr("axis"),
                   reduction)]


@maps("ScatterND")
def scatter_nd(n):
    reduction = SCATTER[n.attr("reduction", "none")]
    return [n.call("scatter_nd", n.tensor(0), n.tensor(1), n.tensor(2), reduction)]


@maps("OneHot")
def one_hot(n):
    # depth: a one-element tensor of any numeric type (ONNX casts it to int64)
    depth = int(n.value(1).ravel()[0])
    return [n.call("one_hot", n.tensor(0), depth, n.attr("axis"), n.tensor(2))]


@maps("Trilu")
def trilu(n):
    k = n.ints(1)[0] if n.has_input(1) else 0
    return [n.call("trilu", n.tensor(0), bool(n.attr("upper")), k)]

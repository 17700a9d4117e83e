"""Running one model test (a graph of many nodes) on one backend, node by
node through the same handlers as the node tests, and deciding its outcome.

Every node runs eagerly in the graph's order (ONNX requires a topological
one); a value a handler needs on the host (a shape, axes, pads: node.Node's
value()) is read back from the library tensor that holds it. Out of scope,
before anything runs: a node with no handler ("op", naming every such op),
a graph input, output or initializer of a dtype the library lacks
("dtype"), a sequence, optional or map value ("value"). Anything else the
library or a handler refuses is a FAIL naming the node.
"""
import traceback

import onnx

import registry
from bplib import Arena, BpError
from compare import compare
from dtypes import bp_dtype, decode, onnx_name
from execute import Result
from node import Node
from scope import FAIL, OUT_OF_SCOPE, PASS, OutOfScope


class Values:
    """Name -> (library dtype, host array), as node.Node reads its inputs;
    values the library made are read back from their tensors when a handler
    asks for them on the host."""

    def __init__(self):
        self.host, self.tensors = {}, {}

    def __contains__(self, name):
        return name in self.host or name in self.tensors

    def __getitem__(self, name):
        if name not in self.host:
            t = self.tensors[name]
            self.host[name] = (t.dtype, t.to_host())
        return self.host[name]


def _label(node):
    return node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}.{node.op_type}"


def _scope_check(case):
    """OutOfScope for what needs no library, else the value types the graph
    declares (name -> ONNX element type), inferred where the model lacks them."""
    if case.other_values:
        raise OutOfScope("value", ", ".join(case.other_values))
    g = case.model.graph
    missing = sorted({_label(n) for n in g.node
                      if registry.handler("" if n.domain == "ai.onnx" else n.domain,
                                          n.op_type) is None})
    if missing:
        raise OutOfScope("op", ", ".join(missing))
    lacking = sorted({onnx_name(v.elem_type) for v in case.inputs + case.outputs
                      if bp_dtype(v.elem_type) is None} |
                     {onnx_name(t.data_type) for t in g.initializer
                      if bp_dtype(t.data_type) is None})
    if lacking:
        raise OutOfScope("dtype", ", ".join(lacking))
    try:
        inferred = onnx.shape_inference.infer_shapes(case.model).graph
    except Exception:  # an old model the checker refuses: the declared types only
        inferred = g
    types = {}
    for v in list(inferred.value_info) + list(inferred.input) + list(inferred.output):
        if v.type.WhichOneof("value") == "tensor_type":
            types[v.name] = v.type.tensor_type.elem_type
    return types


def run_model(case, backend):
    n = len(case.model.graph.node)
    op = f"{n} node{'' if n == 1 else 's'}"
    try:
        types = _scope_check(case)
    except OutOfScope as e:
        return Result(case.name, op, OUT_OF_SCOPE, e.reason, e.detail)
    sets = case.data_sets()
    if not sets:
        return Result(case.name, op, FAIL, detail="no test_data_set_* in the test")
    worst = 0.0
    for inputs, outputs in sets:
        arena = Arena(backend)
        try:
            r = _run_set(case, op, types, arena, inputs, outputs)
        finally:
            arena.release()
        if isinstance(r, Result):
            return r
        worst = max(worst, r)
    return Result(case.name, op, PASS, error=worst)


def _run_node(case, k, proto, values, types, arena):
    handler = registry.handler("" if proto.domain == "ai.onnx" else proto.domain, proto.op_type)
    node = Node(proto, case.opset(proto.domain), values, types, arena, values.tensors)
    produced = handler(node)
    for name, t in zip(proto.output, produced):
        if name and t is not None:
            values.tensors[name] = t
    for name in proto.output:
        if name and name not in values:
            raise ValueError(f"the mapping of node {k} ({proto.op_type}) did not produce '{name}'")


def _run_set(case, op, types, arena, inputs, outputs):
    """The largest error over the outputs, or a Result that ends the test."""
    g = case.model.graph
    values = Values()
    where = "reading the test data"
    try:
        for t in g.initializer:
            values.host[t.name] = decode(t, t.data_type)
        for v, p in zip(case.inputs, inputs):
            values.host[v.name] = decode(p, v.elem_type)
        for k, proto in enumerate(g.node):
            where = f"node {k} ({_label(proto)}{' ' + proto.name if proto.name else ''})"
            _run_node(case, k, proto, values, types, arena)
        worst = 0.0
        where = "comparing the outputs"
        for k, (v, proto) in enumerate(zip(case.outputs, outputs)):
            dtype, actual = values[v.name]
            exp_dtype, expected = decode(proto, v.elem_type)
            verdict = compare(exp_dtype, expected, dtype, actual)
            if not verdict.ok:
                return Result(case.name, op, FAIL, detail=f"output {k} '{v.name}': {verdict.detail}",
                              error=verdict.error)
            worst = max(worst, verdict.error or 0.0)
        return worst
    except OutOfScope as e:
        return Result(case.name, op, OUT_OF_SCOPE, e.reason, f"{where}: {e.detail}")
    except BpError as e:
        return Result(case.name, op, FAIL, detail=f"{where}: refused: {e}", refused_by=e.function,
                      status=e.status)
    except Exception as e:  # a mistake of the mapping or the runner: visible, never a pass
        tb = traceback.extract_tb(e.__traceback__)[-1]
        return Result(case.name, op, FAIL,
                      detail=f"{where}: runner error: {type(e).__name__}: {e} "
                             f"({tb.filename.split('/')[-1]}:{tb.lineno})")

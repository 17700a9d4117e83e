"""ONNX's backend node tests (Debian's libonnx-testdata): where they are,
which are single-node tests, and one test's model and data sets.

A single-node test is a directory of data/node whose model's graph has
exactly one node and whose graph inputs and outputs are all tensors. That
leaves out the function-body expansions of more than one node
(*_expanded with several nodes), and the one-node tests over sequences or
optionals (the library has no such values). ONNX 1.12 has 932 node tests,
801 of them single-node.
"""
import glob
import os
from dataclasses import dataclass, field
from typing import List

import onnx

# Debian's libonnx-testdata; $BP_ONNX_TESTDATA names another copy.
DEFAULT_ROOTS = ("/usr/share/libonnx-testdata/data/node",
                 "/usr/include/onnx/backend/test/data/node")


def find_root(explicit=None):
    """The data/node directory, or None if the test data is not there. A
    directory named by the caller or by $BP_ONNX_TESTDATA is the only one
    tried; else Debian's, then the onnx package's own copy."""
    named = explicit or os.environ.get("BP_ONNX_TESTDATA")
    if named:
        candidates = [named]
    else:
        candidates = list(DEFAULT_ROOTS) + [
            os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")]
    for c in candidates:
        if os.path.isfile(os.path.join(c, "test_abs", "model.onnx")):
            return c
    return None


def list_tests(root):
    return sorted(d for d in os.listdir(root) if os.path.isfile(os.path.join(root, d, "model.onnx")))


@dataclass
class Value:
    name: str
    elem_type: int          # ONNX element type the graph declares (its tensors')
    sequence: bool = False  # a sequence of tensors (its data files hold a SequenceProto)
    optional: bool = False  # an optional tensor or sequence (an OptionalProto)


@dataclass
class Case:
    name: str
    path: str
    model: onnx.ModelProto
    single_node: bool
    why_not_single: str = ""
    inputs: List[Value] = field(default_factory=list)
    outputs: List[Value] = field(default_factory=list)

    @property
    def node(self):
        return self.model.graph.node[0]

    def data_sets(self):
        return _data_sets(self.path, self.inputs, self.outputs)


def _data_sets(path, inputs, outputs):
    """[(inputs, outputs)] of a test directory, each a list in graph order of
    a TensorProto, or a list of them for a sequence value."""
    return [(_read(d, "input", inputs), _read(d, "output", outputs))
            for d in sorted(glob.glob(os.path.join(path, "test_data_set_*")))]


def _read(d, kind, values):
    """Each value's data: a TensorProto, a list of them (a sequence), and for
    an optional one of those or None (empty)."""
    protos = []
    for i, v in enumerate(values):
        t = (onnx.OptionalProto() if v.optional else
             onnx.SequenceProto() if v.sequence else onnx.TensorProto())
        with open(os.path.join(d, f"{kind}_{i}.pb"), "rb") as f:
            t.ParseFromString(f.read())
        if v.optional:
            t = (t.sequence_value if t.HasField("sequence_value") else
                 t.tensor_value if t.HasField("tensor_value") else None)
        protos.append(list(t.tensor_values) if v.sequence and t is not None else t)
    return protos


def load(root, name):
    path = os.path.join(root, name)
    model = onnx.load(os.path.join(path, "model.onnx"))
    g = model.graph
    if len(g.node) != 1:
        return Case(name, path, model, False, f"{len(g.node)} nodes")
    kinds = [v.type.WhichOneof("value") for v in list(g.input) + list(g.output)]
    if any(k != "tensor_type" for k in kinds):
        other = sorted({k for k in kinds if k != "tensor_type"})
        return Case(name, path, model, False, f"{', '.join(other)} values")
    return Case(name, path, model, True,
                inputs=[Value(v.name, v.type.tensor_type.elem_type) for v in g.input],
                outputs=[Value(v.name, v.type.tensor_type.elem_type) for v in g.output])


# ---- whole models -------------------------------------------------------------------

# The directories of data/ whose tests are models: node's tests of more than
# one node (ONNX functions expanded), and the model collections beside it.
MODEL_DIRS = ("node", "simple", "pytorch-converted", "pytorch-operator")


def list_models(node_root):
    """'dir/test' for every test of MODEL_DIRS beside node_root whose graph has
    more than one node, or whose values are not all tensors (the node tests
    the node runner leaves out: a sequence or an optional value)."""
    data = os.path.dirname(node_root)
    names = []
    for d in MODEL_DIRS:
        base = os.path.join(data, d)
        if not os.path.isdir(base):
            continue
        for t in list_tests(base):
            g = onnx.load(os.path.join(base, t, "model.onnx")).graph if d == "node" else None
            if g is None or len(g.node) > 1 or any(
                    v.type.WhichOneof("value") != "tensor_type"
                    for v in list(g.input) + list(g.output)):
                names.append(f"{d}/{t}")
    return names


@dataclass
class ModelCase:
    name: str
    path: str
    model: onnx.ModelProto
    inputs: List[Value] = field(default_factory=list)    # graph inputs not initialized
    outputs: List[Value] = field(default_factory=list)
    other_values: List[str] = field(default_factory=list)  # optional, map values, ...

    def data_sets(self):
        return _data_sets(self.path, self.inputs, self.outputs)


def load_model(node_root, name):
    """A model test; name is 'dir/test' as list_models gives it. Graph inputs
    that an initializer holds are not inputs (models of IR version < 4 list
    them among the inputs)."""
    path = os.path.join(os.path.dirname(node_root), name)
    model = onnx.load(os.path.join(path, "model.onnx"))
    g = model.graph
    held = {t.name for t in g.initializer}
    values = [v for v in g.input if v.name not in held] + list(g.output)
    other = sorted({f"{v.name} ({v.type.WhichOneof('value')})" for v in values
                    if _value(v) is None})
    case = ModelCase(name, path, model, other_values=other)
    if not other:
        case.inputs = [_value(v) for v in g.input if v.name not in held]
        case.outputs = [_value(v) for v in g.output]
    return case


def _value(v):
    """A graph value as a Value: a tensor, a sequence of tensors, or an
    optional of either; None for anything else (a map, a sequence of
    sequences)."""
    t, optional, sequence = v.type, False, False
    if t.WhichOneof("value") == "optional_type":
        t, optional = t.optional_type.elem_type, True
    if t.WhichOneof("value") == "sequence_type":
        t, sequence = t.sequence_type.elem_type, True
    if t.WhichOneof("value") != "tensor_type":
        return None
    return Value(v.name, t.tensor_type.elem_type, sequence=sequence, optional=optional)

"""backplane.onnx: run ONNX models on backplane (docs/onnx.md).

    import backplane.onnx
    model = backplane.onnx.load("model.onnx", backend="blas_cpu")
    outputs = model.run({"x": x})          # or model(x=x): a dict name -> Tensor

The model is read with PyPI's ``onnx`` package (``pip install .[onnx]``).
Its initializers go onto the backend once, at load. Each run records the
graph onto backplane's graph API the first time it sees an input signature
(shapes and dtypes), compiles it, and runs the plan; later runs of that
signature run the plan only (``backplane.jit`` underneath, with its
recompilation warning). Shapes computed inside the model (Shape, Size,
ConstantOfShape, shape arithmetic, Reshape by a computed shape) are worked
out at record time for each signature. An input whose values decide a
shape (a Reshape's target fed as a graph input) is taken as a constant of
the signature: a new value records again.

An op, opset or attribute the library does not support is an error at load
naming the node, the op, the opset and what is missing, never a wrong
result.

    python -m backplane.onnx model.onnx [--backend NAME] [--input name=file.npy]
                             [--bench N] [--compare onnxruntime]
"""
import os
import threading
import time

import numpy as np

from . import _backplane
from . import _jit
from . import _onnx_fold as _fold
from . import _onnx_ops as _ops
from . import _onnx_optional as _optional
from . import _onnx_sequence as _sequence

# The default domain's opsets this importer reads (each op's form chosen by
# the model's opset).
OPSETS = range(1, 22)

__all__ = ["load", "Model", "ValueInfo", "UnsupportedModelError"]


class UnsupportedModelError(NotImplementedError):
    """The model needs an op, opset, dtype or attribute value the library
    does not support. node, op, opset: where; missing: what."""

    def __init__(self, message, node=None, op=None, opset=None, missing=None, reason=None):
        super().__init__(message)
        self.node, self.op, self.opset, self.missing = node, op, opset, missing
        self.reason = reason


class ValueInfo:
    """A graph input or output: its name, dtype (backplane's name) and shape
    (an int per known extent; a str for a symbolic one; None unknown).
    kind: 'tensor'; 'sequence' (a list of tensors; dtype and shape are its
    elements'); 'optional tensor' or 'optional sequence' (that, or None)."""

    __slots__ = ("name", "dtype", "shape", "kind")

    def __init__(self, name, dtype, shape, kind="tensor"):
        self.name, self.dtype, self.shape, self.kind = name, dtype, shape, kind

    def __repr__(self):
        more = f", kind={self.kind!r}" if self.kind != "tensor" else ""
        return f"ValueInfo({self.name!r}, {self.dtype!r}, {self.shape!r}{more})"


def _onnx():
    try:
        import onnx
    except ImportError as e:
        raise ImportError("backplane.onnx reads models with PyPI's onnx package: pip install "
                          "onnx (or pip install .[onnx] from a clone)") from e
    return onnx


def _element_type(t):
    """(kind, the TypeProto of its tensors) of a TypeProto: a tensor, a
    sequence of tensors, an optional of either; (None, None) otherwise."""
    kind = ""
    if t.WhichOneof("value") == "optional_type":
        t, kind = t.optional_type.elem_type, "optional "
    if t.WhichOneof("value") == "sequence_type":
        t, kind = t.sequence_type.elem_type, kind + "sequence"
    else:
        kind += "tensor"
    return (kind, t) if t.WhichOneof("value") in ("tensor_type", None) else (None, None)


def _value_info(v):
    """A graph ValueInfoProto as a ValueInfo (dtype and shape None when the
    model declares no type); None for a map, or a sequence or optional of
    anything but tensors."""
    kind, t = _element_type(v.type)
    if kind is None:
        return None
    if t.WhichOneof("value") is None:
        return ValueInfo(v.name, None, None, kind)
    tt = t.tensor_type
    shape = None
    if tt.HasField("shape"):
        shape = tuple(d.dim_value if d.HasField("dim_value") else
                      (d.dim_param or None) for d in tt.shape.dim)
    return ValueInfo(v.name, _ops.ONNX_DTYPES.get(tt.elem_type), shape, kind)


def _flatten(v):
    """(structure, tensors) of a value inside a model: structure None for a
    tensor, a sequence's length, or for an optional -1 when empty, else
    its element's (1 for a tensor)."""
    if isinstance(v, _optional.Optional):
        if v.value is None:
            return -1, []
        _, tensors = _flatten(v.value)
        return (len(tensors) if isinstance(v.value, _sequence.Sequence) else 1), tensors
    if isinstance(v, _sequence.Sequence):
        return len(v), list(v)
    return None, [v]


def _unflatten(info, structure, tensors):
    """The value of info's kind that _flatten gave (structure, the tensors
    taken from the iterator `tensors`)."""
    if info.kind == "tensor":
        return next(tensors)
    if info.kind.startswith("optional") and structure == -1:
        return _optional.Optional(None)
    if info.kind.endswith("sequence"):
        inner = _sequence.Sequence([next(tensors) for _ in range(structure)], dtype=info.dtype)
    else:
        inner = next(tensors)
    return _optional.Optional(inner) if info.kind.startswith("optional") else inner


def _to_user(v):
    """A value inside a model as run() gives it: a Tensor, a list of them
    (a sequence), None (an empty optional)."""
    if isinstance(v, _optional.Optional):
        return None if v.value is None else _to_user(v.value)
    return list(v) if isinstance(v, _sequence.Sequence) else v


def _node_label(k, node):
    name = f" '{node.name}'" if node.name else ""
    domain = f"{node.domain}." if node.domain not in ("", "ai.onnx") else ""
    return f"node {k}{name} ({domain}{node.op_type})"


# The ops with subgraphs this importer runs (Model._run_<op>).
SUBGRAPH_OPS = ("If", "Scan", "Loop", "SequenceMap")
# The most iterations a Loop is unrolled to while recording.
LOOP_UNROLL_LIMIT = 4096


def _runs_subgraphs(node):
    """Whether node is an op with subgraphs that the model runs itself."""
    return node.op_type in SUBGRAPH_OPS and node.domain in ("", "ai.onnx")


def _all_nodes(g):
    """(index in its graph, node) for every node of g and of its nodes'
    subgraphs, depth first."""
    for k, node in enumerate(g.node):
        yield k, node
        for a in node.attribute:
            for sub in ([a.g] if a.type == a.GRAPH else list(a.graphs)):
                yield from _all_nodes(sub)


def _take(n, x, axis, index):
    """x at `index` along `axis`, the axis removed."""
    return _ops._fn("gather")(x, n.constant(np.array(index, np.int64)), axis=axis)


class _NodeReads:
    """A node's inputs for dependency walks: its own, and every value its
    subgraphs read (an If reads the outer values its branches use)."""

    def __init__(self, node):
        self.input = list(node.input)
        for a in node.attribute:
            for sub in ([a.g] if a.type == a.GRAPH else list(a.graphs)):
                for _, inner in _all_nodes(sub):
                    self.input.extend(inner.input)


class _Schemas:
    """ONNX's op schemas by (op type, opset), for attribute defaults."""

    def __init__(self, onnx):
        self._onnx, self._cache = onnx, {}

    def __call__(self, op_type, opset):
        key = (op_type, opset)
        if key not in self._cache:
            try:
                self._cache[key] = self._onnx.defs.get_schema(op_type, opset, "")
            except self._onnx.defs.SchemaError:
                self._cache[key] = None
        return self._cache[key]


class Model:
    """An ONNX model loaded onto one backend. inputs, outputs: ValueInfo
    lists, in the graph's order; opset: the default domain's version."""

    def __init__(self, proto, backend, jit=True, optimize=True, external_dir=None):
        onnx = _onnx()
        self.proto = proto
        self._external_dir = external_dir  # where external initializers' files are
        if backend is not None and not isinstance(backend, str):
            backend = backend.name  # a backplane.backend() object
        self.backend = _backplane.backend(backend).name if backend else _backplane.backend().name
        g = proto.graph
        self.opset = self._check_opsets(proto)
        self._schemas = _Schemas(onnx)
        held = {t.name for t in g.initializer}
        self.inputs = [self._tensor_info(v, "input") for v in g.input if v.name not in held]
        self.outputs = [self._tensor_info(v, "output") for v in g.output]
        self._check_nodes(g)
        self._folds = _fold.conv_bn_pairs(g, self.opset, self._attr) if optimize else {}
        self._made_by = _fold.producers(g) if optimize else None
        self._initializers = self._load_initializers(g, onnx)
        self._host_inputs = set()   # inputs whose values decide a shape: constants per run
        self._names = frozenset(i.name for i in self.inputs)
        self._structured = frozenset(i.name for i in self.inputs if i.kind != "tensor")
        # Each output's _flatten structure, as the last _evaluate in this thread
        # made it; a plan keeps its trace's as its meta (one per signature).
        self._tls = threading.local()
        self._jit = jit
        # fresh_draws: each run draws new values, as onnxruntime's random ops do
        self._traced = (_jit.Jitted(self._evaluate, static_argnums=(0,),
                                    on_trace=lambda: self._tls.out_structures,
                                    fresh_draws=True)
                        if jit else None)
        self._trace_declared()

    # ---- load-time checks ---------------------------------------------------------
    @staticmethod
    def _check_opsets(proto):
        opset = None
        for o in proto.opset_import:
            if o.domain in ("", "ai.onnx"):
                opset = o.version
        if opset is None:
            opset = 1
        if opset not in OPSETS:
            raise UnsupportedModelError(
                f"backplane.onnx: the model uses opset {opset} of the default domain; this "
                f"importer reads opsets {OPSETS.start} to {OPSETS.stop - 1}. Convert it with "
                f"onnx.version_converter.convert_version(model, {OPSETS.stop - 1})",
                opset=opset, missing=f"opset {opset}", reason="opset")
        return opset

    def _tensor_info(self, v, what):
        info = _value_info(v)
        if info is None:
            raise UnsupportedModelError(
                f"backplane.onnx: graph {what} '{v.name}' is a "
                f"{v.type.WhichOneof('value')} value; backplane has tensors only",
                missing=v.type.WhichOneof("value"), reason="value")
        _, t = _element_type(v.type)
        if info.dtype is None and t.WhichOneof("value") is not None:
            onnx = _onnx()
            name = onnx.TensorProto.DataType.Name(t.tensor_type.elem_type)
            raise UnsupportedModelError(
                f"backplane.onnx: graph {what} '{v.name}' is of type {name}, which backplane "
                f"has no dtype for", missing=name, reason="dtype")
        return info

    def _check_nodes(self, g):
        unmapped = [(k, node) for k, node in _all_nodes(g)
                    if not _runs_subgraphs(node)
                    and _ops.handler(node.domain, node.op_type) is None]
        if unmapped:
            k, node = unmapped[0]
            ops = sorted({(f"{n.domain}." if n.domain not in ("", "ai.onnx") else "") + n.op_type
                          for _, n in unmapped})
            more = f" (the model's ops without one: {', '.join(ops)})" if len(ops) > 1 else ""
            raise UnsupportedModelError(
                f"backplane.onnx: {_node_label(k, node)} of opset {self.opset}: backplane has "
                f"no mapping for {node.domain or 'ai.onnx'} {node.op_type}{more}",
                node=node.name or k, op=node.op_type, opset=self.opset,
                missing=", ".join(ops), reason="op")
        for k, node in _all_nodes(g):
            for a in node.attribute:
                if a.type in (a.GRAPH, a.GRAPHS) and not _runs_subgraphs(node):
                    raise UnsupportedModelError(
                        f"backplane.onnx: {_node_label(k, node)} has a subgraph "
                        f"(attribute '{a.name}'), which this importer does not read yet",
                        node=node.name or k, op=node.op_type, opset=self.opset,
                        missing=f"subgraph attribute {a.name}", reason="op")

    def _load_initializers(self, g, onnx):
        from onnx import numpy_helper
        out = {}
        for t in g.initializer:
            mapped = None
            if t.data_location == onnx.TensorProto.EXTERNAL:
                mapped = self._map_external(t, onnx)
            if mapped is not None:  # the file's bytes in place where the backend can
                out[t.name] = _backplane.asarray(mapped, backend=self.backend, copy=None)
                continue
            try:
                host, dtype = _ops.tensor_proto_array(t, numpy_helper)
            except _ops.Unsupported as e:
                raise UnsupportedModelError(
                    f"backplane.onnx: initializer '{t.name}' is of type {e.detail}, which "
                    f"backplane has no dtype for", missing=e.detail, reason="dtype") from None
            out[t.name] = _backplane.asarray(host, backend=self.backend, dtype=dtype)
        return out

    def _map_external(self, t, onnx):
        """An initializer stored in a file beside the model (ONNX's external
        data) as a copy-on-write memory map of the file: a host backend uses
        it in place (nothing is read until an op touches it, and nothing
        writes to it). None, after reading the data into t, for a dtype
        NumPy has no type for (bf16) or a tensor of no elements."""
        info = {e.key: e.value for e in t.external_data}
        location = info.get("location", "")
        if self._external_dir is None:
            raise ValueError(f"backplane.onnx: initializer '{t.name}' is stored in the file "
                             f"'{location}' beside the model: load the model by its path "
                             f"(backplane.onnx.load(path)) so that the file can be found")
        if os.path.isabs(location) or ".." in location.replace("\\", "/").split("/"):
            raise ValueError(f"backplane.onnx: initializer '{t.name}' names the file "
                             f"'{location}', outside the model's directory")
        dtype = _ops.ONNX_DTYPES.get(t.data_type)
        count = int(np.prod(t.dims, dtype=np.int64))
        if dtype in (None, "bfloat16") or count == 0:
            from onnx.external_data_helper import load_external_data_for_tensor
            load_external_data_for_tensor(t, self._external_dir)
            t.data_location = onnx.TensorProto.DEFAULT
            return None
        path = os.path.join(self._external_dir, location)
        mapped = np.memmap(path, dtype=np.dtype(dtype).newbyteorder("<"), mode="c",
                           offset=int(info.get("offset", 0)), shape=(count,))
        return mapped.reshape(tuple(t.dims))

    def _trace_declared(self):
        """Records and compiles the declared signature at load where every
        input's shape is fixed, so that an attribute the library lacks is an
        error now, not at the first run."""
        if not self._jit or not all(i.kind == "tensor" and i.shape is not None and
                                    i.dtype is not None and
                                    all(isinstance(d, int) for d in i.shape)
                                    for i in self.inputs):
            return
        # Tensors of the declared signature: only their shapes and dtypes are read.
        args = [_backplane.zeros(i.shape, dtype=i.dtype, backend=self.backend)
                for i in self.inputs]
        try:
            self._traced.lower(((), ()), *args)
        except _ops.NeedsHost:
            pass  # an input decides a shape: recorded at the first run, with its values
        except _backplane.Error:
            pass  # the declared shapes may not be the ones run: the first run says

    # ---- running ------------------------------------------------------------------
    def _evaluate(self, static, *tensors):
        """The graph's outputs from its inputs: every node, in order. static:
        (the host inputs' values, the structure of each sequence or optional
        input (_flatten)); tensors: the other inputs in order, a sequence's
        elements one after another. The outputs likewise (their structures
        kept for run())."""
        host, structures = static
        # random nodes draw on the graph being recorded (so that each run of
        # the plan draws afresh): through any traced input
        self._tls.draws_on = next((t for t in tensors if _backplane._is_symbolic(t)), None)
        g = self.proto.graph
        values = dict(self._initializers)
        dynamic = [i for i in self.inputs if i.name not in self._host_inputs]
        rest, shapes = iter(tensors), iter(structures)
        for info in dynamic:
            values[info.name] = _unflatten(info, next(shapes) if info.kind != "tensor" else None,
                                           rest)
        for name, dtype, shape, raw in host:
            array = np.frombuffer(raw, dtype=_np_dtype(dtype)).reshape(shape)
            values[name] = _backplane.asarray(array, backend=self.backend, dtype=dtype)
        folded = set()
        try:
            for k, node in enumerate(g.node):
                if k in folded:
                    continue
                j = self._folds.get(k)
                if j is not None:
                    bn = g.node[j]
                    pair = _fold.fold(node, bn, values, float(self._attr(bn, "epsilon", 1e-5)))
                    if pair is not None:
                        node = pair
                        folded.add(j)
                if self._made_by is not None and node.op_type == "MatMul":
                    y = _fold.one_hot_matmul(node, self._made_by, values)
                    if y is not None:
                        values[node.output[0]] = y
                        continue
                self._run_node(k, node, values)
        finally:
            self._tls.draws_on = None  # not to keep the recorded graph alive
        flat, out_structures = [], []
        for o in self.outputs:
            v = values[o.name]
            if not _is_kind(v, o.kind):
                raise TypeError(f"backplane.onnx: output '{o.name}' is declared a {o.kind}; "
                                f"the graph computes a {_kind_of(v)}")
            if o.kind.startswith("optional") and not isinstance(v, _optional.Optional):
                v = _optional.Optional(v)
            structure, tensors_of = _flatten(v)
            flat.extend(tensors_of)
            out_structures.append(structure)
        self._tls.out_structures = tuple(out_structures)
        return tuple(flat)

    def _attr(self, node, name, default=None):
        """A node's attribute with ONNX's default for the model's opset."""
        return _ops.Node(node, self.opset, {}, self.backend, self._schemas).attr(name, default)

    def _run_if(self, n):
        """If: the condition is read on the host (it decides which nodes the
        graph holds: a constant of the signature, as a Reshape target), then
        the branch's nodes run with the outer values in scope."""
        cond = n.value(0)
        if cond.size != 1:
            raise _ops.unsupported(f"If condition of {cond.size} values (ONNX: one)")
        branch = n.attr("then_branch" if bool(cond.ravel()[0]) else "else_branch")
        return self._run_body(branch, n.scope(), [])

    def _run_body(self, graph, outer, inputs):
        """A subgraph's outputs: its nodes recorded with the outer values in
        scope, its own initializers, and its formal inputs bound to `inputs`."""
        scope = dict(outer)
        if graph.initializer:
            scope.update(self._load_initializers(graph, _onnx()))
        for formal, value in zip(graph.input, inputs):
            scope[formal.name] = value
        for k, node in enumerate(graph.node):
            self._run_node(k, node, scope)
        return [scope[o.name] for o in graph.output]

    def _run_scan(self, n):
        """Scan, unrolled while recording (the scanned length is part of the
        signature): the body once per step, its states carried, its scan
        outputs stacked. Scan-8 (a batch axis first, optional
        sequence_lens) runs the same per batch entry."""
        body = n.attr("body")
        m = int(n.attr("num_scan_inputs"))
        if n.opset >= 9:
            values = [n.tensor(i) for i in range(n.n_inputs)]
            return self._scan(n, body, values[:len(values) - m], values[len(values) - m:])
        values = [n.tensor(i) for i in range(1, n.n_inputs)]
        states, scans = values[:len(values) - m], values[len(values) - m:]
        batch, steps = scans[0].shape[0], scans[0].shape[1]
        if n.has_input(0) and any(int(v) != steps for v in n.ints(0)):
            raise _ops.unsupported(f"Scan-8 with sequence_lens {n.ints(0)} shorter than the "
                                   f"{steps} steps of its inputs")
        per = []
        for b in range(batch):
            row = [_take(n, t, 0, b) for t in states + scans]
            per.append(self._scan(n, body, row[:len(states)], row[len(states):],
                                  directions=n.attr("directions")))
        return [_ops._fn("stack")([p[k] for p in per], axis=0) for k in range(len(per[0]))]

    def _run_loop(self, n):
        """Loop, unrolled while recording: the trip count and the condition
        are read on the host (each decides how many times the body is
        recorded: constants of the signature), and so is the condition the
        body computes for the next iteration, which must not depend on
        tensor data. The loop-carried values are carried, the scan outputs
        stacked along a new first axis."""
        body = n.attr("body")
        limit = int(n.value(0).ravel()[0]) if n.has_input(0) else None
        cond = bool(n.value(1).ravel()[0]) if n.has_input(1) else True
        carried = [n.tensor(i) for i in range(2, n.n_inputs)]
        count = len(body.output) - 1 - len(carried)
        collected = [[] for _ in range(count)]
        i = 0
        while cond and (limit is None or i < limit):
            if i == LOOP_UNROLL_LIMIT:
                raise _ops.unsupported(f"Loop of more than {LOOP_UNROLL_LIMIT} iterations "
                                       f"(each is recorded into the graph)")
            outs = self._run_body(body, n.scope(), [n.constant(np.array(i, np.int64)),
                                                    n.constant(np.array(cond))] + carried)
            carried = outs[1:1 + len(carried)]
            for k in range(count):
                collected[k].append(outs[1 + len(carried) + k])
            if _backplane._is_symbolic(outs[0]):
                raise _ops.unsupported(f"Loop whose body computes its condition "
                                       f"'{body.output[0].name}' from tensor data (the unrolled "
                                       f"graph needs it while recording)")
            cond = bool(np.asarray(outs[0].numpy()).ravel()[0])
            i += 1
        if count and i == 0:
            raise _ops.unsupported("Loop of no iterations with scan outputs (their shape is "
                                   "known only from an iteration)")
        return carried + [_ops._fn("stack")(c, axis=0) for c in collected]

    def _run_sequencemap(self, n):
        """SequenceMap, unrolled while recording: the body once per element
        of the input sequences (the additional inputs that are tensors
        passed whole to every one), its outputs collected into sequences."""
        body = n.attr("body")
        inputs = [n.tensor(i) for i in range(n.n_inputs)]
        lengths = {len(v) for v in inputs if isinstance(v, _sequence.Sequence)}
        if not isinstance(inputs[0], _sequence.Sequence) or len(lengths) != 1:
            raise _ops.unsupported(f"SequenceMap over sequences of lengths {sorted(lengths)} "
                                   f"(ONNX: the first input a sequence, all of one length)")
        (length,) = lengths
        outs = [[] for _ in body.output]
        for i in range(length):
            args = [v[i] if isinstance(v, _sequence.Sequence) else v for v in inputs]
            for k, r in enumerate(self._run_body(body, n.scope(), args)):
                outs[k].append(r)
        infos = [_value_info(o) for o in body.output]
        dtypes = [info.dtype if info else None for info in infos]
        return [_sequence.Sequence(o, dtype=d) for o, d in zip(outs, dtypes)]

    def _scan(self, n, body, states, scans, directions=None):
        count = len(body.output) - len(states)
        in_axes = list(n.attr("scan_input_axes") or [0] * len(scans))
        in_dirs = list(directions or n.attr("scan_input_directions") or [0] * len(scans))
        out_axes = list(n.attr("scan_output_axes") or [0] * count)
        out_dirs = list(n.attr("scan_output_directions") or [0] * count)
        in_axes = [a % len(t.shape) for a, t in zip(in_axes, scans)]
        steps = {t.shape[a] for t, a in zip(scans, in_axes)}
        if len(steps) != 1 or 0 in steps:
            raise _ops.unsupported(f"Scan over inputs of {sorted(steps)} steps (one length, "
                                   f"at least one step)")
        (steps,) = steps
        collected = [[] for _ in range(count)]
        for t in range(steps):
            slices = [_take(n, x, a, steps - 1 - t if d else t)
                      for x, a, d in zip(scans, in_axes, in_dirs)]
            outs = self._run_body(body, n.scope(), list(states) + slices)
            states = outs[:len(states)]
            for k in range(count):
                collected[k].append(outs[len(states) + k])
        stacked = []
        for k, (axis, direction) in enumerate(zip(out_axes, out_dirs)):
            items = collected[k][::-1] if direction else collected[k]
            stacked.append(_ops._fn("stack")(items, axis=axis % (len(items[0].shape) + 1)))
        return list(states) + stacked

    def _run_node(self, k, node, values):
        n = _ops.Node(node, self.opset, values, self.backend, self._schemas)
        draws_on = getattr(self._tls, "draws_on", None)
        if draws_on is not None:
            n.draws_on = draws_on
        try:
            produced = (getattr(self, "_run_" + node.op_type.lower())(n) if _runs_subgraphs(node)
                        else _ops.handler(node.domain, node.op_type)(n))
        except _ops.Unsupported as e:
            raise UnsupportedModelError(
                f"backplane.onnx: {_node_label(k, node)} of opset {self.opset}: {e.detail}",
                node=node.name or k, op=node.op_type, opset=self.opset, missing=e.detail,
                reason=e.reason) from None
        except _ops.NeedsHost:
            raise
        except _backplane.Error as e:
            raise type(e)(f"backplane.onnx: {_node_label(k, node)}: {e}") from e
        for name, t in zip(node.output, produced):
            if name and t is not None:
                values[name] = t
        for name in node.output:
            if name and name not in values:
                raise RuntimeError(f"backplane.onnx: {_node_label(k, node)} made no value "
                                   f"'{name}' (a defect of the importer's mapping)")

    def _feeds(self, inputs):
        if not self._structured and inputs.keys() == self._names:  # every call of most models
            return {i.name: self._feed(i, inputs[i.name], "input") for i in self.inputs}
        unknown = sorted(set(inputs) - self._names)
        if unknown:
            raise KeyError(f"backplane.onnx: the model has no input {', '.join(unknown)}; its "
                           f"inputs are {', '.join(i.name for i in self.inputs)}")
        tensors = {}
        for info in self.inputs:
            if info.name not in inputs:
                raise KeyError(f"backplane.onnx: input '{info.name}' ({info.dtype}, shape "
                               f"{info.shape}) is missing")
            v = inputs[info.name]
            if info.kind.startswith("optional") and v is None:
                tensors[info.name] = _optional.Optional(None)
                continue
            if info.kind.endswith("sequence"):
                if not isinstance(v, (list, tuple)):
                    raise TypeError(f"backplane.onnx: input '{info.name}' is a sequence: give "
                                    f"a list of tensors or arrays, not a {type(v).__name__}")
                inner = _sequence.Sequence([self._feed(info, e, f"element {k} of input")
                                            for k, e in enumerate(v)], dtype=info.dtype)
            else:
                inner = self._feed(info, v, "input")
            tensors[info.name] = (_optional.Optional(inner) if info.kind.startswith("optional")
                                  else inner)
        return tensors

    def _feed(self, info, v, what):
        t = v if isinstance(v, _backplane.Tensor) else _backplane.asarray(
            np.asarray(v), backend=self.backend)
        if info.dtype is not None and str(t.dtype) != info.dtype:
            raise TypeError(f"backplane.onnx: {what} '{info.name}' is {t.dtype}; the model "
                            f"declares {info.dtype} (cast it first: nothing is converted "
                            f"silently)")
        if t.backend != self.backend:
            raise ValueError(f"backplane.onnx: {what} '{info.name}' is on backend "
                             f"{t.backend}; the model is on {self.backend} (Tensor.to() "
                             f"copies it)")
        return t

    def _call(self, inputs, fn):
        """fn(static, *dynamic) for these inputs; an input found to decide a
        shape becomes part of the static key and fn is called again."""
        feeds = self._feeds(inputs)
        while True:
            host = tuple(sorted(
                (name, str(feeds[name].dtype), tuple(feeds[name].shape),
                 np.ascontiguousarray(feeds[name].numpy()).tobytes())
                for name in self._host_inputs))
            kept = [i for i in self.inputs if i.name not in self._host_inputs]
            structures, dynamic = [], []
            for i in kept:
                structure, tensors = _flatten(feeds[i.name])
                dynamic.extend(tensors)
                if i.kind != "tensor":
                    structures.append(structure)
            static = (host, tuple(structures))
            try:
                return fn(static, *dynamic)
            except _ops.NeedsHost as e:
                sources = self._inputs_behind(e.name) - self._host_inputs - self._structured
                if not sources:
                    raise UnsupportedModelError(
                        f"backplane.onnx: value '{e.name}' decides a shape but is computed "
                        f"from tensor data; backplane records shapes before it runs",
                        missing=f"the values of '{e.name}' at record time",
                        reason="mode") from None
                self._host_inputs |= sources

    def lower(self, inputs):
        """The compiled plan for these inputs' signature (a backplane.Lowered:
        its counts as a dict; print() lists the nodes, fused groups and
        buffers)."""
        if self._traced is None:
            raise ValueError("backplane.onnx: a model loaded with jit=False has no plan")
        return self._call(inputs, self._traced.lower)

    def seek_draws(self, run):
        """The next run's random nodes (RandomUniform, RandomNormal, their Like
        forms, Bernoulli, training-mode Dropout) draw what run number `run`
        (counted from 0 per input signature) drew; later runs count on."""
        if self._traced is None:
            raise ValueError("backplane.onnx: a model loaded with jit=False draws the same "
                             "values on every run; there is nothing to seek")
        self._traced.seek_draws(run)

    def run(self, inputs, output_names=None):
        """inputs: name -> Tensor or array-like (the declared dtype; a list of
        them for a sequence input); returns name -> Tensor for every output
        (a list of Tensors for a sequence output), or those in output_names."""
        if self._traced is not None:
            outs, structures = self._call(
                inputs, lambda static, *dynamic: self._traced._call_meta((static,) + dynamic, {}))
        else:
            outs = self._call(inputs, self._evaluate)
            structures = self._tls.out_structures
        rest = iter(outs if isinstance(outs, tuple) else (outs,))
        result = {o.name: _to_user(_unflatten(o, s, rest))
                  for o, s in zip(self.outputs, structures)}
        if output_names is not None:
            result = {name: result[name] for name in output_names}
        return result

    def _inputs_behind(self, name):
        """The graph inputs whose values `name` is computed from (through a
        subgraph's nodes too: an If's result depends on the outer values
        its branches read)."""
        producer = {}
        for _, node in _all_nodes(self.proto.graph):
            for o in node.output:
                producer[o] = _NodeReads(node)
        inputs = {i.name for i in self.inputs}
        found, todo, seen = set(), [name], set()
        while todo:
            v = todo.pop()
            if v in seen:
                continue
            seen.add(v)
            if v in inputs:
                found.add(v)
            elif v in producer:
                todo.extend(i for i in producer[v].input if i)
        return found

    def __call__(self, **inputs):
        return self.run(inputs)

    def __repr__(self):
        def sig(vs):
            return ", ".join(f"{v.name}: {v.dtype}{list(v.shape) if v.shape else ''}"
                             for v in vs)
        return (f"<backplane.onnx.Model on {self.backend}, opset {self.opset}, "
                f"{len(self.proto.graph.node)} nodes: ({sig(self.inputs)}) -> "
                f"({sig(self.outputs)})>")


def _kind_of(v):
    """A value's kind as ValueInfo.kind names it ('optional' when empty)."""
    if isinstance(v, _optional.Optional):
        return "optional" if v.value is None else "optional " + _kind_of(v.value)
    return "sequence" if isinstance(v, _sequence.Sequence) else "tensor"


def _is_kind(v, kind):
    """Whether v may be a value of kind: its own, or what an optional of
    that kind holds (an empty optional is any optional)."""
    if isinstance(v, _optional.Optional):
        return kind.startswith("optional") and (v.value is None or
                                                _kind_of(v) == kind)
    return _kind_of(v) == kind or kind == "optional " + _kind_of(v)


def _np_dtype(name):
    if name == "bfloat16":
        import ml_dtypes
        return ml_dtypes.bfloat16
    return np.dtype(name)


def load(model, backend=None, jit=True, optimize=True):
    """An ONNX model (a path, bytes, or an onnx.ModelProto) loaded onto
    backend (a name or a backplane.backend(); None: the default backend).
    jit=False runs it op by op instead of recording a graph; optimize=False
    records the nodes as written (no BatchNormalization folded into the Conv
    before it). Loaded by its path, a model's initializers stored in files
    beside it (ONNX's external data) are memory-mapped, and a host backend
    uses them in place."""
    onnx = _onnx()
    external_dir = None
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        proto = onnx.load(path, load_external_data=False)
        external_dir = os.path.dirname(os.path.abspath(path))
    elif isinstance(model, (bytes, bytearray)):
        proto = onnx.load_from_string(bytes(model))
    else:
        proto = model
    return Model(proto, backend, jit, optimize, external_dir)


# ---- the command line ------------------------------------------------------------------

def _parse(argv):
    import argparse
    p = argparse.ArgumentParser(prog="python -m backplane.onnx",
                                description="Run an ONNX model on a backplane backend.")
    p.add_argument("model")
    p.add_argument("--backend", default=None, help="a backend name (default: the default one)")
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                   help="an input's values (default: zeros of the declared shape)")
    p.add_argument("--bench", type=int, default=0, metavar="N",
                   help="run N more times and print the median time per run")
    p.add_argument("--compare", choices=["onnxruntime"],
                   help="also run onnxruntime and print the largest differences")
    p.add_argument("--profile", type=int, default=0, metavar="N",
                   help="run N more times timing each step of the plan and print the time "
                        "per op and the slowest steps (with --compare onnxruntime, "
                        "onnxruntime's time per op type too)")
    return p.parse_args(argv)


def _cli_feeds(model, pairs):
    feeds = {}
    for pair in pairs:
        name, sep, path = pair.partition("=")
        if not sep:
            raise SystemExit(f"--input {pair}: expected NAME=FILE.npy")
        feeds[name] = np.load(path)
    for i in model.inputs:
        if i.kind != "tensor":
            raise SystemExit(f"input '{i.name}' is a {i.kind}, which the command line does "
                             f"not take: run the model from Python "
                             f"(backplane.onnx.load(...).run({{'{i.name}': ...}}))")
        if i.name not in feeds:
            if i.shape is None or not all(isinstance(d, int) for d in i.shape):
                raise SystemExit(f"input '{i.name}' has shape {i.shape}: give it with --input "
                                 f"{i.name}=FILE.npy")
            feeds[i.name] = np.zeros(i.shape, dtype=_np_dtype(i.dtype))
    return feeds


def _print_ort_profile(sess, feeds, runs):
    """onnxruntime's own profile (its enable_profiling: a JSON trace per
    session) of `runs` runs after the first, summed per op type, printed as
    ours is."""
    import json
    for _ in range(runs):
        sess.run(None, feeds)
    path = sess.end_profiling()
    try:
        with open(path) as f:
            events = json.load(f)
    finally:
        os.remove(path)
    starts = sorted(ev["ts"] for ev in events if ev.get("name") == "model_run")
    skip = starts[-runs] if len(starts) >= runs else 0  # the first run (the comparison's)
    acc = {}
    for ev in events:
        if (ev.get("cat") == "Node" and ev.get("name", "").endswith("_kernel_time") and
                ev.get("ts", 0) >= skip):
            op = ev.get("args", {}).get("op_name", "?")
            us, n = acc.get(op, (0.0, 0))
            acc[op] = (us + ev.get("dur", 0), n + 1)
    total = sum(us for us, _ in acc.values()) / runs / 1e3
    print(f"onnxruntime profile: {runs} run(s), {_ms(total)} per run in its nodes")
    print(f"  {'op type':<20} {'per run':>10} {'share':>7} {'nodes':>6}")
    for op, (us, n) in sorted(acc.items(), key=lambda kv: -kv[1][0]):
        ms = us / runs / 1e3
        print(f"  {op:<20} {_ms(ms):>10} {ms / total if total else 0:7.1%} {n // runs:6d}")


def _backend_threads(backend):
    """The `threads` the config gives this backend (None if it sets none):
    the thread count onnxruntime is given, so that times compare like with
    like."""
    section = "backend." + backend.split(":")[0]
    for s in _backplane.info()["settings"]:
        if s["section"] == section and s["key"] == "threads":
            try:
                return int(s["value"])
            except ValueError:
                return None
    return None


def _ms(ms):
    return f"{ms:.3f} ms" if ms >= 1 else f"{ms * 1e3:.1f} us"


def main(argv=None):
    args = _parse(argv)
    model = load(args.model, backend=args.backend)
    feeds = _cli_feeds(model, args.input)
    t0 = time.perf_counter()
    outs = {k: [e.numpy() for e in v] if isinstance(v, list) else v.numpy()
            for k, v in model.run(feeds).items()}
    first = time.perf_counter() - t0
    print(f"{os.path.basename(args.model)} on {model.backend}: first run {first * 1e3:.2f} ms "
          f"(records and compiles)")
    for name, v in outs.items():
        if isinstance(v, list):
            print(f"  {name}: a sequence of {len(v)}: " +
                  ", ".join(f"{e.dtype} {list(e.shape)}" for e in v))
        else:
            print(f"  {name}: {v.dtype} {list(v.shape)}")
    if args.bench > 0:
        times = []
        for _ in range(args.bench):
            t0 = time.perf_counter()
            for v in model.run(feeds).values():
                for e in (v if isinstance(v, list) else [v]):
                    e.numpy()
            times.append(time.perf_counter() - t0)
        print(f"  median of {args.bench} runs: {np.median(times) * 1e3:.3f} ms")
    if args.profile > 0:
        print(model.lower(feeds).profile(runs=args.profile))
    if args.compare == "onnxruntime":
        import onnxruntime
        opts = onnxruntime.SessionOptions()
        opts.enable_profiling = args.profile > 0
        threads = _backend_threads(model.backend)
        if threads:
            opts.intra_op_num_threads = threads
        print(f"onnxruntime (CPUExecutionProvider): "
              + (f"{threads} thread(s), as [backend.{model.backend.split(':')[0]}] threads"
                 if threads else "its default threads (the backend's config sets none)"))
        sess = onnxruntime.InferenceSession(model.proto.SerializeToString(), opts,
                                            providers=["CPUExecutionProvider"])
        ref = sess.run(None, {k: np.asarray(v) for k, v in feeds.items()})
        if args.profile > 0:
            _print_ort_profile(sess, {k: np.asarray(v) for k, v in feeds.items()},
                               args.profile)
        for o, r in zip(model.outputs, ref):
            mine = outs[o.name] if isinstance(outs[o.name], list) else [outs[o.name]]
            theirs = list(r) if isinstance(r, list) else [r]
            if len(mine) != len(theirs):
                print(f"  {o.name}: a sequence of {len(mine)} here, {len(theirs)} there")
                continue
            diff = max((np.max(np.abs(a.astype(np.float64) - np.asarray(b).astype(np.float64)),
                               initial=0.0) for a, b in zip(mine, theirs)), default=0.0)
            print(f"  {o.name}: largest |backplane - onnxruntime| {diff:.3g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The ONNX importer's op mapping: ONNX op type -> the handler that records
(or runs) it with backplane's functions.

A handler takes a Node (below) and returns one entry per node output: a
Tensor, or None for an output not asked for. It raises Unsupported for a
mode, attribute or dtype the library lacks, before it calls the library, so
that an unsupported model is an error naming what is missing and never a
wrong result. The ops the op table's schema maps to one function each
(_onnx_functions.py, generated from the schema) need no handler here.

Values a handler needs on the host (a shape, axes, pads, k) are read from
the tensors that hold them: an initializer, a Constant, or a shape
computation (Shape, Gather, Concat ... on those) all hold concrete tensors
while a graph is recorded, so they are known at record time. A value
computed from a graph input's data is not: Node.value raises NeedsHost,
and the importer then takes that input as a constant of the signature.
"""
import math

import numpy as np

from . import _backplane
from ._onnx_functions import ONNX_FUNCTIONS

INT64_MAX = 2**63 - 1
FLOATS = ("float16", "bfloat16", "float32", "float64")

# ONNX TensorProto.DataType -> backplane's dtype name.
ONNX_DTYPES = {9: "bool", 2: "uint8", 3: "int8", 6: "int32", 7: "int64", 10: "float16",
               16: "bfloat16", 1: "float32", 11: "float64"}

HANDLERS = {}
TRAINING = "ai.onnx.preview.training"  # ONNX's optimizers' domain
TRAINING_HANDLERS = {}


class Unsupported(Exception):
    """A node the library cannot run as ONNX means it. reason: 'op', 'dtype',
    'mode' (an attribute value or a form the library lacks)."""

    def __init__(self, reason, detail):
        super().__init__(detail)
        self.reason, self.detail = reason, detail


def unsupported(detail):
    return Unsupported("mode", detail)


class NeedsHost(Exception):
    """A handler needs the values of `name` at record time, and they come
    from a graph input's data."""

    def __init__(self, name):
        super().__init__(name)
        self.name = name


def maps(*op_types):
    def register(fn):
        for op in op_types:
            assert op not in HANDLERS, op
            HANDLERS[op] = fn
        return fn
    return register


def handler(domain, op_type):
    """The handler of an op of the default domain or of ONNX's training
    domain, or None."""
    if domain == TRAINING:
        return TRAINING_HANDLERS.get(op_type)
    return HANDLERS.get(op_type) if domain in ("", "ai.onnx") else None


class Node:
    """One ONNX node as a handler sees it: attributes with ONNX's defaults for
    the model's opset, optional inputs, inputs as tensors or as host values,
    and the backend to make constants on."""

    def __init__(self, proto, opset, values, backend, schema_of):
        """values: name -> Tensor (symbolic while recording, or concrete);
        schema_of(op_type, opset): ONNX's OpSchema or None (its defaults)."""
        self.proto, self.opset, self.backend = proto, opset, backend
        self.op_type = proto.op_type
        self._values = values
        self._attrs = {a.name: a for a in proto.attribute}
        self._schema_of = schema_of

    # ---- attributes ---------------------------------------------------------
    def has_attr(self, name):
        return name in self._attrs

    def attr(self, name, default=None):
        """The attribute's value (strings decoded), else the schema's default for
        this opset, else `default`."""
        from onnx import AttributeProto, helper
        a = self._attrs.get(name)
        if a is None:
            schema = self._schema_of(self.op_type, self.opset)
            spec = schema.attributes.get(name) if schema is not None else None
            if spec is not None and spec.default_value.type != AttributeProto.UNDEFINED:
                a = spec.default_value
        if a is None:
            return default
        v = helper.get_attribute_value(a)
        if isinstance(v, bytes):
            return v.decode()
        if isinstance(v, list) and v and isinstance(v[0], bytes):
            return [s.decode() for s in v]
        return v

    # ---- inputs -------------------------------------------------------------
    @property
    def n_inputs(self):
        return len(self.proto.input)

    def has_input(self, i):
        """False for an input left out (past the end, or an empty name)."""
        return i < len(self.proto.input) and self.proto.input[i] != ""

    def tensor(self, i):
        """Input i as a Tensor (None if left out)."""
        return self._values[self.proto.input[i]] if self.has_input(i) else None

    def tensors(self):
        """Every input that is present."""
        return [self.tensor(i) for i in range(self.n_inputs) if self.has_input(i)]

    def dtype(self, i):
        return str(self.tensor(i).dtype)

    def scope(self):
        """Every value defined where the node is (a subgraph sees them)."""
        return self._values

    def value(self, i):
        """Input i as a NumPy array (None if left out), for the inputs a runtime
        takes as constants (axes, shapes, pads, k)."""
        t = self.tensor(i)
        if t is None:
            return None
        if _backplane._is_symbolic(t):
            raise NeedsHost(self.proto.input[i])
        return np.asarray(t.numpy())

    def ints(self, i):
        """Input i as a list of Python ints (None if left out)."""
        v = self.value(i)
        return None if v is None else [int(x) for x in np.asarray(v).ravel()]

    # ---- outputs ------------------------------------------------------------
    @property
    def n_outputs(self):
        return len(self.proto.output)

    def wants(self, k):
        """Whether output k is asked for (present with a name)."""
        return k < len(self.proto.output) and self.proto.output[k] != ""

    # ---- constants ----------------------------------------------------------
    def constant(self, array, dtype=None):
        """A host array as a concrete tensor on the node's backend."""
        a = np.asarray(array)
        return _fn("asarray")(a, backend=self.backend, dtype=dtype)


def _fn(name):
    import backplane
    return getattr(backplane, name)


# ---- the schema's one-function ops, and the elementwise rest -----------------------

# Ops whose older opsets a handler below maps first, then the schema's function.
OLDER_FORMS = ("PRelu",)
_CONVERT = {"f64": float, "i32": int, "i64": int, "bool": bool}


@maps(*[op for op in ONNX_FUNCTIONS if op not in OLDER_FORMS])
def schema_function(n):
    """The node's inputs in order, then its attributes as the function's
    keywords."""
    fn, n_tensors, attrs = ONNX_FUNCTIONS[n.op_type]
    kw = {py: _CONVERT[kind](n.attr(name)) for name, py, kind in attrs}
    return [_fn(fn)(*[n.tensor(i) for i in range(n_tensors)], **kw)]


@maps("PRelu")
def prelu(n):
    """Before opset 7 a slope of one value per channel applies along axis 1
    (PRelu-6: "shared across different channels"), not from the last axis as
    NumPy broadcasting (opset 7 on) reads it: the slope gets trailing unit
    axes first."""
    x, slope = n.tensor(0), n.tensor(1)
    xs, ss = x.shape, slope.shape
    if n.opset < 7 and len(xs) > 2 and len(ss) == 1 and ss[0] == xs[1] and ss[0] != 1:
        slope = _fn("reshape")(slope, [ss[0]] + [1] * (len(xs) - 2))
    return [_fn("prelu")(x, slope)]


@maps("IsInf")
def isinf(n):
    """bp_isinf detects both signs; one sign is that and the sign's test
    (NaN is neither)."""
    x = n.tensor(0)
    inf = _fn("isinf")(x)
    pos, neg = bool(n.attr("detect_positive")), bool(n.attr("detect_negative"))
    if pos and neg:
        return [inf]
    if not (pos or neg):
        return [_fn("logical_and")(inf, _fn("logical_not")(inf))]
    zero = _fn("zeros_like")(x)
    side = _fn("greater")(x, zero) if pos else _fn("less")(x, zero)
    return [_fn("logical_and")(inf, side)]


@maps("Mod")
def mod(n):
    # fmod = 0: the sign of the divisor (bp_mod); fmod = 1: C fmod (bp_fmod).
    return [_fn("fmod" if n.attr("fmod") else "mod")(n.tensor(0), n.tensor(1))]


@maps("Pow")
def pow_(n):
    # ONNX lets the exponent's type differ; the library's operands share one
    # (no implicit promotion), so the exponent is cast to the base's type
    # (exact for an integer exponent). An integer base with a float exponent
    # is computed in float64 and cast back to the base's type (truncating,
    # as onnxruntime's std::pow in double then static_cast does).
    base_t, exp_t = n.dtype(0), n.dtype(1)
    base, exp = n.tensor(0), n.tensor(1)
    if base_t not in FLOATS and exp_t in FLOATS:
        wide = _fn("pow")(_fn("cast")(base, "float64"), _fn("cast")(exp, "float64"))
        return [_fn("cast")(wide, base_t)]
    if exp_t != base_t:
        exp = _fn("cast")(exp, base_t)
    return [_fn("pow")(base, exp)]


@maps("BitShift")
def bitshift(n):
    fn = {"LEFT": "bitshift_left", "RIGHT": "bitshift_right"}[n.attr("direction")]
    return [_fn(fn)(n.tensor(0), n.tensor(1))]


@maps("Where")
def where(n):
    return [_fn("where")(n.tensor(0), n.tensor(1), n.tensor(2))]


@maps("Clip")
def clip(n):
    x = n.tensor(0)
    if n.opset < 11:  # Clip-6: the bounds are attributes (defaults: none)
        lo, hi = n.attr("min"), n.attr("max")
        lo = None if lo is None else _fn("full")((), float(lo), dtype=x.dtype, backend=n.backend)
        hi = None if hi is None else _fn("full")((), float(hi), dtype=x.dtype, backend=n.backend)
        return [_fn("clip")(x, lo, hi)]
    # Clip-11 and later: optional scalar tensors; a missing one is no bound.
    return [_fn("clip")(x, n.tensor(1), n.tensor(2))]


VARIADIC = {"Max": "max_n", "Min": "min_n", "Sum": "sum_n", "Mean": "mean_n"}


@maps(*VARIADIC)
def variadic(n):
    return [_fn(VARIADIC[n.op_type])(n.tensors())]


# ---- creation ----------------------------------------------------------------------

def _constant_value(n):
    """Constant's one value attribute as a NumPy array (bf16 as its bits) and
    its dtype."""
    from onnx import numpy_helper
    for name, dtype in (("value_float", "float32"), ("value_floats", "float32"),
                        ("value_int", "int64"), ("value_ints", "int64")):
        if n.has_attr(name):
            return np.array(n.attr(name), dtype=dtype), dtype
    if n.has_attr("value"):
        t = n.attr("value")
        return tensor_proto_array(t, numpy_helper)
    raise unsupported("Constant with a string or sparse value")


def tensor_proto_array(t, numpy_helper):
    """A TensorProto as (NumPy array, backplane dtype name); bf16 as float32
    values (exact), Unsupported for a dtype the library lacks."""
    dtype = ONNX_DTYPES.get(t.data_type)
    if dtype is None:
        from onnx import TensorProto
        raise Unsupported("dtype", TensorProto.DataType.Name(t.data_type))
    if dtype == "bfloat16":
        if t.HasField("raw_data"):
            bits = np.frombuffer(t.raw_data, dtype="<u2")
        else:  # int32_data holds one bf16 pattern per entry
            bits = np.asarray(t.int32_data, dtype=np.uint32).astype(np.uint16)
        wide = (bits.astype(np.uint32) << 16).view(np.float32)
        return wide.reshape(tuple(t.dims)), dtype
    return np.array(numpy_helper.to_array(t), dtype=dtype).reshape(tuple(t.dims)), dtype


@maps("Constant")
def constant(n):
    host, dtype = _constant_value(n)
    return [n.constant(host, dtype)]


@maps("ConstantOfShape")
def constant_of_shape(n):
    from onnx import numpy_helper
    shape = n.ints(0)
    value = n.attr("value")  # a one-element tensor; none: float32 0
    if value is None:
        dtype, v = "float32", 0.0
    else:
        host, dtype = tensor_proto_array(value, numpy_helper)
        v = host.ravel()[0].item()
    return [_fn("full")(shape, v, dtype=dtype, backend=n.backend)]


@maps("EyeLike")
def eye_like(n):
    k = int(n.attr("k", 0))
    rows, cols = n.tensor(0).shape
    dtype = ONNX_DTYPES.get(n.attr("dtype")) if n.has_attr("dtype") else n.dtype(0)
    if dtype is None:
        raise Unsupported("dtype", f"EyeLike dtype {n.attr('dtype')}")
    if k == 0:
        return [_fn("eye")(rows, cols, dtype=dtype, backend=n.backend)]
    # Another diagonal: the shape is known while recording, so the ones are
    # placed on the host (exact in every dtype).
    return [n.constant(np.eye(rows, cols, k), dtype)]


# ONNX's window functions (opset 17): a0 - a1 cos(2 pi i / N) + a2 cos(4 pi i / N),
# N = size (periodic) or size - 1 (symmetric).
WINDOWS = {"HannWindow": (0.5, 0.5, 0.0), "HammingWindow": (25 / 46, 21 / 46, 0.0),
           "BlackmanWindow": (0.42, 0.5, 0.08)}


@maps(*WINDOWS)
def window(n):
    """The size is a value of the signature (a shape), so the window is
    computed once on the host, in double, and rounded once to the output
    dtype."""
    size = int(n.value(0).ravel()[0])
    dtype = ONNX_DTYPES.get(n.attr("output_datatype", 1))
    if dtype is None:
        raise Unsupported("dtype", f"{n.op_type} output_datatype {n.attr('output_datatype')}")
    if size < 0:
        raise unsupported(f"{n.op_type} of size {size}: a size is at least 0")
    a0, a1, a2 = WINDOWS[n.op_type]
    periods = size if n.attr("periodic", 1) else size - 1
    i = np.arange(size, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = 2 * np.pi * i / periods
    w = a0 - a1 * np.cos(t) + a2 * np.cos(2 * t)
    if periods == 0:
        w = np.ones(size)  # symmetric, size 1: 0 / 0; one point is the peak (NumPy's, PyTorch's)
    return [n.constant(w, dtype)]


@maps("Range")
def range_(n):
    start, limit, delta = (n.value(i).ravel()[0].item() for i in range(3))
    return [_fn("arange")(float(start), float(limit), float(delta), dtype=n.dtype(0),
                          backend=n.backend)]


# ---- indexing ----------------------------------------------------------------------

@maps("Gather")
def gather(n):
    return [_fn("gather")(n.tensor(0), n.tensor(1), axis=n.attr("axis"))]


@maps("Compress")
def compress(n):
    """The condition decides the result's shape, so it is read on the host (a
    value of the signature) and becomes the gather's indices; without an
    axis, the input is flattened first."""
    x, axis = n.tensor(0), n.attr("axis")
    cond = np.asarray(n.value(1)).ravel().astype(bool)
    if axis is None:
        x = _fn("reshape")(x, [int(np.prod(x.shape))])
        axis = 0
    extent = x.shape[axis]
    if len(cond) > extent:
        raise unsupported(f"Compress condition of {len(cond)} values for an axis of {extent}")
    keep = np.nonzero(cond)[0].astype(np.int64)
    return [_fn("gather")(x, n.constant(keep), axis=int(axis))]


@maps("NonZero")
def non_zero(n):
    """The indices of the non-zero elements, (rank, count) int64 in
    row-major order: their number decides the shape, so the input is read
    on the host (a value of the signature, as Compress's condition)."""
    x = np.asarray(n.value(0))
    found = np.array(np.nonzero(x), dtype=np.int64) if x.ndim else \
        np.zeros((0, int(x != 0)), np.int64)
    return [n.constant(found.reshape(x.ndim, -1))]


@maps("Unique")
def unique(n):
    """The distinct elements (or slices along axis), sorted or in the order
    of their first occurrence, with the first occurrences' indices, each
    element's index among them and their counts. Their number decides the
    shapes, so the input is read on the host (a value of the signature);
    the values themselves are a gather of the input at the first
    occurrences."""
    x = np.asarray(n.value(0))
    axis = n.attr("axis")
    _, first, inverse, counts = np.unique(x, return_index=True, return_inverse=True,
                                          return_counts=True, axis=axis)
    inverse = np.asarray(inverse).ravel()
    if not n.attr("sorted", 1):  # in the order of first occurrence
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        first, counts, inverse = first[order], counts[order], rank[inverse]
    t = n.tensor(0)
    if axis is None:
        t = _fn("reshape")(t, [math.prod(t.shape)])
    y = _fn("gather")(t, n.constant(first.astype(np.int64)), axis=int(axis or 0))
    return [y, n.constant(first.astype(np.int64)), n.constant(inverse.astype(np.int64)),
            n.constant(counts.astype(np.int64))]


@maps("GatherElements")
def gather_elements(n):
    return [_fn("gather_elements")(n.tensor(0), n.tensor(1), axis=n.attr("axis"))]


@maps("GatherND")
def gather_nd(n):
    return [_fn("gather_nd")(n.tensor(0), n.tensor(1), batch_dims=n.attr("batch_dims", 0))]


@maps("ScatterElements", "Scatter")
def scatter_elements(n):
    # Scatter (opset 9-10) is ScatterElements without a reduction.
    return [_fn("scatter_elements")(n.tensor(0), n.tensor(1), n.tensor(2), axis=n.attr("axis"),
                                    reduction=n.attr("reduction", "none"))]


@maps("ScatterND")
def scatter_nd(n):
    return [_fn("scatter_nd")(n.tensor(0), n.tensor(1), n.tensor(2),
                              reduction=n.attr("reduction", "none"))]


@maps("OneHot")
def one_hot(n):
    # depth: a one-element tensor of any numeric type (ONNX casts it to int64)
    depth = int(n.value(1).ravel()[0])
    return [_fn("one_hot")(n.tensor(0), depth, n.tensor(2), axis=n.attr("axis"))]


@maps("Trilu")
def trilu(n):
    k = n.ints(1)[0] if n.has_input(1) else 0
    return [_fn("trilu")(n.tensor(0), upper=bool(n.attr("upper")), k=k)]


# ---- linear algebra ----------------------------------------------------------------

@maps("MatMul")
def matmul(n):
    return [_fn("matmul")(n.tensor(0), n.tensor(1))]


@maps("Gemm")
def gemm(n):
    return [_fn("gemm")(n.tensor(0), n.tensor(1), n.tensor(2), alpha=float(n.attr("alpha")),
                        beta=float(n.attr("beta")), trans_a=bool(n.attr("transA")),
                        trans_b=bool(n.attr("transB")))]


def _einsum_explicit(equation, ranks):
    """The equation with every ellipsis spelled out in fresh letters (the
    last axes of the broadcast ellipsis for an operand with fewer) and the
    output made explicit (implicit mode: the ellipsis, then the letters that
    occur once, sorted)."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise unsupported(f"Einsum equation '{equation}' for {len(ranks)} operands")
    used = set(c for c in eq if c.isalpha())
    fresh = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in used]
    widths = [r - len(t.replace("...", "")) if "..." in t else 0 for t, r in zip(terms, ranks)]
    width = max(widths + [0])
    ell = "".join(fresh[:width])
    terms = [t.replace("...", ell[width - w:]) for t, w in zip(terms, widths)]
    if not arrow:
        counts = {c: sum(t.count(c) for t in terms) for c in set("".join(terms))}
        rhs = ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    else:
        rhs = rhs.replace("...", ell)
    return terms, rhs


def _einsum_diagonal(x, term):
    """x's diagonal over the two axes of a letter repeated in term: those
    axes moved last, merged, every (n + 1)-th element; (tensor, term with
    the letter once, last)."""
    c = next(c for c in term if term.count(c) > 1)
    p = term.index(c)
    q = term.index(c, p + 1)
    n = x.shape[p]
    if x.shape[q] != n:
        raise unsupported(f"Einsum diagonal '{term}' over axes of {n} and {x.shape[q]}")
    rest = [d for d in range(len(term)) if d not in (p, q)]
    t = _fn("transpose")(x, rest + [p, q])
    t = _fn("reshape")(t, [x.shape[d] for d in rest] + [n * n])[..., ::n + 1]
    return t, "".join(term[d] for d in rest) + c


@maps("Einsum")
def einsum(n):
    """bp_einsum after the importer's rewriting: ellipses spelled out and
    diagonals (an index repeated within one operand) taken first."""
    equation = n.attr("equation")
    xs = n.tensors()
    if len(xs) > 2:
        raise unsupported(f"Einsum equation '{equation}' with {len(xs)} operands (bp_einsum: "
                          f"transposes, sums and one batched matmul)")
    terms, rhs = _einsum_explicit(equation, [len(x.shape) for x in xs])
    for k in range(len(xs)):
        while len(set(terms[k])) != len(terms[k]):
            xs[k], terms[k] = _einsum_diagonal(xs[k], terms[k])
    return [_fn("einsum")(",".join(terms) + "->" + rhs, *xs)]


# ---- movement and views ------------------------------------------------------------

@maps("Transpose")
def transpose(n):
    return [_fn("transpose")(n.tensor(0), n.attr("perm"))]


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
    return [_fn("slice")(x, b, e, s)]


@maps("Concat")
def concat(n):
    return [_fn("concat")(n.tensors(), axis=n.attr("axis"))]


@maps("Expand")
def expand(n):
    # ONNX Expand broadcasts both ways: the result has the broadcast shape of
    # the input and `shape`.
    x = n.tensor(0)
    shape = np.broadcast_shapes(tuple(x.shape), tuple(n.ints(1)))
    return [_fn("broadcast_to")(x, list(shape))]


def _pad_indices(mode, extent, before, after):
    """The source index of each position of a padded axis: the nearest edge
    element ('edge'), the mirror image without repeating the edge
    ('reflect', as NumPy's), or the axis repeated ('wrap')."""
    i = np.arange(-before, extent + after, dtype=np.int64)
    if mode == "edge":
        return np.clip(i, 0, extent - 1)
    if mode == "wrap":
        return np.mod(i, extent)
    period = 2 * (extent - 1)
    if period == 0:
        return np.zeros_like(i)
    j = np.mod(i, period)
    return np.where(j < extent, j, period - j)


@maps("Pad")
def pad(n):
    """'constant' by bp_pad; 'edge', 'reflect' and 'wrap' as one gather per
    padded axis, its indices worked out from the shape while recording."""
    mode = n.attr("mode")
    x = n.tensor(0)
    rank = len(x.shape)
    if n.opset >= 11:
        pads = n.ints(1)
        value = n.value(2)
        value = 0.0 if value is None else float(np.asarray(value).ravel()[0])
        axes = n.ints(3) if n.has_input(3) else None
    else:
        pads, value, axes = n.attr("pads"), float(n.attr("value")), None
    if axes is not None:  # opset 18: pads for the listed axes only
        full = [0] * (2 * rank)
        for k, a in enumerate(axes):
            a = a + rank if a < 0 else a
            full[a], full[rank + a] = pads[k], pads[len(axes) + k]
        pads = full
    if len(pads) != 2 * rank:
        raise unsupported(f"Pad with {len(pads)} pads for a rank-{rank} input")
    if mode == "constant":
        if min(pads) < 0:
            raise unsupported("Pad with negative pads (bp_pad only adds)")
        return [_fn("pad")(x, pads[:rank], pads[rank:], value)]
    if mode not in ("edge", "reflect", "wrap"):
        raise unsupported(f"Pad mode '{mode}'")
    for a in range(rank):
        before, after = pads[a], pads[rank + a]
        if before == 0 and after == 0:
            continue
        if x.shape[a] == 0 or x.shape[a] + before + after < 0:
            raise unsupported(f"Pad mode '{mode}' of an axis of {x.shape[a]} elements by "
                              f"({before}, {after})")
        idx = _pad_indices(mode, x.shape[a], before, after)
        x = _fn("gather")(x, n.constant(idx), axis=a)
    return [x]


@maps("ReverseSequence")
def reverse_sequence(n):
    """Each batch entry's first sequence_lens[b] steps reversed: a
    gather_elements along the time axis by indices made on the host from
    the lengths (a value of the signature) and x's shape."""
    x = n.tensor(0)
    lens = np.asarray(n.value(1)).astype(np.int64).ravel()
    t_ax, b_ax = n.attr("time_axis", 0), n.attr("batch_axis", 1)
    steps, batch = x.shape[t_ax], x.shape[b_ax]
    if len(lens) != batch or (lens < 0).any() or (lens > steps).any():
        raise unsupported(f"ReverseSequence lengths {lens.tolist()} for {batch} sequences of "
                          f"{steps} steps")
    t = np.arange(steps)[:, None]
    idx2 = np.where(t < lens[None, :], lens[None, :] - 1 - t, t)  # [time, batch]
    if t_ax > b_ax:
        idx2 = idx2.T
    shape = [1] * len(x.shape)
    shape[t_ax], shape[b_ax] = steps, batch
    idx = np.broadcast_to(idx2.reshape(shape), x.shape).astype(np.int64)
    return [_fn("gather_elements")(x, n.constant(np.ascontiguousarray(idx)), axis=t_ax)]


@maps("Split")
def split(n):
    sizes = n.ints(1) if n.opset >= 13 else n.attr("split")
    parts = sizes if sizes else n.n_outputs
    return list(_fn("split")(n.tensor(0), parts, axis=n.attr("axis")))


@maps("Tile")
def tile(n):
    return [_fn("tile")(n.tensor(0), n.ints(1))]


@maps("DepthToSpace")
def depth_to_space(n):
    return [_fn("depth_to_space")(n.tensor(0), n.attr("blocksize"), crd=n.attr("mode") == "CRD")]


@maps("SpaceToDepth")
def space_to_depth(n):
    return [_fn("space_to_depth")(n.tensor(0), n.attr("blocksize"))]


@maps("Reshape")
def reshape(n):
    x = n.tensor(0)
    if n.opset < 5:  # Reshape-1: the shape is an attribute
        shape = list(n.attr("shape"))
    else:
        shape = n.ints(1)
    if not n.attr("allowzero", 0):  # 0 copies the input's extent there
        shape = [x.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    return [_fn("reshape")(x, shape)]


@maps("Flatten")
def flatten(n):
    x = n.tensor(0)
    axis = n.attr("axis")
    axis += len(x.shape) if axis < 0 else 0  # in [-rank, rank]
    return [_fn("reshape")(x, [math.prod(x.shape[:axis]), math.prod(x.shape[axis:])])]


@maps("Squeeze")
def squeeze(n):
    axes = (n.ints(1) if n.opset >= 13 else n.attr("axes")) or []
    return [_fn("squeeze")(n.tensor(0), axes or None)]


@maps("Unsqueeze")
def unsqueeze(n):
    # Axes count in the output's rank; inserted one at a time in ascending order.
    axes = n.ints(1) if n.opset >= 13 else n.attr("axes")
    y = n.tensor(0)
    out_rank = len(y.shape) + len(axes)
    for ax in sorted(a % out_rank for a in axes):
        y = _fn("unsqueeze")(y, ax)
    return [y]


@maps("Identity")
def identity(n):
    return [n.tensor(0)]


@maps("Cast")
def cast(n):
    to = ONNX_DTYPES.get(n.attr("to"))
    if to is None:
        from onnx import TensorProto
        raise Unsupported("dtype", f"Cast to {TensorProto.DataType.Name(n.attr('to'))}")
    return [_fn("cast")(n.tensor(0), to)]


@maps("CastLike")
def cast_like(n):
    return [_fn("cast")(n.tensor(0), n.dtype(1))]


@maps("Shape")
def shape(n):
    # sliced by start and end (opset 15) with Python's rules, as ONNX says
    dims = list(n.tensor(0).shape)
    end = n.attr("end")
    dims = dims[n.attr("start", 0):end] if end is not None else dims[n.attr("start", 0):]
    return [n.constant(np.array(dims, dtype=np.int64))]


@maps("Size")
def size(n):
    return [n.constant(np.array(math.prod(n.tensor(0).shape), dtype=np.int64))]


# ---- window ops (nn.h) ---------------------------------------------------------------

AUTO_PAD = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")


def _window(n, spatial):
    """The node's auto_pad, strides, dilations and pads as keywords of the
    window functions, for `spatial` spatial axes."""
    auto_pad = n.attr("auto_pad", "NOTSET")
    if auto_pad not in AUTO_PAD:
        raise unsupported(f"{n.op_type} auto_pad '{auto_pad}' (bp_auto_pad: {', '.join(AUTO_PAD)})")
    kw = {"auto_pad": auto_pad}
    for name in ("strides", "dilations", "pads"):
        v = n.attr(name)
        if v:  # pads with an auto_pad: ONNX forbids both, and so does the library
            kw[name] = list(v)
    k = n.attr("kernel_shape")
    if k and len(k) != spatial:
        raise ValueError(f"kernel_shape {list(k)} for {spatial} spatial axes")
    return kw


def _spatial(n):
    return len(n.tensor(0).shape) - 2


@maps("Conv")
def conv(n):
    kw = _window(n, _spatial(n))
    return [_fn("conv")(n.tensor(0), n.tensor(1), n.tensor(2), groups=n.attr("group", 1), **kw)]


@maps("ConvTranspose")
def conv_transpose(n):
    kw = _window(n, _spatial(n))
    for name in ("output_padding", "output_shape"):
        v = n.attr(name)
        if v:
            # output_shape: the spatial extents (onnxruntime also takes the
            # whole (N, C, spatial...) shape: its last entries are those).
            kw[name] = list(v)[-_spatial(n):]
    return [_fn("conv_transpose")(n.tensor(0), n.tensor(1), n.tensor(2),
                                  groups=n.attr("group", 1), **kw)]


@maps("MaxPool")
def max_pool(n):
    kw = _window(n, _spatial(n))
    out = _fn("max_pool")(n.tensor(0), list(n.attr("kernel_shape")),
                          ceil_mode=bool(n.attr("ceil_mode", 0)),
                          storage_order=n.attr("storage_order", 0), return_indices=n.wants(1),
                          **kw)
    return list(out) if n.wants(1) else [out]


@maps("MaxUnpool")
def max_unpool(n):
    """Zeros of the inferred shape ((D - 1) stride + kernel - pads per spatial
    axis) but where MaxPool's indices (flat positions in that shape) receive
    X's values: one scatter into a flat zero tensor. An output_shape input
    pads that with zeros at the end of each axis (ONNX's reference)."""
    x, idx = n.tensor(0), n.tensor(1)
    spatial = len(x.shape) - 2
    kernel = list(n.attr("kernel_shape"))
    strides = list(n.attr("strides") or [1] * spatial)
    pads = list(n.attr("pads") or [0] * (2 * spatial))
    inferred = list(x.shape[:2]) + [(x.shape[2 + j] - 1) * strides[j] + kernel[j] - pads[j]
                                    - pads[spatial + j] for j in range(spatial)]
    flat = _fn("zeros")([math.prod(inferred)], dtype=str(x.dtype), backend=n.backend)
    count = [math.prod(x.shape)]
    y = _fn("scatter_elements")(flat, _fn("reshape")(idx, count), _fn("reshape")(x, count))
    y = _fn("reshape")(y, inferred)
    shape = n.ints(2) if n.has_input(2) else inferred
    if len(shape) != len(inferred) or any(s < i for s, i in zip(shape, inferred)):
        raise unsupported(f"MaxUnpool output_shape {shape} smaller than the shape its "
                          f"kernel, strides and pads give ({inferred})")
    if shape != inferred:
        y = _fn("pad")(y, [0] * len(shape), [s - i for s, i in zip(shape, inferred)], 0.0)
    return [y]


@maps("AveragePool")
def average_pool(n):
    dilations = n.attr("dilations")
    if dilations and any(d != 1 for d in dilations):
        raise unsupported(f"AveragePool dilations {list(dilations)} (bp_average_pool has none, "
                          f"as ONNX 1.12's AveragePool)")
    kw = _window(n, _spatial(n))
    kw.pop("dilations", None)
    return [_fn("average_pool")(n.tensor(0), list(n.attr("kernel_shape")),
                                ceil_mode=bool(n.attr("ceil_mode", 0)),
                                count_include_pad=bool(n.attr("count_include_pad", 0)), **kw)]


@maps("GlobalMaxPool")
def global_max_pool(n):
    return [_fn("global_max_pool")(n.tensor(0))]


@maps("GlobalAveragePool")
def global_average_pool(n):
    return [_fn("global_average_pool")(n.tensor(0))]


@maps("LRN")
def lrn(n):
    return [_fn("lrn")(n.tensor(0), n.attr("size"), alpha=float(n.attr("alpha")),
                       beta=float(n.attr("beta")), bias=float(n.attr("bias")))]


# ---- normalisation, losses, dropout ------------------------------------------------------

@maps("BatchNormalization")
def batch_norm(n):
    # training_mode (opset 14 on; before, a training node is one that asks for
    # the running mean and variance) computes the batch's statistics and
    # updates running ones: bp_batch_norm is the inference form.
    training = n.attr("training_mode", 0) if n.opset >= 14 else any(
        n.wants(k) for k in range(1, n.n_outputs))
    if training and n.opset < 14:
        raise unsupported("BatchNormalization before opset 14 in training mode (its saved mean "
                          "and inverse deviation outputs): map the model at opset 14 or later")
    if training:
        return _batch_norm_training(n)
    if n.opset < 9 and not n.attr("spatial", 1):
        raise unsupported("BatchNormalization spatial=0 (statistics per element): bp_batch_norm "
                          "normalises per channel")
    dtypes = {n.dtype(i) for i in range(5)}
    if len(dtypes) > 1:
        raise unsupported(f"BatchNormalization with operands of several dtypes "
                          f"({', '.join(sorted(dtypes))}): bp_batch_norm's share x's")
    return [_fn("batch_norm")(*[n.tensor(i) for i in range(5)],
                              epsilon=float(n.attr("epsilon")))]


def _batch_norm_training(n):
    """Training mode (opset 14 on): normalised by the batch's own mean and
    population variance over every axis but the channels, and the running
    statistics moved toward them: running = input_running momentum +
    batch (1 - momentum)."""
    x, scale, bias, mean_in, var_in = (n.tensor(i) for i in range(5))
    axes = [0] + list(range(2, len(x.shape)))
    mean_k = _fn("mean")(x, axis=axes, keepdims=True)
    mean = _fn("reshape")(mean_k, [x.shape[1]])
    var = _fn("mean")(_fn("square")(x - mean_k), axis=axes)
    momentum = float(n.attr("momentum", 0.9))
    y = _fn("batch_norm")(x, scale, bias, mean, var, epsilon=float(n.attr("epsilon")))
    return [y, mean_in * momentum + mean * (1 - momentum),
            var_in * momentum + var * (1 - momentum)]


@maps("InstanceNormalization")
def instance_norm(n):
    return [_fn("instance_norm")(n.tensor(0), n.tensor(1), n.tensor(2),
                                 epsilon=float(n.attr("epsilon")))]


@maps("LayerNormalization")
def layer_norm(n):
    # stash_type: the type of the computation and of Mean and InvStdDev. The
    # library's is float32 for f16 and bf16 x, else x's (nn.h): ONNX's default
    # stash_type 1 (FLOAT) for every float x but f64.
    stash = n.attr("stash_type", 1)
    if stash != 1 or n.dtype(0) == "float64":
        raise unsupported(f"LayerNormalization stash_type {stash} for {n.dtype(0)} x "
                          f"(bp_layer_norm computes in float32 for f16 and bf16, else in x's "
                          f"dtype)")
    out = _fn("layer_norm")(n.tensor(0), axis=n.attr("axis"), scale=n.tensor(1),
                            bias=n.tensor(2), epsilon=float(n.attr("epsilon")),
                            return_mean=n.wants(1), return_inv_std=n.wants(2))
    if not (n.wants(1) or n.wants(2)):
        return [out]
    out = list(out)
    return [out[0], out[1] if n.wants(1) else None, out[-1] if n.wants(2) else None]


LOSS_REDUCTION = ("none", "sum", "mean")


def _loss_args(n):
    """reduction and ignore_index for bp_nll_loss and its softmax form."""
    reduction = n.attr("reduction")
    if reduction not in LOSS_REDUCTION:
        raise unsupported(f"{n.op_type} reduction '{reduction}' (bp_loss_reduction: none, sum, "
                          f"mean)")
    ignore = n.attr("ignore_index") if n.has_attr("ignore_index") else None
    return {"reduction": reduction, "ignore_index": ignore}


@maps("NegativeLogLikelihoodLoss")
def nll_loss(n):
    return [_fn("nll_loss")(n.tensor(0), n.tensor(1), n.tensor(2), **_loss_args(n))]


@maps("SoftmaxCrossEntropyLoss")
def softmax_cross_entropy_loss(n):
    out = _fn("softmax_cross_entropy_loss")(n.tensor(0), n.tensor(1), n.tensor(2),
                                            return_log_prob=n.wants(1), **_loss_args(n))
    return list(out) if n.wants(1) else [out]


def _scalar(n, i, default):
    v = n.value(i)
    return default if v is None else np.asarray(v).ravel()[0].item()


@maps("Dropout")
def dropout(n):
    if n.opset >= 12:  # ratio and training_mode are inputs
        ratio, training = float(_scalar(n, 1, 0.5)), bool(_scalar(n, 2, False))
    else:  # an attribute; no training mode (Dropout-7 on is inference only)
        ratio, training = float(n.attr("ratio", 0.5)), False
    if training and ratio != 0:
        # With ratio 0 every element is kept whatever is drawn, so that case
        # runs (and checks the scaling by 1 / (1 - 0) and the all-true mask).
        raise unsupported(f"Dropout training_mode=1 with ratio {ratio:g}: ONNX's expected "
                          f"mask comes from NumPy's generator (np.random, seed "
                          f"{n.attr('seed', 0)}); bp_dropout draws it from its Philox stream "
                          f"(bp_random_uniform), so the elements kept differ by design")
    seed = int(n.attr("seed", 0)) % 2**64  # with ratio 0 (or inference) nothing depends on it
    out = _fn("dropout")(n.tensor(0), ratio=ratio, training=training, seed=seed,
                         return_mask=n.wants(1))
    if not n.wants(1):
        return [out]
    y, mask = out
    if n.opset < 10:  # Dropout-7 to 9: the mask has x's dtype (1 where kept)
        mask = _fn("cast")(mask, n.dtype(0))
    return [y, mask]


# ---- reductions, softmax, scans, top-k -----------------------------------------------------

REDUCE = {
    "ReduceSum": "sum", "ReduceProd": "prod", "ReduceMean": "mean", "ReduceMax": "max",
    "ReduceMin": "min", "ReduceLogSumExp": "logsumexp", "ReduceL1": "reduce_l1",
    "ReduceL2": "reduce_l2", "ReduceSumSquare": "reduce_sum_square",
    "ReduceLogSum": "reduce_log_sum",
}


def _axes_input_since(op_type):
    """The opset from which the op takes its axes as an input, not an
    attribute: ReduceSum at 13; the others at 18."""
    return 13 if op_type == "ReduceSum" else 18


@maps(*REDUCE)
def reduce(n):
    if n.opset >= _axes_input_since(n.op_type):
        axes = n.ints(1) or []
    else:
        axes = n.attr("axes") or []
    if not axes and n.attr("noop_with_empty_axes", 0):
        # ONNX: no axes and noop_with_empty_axes = 1 leave the input as it is
        # (the library reduces every axis when given none).
        return [n.tensor(0)]
    return [_fn(REDUCE[n.op_type])(n.tensor(0), axis=axes or None,
                                   keepdims=bool(n.attr("keepdims")))]


@maps("MeanVarianceNormalization")
def mean_variance_normalization(n):
    """ONNX's function body: (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9) over
    axes (default 0, 2, 3)."""
    x = n.tensor(0)
    axes = n.attr("axes") or [0, 2, 3]
    mean = _fn("mean")(x, axis=axes, keepdims=True)
    mean_sq = _fn("mean")(_fn("square")(x), axis=axes, keepdims=True)
    std = _fn("sqrt")(_fn("sub")(mean_sq, _fn("square")(mean)))
    eps = n.constant(np.array(1e-9), str(x.dtype))
    return [_fn("div")(_fn("sub")(x, mean), _fn("add")(std, eps))]


@maps("ArgMax", "ArgMin")
def arg(n):
    fn = "argmax" if n.op_type == "ArgMax" else "argmin"
    if n.attr("select_last_index", 0):
        fn += "_last"
    return [_fn(fn)(n.tensor(0), axis=[n.attr("axis")], keepdims=bool(n.attr("keepdims")))]


def _along_axis(n, fn):
    """Softmax, LogSoftmax, Hardmax. Opset 13 and later: along one axis
    (default -1). Before 13: the input is coerced to 2-D at `axis` (default 1)
    and the op runs along the second of those axes, which is a reshape."""
    x = n.tensor(0)
    if n.opset >= 13:
        return [_fn(fn)(x, axis=n.attr("axis"))]
    shape = x.shape
    axis = n.attr("axis") % max(len(shape), 1)
    flat = _fn("reshape")(x, [math.prod(shape[:axis]), math.prod(shape[axis:])])
    return [_fn("reshape")(_fn(fn)(flat, axis=1), list(shape))]


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
    return [_fn("cumsum")(n.tensor(0), axis=axis, exclusive=bool(n.attr("exclusive")),
                          reverse=bool(n.attr("reverse")))]


@maps("TopK")
def topk(n):
    k = n.attr("k") if n.opset < 10 else n.ints(1)[0]
    # sorted = 0 leaves the order to the runtime, and ONNX's expected outputs
    # are in one order (sorted): ask the library for that order.
    values, indices = _fn("topk")(n.tensor(0), k, axis=n.attr("axis"),
                                  largest=bool(n.attr("largest", 1)), sorted=True)
    return [values, indices]


# ---- Resize, Upsample -------------------------------------------------------------------

RESIZE_MODES = ("nearest", "linear", "cubic")
RESIZE_COORDINATES = ("half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel",
                      "tf_half_pixel_for_nn")
RESIZE_NEAREST = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


def _floats(n, i):
    """Input i as a list of floats; None if left out or empty (opset 11's
    placeholder for scales when sizes are given)."""
    v = n.value(i)
    return None if v is None or v.size == 0 else [float(s) for s in v.ravel()]


@maps("Resize")
def resize(n):
    mode = n.attr("mode")
    coordinates = n.attr("coordinate_transformation_mode", "asymmetric")
    nearest = n.attr("nearest_mode", "round_prefer_floor")
    if n.opset < 11:
        # Resize-10: (X, scales); asymmetric coordinates, and nearest rounds
        # down when upsampling (onnxruntime's Resize-10 rounds up when
        # downsampling, which ONNX's text does not say).
        scales, sizes, coordinates, nearest = _floats(n, 1), None, "asymmetric", "floor"
        if mode == "nearest" and any(s < 1 for s in scales):
            raise unsupported(f"Resize-10 nearest with scales {scales} < 1: ONNX does not say "
                              f"how it rounds when downsampling; bp_resize takes a nearest_mode")
    else:
        scales, sizes = _floats(n, 2), (n.ints(3) or None)
    if coordinates == "tf_crop_and_resize":
        raise unsupported("Resize coordinate_transformation_mode 'tf_crop_and_resize' (a region "
                          "of interest and an extrapolation value): bp_resize has none")
    for what, value, known in (("mode", mode, RESIZE_MODES),
                               ("coordinate_transformation_mode", coordinates, RESIZE_COORDINATES),
                               ("nearest_mode", nearest, RESIZE_NEAREST)):
        if value not in known:
            raise unsupported(f"Resize {what} '{value}' (bp_resize: {', '.join(known)})")
    return [_fn("resize")(n.tensor(0), scales, sizes, mode=mode,
                          coordinate_transformation_mode=coordinates, nearest_mode=nearest,
                          cubic_coeff_a=float(n.attr("cubic_coeff_a", -0.75)),
                          exclude_outside=bool(n.attr("exclude_outside", 0)))]


@maps("Upsample")
def upsample(n):
    # Upsample (deprecated in opset 10 for Resize): out extent floor(D scale).
    # Its nearest mode repeats each element `scale` times when scales are
    # whole numbers >= 1 (ONNX's test case and reference implementation):
    # bp_resize's asymmetric coordinates rounded down. ONNX's text names no
    # coordinates for its other cases.
    scales = _floats(n, 1) if n.opset >= 9 else [float(s) for s in n.attr("scales")]
    mode = n.attr("mode", "nearest")
    if mode != "nearest" or any(s < 1 or s != int(s) for s in scales):
        raise unsupported(f"Upsample mode '{mode}' with scales {scales}: ONNX names coordinates "
                          f"only for nearest with whole scales >= 1, which map to bp_resize "
                          f"(asymmetric, floor); map the model with Resize, which names them")
    return [_fn("resize")(n.tensor(0), scales, None, mode="nearest",
                          coordinate_transformation_mode="asymmetric", nearest_mode="floor")]


# ---- ONNX's optimizers (domain ai.onnx.preview.training) --------------------------------
#
# Each takes R (the learning rate), T (the step count, int64), then n tensors
# to update and their gradients and states, and returns the n updated
# tensors followed by the n updated states of each kind. T stays a tensor:
# where a rule branches on T > 0 it is a `where`, so a training loop that
# feeds a new T each step reuses one compiled plan.

def _optimizer_groups(n, kinds):
    """R, T and the input tensors cut into `kinds` lists of equal length."""
    rest = n.tensors()[2:]
    if len(rest) % kinds:
        raise unsupported(f"{n.op_type} with {len(rest)} tensors after R and T: they come "
                          f"in {kinds} lists of one length")
    k = len(rest) // kinds
    return n.tensor(0), n.tensor(1), [rest[j * k:(j + 1) * k] for j in range(kinds)]


def _as(x, t):
    """Scalar tensor t (R, or T) in x's dtype."""
    return t if str(t.dtype) == str(x.dtype) else _fn("cast")(t, str(x.dtype))


def _training(op_type):
    def register(fn):
        assert op_type not in TRAINING_HANDLERS, op_type
        TRAINING_HANDLERS[op_type] = fn
        return fn
    return register


@_training("Adagrad")
def adagrad(n):
    """g' = norm_coefficient x + g; h' = h + g'^2;
    x' = x - R / (1 + T decay_factor) g' / (sqrt(h') + epsilon)."""
    r, t, (xs, gs, hs) = _optimizer_groups(n, 3)
    decay, eps = float(n.attr("decay_factor", 0.0)), float(n.attr("epsilon", 0.0))
    norm = float(n.attr("norm_coefficient", 0.0))
    new_x, new_h = [], []
    for x, g, h in zip(xs, gs, hs):
        rate = _as(x, r) / (1 + _as(x, t) * decay)
        g_reg = x * norm + g
        h2 = h + g_reg * g_reg
        new_x.append(x - rate * g_reg / (_fn("sqrt")(h2) + eps))
        new_h.append(h2)
    return new_x + new_h


@_training("Adam")
def adam(n):
    """g' = norm_coefficient x + g; v' = alpha v + (1 - alpha) g';
    h' = beta h + (1 - beta) g'^2; the rate R sqrt(1 - beta^T) / (1 - alpha^T)
    when T > 0, else R; x' = (1 - norm_coefficient_post)
    (x - rate v' / (sqrt(h') + epsilon))."""
    r, t, (xs, gs, vs, hs) = _optimizer_groups(n, 4)
    alpha, beta = float(n.attr("alpha", 0.9)), float(n.attr("beta", 0.999))
    eps, norm = float(n.attr("epsilon", 0.0)), float(n.attr("norm_coefficient", 0.0))
    post = float(n.attr("norm_coefficient_post", 0.0))
    outs = ([], [], [])
    for x, g, v, h in zip(xs, gs, vs, hs):
        g_reg = x * norm + g
        v2 = v * alpha + g_reg * (1 - alpha)
        h2 = h * beta + g_reg * g_reg * (1 - beta)
        rt, tt = _as(x, r), _as(x, t)
        corrected = rt * _fn("sqrt")(1 - beta ** tt) / (1 - alpha ** tt)
        rate = _fn("where")(t > 0, corrected, rt)
        outs[0].append((x - rate * (v2 / (_fn("sqrt")(h2) + eps))) * (1 - post))
        outs[1].append(v2)
        outs[2].append(h2)
    return outs[0] + outs[1] + outs[2]


@_training("Momentum")
def momentum(n):
    """g' = norm_coefficient x + g; v' = alpha v + b g', b = beta when T > 0
    and 1 at the first step; x' = x - R v' ("standard") or
    x - R (g' + alpha v') ("nesterov")."""
    r, t, (xs, gs, vs) = _optimizer_groups(n, 3)
    alpha, beta = float(n.attr("alpha")), float(n.attr("beta"))
    mode, norm = n.attr("mode"), float(n.attr("norm_coefficient"))
    if mode not in ("standard", "nesterov"):
        raise unsupported(f"Momentum mode '{mode}' (ONNX: standard, nesterov)")
    new_x, new_v = [], []
    for x, g, v in zip(xs, gs, vs):
        g_reg = x * norm + g
        b = _fn("where")(t > 0, n.constant(np.array(beta), str(x.dtype)),
                         n.constant(np.array(1.0), str(x.dtype)))
        v2 = v * alpha + b * g_reg
        step = v2 if mode == "standard" else g_reg + v2 * alpha
        new_x.append(x - _as(x, r) * step)
        new_v.append(v2)
    return new_x + new_v


# ---- quantization ---------------------------------------------------------------------

QUANT_RANGE = {"uint8": (0, 255), "int8": (-128, 127)}


def _per_axis(n, t, rank):
    """A scale or zero point: a scalar, or (opset 13) one value per index of
    the axis attribute, shaped to broadcast against a tensor of that rank."""
    if t is None or len(t.shape) == 0 or rank == 0:
        return t
    axis = int(n.attr("axis", 1)) % rank
    shape = [1] * rank
    shape[axis] = t.shape[0]
    return _fn("reshape")(t, shape)


def _quantize(x, scale, zero, dtype):
    """saturate(round(x / scale) + zero) in dtype: rounding half to even,
    as ONNX says, in float32."""
    lo, hi = QUANT_RANGE[dtype]
    q = _fn("round")(x / scale)
    if zero is not None:
        q = q + _fn("cast")(zero, "float32")
    return _fn("cast")(_fn("clip")(q, float(lo), float(hi)), dtype)


@maps("QuantizeLinear")
def quantize_linear(n):
    x = n.tensor(0)
    zero = n.tensor(2)
    dtype = str(zero.dtype) if zero is not None else "uint8"
    if dtype not in QUANT_RANGE or str(x.dtype) != "float32":
        raise unsupported(f"QuantizeLinear from {x.dtype} to {dtype} (float32 to uint8 or int8)")
    rank = len(x.shape)
    scale = _per_axis(n, n.tensor(1), rank)
    return [_quantize(x, scale, _per_axis(n, zero, rank), dtype)]


@maps("DequantizeLinear")
def dequantize_linear(n):
    """(x - zero_point) * scale, in float32 (int32 x has no zero point)."""
    x = n.tensor(0)
    rank = len(x.shape)
    y = _fn("cast")(x, "float32")
    zero = _per_axis(n, n.tensor(2), rank)
    if zero is not None:
        y = y - _fn("cast")(zero, "float32")
    return [y * _per_axis(n, n.tensor(1), rank)]


@maps("DynamicQuantizeLinear")
def dynamic_quantize_linear(n):
    """ONNX's function body: the range [min(x, 0), max(x, 0)] onto 0..255:
    scale = (hi - lo) / 255, zero point saturate(round(-lo / scale)), then
    QuantizeLinear with them."""
    x = n.tensor(0)
    if str(x.dtype) != "float32":
        raise unsupported(f"DynamicQuantizeLinear of {x.dtype} (float32)")
    zero_f = n.constant(np.array(0.0, np.float32))
    lo = _fn("minimum")(_fn("min")(x), zero_f)
    hi = _fn("maximum")(_fn("max")(x), zero_f)
    scale = (hi - lo) / 255.0
    zero = _fn("cast")(_fn("clip")(_fn("round")((zero_f - lo) / scale), 0.0, 255.0), "uint8")
    return [_quantize(x, scale, zero, "uint8"), scale, zero]


# ---- recurrent: RNN, GRU, LSTM, unrolled over the sequence -------------------------------
#
# Each is composed of backplane's ops, the sequence unrolled while recording
# (its length is part of the signature): the input's product with W for
# every step at once (one matmul), then per step the product of the hidden
# state with R and the gates' elementwise ops. sequence_lens masks the
# steps past each batch entry's length: its state stops changing and its
# outputs are zero there (in the reverse direction the state starts at its
# own last element, as ONNX says).

# activation name -> (function of x, alpha, beta; whether it takes alpha,
# beta; ONNX's defaults, those of the op of the same name)
RNN_ACTIVATIONS = {
    "relu": (lambda x, a, b: _fn("relu")(x), False, False, None, None),
    "tanh": (lambda x, a, b: _fn("tanh")(x), False, False, None, None),
    "sigmoid": (lambda x, a, b: _fn("sigmoid")(x), False, False, None, None),
    "affine": (lambda x, a, b: x * a + b, True, True, 1.0, 0.0),
    "leakyrelu": (lambda x, a, b: _fn("leaky_relu")(x, a), True, False, 0.01, None),
    "thresholdedrelu": (lambda x, a, b: _fn("thresholded_relu")(x, a), True, False, 1.0, None),
    "scaledtanh": (lambda x, a, b: _fn("tanh")(x * b) * a, True, True, 1.0, 1.0),
    "hardsigmoid": (lambda x, a, b: _fn("hard_sigmoid")(x, a, b), True, True, 0.2, 0.5),
    "elu": (lambda x, a, b: _fn("elu")(x, a), True, False, 1.0, None),
    "softsign": (lambda x, a, b: _fn("softsign")(x), False, False, None, None),
    "softplus": (lambda x, a, b: _fn("softplus")(x), False, False, None, None),
}
RNN_DEFAULT_ACTIVATIONS = {"RNN": ["Tanh"], "GRU": ["Sigmoid", "Tanh"],
                           "LSTM": ["Sigmoid", "Tanh", "Tanh"]}
RNN_GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def _rnn_activations(n, directions):
    """One list of activation functions per direction; activation_alpha and
    activation_beta are consumed in order by the activations that take them."""
    per = len(RNN_DEFAULT_ACTIVATIONS[n.op_type])
    # not the schema's default: RNN's lists two (for two directions)
    names = (n.attr("activations") if n.has_attr("activations") else None) or \
        RNN_DEFAULT_ACTIVATIONS[n.op_type] * directions
    if len(names) != per * directions:
        raise unsupported(f"{n.op_type} with {len(names)} activations for {directions} "
                          f"direction(s) (ONNX: {per} each)")
    alphas = list(n.attr("activation_alpha") or [])
    betas = list(n.attr("activation_beta") or [])
    fns = []
    for name in names:
        spec = RNN_ACTIVATIONS.get(name.lower())
        if spec is None:
            raise unsupported(f"{n.op_type} activation '{name}' (ONNX lists "
                              f"{', '.join(sorted(RNN_ACTIVATIONS))})")
        f, takes_a, takes_b, a, b = spec
        if takes_a and alphas:
            a = float(alphas.pop(0))
        if takes_b and betas:
            b = float(betas.pop(0))
        fns.append(lambda x, f=f, a=a, b=b: f(x, a, b))
    return [fns[d * per:(d + 1) * per] for d in range(directions)]


class _Step:
    """What one direction's steps share: its weights, biases and activations."""

    def __init__(self, n, d, acts, hidden, clip):
        g = RNN_GATES[n.op_type]
        self.n, self.h, self.acts, self.clip = n, hidden, acts, clip
        self.rt = _fn("transpose")(n.tensor(2)[d], [1, 0])     # (hidden, g hidden)
        b = n.tensor(3)
        self.wb = b[d][:g * hidden] if b is not None else None
        self.rb = b[d][g * hidden:] if b is not None else None
        p = n.tensor(7) if n.op_type == "LSTM" else None
        self.p = [p[d][k * hidden:(k + 1) * hidden] for k in range(3)] if p is not None else None

    def gate(self, v, k):
        return v[:, k * self.h:(k + 1) * self.h]

    def pre(self, v):
        return _fn("clip")(v, -self.clip, self.clip) if self.clip is not None else v

    def rnn(self, xt, h, c):
        return self.acts[0](self.pre(xt + _fn("matmul")(h, self.rt))), None

    def lstm(self, xt, h, c):
        f, g, hf = self.acts
        v = xt + _fn("matmul")(h, self.rt)
        pi, po, pf = self.p if self.p is not None else (None, None, None)
        i_pre = self.gate(v, 0) if pi is None else self.gate(v, 0) + pi * c
        i = f(self.pre(i_pre))
        if self.n.attr("input_forget", 0):
            fg = 1 - i
        else:
            f_pre = self.gate(v, 2) if pf is None else self.gate(v, 2) + pf * c
            fg = f(self.pre(f_pre))
        c_new = fg * c + i * g(self.pre(self.gate(v, 3)))
        o_pre = self.gate(v, 1) if po is None else self.gate(v, 1) + po * c_new
        return f(self.pre(o_pre)) * hf(c_new), c_new

    def gru(self, xt, h, c):
        f, g = self.acts
        hd = self.h
        zr = _fn("matmul")(h, self.rt[:, :2 * hd])
        if self.rb is not None:
            zr = zr + self.rb[:2 * hd]
        z = f(self.pre(self.gate(xt, 0) + self.gate(zr, 0)))
        r = f(self.pre(self.gate(xt, 1) + self.gate(zr, 1)))
        rh = self.rt[:, 2 * hd:]
        rbh = self.rb[2 * hd:] if self.rb is not None else None
        if self.n.attr("linear_before_reset", 0):
            hr = _fn("matmul")(h, rh)
            inner = r * (hr + rbh if rbh is not None else hr)
        else:
            inner = _fn("matmul")(r * h, rh)
            inner = inner + rbh if rbh is not None else inner
        hh = g(self.pre(self.gate(xt, 2) + inner))
        return (1 - z) * hh + z * h, None


def _zeros_like_state(n, x, batch, hidden):
    return _fn("zeros")([batch, hidden], dtype=str(x.dtype), backend=n.backend)


@maps("RNN", "GRU", "LSTM")
def recurrent(n):
    kind = n.op_type
    x = n.tensor(0)
    direction = n.attr("direction", "forward")
    if direction not in ("forward", "reverse", "bidirectional"):
        raise unsupported(f"{kind} direction '{direction}'")
    dirs = 2 if direction == "bidirectional" else 1
    layout = int(n.attr("layout", 0))
    hidden = int(n.attr("hidden_size") or n.tensor(2).shape[-1])
    clip = n.attr("clip")
    clip = float(clip) if clip is not None else None
    acts = _rnn_activations(n, dirs)
    if layout:  # (batch, seq, input) and states (batch, dirs, hidden)
        x = _fn("transpose")(x, [1, 0, 2])
    seq, batch = x.shape[0], x.shape[1]
    h0, c0 = n.tensor(5), n.tensor(6) if kind == "LSTM" else None
    if layout:
        h0 = _fn("transpose")(h0, [1, 0, 2]) if h0 is not None else None
        c0 = _fn("transpose")(c0, [1, 0, 2]) if c0 is not None else None
    lens = n.tensor(4)
    masks = None
    if lens is not None:
        masks = [_fn("reshape")(_fn("cast")(_fn("greater")(lens, n.constant(np.array(t, np.int32),
                                                                       str(lens.dtype))),
                                           str(x.dtype)), [batch, 1]) for t in range(seq)]
    ys, hs, cs = [], [], []
    for d in range(dirs):
        step = _Step(n, d, acts[d], hidden, clip)
        xw = _fn("matmul")(x, _fn("transpose")(n.tensor(1)[d], [1, 0]))  # (seq, batch, g hidden)
        if step.wb is not None:
            xw = xw + step.wb
            if kind != "GRU":  # GRU's recurrent bias of the third gate goes inside the reset
                xw = xw + step.rb
        h = h0[d] if h0 is not None else _zeros_like_state(n, x, batch, hidden)
        c = (c0[d] if c0 is not None else _zeros_like_state(n, x, batch, hidden)) \
            if kind == "LSTM" else None
        backwards = direction == "reverse" or d == 1
        out = [None] * seq
        run = getattr(step, kind.lower())
        for t in (reversed(range(seq)) if backwards else range(seq)):
            h_new, c_new = run(xw[t], h, c)
            if masks is None:
                h, c, out[t] = h_new, c_new, h_new
            else:
                m = masks[t]
                out[t] = h_new * m
                h = out[t] + h * (1 - m)
                if c is not None:
                    c = c_new * m + c * (1 - m)
        ys.append(_fn("stack")(out, axis=0))   # (seq, batch, hidden)
        hs.append(h)
        cs.append(c)
    y = _fn("stack")(ys, axis=1)               # (seq, dirs, batch, hidden)
    y_h = _fn("stack")(hs, axis=0)             # (dirs, batch, hidden)
    y_c = _fn("stack")(cs, axis=0) if kind == "LSTM" else None
    if layout:
        y = _fn("transpose")(y, [2, 0, 1, 3])
        y_h = _fn("transpose")(y_h, [1, 0, 2])
        y_c = _fn("transpose")(y_c, [1, 0, 2]) if y_c is not None else None
    return [y, y_h] + ([y_c] if kind == "LSTM" else [])


# ---- integer matrix products -----------------------------------------------------------
#
# (x - x_zero_point) and (w - w_zero_point) of 8-bit integers are summed in
# float64: every product is below 2^17 and the sums stay below 2^53, so the
# float64 result is the exact integer an int32 accumulation gives (while it
# fits int32), and the products run on the backend's float64 kernels
# (OpenBLAS on blas_cpu).

def _centred(n, x, zero, axis_of_vector=None):
    """x - zero in float64; a 1-D zero point (one per row of a matrix, or
    per output channel of a kernel) is laid along axis_of_vector."""
    x = _fn("cast")(x, "float64")
    if zero is None:
        return x
    z = _fn("cast")(zero, "float64")
    if len(z.shape) == 1 and axis_of_vector is not None and z.shape[0] != 1:
        shape = [1] * len(x.shape)
        shape[axis_of_vector] = z.shape[0]
        z = _fn("reshape")(z, shape)
    return x - z


def _integer_conv(n, x, w, x_zero, w_zero):
    kw = _window(n, _spatial(n))
    return _fn("conv")(_centred(n, x, x_zero), _centred(n, w, w_zero, 0), None,
                       groups=n.attr("group", 1), **kw)


def _requantized(acc, scale, zero, dtype):
    """saturate(round(acc * scale) + zero) in dtype, in float32 (as
    onnxruntime), rounding half to even."""
    q = _fn("round")(_fn("cast")(acc, "float32") * scale)
    if zero is not None:
        q = q + _fn("cast")(zero, "float32")
    lo, hi = QUANT_RANGE[dtype]
    return _fn("cast")(_fn("clip")(q, float(lo), float(hi)), dtype)


@maps("MatMulInteger")
def matmul_integer(n):
    """(A - a_zero_point) (B - b_zero_point) in int32; a_zero_point may
    hold one value per row of A, b_zero_point one per column of B."""
    a, b = n.tensor(0), n.tensor(1)
    acc = _fn("matmul")(_centred(n, a, n.tensor(2), len(a.shape) - 2),
                        _centred(n, b, n.tensor(3), len(b.shape) - 1))
    return [_fn("cast")(acc, "int32")]


@maps("ConvInteger")
def conv_integer(n):
    return [_fn("cast")(_integer_conv(n, n.tensor(0), n.tensor(1), n.tensor(2), n.tensor(3)),
                        "int32")]


@maps("QLinearMatMul")
def qlinear_matmul(n):
    """The integer product of the centred operands, rescaled by
    a_scale b_scale / y_scale and quantized to y_zero_point's type."""
    a, b, y_zero = n.tensor(0), n.tensor(3), n.tensor(7)
    acc = _fn("matmul")(_centred(n, a, n.tensor(2), len(a.shape) - 2),
                        _centred(n, b, n.tensor(5), len(b.shape) - 1))
    scale = n.tensor(1) * n.tensor(4) / n.tensor(6)
    return [_requantized(acc, scale, y_zero, str(y_zero.dtype) if y_zero is not None
                         else str(a.dtype))]


@maps("QLinearConv")
def qlinear_conv(n):
    """ConvInteger's accumulation plus the int32 bias B, rescaled by
    x_scale w_scale / y_scale (w_scale per output channel or one) and
    quantized to y_zero_point's type."""
    x, y_zero = n.tensor(0), n.tensor(7)
    acc = _integer_conv(n, x, n.tensor(3), n.tensor(2), n.tensor(5))
    if n.has_input(8):
        bias = _fn("cast")(n.tensor(8), "float64")
        acc = acc + _fn("reshape")(bias, [1, bias.shape[0]] + [1] * (len(acc.shape) - 2))
    w_scale = n.tensor(4)
    if len(w_scale.shape) == 1 and w_scale.shape[0] != 1:
        w_scale = _fn("reshape")(w_scale, [1, w_scale.shape[0]] + [1] * (len(acc.shape) - 2))
    scale = n.tensor(1) * w_scale / n.tensor(6)
    return [_requantized(acc, scale, y_zero, str(y_zero.dtype) if y_zero is not None
                         else str(x.dtype))]


# ---- GridSample -----------------------------------------------------------------------
#
# Composed on the graph (the grid is data): per spatial axis, the grid's
# coordinate denormalized, brought inside the border by the padding mode,
# and turned into the taps' indices and weights; each tap combination is
# one gather of the input flattened over its spatial axes, weighted and
# summed. ONNX's reference order: nearest rounds half to even; a tap
# outside the input reads 0 (zeros), the clamped index (border) or the
# reflected one (reflection).

GRID_MODES = {"bilinear": "linear", "linear": "linear", "nearest": "nearest",
              "bicubic": "cubic", "cubic": "cubic"}
GRID_PADDING = ("zeros", "border", "reflection")


def _reflect(v, lo, hi):
    """v reflected by the near border until it lies in [lo, hi] (ONNX's
    reference): the distance past the border, folded by the range."""
    span = hi - lo
    below, above = v < lo, v > hi
    dist = _fn("where")(below, lo - v, v - hi)
    folds = _fn("floor")(dist / span)
    rest = dist - folds * span
    odd = (folds - _fn("floor")(folds / 2) * 2) > 0.5
    from_below = _fn("where")(odd, hi - rest, lo + rest)
    from_above = _fn("where")(odd, lo + rest, hi - rest)
    return _fn("where")(below, from_below, _fn("where")(above, from_above, v))


def _grid_axis(n, g, dim, mode, padding, align):
    """One spatial axis: [(index tensor int64, weight tensor or None, valid
    mask or None)] per tap along it."""
    x = (g + 1) / 2 * (dim - 1) if align else ((g + 1) * dim - 1) / 2
    lo, hi = (0.0, dim - 1.0) if align else (-0.5, dim - 0.5)
    if mode == "nearest":
        x = _fn("round")(x)
    outside = (x < lo) | (x > hi)
    if padding == "border":
        x = _fn("where")(outside, _fn("clip")(x, 0.0, dim - 1.0), x)
    elif padding == "reflection":
        x = _reflect(x, lo, hi)

    def tap(i):  # i: integral values (float); the index read and whether it counts
        if padding == "reflection":
            i = _fn("cast")(_reflect(i, lo, hi), "int64")  # truncated, as the reference
            return _fn("clip")(i, 0, dim - 1), None
        i = _fn("cast")(i, "int64")
        inside = None if padding == "border" else (i >= 0) & (i < dim)
        return _fn("clip")(i, 0, dim - 1), inside

    if mode == "nearest":
        idx, inside = tap(_fn("cast")(_fn("cast")(x, "int64"), str(x.dtype)))
        return [(idx, None, inside)]
    base = _fn("floor")(x)
    t = x - base
    if mode == "linear":
        weights, offsets = [1 - t, t], [0, 1]
    else:  # Keys' cubic convolution, A = -0.75, taps at -1 .. 2
        a = -0.75
        u = t + 1
        weights = [((a * u - 5 * a) * u + 8 * a) * u - 4 * a,
                   ((a + 2) * t - (a + 3)) * t * t + 1,
                   ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1,
                   ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a]
        offsets = [-1, 0, 1, 2]
    out = []
    for w, o in zip(weights, offsets):
        idx, inside = tap(base + float(o))
        out.append((idx, w, inside))
    return out


@maps("GridSample")
def grid_sample(n):
    x, grid = n.tensor(0), n.tensor(1)
    mode = GRID_MODES.get(n.attr("mode", "bilinear"))
    padding = n.attr("padding_mode", "zeros")
    if mode is None or padding not in GRID_PADDING:
        raise unsupported(f"GridSample mode '{n.attr('mode')}' padding_mode '{padding}' "
                          f"(modes {', '.join(GRID_MODES)}; padding {', '.join(GRID_PADDING)})")
    align = bool(n.attr("align_corners", 0))
    batch, channels, spatial = x.shape[0], x.shape[1], list(x.shape[2:])
    out_spatial = list(grid.shape[1:-1])
    count = math.prod(out_spatial)
    # the grid's last axis lists coordinates innermost axis first (x, then y, ...)
    axes = []
    for k, dim in enumerate(spatial):
        g = grid[..., len(spatial) - 1 - k]
        axes.append(_grid_axis(n, _fn("reshape")(g, [batch, 1, count]), dim, mode, padding,
                               align))
    flat_x = _fn("reshape")(x, [batch, channels, math.prod(spatial)])
    total = None
    for combo in _product(axes):
        flat, weight, inside = None, None, None
        for k, (idx, w, ok) in enumerate(combo):
            stride = math.prod(spatial[k + 1:])
            term = idx * stride if stride != 1 else idx
            flat = term if flat is None else flat + term
            weight = w if weight is None else (weight * w if w is not None else weight)
            inside = ok if inside is None else (inside & ok if ok is not None else inside)
        got = _fn("gather_elements")(flat_x, _fn("broadcast_to")(flat, [batch, channels, count]),
                                     axis=2)
        if weight is not None:
            got = got * _fn("cast")(weight, str(x.dtype))
        if inside is not None:
            got = _fn("where")(inside, got, _fn("zeros")([], dtype=str(x.dtype),
                                                         backend=n.backend))
        total = got if total is None else total + got
    return [_fn("reshape")(total, [batch, channels] + out_spatial)]


def _product(axes):
    """Every combination of one tap per axis, the first axis outermost."""
    combos = [[]]
    for taps in axes:
        combos = [c + [t] for c in combos for t in taps]
    return combos


# ---- signal: DFT, STFT, MelWeightMatrix ---------------------------------------------------
#
# A DFT of length N is a product with the N x K matrices of cos and sin of
# 2 pi n k / N (computed in float64 on the host, rounded once to the
# signal's dtype): a GEMM on blas_cpu. That is O(N K) work a point where an
# FFT is O(log N); for the frame lengths of speech and music features (a
# few hundred to a few thousand points) one GEMM over every frame at once
# is what a BLAS does best, and no FFT library is needed.

def _dft_matrices(n, length, bins, inverse, dtype):
    """cos and sin of 2 pi j k / length for the n input points j and the
    bins k (the sign of the sine is the caller's)."""
    j = np.arange(n, dtype=np.float64)[:, None]
    k = np.arange(bins, dtype=np.float64)[None, :]
    angle = 2 * np.pi * ((j * k) % length) / length
    cos, sin = np.cos(angle), np.sin(angle)
    if inverse:
        cos, sin = cos / length, sin / length
    return cos.astype(dtype), sin.astype(dtype)


def _dft_last(n, re, im, length, onesided, inverse):
    """The DFT along the last axis of re (and im, or None for a real
    signal), of `length` points (the signal truncated or zero-padded to
    it): (real part, imaginary part)."""
    points = re.shape[-1]
    if points > length:
        re = re[..., :length]
        im = im[..., :length] if im is not None else None
        points = length
    bins = length // 2 + 1 if onesided else length
    cos, sin = _dft_matrices(points, length, bins, inverse, str(re.dtype))
    c, s = n.constant(cos), n.constant(sin)
    sign = 1.0 if inverse else -1.0  # e^{-i..} forward, e^{+i..} inverse
    out_re = _fn("matmul")(re, c)
    out_im = _fn("matmul")(re, s) * sign
    if im is not None:
        out_re = out_re - _fn("matmul")(im, s) * sign
        out_im = out_im + _fn("matmul")(im, c)
    return out_re, out_im


def _complex_parts(x):
    """A signal of shape [..., 1] (real) or [..., 2] (real, imaginary)."""
    comp = x.shape[-1]
    if comp not in (1, 2):
        raise unsupported(f"a signal whose last axis holds {comp} values (ONNX: 1 or 2)")
    re = _fn("squeeze")(x[..., 0:1], [len(x.shape) - 1])
    im = _fn("squeeze")(x[..., 1:2], [len(x.shape) - 1]) if comp == 2 else None
    return re, im


@maps("DFT")
def dft(n):
    if n.opset >= 20:
        raise unsupported("DFT of opset 20 (axis as an input); this importer maps DFT-17")
    x = n.tensor(0)
    rank = len(x.shape)
    axis = int(n.attr("axis", 1)) % (rank - 1)
    inverse, onesided = bool(n.attr("inverse", 0)), bool(n.attr("onesided", 0))
    if inverse and onesided:
        raise unsupported("DFT with inverse and onesided both set (ONNX does not define it)")
    length = n.ints(1)[0] if n.has_input(1) else x.shape[axis]
    re, im = _complex_parts(x)
    perm = [d for d in range(rank - 1) if d != axis] + [axis]
    back = list(np.argsort(perm))
    if axis != rank - 2:
        re = _fn("transpose")(re, perm)
        im = _fn("transpose")(im, perm) if im is not None else None
    out_re, out_im = _dft_last(n, re, im, length, onesided, inverse)
    if axis != rank - 2:
        out_re, out_im = _fn("transpose")(out_re, back), _fn("transpose")(out_im, back)
    return [_fn("stack")([out_re, out_im], axis=rank - 1)]


@maps("STFT")
def stft(n):
    """Frames of frame_length every frame_step samples (one gather), times
    the window, then a DFT of each frame (onesided by default)."""
    signal = n.tensor(0)
    step = n.ints(1)[0]
    window = n.tensor(2)
    length = n.ints(3)[0] if n.has_input(3) else (window.shape[0] if window is not None else None)
    if length is None:
        raise unsupported("STFT with neither a window nor a frame_length")
    if window is not None and window.shape[0] != length:
        raise unsupported(f"STFT window of {window.shape[0]} points for frames of {length}")
    total = signal.shape[1]
    frames = 1 + (total - length) // step
    if frames < 1 or step < 1:
        raise unsupported(f"STFT of {total} samples in frames of {length} every {step}")
    index = (np.arange(frames)[:, None] * step + np.arange(length)[None, :]).ravel()
    re, im = _complex_parts(signal)          # [batch, samples]
    batch = signal.shape[0]

    def framed(t):
        f = _fn("reshape")(_fn("gather")(t, n.constant(index.astype(np.int64)), axis=1),
                           [batch, frames, length])
        return f * window if window is not None else f
    out_re, out_im = _dft_last(n, framed(re), framed(im) if im is not None else None, length,
                               bool(n.attr("onesided", 1)), False)
    return [_fn("stack")([out_re, out_im], axis=3)]


@maps("MelWeightMatrix")
def mel_weight_matrix(n):
    """Triangular filters, equally spaced in mels from lower_edge_hertz to
    upper_edge_hertz, over the dft_length // 2 + 1 bins of a onesided DFT:
    computed on the host from the five scalars (a constant of the
    signature), as ONNX's test data and reference compute it: the
    num_mel_bins + 2 edges step (high - low) / (num_mel_bins + 2) mels
    apart, each edge's bin floor((dft_length + 1) hz / sample_rate)."""
    mels, length, rate = n.ints(0)[0], n.ints(1)[0], n.ints(2)[0]
    lo_hz, hi_hz = float(n.value(3).ravel()[0]), float(n.value(4).ravel()[0])
    to_mel = lambda hz: 2595 * np.log1p(hz / 700) / np.log(10)  # noqa: E731
    lo, hi = to_mel(lo_hz), to_mel(hi_hz)
    edges = np.arange(mels + 2) * ((hi - lo) / (mels + 2)) + lo
    hz = 700 * np.expm1(edges / 2595 * np.log(10))
    bins = (((length + 1) * hz) // rate).astype(int)
    out = np.zeros((length // 2 + 1, mels))
    for m in range(mels):
        left, centre, right = bins[m], bins[m + 1], bins[m + 2]
        if centre == left:
            out[centre, m] = 1
        else:
            for j in range(left, centre + 1):
                out[j, m] = (j - left) / (centre - left)
        for j in range(centre, right):
            out[j, m] = (right - j) / (right - centre)
    dtype = ONNX_DTYPES.get(int(n.attr("output_datatype", 1)))
    if dtype is None:
        raise unsupported(f"MelWeightMatrix output_datatype {n.attr('output_datatype')}")
    return [n.constant(out, dtype)]


# ---- RoiAlign ------------------------------------------------------------------------

def _roi_samples(roi, height, width, out_h, out_w, ratio, scale, half_pixel):
    """For one region: per output cell, its samples' four corner positions
    (flat, in a height x width plane) and bilinear weights, as ONNX's
    reference computes them: (positions, weights), each (out_h out_w,
    samples, 4), and the sample count."""
    offset = 0.5 if half_pixel else 0.0
    x0, y0, x1, y1 = (float(v) * scale - offset for v in roi)
    roi_w, roi_h = x1 - x0, y1 - y0
    if not half_pixel:
        roi_w, roi_h = max(roi_w, 1.0), max(roi_h, 1.0)
    bin_h, bin_w = roi_h / out_h, roi_w / out_w
    grid_h = ratio if ratio > 0 else int(np.ceil(roi_h / out_h))
    grid_w = ratio if ratio > 0 else int(np.ceil(roi_w / out_w))
    count = max(grid_h * grid_w, 1)
    pos = np.zeros((out_h * out_w, max(grid_h * grid_w, 1), 4), np.int64)
    wts = np.zeros(pos.shape, np.float64)
    for ph in range(out_h):
        for pw in range(out_w):
            cell = ph * out_w + pw
            for iy in range(grid_h):
                y = y0 + ph * bin_h + (iy + 0.5) * bin_h / grid_h
                for ix in range(grid_w):
                    x = x0 + pw * bin_w + (ix + 0.5) * bin_w / grid_w
                    s = iy * grid_w + ix
                    if y < -1.0 or y > height or x < -1.0 or x > width:
                        continue  # reads nothing: weights 0
                    y, x = max(y, 0.0), max(x, 0.0)
                    ylo, xlo = int(y), int(x)
                    if ylo >= height - 1:
                        ylo = yhi = height - 1
                        y = float(ylo)
                    else:
                        yhi = ylo + 1
                    if xlo >= width - 1:
                        xlo = xhi = width - 1
                        x = float(xlo)
                    else:
                        xhi = xlo + 1
                    ly, lx = y - ylo, x - xlo
                    hy, hx = 1 - ly, 1 - lx
                    pos[cell, s] = [ylo * width + xlo, ylo * width + xhi, yhi * width + xlo,
                                    yhi * width + xhi]
                    wts[cell, s] = [hy * hx, hy * lx, ly * hx, ly * lx]
    return pos, wts, count


@maps("RoiAlign")
def roi_align(n):
    """The regions and their batch indices are read on the host (with an
    adaptive sampling_ratio they decide how many samples each cell takes:
    constants of the signature, as a Reshape target); the samples' corner
    positions and bilinear weights follow ONNX's reference, and the feature
    map is read on the graph: one gather of each region's corners, weighted,
    then the mean of a cell's samples (avg) or the largest weighted corner
    (max, as ONNX's reference and onnxruntime)."""
    x = n.tensor(0)
    rois, batch_idx = np.asarray(n.value(1), np.float64), np.asarray(n.value(2)).ravel()
    mode = n.attr("mode", "avg")
    if mode not in ("avg", "max"):
        raise unsupported(f"RoiAlign mode '{mode}' (avg, max)")
    half_pixel = n.attr("coordinate_transformation_mode", "half_pixel") == "half_pixel" \
        if n.opset >= 16 else False
    out_h, out_w = int(n.attr("output_height", 1)), int(n.attr("output_width", 1))
    ratio, scale = int(n.attr("sampling_ratio", 0)), float(n.attr("spatial_scale", 1.0))
    _, channels, height, width = x.shape
    flat = _fn("reshape")(x, [x.shape[0], channels, height * width])
    dtype = str(x.dtype)
    cells = []
    for r in range(rois.shape[0]):
        pos, wts, count = _roi_samples(rois[r], height, width, out_h, out_w, ratio, scale,
                                       half_pixel)
        plane = _fn("gather")(flat, n.constant(np.array([int(batch_idx[r])], np.int64)), axis=0)
        got = _fn("gather")(plane, n.constant(pos.ravel()), axis=2)  # (1, C, cells*samples*4)
        got = _fn("reshape")(got, [1, channels] + list(pos.shape)) * \
            n.constant(wts.astype(dtype))
        if mode == "avg":
            v = _fn("sum")(got, axis=[3, 4]) / float(count)
        else:
            v = _fn("max")(got, axis=[3, 4])
        cells.append(_fn("reshape")(v, [1, channels, out_h, out_w]))
    return [_fn("concat")(cells, axis=0)]

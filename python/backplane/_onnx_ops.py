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
               16: "bfloat16", 1: "float32", 11: "float64", 5: "int16", 4: "uint16",
               12: "uint32", 13: "uint64"}

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
        # where random draws are made: the backend, or a traced tensor while
        # a graph records (its backend is the graph's: the plan draws them)
        self.draws_on = backend
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
    # a view of the proto's bytes where it can be (the caller's asarray copies
    # it onto the backend: one copy, not two)
    return np.asarray(numpy_helper.to_array(t), dtype=dtype).reshape(tuple(t.dims)), dtype


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
    return _diagonal(_fn("transpose")(x, rest + [p, q])), "".join(term[d] for d in rest) + c


def _diagonal(x):
    """The diagonals of the square matrices in x's last two axes: those
    axes merged, every (n + 1)-th element."""
    n = x.shape[-1]
    return _fn("reshape")(x, list(x.shape[:-2]) + [n * n])[..., ::n + 1]


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
    if _whole_slice(x.shape, b, e, s):
        return [x]  # the value itself: no copy in the plan
    return [_fn("slice")(x, b, e, s)]


def _whole_slice(shape, begins, ends, steps):
    """Whether slicing with these begins, ends and steps (ONNX's: negative
    counts from the end, out of range clamps) keeps every element in order."""
    for d, b, e, s in zip(shape, begins, ends, steps):
        b = min(max(b + d if b < 0 else b, 0), d)
        e = min(max(e + d if e < 0 else e, 0), d)
        if s != 1 or b != 0 or e != d:
            return False
    return True


@maps("Concat")
def concat(n):
    return [_fn("concat")(n.tensors(), axis=n.attr("axis"))]


@maps("Expand")
def expand(n):
    # ONNX Expand broadcasts both ways: the result has the broadcast shape of
    # the input and `shape`.
    x = n.tensor(0)
    shape = np.broadcast_shapes(tuple(x.shape), tuple(n.ints(1)))
    if tuple(shape) == tuple(x.shape):
        return [x]  # nothing to broadcast: the value itself, no copy
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
    x = n.tensor(0)
    if not training and not n.wants(1):
        return [x]  # inference: y is x (as Identity), no copy in the plan
    # training: the mask is bp_dropout's keyed draw (_onnx_random.node_seed)
    out = _fn("dropout")(x, ratio=ratio, training=training,
                         seed=_onnx_random.node_seed(n), return_mask=n.wants(1))
    if not n.wants(1):
        return [out]
    y, mask = out
    if not training:
        y = x  # bp_dropout's copy of x goes unused: a plan drops it
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
        return [_crop_and_resize(n, scales, sizes, mode, nearest)]
    for what, value, known in (("mode", mode, RESIZE_MODES),
                               ("coordinate_transformation_mode", coordinates, RESIZE_COORDINATES),
                               ("nearest_mode", nearest, RESIZE_NEAREST)):
        if value not in known:
            raise unsupported(f"Resize {what} '{value}' (bp_resize: {', '.join(known)})")
    return [_fn("resize")(n.tensor(0), scales, sizes, mode=mode,
                          coordinate_transformation_mode=coordinates, nearest_mode=nearest,
                          cubic_coeff_a=float(n.attr("cubic_coeff_a", -0.75)),
                          exclude_outside=bool(n.attr("exclude_outside", 0)))]


def _crop_and_resize(n, scales, sizes, mode, nearest):
    """Resize with tf_crop_and_resize coordinates: each output position maps
    into the region of interest (roi, input 1: starts then ends, fractions of
    each axis), and a position outside the input reads extrapolation_value.
    bp_resize has no region, so it is composed, one axis at a time: the
    positions are known when recording (constants of the signature), each
    axis is one gather (nearest) or two gathers weighted (linear), and the
    positions outside are masked at the end, as ONNX's reference."""
    if mode not in ("nearest", "linear"):
        raise unsupported(f"Resize mode '{mode}' with tf_crop_and_resize coordinates (nearest, "
                          "linear)")
    if nearest not in RESIZE_NEAREST:
        raise unsupported(f"Resize nearest_mode '{nearest}' (bp_resize: {', '.join(RESIZE_NEAREST)})")
    x = n.tensor(0)
    shape, rank = list(x.shape), len(x.shape)
    roi = n.value(1)
    roi = None if roi is None or roi.size == 0 else roi.astype(np.float32).ravel()
    if roi is None or len(roi) != 2 * rank:
        raise unsupported(f"Resize tf_crop_and_resize with roi {roi} for a rank-{rank} input "
                          f"({2 * rank} values: the starts, then the ends)")
    if sizes is None:
        sizes = [int(math.floor(d * s)) for d, s in zip(shape, scales)]
    dtype = str(x.dtype)
    inside = np.ones(sizes, dtype=bool)
    for axis, (length, out) in enumerate(zip(shape, sizes)):
        # float32, in the order of ONNX's reference and onnxruntime: whether a
        # position lands just outside the input depends on the rounding.
        start, end, last = roi[axis], roi[rank + axis], np.float32(length - 1)
        if out > 1:
            pos = np.arange(out, dtype=np.float32) * (end - start) * last / np.float32(out - 1)
        else:
            pos = np.full(out, (end - start) * last / np.float32(2), np.float32)
        pos = pos + start * last
        if out == length and start == 0 and end == 1:
            continue  # the identity on this axis
        view = [1] * rank
        view[axis] = out
        inside &= ((pos >= 0) & (pos <= length - 1)).reshape(view)
        if mode == "nearest":
            taps = [(_nearest_index(pos, nearest), None)]
        else:
            low = np.floor(pos)
            taps = [(low, 1 - (pos - low)), (low + 1, pos - low)]
        parts = []
        for index, weight in taps:
            index = np.clip(index, 0, length - 1).astype(np.int64)
            part = _fn("gather")(x, n.constant(index), axis=axis)
            if weight is not None:
                part = part * n.constant(weight.reshape(view), dtype)
            parts.append(part)
        x = parts[0] if len(parts) == 1 else parts[0] + parts[1]
    fill = n.constant(np.array(float(n.attr("extrapolation_value", 0.0))), dtype)
    return _fn("where")(n.constant(inside), x, fill)


def _nearest_index(pos, nearest):
    """ONNX's nearest modes on positions (floats) -> integral floats."""
    if nearest == "floor":
        return np.floor(pos)
    if nearest == "ceil":
        return np.ceil(pos)
    half = pos - np.floor(pos) == 0.5
    if nearest == "round_prefer_ceil":
        return np.where(half, np.ceil(pos), np.round(pos))
    return np.where(half, np.floor(pos), np.round(pos))


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


# ---- Det -----------------------------------------------------------------------------

@maps("Det")
def det(n):
    """The determinant by LU with partial pivoting, unrolled on the graph
    over the matrix's n columns (as LAPACK's getrf): at step k the row with
    the largest |A[i, k]| (i >= k; the first of equals) is swapped in, the
    rows below lose their multiple of it, and a swap flips the sign. The
    determinant is the sign times the product of the pivots. A zero pivot
    (a singular matrix) divides by 1 instead, and its 0 makes the product 0."""
    x = n.tensor(0)
    size = x.shape[-1]
    if len(x.shape) < 2 or x.shape[-2] != size:
        raise unsupported(f"Det of a {list(x.shape)} tensor (square matrices in the last two axes)")
    batch = list(x.shape[:-2])
    dtype = str(x.dtype)
    rows = n.constant(np.arange(size, dtype=np.int64))
    one, minus = n.constant(np.array(1.0), dtype), n.constant(np.array(-1.0), dtype)
    a, sign = x, None
    for k in range(size):
        p = _fn("argmax")(_fn("abs")(a[..., k:, k]), axis=[-1]) + k    # batch
        pk = _fn("unsqueeze")(p, len(batch))                             # batch + [1]
        kk = n.constant(np.array(k, np.int64))
        idx = _fn("where")(rows == kk, pk, _fn("where")(rows == pk, kk, rows))  # batch + [n]
        idx = _fn("broadcast_to")(_fn("unsqueeze")(idx, len(batch) + 1), batch + [size, size])
        a = _fn("gather_elements")(a, idx, axis=len(batch))
        flip = _fn("where")(p == kk, one, minus)
        sign = flip if sign is None else sign * flip
        if k == size - 1:
            break
        pivot = a[..., k:k + 1, k:k + 1]                                   # batch + [1, 1]
        safe = _fn("where")(pivot == 0, one, pivot)
        factors = a[..., k + 1:, k:k + 1] / safe                           # batch + [n-k-1, 1]
        lower = a[..., k + 1:, :] - factors * a[..., k:k + 1, :]
        a = _fn("concat")([a[..., :k + 1, :], lower], axis=len(batch))
    return [sign * _fn("prod")(_diagonal(a), axis=[len(batch)])]


# Handlers kept in modules of their own, by concept; importing them registers
# them (they import this module's helpers, defined above).
from . import _onnx_quantized, _onnx_recurrent, _onnx_sampling, _onnx_signal  # noqa: E402
from . import _onnx_optional, _onnx_random, _onnx_sequence, _onnx_training  # noqa: E402

REGISTERED_ELSEWHERE = (_onnx_optional, _onnx_quantized, _onnx_random, _onnx_recurrent,
                        _onnx_sampling, _onnx_signal, _onnx_sequence, _onnx_training)

"""Elementwise ops: those the op table's schema maps (unary, binary, with
attributes), the rest of them, Where, Clip, and the variadic Max/Min/Sum/Mean."""
from bplib import ONNX_FUNCTIONS
from hostvalues import FLOATS
from registry import maps
from scope import unsupported

VARIADIC = {"Max": "max_n", "Min": "min_n", "Sum": "sum_n", "Mean": "mean_n"}


# Ops whose older opsets the handlers below map first, then the schema's function.
OLDER_FORMS = ("PRelu",)


@maps(*[op for op in ONNX_FUNCTIONS if op not in OLDER_FORMS])
def schema_function(n):
    """The ops the schema maps to one function: the node's inputs in order,
    then its attributes as the function's parameters."""
    fn, n_tensors, attrs = ONNX_FUNCTIONS[n.op_type]
    return [n.call(fn, *[n.tensor(i) for i in range(n_tensors)],
                   *[convert(n.attr(a)) for a, convert in attrs])]


@maps("IsInf")
def isinf(n):
    if not (n.attr("detect_negative") and n.attr("detect_positive")):
        raise unsupported(f"IsInf detect_negative={n.attr('detect_negative')} "
                          f"detect_positive={n.attr('detect_positive')} (bp_isinf detects both)")
    return [n.call("isinf", n.tensor(0))]


@maps("Mod")
def mod(n):
    # fmod = 0: the sign of the divisor (bp_mod); fmod = 1: C fmod (bp_fmod).
    return [n.call("fmod" if n.attr("fmod") else "mod", n.tensor(0), n.tensor(1))]


@maps("Pow")
def pow_(n):
    # ONNX lets the exponent's type differ; the library's operands share one
    # (no implicit promotion), so the exponent is cast to the base's type as
    # a user of the library would (exact for an integer exponent). An
    # integer base with a float exponent would change the exponent's value.
    base_t, exp_t = n.dtype(0), n.dtype(1)
    if base_t not in FLOATS and exp_t in FLOATS:
        raise unsupported(f"Pow with an integer base ({base_t}) and a float exponent "
                          f"({exp_t}): the library's operands share a dtype")
    base, exp = n.tensor(0), n.tensor(1)
    if exp_t != base_t:
        exp = n.call("cast", exp, base_t)
    return [n.call("pow", base, exp)]


@maps("BitShift")
def bitshift(n):
    fn = {"LEFT": "bitshift_left", "RIGHT": "bitshift_right"}[n.attr("direction")]
    return [n.call(fn, n.tensor(0), n.tensor(1))]


@maps("Where")
def where(n):
    return [n.call("where", n.tensor(0), n.tensor(1), n.tensor(2))]


@maps("Clip")
def clip(n):
    if n.opset < 11:  # Clip-6: the bounds are attributes (defaults: none)
        return [n.call("clip_scalar", n.tensor(0), float(n.attr("min", float("-inf"))),
                       float(n.attr("max", float("inf"))))]
    # Clip-11 and later: optional scalar tensors; a missing one is no bound.
    return [n.call("clip", n.tensor(0), n.tensor(1), n.tensor(2))]


@maps(*VARIADIC)
def variadic(n):
    xs = n.tensors()
    return [n.call(VARIADIC[n.op_type], len(xs), xs)]


@maps("PRelu")
def prelu(n):
    """Before opset 7 a slope of one value per channel applies along axis 1
    (PRelu-6: "shared across different channels"), not from the last axis as
    NumPy broadcasting (opset 7 on) reads it: the slope gets trailing unit
    axes first."""
    x, slope = n.tensor(0), n.tensor(1)
    xs, ss = x.shape, slope.shape
    if n.opset < 7 and len(xs) > 2 and len(ss) == 1 and ss[0] == xs[1] and ss[0] != 1:
        slope = n.call("reshape", slope, len(xs) - 1, [ss[0]] + [1] * (len(xs) - 2))
    return [n.call("prelu", x, slope)]

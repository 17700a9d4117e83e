"""Elementwise ops: unary, binary, Where, Clip, and the variadic Max/Min/Sum/Mean."""
from hostvalues import FLOATS
from registry import maps
from scope import unsupported

# ONNX op -> the library function of the same meaning, no attributes.
UNARY = {
    "Abs": "abs", "Neg": "neg", "Sign": "sign", "Exp": "exp", "Log": "log", "Sqrt": "sqrt",
    "Reciprocal": "reciprocal", "Sin": "sin", "Cos": "cos", "Tan": "tan", "Tanh": "tanh",
    "Sigmoid": "sigmoid", "Relu": "relu", "Erf": "erf", "Floor": "floor", "Ceil": "ceil",
    "Round": "round", "IsNaN": "isnan", "Not": "logical_not",
    # ABI 1.4
    "Acos": "acos", "Asin": "asin", "Atan": "atan", "Acosh": "acosh", "Asinh": "asinh",
    "Atanh": "atanh", "Sinh": "sinh", "Cosh": "cosh", "Softplus": "softplus",
    "Softsign": "softsign", "HardSwish": "hardswish",
}

BINARY = {
    "Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div", "Equal": "eq", "Less": "lt",
    "LessOrEqual": "le", "Greater": "gt", "GreaterOrEqual": "ge", "And": "logical_and",
    "Or": "logical_or", "Xor": "logical_xor",
    # ABI 1.4
    "PRelu": "prelu",
}

# ONNX op -> (library function, its attributes in the library's order).
WITH_ATTRIBUTES = {
    "Elu": ("elu", ("alpha",)),
    "Celu": ("celu", ("alpha",)),
    "Selu": ("selu", ("alpha", "gamma")),
    "LeakyRelu": ("leaky_relu", ("alpha",)),
    "ThresholdedRelu": ("thresholded_relu", ("alpha",)),
    "HardSigmoid": ("hard_sigmoid", ("alpha", "beta")),
    "Shrink": ("shrink", ("bias", "lambd")),
}

VARIADIC = {"Max": "max_n", "Min": "min_n", "Sum": "sum_n", "Mean": "mean_n"}


@maps(*UNARY)
def unary(n):
    return [n.call(UNARY[n.op_type], n.tensor(0))]


@maps("IsInf")
def isinf(n):
    if not (n.attr("detect_negative") and n.attr("detect_positive")):
        raise unsupported(f"IsInf detect_negative={n.attr('detect_negative')} "
                          f"detect_positive={n.attr('detect_positive')} (bp_isinf detects both)")
    return [n.call("isinf", n.tensor(0))]


@maps(*BINARY)
def binary(n):
    return [n.call(BINARY[n.op_type], n.tensor(0), n.tensor(1))]


@maps(*WITH_ATTRIBUTES)
def with_attributes(n):
    fn, names = WITH_ATTRIBUTES[n.op_type]
    return [n.call(fn, n.tensor(0), *[float(n.attr(a)) for a in names])]


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

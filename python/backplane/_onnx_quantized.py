"""backplane.onnx's mappings of ONNX's quantization ops and integer matrix
products."""

import numpy as np

from ._onnx_ops import _fn, _spatial, _window, maps, unsupported


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


def _saturated(q, zero, dtype):
    """saturate(q + zero) in dtype, q rounded already (float32)."""
    lo, hi = QUANT_RANGE[dtype]
    if zero is not None:
        q = q + _fn("cast")(zero, "float32")
    return _fn("cast")(_fn("clip")(q, float(lo), float(hi)), dtype)


def _quantize(x, scale, zero, dtype):
    """saturate(round(x / scale) + zero) in dtype: rounding half to even,
    as ONNX says, in float32."""
    return _saturated(_fn("round")(x / scale), zero, dtype)


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
    return _saturated(_fn("round")(_fn("cast")(acc, "float32") * scale), zero, dtype)


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

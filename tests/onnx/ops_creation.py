"""Creation: Constant, ConstantOfShape, EyeLike, Range."""
import numpy as np

from dtypes import bp_dtype, decode, onnx_name
from registry import maps
from scope import missing_dtype, unsupported


def _constant_value(n):
    """Constant's one value attribute as (library dtype, host array)."""
    for name, dtype in (("value_float", "f32"), ("value_floats", "f32"), ("value_int", "i64"),
                        ("value_ints", "i64")):
        if n.has_attr(name):
            return dtype, np.array(n.attr(name), dtype={"f32": np.float32, "i64": np.int64}[dtype])
    if n.has_attr("value"):
        t = n.attr("value")
        if bp_dtype(t.data_type) is None:
            raise missing_dtype(onnx_name(t.data_type))
        return decode(t, t.data_type)
    raise unsupported("Constant with a string or sparse value")


@maps("Constant")
def constant(n):
    dtype, host = _constant_value(n)
    return [n.arena.from_host(dtype, host)]


@maps("ConstantOfShape")
def constant_of_shape(n):
    shape = n.ints(0)
    value = n.attr("value")  # a one-element tensor; none: float32 0
    if value is None:
        dtype, v = "f32", 0.0
    else:
        dtype, host = decode(value, value.data_type)
        v = host.ravel()[0].item()
    return [n.call("full", dtype, len(shape), shape, float(v))]


@maps("EyeLike")
def eye_like(n):
    k = n.attr("k", 0)
    if k != 0:
        raise unsupported(f"EyeLike k={k}, an off-main diagonal (bp_eye makes the main one)")
    rows, cols = n.value(0).shape
    dtype = bp_dtype(n.attr("dtype")) if n.has_attr("dtype") else n.dtype(0)
    return [n.call("eye", dtype, rows, cols)]


@maps("Range")
def range_(n):
    start, limit, delta = (n.value(i).ravel()[0].item() for i in range(3))
    return [n.call("arange", n.dtype(0), float(start), float(limit), float(delta))]

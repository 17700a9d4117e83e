"""Window ops (nn.h): Conv, ConvTranspose, MaxPool, AveragePool,
GlobalMaxPool, GlobalAveragePool, and LRN. The window attributes become one
bp_window; ONNX's defaults are its zeros."""
from bplib import AUTO_PAD, window
from registry import maps
from scope import unsupported


def _window(n, spatial, **extra):
    """The node's auto_pad, kernel_shape, strides, dilations and pads as a
    bp_window for `spatial` spatial axes, with `extra` fields."""
    auto_pad = n.attr("auto_pad", "NOTSET")
    if auto_pad not in AUTO_PAD:
        raise unsupported(f"{n.op_type} auto_pad '{auto_pad}' (bp_auto_pad: NOTSET, SAME_UPPER, "
                          f"SAME_LOWER, VALID)")
    fields = {"auto_pad": AUTO_PAD[auto_pad]}
    for onnx_name, field in (("kernel_shape", "kernel"), ("strides", "strides"),
                             ("dilations", "dilations"), ("pads", "pads")):
        v = n.attr(onnx_name)
        if v:  # pads with an auto_pad: ONNX forbids both, and so does the library
            fields[field] = list(v)
    if len(fields.get("kernel", [0] * spatial)) != spatial:
        raise ValueError(f"kernel_shape {fields['kernel']} for {spatial} spatial axes")
    fields.update(extra)
    return window(**fields)


def _spatial(n):
    return len(n.tensor(0).shape) - 2


@maps("Conv")
def conv(n):
    w = _window(n, _spatial(n), groups=n.attr("group", 1))
    return [n.call("conv", n.tensor(0), n.tensor(1), n.tensor(2), w)]


@maps("ConvTranspose")
def conv_transpose(n):
    extra = {"groups": n.attr("group", 1)}
    for onnx_name in ("output_padding", "output_shape"):
        v = n.attr(onnx_name)
        if v:
            # output_shape: the spatial extents (onnxruntime also takes the
            # whole (N, C, spatial...) shape: its last entries are those).
            extra[onnx_name] = list(v)[-_spatial(n):]
    w = _window(n, _spatial(n), **extra)
    return [n.call("conv_transpose", n.tensor(0), n.tensor(1), n.tensor(2), w)]


@maps("MaxPool")
def max_pool(n):
    w = _window(n, _spatial(n), ceil_mode=bool(n.attr("ceil_mode", 0)),
                storage_order=n.attr("storage_order", 0))
    y, indices = n.call("max_pool", n.tensor(0), w, n.wants(1))
    return [y, indices]


@maps("AveragePool")
def average_pool(n):
    dilations = n.attr("dilations")
    if dilations and any(d != 1 for d in dilations):
        raise unsupported(f"AveragePool dilations {list(dilations)} (bp_average_pool has none, "
                          f"as ONNX 1.12's AveragePool)")
    w = _window(n, _spatial(n), ceil_mode=bool(n.attr("ceil_mode", 0)),
                count_include_pad=bool(n.attr("count_include_pad", 0)))
    return [n.call("average_pool", n.tensor(0), w)]


@maps("GlobalMaxPool")
def global_max_pool(n):
    return [n.call("global_max_pool", n.tensor(0))]


@maps("GlobalAveragePool")
def global_average_pool(n):
    return [n.call("global_average_pool", n.tensor(0))]


@maps("LRN")
def lrn(n):
    return [n.call("lrn", n.tensor(0), n.attr("size"), float(n.attr("alpha")),
                   float(n.attr("beta")), float(n.attr("bias")))]

"""Resize and Upsample (nn.h's bp_resize)."""
from bplib import RESIZE_COORDINATES, RESIZE_MODE, RESIZE_NEAREST, resize_options
from registry import maps
from scope import unsupported


def _floats(n, i):
    """Input i as a list of floats; None if left out or empty (opset 11's
    placeholder for scales when sizes are given)."""
    v = n.value(i)
    return None if v is None or v.size == 0 else [float(s) for s in v.ravel()]


def _ints_or_none(n, i):
    v = n.ints(i)
    return v or None


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
        scales, sizes = _floats(n, 2), _ints_or_none(n, 3)
    if coordinates == "tf_crop_and_resize":
        raise unsupported("Resize coordinate_transformation_mode 'tf_crop_and_resize' (a region "
                          "of interest and an extrapolation value): bp_resize has none")
    for what, value, known in (("mode", mode, RESIZE_MODE),
                               ("coordinate_transformation_mode", coordinates, RESIZE_COORDINATES),
                               ("nearest_mode", nearest, RESIZE_NEAREST)):
        if value not in known:
            raise unsupported(f"Resize {what} '{value}' (bp_resize: {', '.join(known)})")
    options = resize_options(RESIZE_MODE[mode], RESIZE_COORDINATES[coordinates],
                             RESIZE_NEAREST[nearest], float(n.attr("cubic_coeff_a", -0.75)),
                             bool(n.attr("exclude_outside", 0)))
    return [n.call("resize", n.tensor(0), scales, sizes, options)]


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
    options = resize_options(RESIZE_MODE["nearest"], RESIZE_COORDINATES["asymmetric"],
                             RESIZE_NEAREST["floor"], -0.75, False)
    return [n.call("resize", n.tensor(0), scales, None, options)]

"""backplane.onnx's mappings of ONNX's sampling and detection ops: GridSample,
RoiAlign, NonMaxSuppression."""
import math

import numpy as np

from ._onnx_ops import _fn, maps, unsupported


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


# ---- NonMaxSuppression ----------------------------------------------------------------


def _box_extents(boxes, center_point_box):
    """(x_min, x_max, y_min, y_max) of each box, in the boxes' dtype: corners
    [y1, x1, y2, x2] in either diagonal order, or [x_center, y_center, width,
    height] (center_point_box 1), computed as ONNX's reference does."""
    if center_point_box:
        half_w, half_h = boxes[:, 2] / 2, boxes[:, 3] / 2
        return (boxes[:, 0] - half_w, boxes[:, 0] + half_w,
                boxes[:, 1] - half_h, boxes[:, 1] + half_h)
    return (np.minimum(boxes[:, 1], boxes[:, 3]), np.maximum(boxes[:, 1], boxes[:, 3]),
            np.minimum(boxes[:, 0], boxes[:, 2]), np.maximum(boxes[:, 0], boxes[:, 2]))


def _suppressed(ext, k, chosen, iou_threshold):
    """Whether box k overlaps any of the chosen boxes by more than the
    threshold. Boxes that do not intersect, or have no area, never suppress
    (ONNX's reference)."""
    x0, x1, y0, y1 = (e[chosen] for e in ext)
    kx0, kx1, ky0, ky1 = (e[k] for e in ext)
    ix0, ix1 = np.maximum(x0, kx0), np.minimum(x1, kx1)
    iy0, iy1 = np.maximum(y0, ky0), np.minimum(y1, ky1)
    inter = (ix1 - ix0) * (iy1 - iy0)
    area, k_area = (x1 - x0) * (y1 - y0), (kx1 - kx0) * (ky1 - ky0)
    union = area + k_area - inter
    overlaps = (ix1 > ix0) & (iy1 > iy0) & (inter > 0) & (area > 0) & (k_area > 0) & (union > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return bool(np.any(overlaps & (inter / np.where(union > 0, union, 1) > iou_threshold)))


def _scalar_input(n, i):
    """Optional input i's one value (its own dtype), or None: left out or empty."""
    v = n.value(i) if n.has_input(i) else None
    return None if v is None or v.size == 0 else v.ravel()[0]


@maps("NonMaxSuppression")
def non_max_suppression(n):
    """Greedy selection per batch and class, as ONNX's reference: boxes
    above the score threshold (all when it is left out) by score, highest
    first (ties: the lower index), each kept unless it overlaps a kept box
    by more than the IoU threshold, at most max_output_boxes_per_class.
    How many are kept decides the result's shape, so boxes and scores are
    read on the host (values of the signature, as NonZero's input) and the
    (selected, 3) int64 indices are a constant of the graph."""
    boxes, scores = np.asarray(n.value(0)), np.asarray(n.value(1))
    if boxes.ndim != 3 or boxes.shape[2] != 4 or scores.ndim != 3 or \
            scores.shape[0] != boxes.shape[0] or scores.shape[2] != boxes.shape[1]:
        raise unsupported(f"NonMaxSuppression boxes of shape {boxes.shape} with scores of shape "
                          f"{scores.shape} (boxes (batches, boxes, 4), scores (batches, classes, "
                          "boxes))")
    limit, iou, floor = (_scalar_input(n, i) for i in (2, 3, 4))
    limit = 0 if limit is None else max(int(limit), 0)
    iou = boxes.dtype.type(0) if iou is None else iou
    center = int(n.attr("center_point_box", 0))
    picked = []
    for b in range(boxes.shape[0]):
        ext = _box_extents(boxes[b], center)
        for c in range(scores.shape[1]):
            s = scores[b, c]
            idx = np.arange(s.shape[0]) if floor is None else np.nonzero(s > floor)[0]
            order = idx[np.lexsort((idx, -s[idx].astype(np.float64)))]
            kept = []
            for k in order:
                if len(kept) >= limit:
                    break
                if not kept or not _suppressed(ext, k, np.array(kept), iou):
                    kept.append(k)
            picked += [(b, c, k) for k in kept]
    return [n.constant(np.array(picked, dtype=np.int64).reshape(len(picked), 3))]

"""Indexing beyond ints and slices, as NumPy reads it, and ``x.at[i]`` updates.

``Tensor.__getitem__`` (in C) takes ints, slices, ``...``, ``None`` and bool
scalars itself and hands every other key here:

* an integer array (a list, a NumPy array or an integer Tensor) on one axis:
  ``x[[0, 2]]``, ``x[:, idx]`` gathers along that axis (``backplane.gather``);
* integer arrays on several axes broadcast together, NumPy's advanced
  indexing: ``x[rows, cols]`` (``backplane.gather_nd``);
* a boolean mask of x's leading shape, ``x[x > 0]``: the selected elements in
  C order. The result's length depends on the mask's values, so the mask is
  read to the host (one synchronising read), as NumPy's own result needs.

Tensors are immutable, so ``x[i] = v`` is a TypeError; ``x.at[i].set(v)`` and
``x.at[i].add(v)`` (JAX's spelling) return a new tensor instead, for any key
that indexing reads.
"""
import operator

from . import _backplane as _bp


def _is_basic(k):
    return k is None or k is Ellipsis or isinstance(k, (slice, bool)) or _is_int(k)


def _is_int(k):
    if isinstance(k, (bool, _bp.Tensor)):
        return False
    try:
        operator.index(k)
        return True
    except TypeError:
        return False


def _as_index_tensor(k, backend):
    """An index key as an int64 or bool tensor on backend."""
    if isinstance(k, _bp.Tensor):
        t = k
    else:
        try:
            import numpy as np
        except ImportError:
            np = None
        if np is not None and isinstance(k, np.generic) and k.dtype == bool:
            k = bool(k)
        t = _bp.asarray(k, backend=backend)
    if t.dtype == "bool":
        return t
    if t.dtype not in ("int64", "int32", "int8", "uint8", "int16", "uint16", "uint32", "uint64"):
        raise _bp.IndexError(
            f"arrays used as indices must be of integer or boolean type, not {t.dtype}")
    if t.backend != backend:
        t = t.to(backend)
    return _bp.cast(t, "int64") if t.dtype != "int64" else t


def _normalise(idx, extent, axis):
    """Negative indices count from the end (the library's gathers want them
    in range; it checks the range itself)."""
    neg = _bp.lt(idx, 0)
    return _bp.where(neg, _bp.add(idx, extent), idx)


def getitem(x, key):
    """x[key] for keys holding an array of indices or a boolean mask."""
    items = key if isinstance(key, tuple) else (key,)
    if all(_is_basic(k) for k in items):  # e.g. a NumPy bool_ scalar
        return x[tuple(bool(k) if type(k).__name__ == "bool_" else k for k in items)]
    be = x.backend
    if Ellipsis in [k for k in items if k is Ellipsis]:
        items = _expand_ellipsis(items, x.ndim)
    conv = [k if _is_basic(k) else _as_index_tensor(k, be) for k in items]
    # A boolean mask stands for the indices of its True elements.
    expanded = []
    for k in conv:
        if isinstance(k, _bp.Tensor) and k.dtype == "bool":
            if k.ndim == 0:
                expanded.append(bool(k.item()))
                continue
            expanded.extend(_mask_indices(k, be))
        else:
            expanded.append(k)
    arrays = [i for i, k in enumerate(expanded) if isinstance(k, _bp.Tensor)]
    if not arrays:
        return x[tuple(expanded)]
    if any(k is None or isinstance(k, bool) for k in expanded):
        raise _bp.IndexError("an index mixing arrays of indices with None or a bool "
                             "scalar is not supported; index in two steps")
    if len(expanded) > x.ndim:
        raise _bp.IndexError(f"too many indices for a tensor of rank {x.ndim}: {len(expanded)}")
    expanded = list(expanded) + [slice(None)] * (x.ndim - len(expanded))
    # Basic keys first (ints become size-1 slices kept as axes for now).
    keep_int = []
    basic = []
    for i, k in enumerate(expanded):
        if isinstance(k, _bp.Tensor):
            basic.append(slice(None))
        elif _is_int(k):
            n = x.shape[i]
            v = operator.index(k)
            if v < -n or v >= n:
                raise _bp.IndexError(f"index {v} is out of range for axis {i} of extent {n}")
            v += n if v < 0 else 0
            basic.append(slice(v, v + 1))
            keep_int.append(i)
        else:
            basic.append(k)
    y = x[tuple(basic)]
    # Ints are arrays of one index in NumPy's advanced indexing: they join
    # the array axes when arrays are present.
    adv = {i: expanded[i] for i in arrays}
    for i in keep_int:
        adv[i] = _bp.asarray(0, backend=be, dtype="int64")
    axes = sorted(adv)
    if len(axes) == 1:
        a = axes[0]
        idx = _normalise(adv[a], y.shape[a], a)
        return _bp.gather(y, idx, axis=a)
    bshape = _broadcast_shapes([adv[a].shape for a in axes])
    idxs = [_bp.broadcast_to(_normalise(adv[a], y.shape[a], a), bshape) for a in axes]
    contiguous = axes == list(range(axes[0], axes[-1] + 1))
    # Move the indexed axes to the front, gather_nd over them, and put the
    # result's index axes where NumPy does: in place of the indexed axes when
    # they are adjacent, first otherwise.
    rest = [d for d in range(y.ndim) if d not in adv]
    yt = _bp.transpose(y, axes + rest) if axes + rest != list(range(y.ndim)) else y
    stacked = _bp.concat([_bp.unsqueeze(i, -1) for i in idxs], axis=-1)
    g = _bp.gather_nd(yt, stacked)
    if contiguous and axes[0] > 0:
        nb = len(bshape)
        lead = list(range(nb, nb + axes[0]))
        perm = lead + list(range(nb)) + list(range(nb + axes[0], g.ndim))
        g = _bp.transpose(g, perm)
    return g


def _expand_ellipsis(keys, ndim):
    """keys with '...' replaced by the full slices it stands for (a boolean
    mask consumes as many axes as it has)."""
    consuming = 0
    for k in keys:
        if k is None or k is Ellipsis or isinstance(k, bool):
            continue
        kd = getattr(k, "dtype", None)
        is_mask = kd is not None and str(kd) == "bool" and getattr(k, "ndim", 0) > 0
        consuming += k.ndim if is_mask else 1
    out = []
    for k in keys:
        if k is Ellipsis:
            out.extend([slice(None)] * (ndim - consuming))
        else:
            out.append(k)
    return out


def _broadcast_shapes(shapes):
    nd = max(len(s) for s in shapes)
    out = []
    for i in range(nd):
        dims = {s[len(s) - nd + i] for s in shapes if len(s) - nd + i >= 0} - {1}
        if len(dims) > 1:
            raise _bp.IndexError("shape mismatch: indexing arrays could not be broadcast "
                                 f"together with shapes {' '.join(map(str, shapes))}")
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def _mask_indices(mask, backend):
    """The indices of a mask's True elements, one int64 tensor per axis (a
    synchronising read: the count depends on the values)."""
    try:
        import numpy as np
    except ImportError:
        np = None
    if np is not None:
        nz = np.nonzero(mask.numpy())
        return [_bp.asarray(np.ascontiguousarray(i, dtype=np.int64), backend=backend)
                for i in nz]
    flat = mask.reshape(-1).tolist()
    shape = mask.shape
    coords = [[] for _ in shape]
    for pos, v in enumerate(flat):
        if v:
            rem = pos
            for d in range(len(shape) - 1, -1, -1):
                coords[d].append(rem % shape[d])
                rem //= shape[d]
    return [_bp.asarray(c, backend=backend, dtype="int64") for c in coords]


class _At:
    """x.at[key]: what .set(v) and .add(v) apply to."""

    __slots__ = ("_x",)

    def __init__(self, x):
        self._x = x

    def __getitem__(self, key):
        return _AtIndex(self._x, key)

    def __repr__(self):
        return "_At(...)"


class _AtIndex:
    __slots__ = ("_x", "_key")

    def __init__(self, x, key):
        self._x, self._key = x, key

    def _scatter(self, v, reduction):
        x = self._x
        pos = _bp.reshape(_bp.arange(0, x.size, dtype="int64", backend=x.backend), x.shape)
        sel = pos[self._key]
        flat_pos = _bp.reshape(sel, (-1,))
        if isinstance(v, _bp.Tensor):
            upd = v
        else:
            upd = _bp.asarray(v, backend=x.backend, dtype=x.dtype)
        if upd.dtype != x.dtype:
            raise _bp.DTypeError(f"x.at[...].{'set' if reduction == 'none' else 'add'}: the "
                                 f"values are {upd.dtype} but x is {x.dtype}; convert them "
                                 f"with .astype('{x.dtype}') first")
        upd = _bp.reshape(_bp.broadcast_to(upd, sel.shape), (-1,))
        flat = _bp.scatter_elements(_bp.reshape(x, (-1,)), flat_pos, upd, axis=0,
                                    reduction=reduction)
        return _bp.reshape(flat, x.shape)

    def set(self, v):
        """A new tensor: x with the indexed elements replaced by v (broadcast)."""
        return self._scatter(v, "none")

    def add(self, v):
        """A new tensor: x with v added to the indexed elements (repeated
        indices add repeatedly)."""
        return self._scatter(v, "add")

    def get(self):
        """x[key]."""
        return self._x[self._key]

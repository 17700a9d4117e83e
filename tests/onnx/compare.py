"""Comparing one output of the library with ONNX's expected value.

onnxruntime's default tolerances: a float element passes when
|actual - expected| <= ATOL + RTOL * |expected|; NaN equals NaN; an infinity
must be the same infinity. Integers and bool must be equal. The dtype and the
shape must be the expected ones before any value is looked at.
"""
from dataclasses import dataclass
from typing import Optional

import numpy as np

from hostvalues import FLOATS, as_float64

RTOL = 1e-3
ATOL = 1e-5


@dataclass
class Verdict:
    ok: bool
    detail: str = ""               # why not, for a person
    error: Optional[float] = None  # the largest |actual - expected| (inf for NaN/inf mismatches)


def _index(flat, shape):
    return [int(i) for i in np.unravel_index(flat, shape)] if shape else []


def compare(expected_dtype, expected, actual_dtype, actual, rtol=RTOL, atol=ATOL):
    """expected / actual: host arrays of their dtypes (dtypes.decode's form)."""
    if actual_dtype != expected_dtype:
        return Verdict(False, f"dtype {actual_dtype}, expected {expected_dtype}")
    if tuple(actual.shape) != tuple(expected.shape):
        return Verdict(False, f"shape {list(actual.shape)}, expected {list(expected.shape)}")
    if expected.size == 0:
        return Verdict(True, error=0.0)
    if expected_dtype in FLOATS:
        return _compare_floats(as_float64(expected_dtype, expected).ravel(),
                               as_float64(actual_dtype, actual).ravel(), expected.shape, rtol, atol)
    return _compare_exact(np.asarray(expected).ravel(), np.asarray(actual).ravel(), expected.shape)


def _compare_floats(e, a, shape, rtol, atol):
    e_nan, a_nan = np.isnan(e), np.isnan(a)
    special = e_nan | a_nan | np.isinf(e) | np.isinf(a)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(a - e)
        bad = np.where(special, ~((e_nan & a_nan) | (e == a)), diff > atol + rtol * np.abs(e))
        diff = np.where(special, np.where(bad, np.inf, 0.0), diff)
    worst = int(np.argmax(diff))
    if not bad.any():
        return Verdict(True, error=float(diff[worst]))
    worst = int(np.flatnonzero(bad)[np.argmax(diff[bad])])
    return Verdict(False, f"max |diff| {diff[worst]:.3g} at {_index(worst, shape)} "
                          f"(got {a[worst].item()!r}, expected {e[worst].item()!r}); {int(bad.sum())} of "
                          f"{e.size} outside rtol {rtol:g} + atol {atol:g}", float(diff[worst]))


def _compare_exact(e, a, shape):
    bad = a != e
    if not bad.any():
        return Verdict(True, error=0.0)
    # Python integers: the difference of two int64 values may not fit in one.
    pos = np.flatnonzero(bad)
    diffs = [abs(int(a[i]) - int(e[i])) for i in pos]
    k = int(np.argmax(diffs))
    worst = int(pos[k])
    return Verdict(False, f"max |diff| {diffs[k]} at {_index(worst, shape)} (got {a[worst].item()!r}, "
                          f"expected {e[worst].item()!r}); {len(pos)} of {e.size} differ (exact dtype)",
                   float(diffs[k]))

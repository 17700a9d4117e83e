"""pytest for the Python package: run by ctest (entry `python`) against the
package in <build>/python, or against an installed one."""
import os

import pytest

np = pytest.importorskip("numpy")
import backplane as bp  # noqa: E402

try:
    import ml_dtypes  # noqa: F401

    HAVE_ML_DTYPES = True
except ImportError:
    HAVE_ML_DTYPES = False

FLOATS = ["float16", "float32", "float64"] + (["bfloat16"] if HAVE_ML_DTYPES else [])
INTS = ["uint8", "int8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
NUMERIC = INTS + FLOATS
ALL = ["bool"] + NUMERIC

# Relative tolerances per dtype, for results computed in float64 by NumPy
# from the same (rounded) inputs.
RTOL = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 2e-6, "float64": 1e-12}
ATOL = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 1e-6, "float64": 1e-12}


def np_dtype(name):
    if name == "bfloat16":
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


@pytest.fixture(params=[b for b in ("binary", "blas_cpu") if b in bp.backends()])
def backend(request):
    """Each host backend built here."""
    return bp.backend(request.param)


def devsim_path():
    p = os.environ.get("BPT_DEVSIM_PATH", "")
    return p if p and os.path.exists(p) else None

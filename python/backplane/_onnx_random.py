"""backplane.onnx's mappings of ONNX's random ops: RandomUniform,
RandomUniformLike, RandomNormal, RandomNormalLike and Bernoulli (Dropout's
mask is drawn the same way, _onnx_ops.dropout).

The library's draws are keyed (bp_random_uniform: a counter-based Philox
stream, the same values on every backend for a seed). A node's key is its
`seed` attribute; a node without one gets a seed of its own, from its first
output's name, so that two such nodes of a model draw different values.
A model's plan draws afresh on each run (compiled with fresh_draws: run r
draws what the eager call would with its offset r spans further on), as
onnxruntime's random ops give new values per run; a model loaded with
jit=False draws the same values every run.
"""

import zlib

from ._onnx_ops import ONNX_DTYPES, _fn, maps, unsupported


def node_seed(n):
    """The node's key: its seed attribute (ONNX: a float for the random ops,
    an int for Dropout), else a hash of its first output's name."""
    if n.has_attr("seed"):
        return int(n.attr("seed")) % 2**64
    return zlib.crc32(n.proto.output[0].encode())


def _dtype(n, default):
    code = n.attr("dtype")
    if code is None:
        return default
    dtype = ONNX_DTYPES.get(code)
    if dtype not in ("float16", "bfloat16", "float32", "float64"):
        raise unsupported(f"{n.op_type} of element type {code} (ONNX: a float type)")
    return dtype


def _shape(n):
    if n.op_type.endswith("Like"):
        return list(n.tensor(0).shape), _dtype(n, n.dtype(0))
    return [int(d) for d in n.attr("shape")], _dtype(n, "float32")


@maps("RandomUniform", "RandomUniformLike")
def random_uniform(n):
    shape, dtype = _shape(n)
    return [_fn("random_uniform")(shape, seed=node_seed(n), low=float(n.attr("low", 0.0)),
                                  high=float(n.attr("high", 1.0)), dtype=dtype,
                                  backend=n.draws_on)]


@maps("RandomNormal", "RandomNormalLike")
def random_normal(n):
    shape, dtype = _shape(n)
    return [_fn("random_normal")(shape, seed=node_seed(n), mean=float(n.attr("mean", 0.0)),
                                 stddev=float(n.attr("scale", 1.0)), dtype=dtype,
                                 backend=n.draws_on)]


@maps("Bernoulli")
def bernoulli(n):
    """1 where a uniform draw in [0, 1) is below the probability p (so p = 0
    gives 0 and p = 1 gives 1), in the dtype attribute's type (p's if none)."""
    p = n.tensor(0)
    u = _fn("random_uniform")(list(p.shape), seed=node_seed(n), dtype=str(p.dtype),
                              backend=n.draws_on)
    code = n.attr("dtype")
    out = ONNX_DTYPES.get(code) if code is not None else str(p.dtype)
    if out is None:
        raise unsupported(f"Bernoulli of element type {code}, which backplane has no dtype for")
    return [_fn("cast")(_fn("less")(u, p), out)]

#!/usr/bin/env python3
"""Fused graphs against NumPy and numexpr on the same expressions.

Each expression is written once with operators, evaluated by NumPy (one
pass over memory per op), by numexpr on the same string (blocks through
its virtual machine, its default threads), and by backplane.jit (recorded
once; the chain runs as one fused group on a backend that fuses, such as
blas_cpu), f32, interleaved round by round so that machine noise hits all
alike. Prints the median time per call of each and the ratios; checks
that backplane's result matches NumPy's first. A measurement, not a test:
it never fails on speed. numexpr is optional (pip install numexpr).

    PYTHONPATH=build/python python3 bench/fusion_vs_numexpr.py [--rounds 7] [--backend NAME]
"""
import argparse
import statistics
import timeit

import numpy as np

import backplane as bp

try:
    import numexpr as ne
except ImportError:  # the column is left out
    ne = None


def gelu(x):
    return 0.5 * x * (1 + bp.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


def gelu_np(x):
    return np.float32(0.5) * x * (np.float32(1) + np.tanh(
        np.float32(0.7978845608) * (x + np.float32(0.044715) * x * x * x)))


GELU_NE = "0.5 * x * (1 + tanh(0.7978845608 * (x + 0.044715 * x * x * x)))"


def five(a, b, c, d, e):
    return a * b + c * d - e


def softmax_rows(x):
    e = bp.exp(x - bp.max(x, axis=-1, keepdims=True))
    return e / bp.sum(e, axis=-1, keepdims=True)


def softmax_np(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def softmax_ne(x):
    m = x.max(axis=-1, keepdims=True)
    e = ne.evaluate("exp(x - m)")
    s = e.sum(axis=-1, keepdims=True)
    return ne.evaluate("e / s")


def sq_error_rows(a, b):
    d = a - b
    return bp.sum(d * d, axis=-1)


def sq_error_rows_np(a, b):
    d = a - b
    return (d * d).sum(axis=-1)


def mse(a, b):
    d = a - b
    return bp.mean(d * d)


def mse_np(a, b):
    d = a - b
    return (d * d).mean(dtype=np.float64).astype(np.float32)  # NumPy's f32 mean is pairwise


def cases(n_small, n_big, rng):
    for n in (n_small, n_big):
        x = rng.uniform(-3, 3, n).astype(np.float32)
        yield (f"gelu (tanh form), 2^{n.bit_length() - 1}", gelu, gelu_np,
               (lambda x=x: ne.evaluate(GELU_NE, local_dict={"x": x})), (x,))
    for n in (n_small, n_big):
        args = tuple(rng.uniform(-3, 3, n).astype(np.float32) for _ in range(5))
        loc = dict(zip("abcde", args))
        yield (f"a*b + c*d - e, 2^{n.bit_length() - 1}", five, five,
               (lambda loc=loc: ne.evaluate("a * b + c * d - e", local_dict=loc)), args)
    x = rng.uniform(-3, 3, (4096, 1024)).astype(np.float32)
    yield ("softmax rows (4096, 1024), primitives", softmax_rows, softmax_np,
           (lambda x=x: softmax_ne(x)), (x,))
    yield ("softmax rows (4096, 1024), bp.softmax", lambda t: bp.softmax(t, -1), softmax_np,
           (lambda x=x: softmax_ne(x)), (x,))
    # a row sum ends the fused group: rows that fit a block (8192 elements on
    # blas_cpu) in whole-row blocks, longer ones folded block by block
    for shape in ((4096, 1024), (1024, 8192), (1024, 8193)):
        args = tuple(rng.uniform(-3, 3, shape).astype(np.float32) for _ in range(2))
        loc = dict(zip("ab", args))
        yield (f"sum((a-b)^2, -1) {shape}", sq_error_rows, sq_error_rows_np,
               (lambda loc=loc: ne.evaluate("sum((a - b) ** 2, axis=1)", local_dict=loc)), args)
    args = tuple(rng.uniform(-3, 3, n_big).astype(np.float32) for _ in range(2))
    loc = dict(zip("ab", args))
    yield (f"mean((a-b)^2), 2^{n_big.bit_length() - 1}", mse, mse_np,
           (lambda loc=loc: ne.evaluate("sum((a - b) ** 2)", local_dict=loc) / n_big), args)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--backend", default=None, help="backplane backend (default: the default)")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print(f"numpy {np.__version__}, numexpr "
          f"{ne.__version__ + f' ({ne.nthreads} threads)' if ne else 'not installed'}")
    for name, f, f_np, f_ne, arrays in cases(1 << 16, 1 << 22, rng):
        ts = tuple(bp.asarray(a, backend=args.backend) for a in arrays)
        jitted = bp.jit(f)
        got, want = jitted(*ts).numpy(), f_np(*arrays)
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)  # f32 ulps, not a speed test
        s = jitted.lower(*ts)
        number = max(1, int(2e-2 / max(timeit.timeit(lambda: f_np(*arrays), number=1), 1e-6)))
        t_bp, t_np, t_ne = [], [], []
        for _ in range(args.rounds):
            t_bp.append(timeit.timeit(lambda: jitted(*ts), number=number) / number)
            t_np.append(timeit.timeit(lambda: f_np(*arrays), number=number) / number)
            if ne:
                t_ne.append(timeit.timeit(f_ne, number=number) / number)
        b, n_ = statistics.median(t_bp) * 1e6, statistics.median(t_np) * 1e6
        line = (f"{name:40s} backplane {b:9.1f} us  numpy {n_:9.1f} us  numpy/bp {n_ / b:5.2f}x")
        if ne:
            e = statistics.median(t_ne) * 1e6
            line += f"  numexpr {e:9.1f} us  numexpr/bp {e / b:5.2f}x"
        print(line + f"   ({s['nodes_live']} nodes recorded, {s['nodes_planned']} planned, "
                     f"{s['nodes_fused']} fused in {s['fused_groups']} group(s), on "
                     f"{s['backend']})")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Per-call overhead of backplane's Python package against NumPy.

Times small calls with timeit, NumPy and backplane interleaved round by
round so that machine noise hits both alike, and prints the median of the
per-round best times and the ratio backplane / NumPy (the target for a
4-element `a + b`: at most 2.0). A measurement, not a test: it never fails.

    PYTHONPATH=build/python python3 bench/python_overhead.py [--rounds 7] [--backend NAME]
"""
import argparse
import statistics
import sys
import timeit

import numpy as np

import backplane as bp

CASES = [
    # name, NumPy statement, backplane statement
    ("a + b (4 x f64)", "x + y", "a + b"),
    ("a + b (4 x f32)", "xf + yf", "af + bf"),
    ("a * 2.0 (4 x f64, scalar)", "x * 2.0", "a * 2.0"),
    ("add(a, b) function (4 x f64)", "np.add(x, y)", "bp.add(a, b)"),
    ("-a (4 x f64)", "-x", "-a"),
    ("a @ b (2x2 f64)", "m @ m", "am @ am"),
    ("sum(a) (4 x f64)", "np.sum(x)", "bp.sum(a)"),
    ("a[1:3] (4 x f64)", "x[1:3]", "a[1:3]"),
    ("asarray(4-element array)", "np.asarray(x)", "bp.asarray(x)"),
    ("item() of a 1-element tensor", "x[:1].item()", "one.item()"),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--number", type=int, default=100000, help="calls per timing")
    ap.add_argument("--backend", default=None, help="backplane backend (default: the default)")
    args = ap.parse_args()

    be = bp.backend(args.backend)
    x, y = np.arange(4.0), np.arange(4.0) + 1
    env = {
        "np": np, "bp": bp, "x": x, "y": y,
        "xf": x.astype(np.float32), "yf": y.astype(np.float32),
        "m": np.arange(4.0).reshape(2, 2),
        "a": bp.asarray(x.copy(), backend=be), "b": bp.asarray(y.copy(), backend=be),
        "af": bp.asarray(x.astype(np.float32), backend=be),
        "bf": bp.asarray(y.astype(np.float32), backend=be),
        "am": bp.asarray(np.arange(4.0).reshape(2, 2), backend=be),
        "one": bp.asarray([3.0], backend=be),
    }
    print(f"backplane {bp.__version__} on {be.name}; NumPy {np.__version__}; "
          f"Python {sys.version.split()[0]}; {args.rounds} rounds of {args.number} calls")
    print(f"{'case':34s} {'NumPy ns':>9s} {'backplane ns':>13s} {'ratio':>6s}")
    for name, ns, bs in CASES:
        tn, tb = [], []
        for _ in range(args.rounds):
            tn.append(min(timeit.repeat(ns, globals=env, number=args.number, repeat=3)))
            tb.append(min(timeit.repeat(bs, globals=env, number=args.number, repeat=3)))
        n = statistics.median(tn) / args.number * 1e9
        b = statistics.median(tb) / args.number * 1e9
        print(f"{name:34s} {n:9.0f} {b:13.0f} {b / n:6.2f}")


if __name__ == "__main__":
    main()

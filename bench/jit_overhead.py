#!/usr/bin/env python3
"""backplane.jit against eager calls, per call, from Python.

A chain of 100 elementwise ops on a 4-element f32 tensor (tanh and a
multiply by a scalar, alternating), called eagerly and through
backplane.jit, interleaved round by round so that machine noise hits both
alike. Prints the median over the rounds of the time per call and the
ratio. A measurement, not a test: it never fails.

    PYTHONPATH=build/python python3 bench/jit_overhead.py [--rounds 7] [--backend NAME]
"""
import argparse
import statistics
import timeit

import numpy as np

import backplane as bp


def chain(x):
    for _ in range(50):
        x = bp.tanh(x) * 0.5
    return x


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--number", type=int, default=2000, help="calls per timing")
    ap.add_argument("--backend", default=None, help="backplane backend (default: the default)")
    ap.add_argument("--size", type=int, default=4, help="elements of the tensor")
    args = ap.parse_args()
    x = bp.asarray(np.linspace(-1, 1, args.size, dtype=np.float32), backend=args.backend)
    jitted = bp.jit(chain)
    assert jitted(x).tobytes() == chain(x).tobytes()  # compiled, and bit for bit eager's
    print(f"backend {x.backend}, {args.size} elements: {jitted.lower(x)}")
    eager, jit = [], []
    for _ in range(args.rounds):
        eager.append(timeit.timeit(lambda: chain(x), number=args.number) / args.number)
        jit.append(timeit.timeit(lambda: jitted(x), number=args.number) / args.number)
    e, j = statistics.median(eager) * 1e6, statistics.median(jit) * 1e6
    print(f"{'100-op chain, eager':28s} {e:9.1f} us per call")
    print(f"{'100-op chain, jit':28s} {j:9.1f} us per call   eager/jit {e / j:.2f}x")


if __name__ == "__main__":
    main()

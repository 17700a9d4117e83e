#!/usr/bin/env python3
"""backplane.jit against eager calls, per call, from Python.

A chain of 100 elementwise ops on a 4-element f32 tensor (tanh and a
multiply by a scalar, alternating), and one op (x + 1: a jitted call's
fixed cost), each called eagerly and through backplane.jit, interleaved
round by round so that machine noise hits both alike. Prints the median
over the rounds of the time per call and the ratio. A measurement, not a
test: it never fails.

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


def one_op(x):
    return x + 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--number", type=int, default=2000, help="calls per timing")
    ap.add_argument("--backend", default=None, help="backplane backend (default: the default)")
    ap.add_argument("--size", type=int, default=4, help="elements of the tensor")
    args = ap.parse_args()
    x = bp.asarray(np.linspace(-1, 1, args.size, dtype=np.float32), backend=args.backend)
    print(f"backend {x.backend}, {args.size} elements: {bp.jit(chain).lower(x)}")
    for name, f, number in (("100-op chain", chain, args.number),
                            ("one op", one_op, args.number * 10)):
        jitted = bp.jit(f)
        assert jitted(x).tobytes() == f(x).tobytes()  # compiled, and bit for bit eager's
        eager, jit = [], []
        for _ in range(args.rounds):
            eager.append(timeit.timeit(lambda: f(x), number=number) / number)
            jit.append(timeit.timeit(lambda: jitted(x), number=number) / number)
        e, j = statistics.median(eager) * 1e6, statistics.median(jit) * 1e6
        print(f"{name + ', eager':28s} {e:9.1f} us per call")
        print(f"{name + ', jit':28s} {j:9.1f} us per call   eager/jit {e / j:.2f}x")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Compare backplane with NumPy on the ops and sizes of issue 3.

For every op and size this runs NumPy (in this process) and `backplane bench
--json` (a subprocess, one op and size at a time), alternating for --rounds
rounds so that machine noise hits both alike, and reports the median of the
per-round medians. Both sides time the same thing: one call that makes a new
output (NumPy's `a + b`; backplane's bp_add with its output release), after a
warm-up, repeated until at least --min-reps samples and --min-time seconds,
with tiny ops batched so one sample lasts >= 1 ms.

ratio = NumPy time / backplane time, i.e. backplane's throughput relative to
NumPy's (higher is better), the form of issue 3's targets. The binary
backend's matmul is timed too, against blas_cpu's.

usage: bench/numpy_compare.py --backplane build/bin/backplane [--backend blas_cpu]
                              [--rounds 3] [--min-time 0.2] [--min-reps 5] [--config FILE]
"""
import argparse
import json
import statistics
import subprocess
import sys
import time

import numpy as np

# (op, size, NumPy setup) in the order of issue 3's targets; sizes use the
# syntax of `backplane bench --size`.
CASES = [
    ("matmul", "1024"),
    ("matmul", "128"),
    ("add", "16777216"),
    ("exp", "16777216"),
    ("sum", "16777216"),
    ("softmax", "4096x1024"),
    ("add_tiny", "4"),
]

# backplane/NumPy throughput ratio each target asks for
TARGETS = {
    ("matmul", "1024"): 0.95,
    ("matmul", "128"): 0.9,
    ("add", "16777216"): 1.0,
    ("exp", "16777216"): 1.5,
    ("sum", "16777216"): 1.0,
    ("softmax", "4096x1024"): 1.5,
    ("add_tiny", "4"): 1.0,
}


def numpy_case(op, size):
    """A zero-argument callable doing the op once, making its output."""
    rng = np.random.default_rng(1)

    def u(*shape):
        return rng.uniform(-1.0, 1.0, shape).astype(np.float32)

    if op == "matmul":
        n = int(size)
        a, b = u(n, n), u(n, n)
        return lambda: a @ b
    if op in ("add", "add_tiny"):
        a, b = u(int(size)), u(int(size))
        return lambda: a + b
    if op == "exp":
        a = u(int(size))
        return lambda: np.exp(a)
    if op == "sum":
        a = u(int(size))
        return lambda: a.sum()
    if op == "softmax":
        r, c = (int(v) for v in size.split("x"))
        x = u(r, c)

        def softmax():  # the usual numerically stable way
            e = np.exp(x - x.max(axis=1, keepdims=True))
            return e / e.sum(axis=1, keepdims=True)

        return softmax
    raise ValueError(op)


def time_numpy(fn, min_time, min_reps):
    """Median seconds per call, timed like `backplane bench`."""
    fn()  # warm-up
    inner = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        if time.perf_counter() - t0 >= 1e-3 or inner >= 1 << 24:
            break
        inner *= 4
    samples = []
    start = time.perf_counter()
    while len(samples) < min_reps or time.perf_counter() - start < min_time:
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter() - t0) / inner)
    return statistics.median(samples)


def time_backplane(args, backend, op, size):
    cmd = [args.backplane, "bench", "--json", "--backend", backend, "--op", op, "--size", size,
           "--min-time", str(args.min_time), "--min-reps", str(args.min_reps)]
    if args.config:
        cmd += ["--config", args.config]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)[0]["median_s"]


def fmt_time(s):
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if s >= scale:
            return f"{s / scale:.3f} {unit}"
    return f"{s * 1e9:.1f} ns"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--backplane", required=True, help="path of the backplane CLI")
    p.add_argument("--backend", default="blas_cpu")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--min-time", type=float, default=0.2)
    p.add_argument("--min-reps", type=int, default=5)
    p.add_argument("--config")
    p.add_argument("--no-binary", action="store_true", help="skip the binary backend's matmul")
    args = p.parse_args()

    rows = []
    for op, size in CASES:
        fn = numpy_case(op, size)
        np_t, bp_t, bin_t = [], [], []
        for r in range(args.rounds):
            print(f"numpy_compare: {op} {size} round {r + 1}/{args.rounds}", file=sys.stderr)
            np_t.append(time_numpy(fn, args.min_time, args.min_reps))
            bp_t.append(time_backplane(args, args.backend, op, size))
            if op == "matmul" and size == "1024" and not args.no_binary:
                bin_t.append(time_backplane(args, "binary", op, size))
        rows.append((op, size, statistics.median(np_t), statistics.median(bp_t),
                     statistics.median(bin_t) if bin_t else None))

    print(f"NumPy {np.__version__} vs backplane ({args.backend}); medians of {args.rounds} "
          f"interleaved rounds; ratio = NumPy time / backplane time (higher is better)")
    print(f"{'op':<9} {'size':<10} {'NumPy':>12} {'backplane':>12} {'ratio':>7} {'target':>7}  met")
    for op, size, t_np, t_bp, _ in rows:
        ratio = t_np / t_bp
        target = TARGETS.get((op, size))
        met = "" if target is None else ("yes" if ratio >= target else "NO")
        print(f"{op:<9} {size:<10} {fmt_time(t_np):>12} {fmt_time(t_bp):>12} {ratio:>7.2f} "
              f"{'>= ' + str(target) if target else '':>7}  {met}")
    for op, size, _, t_bp, t_bin in rows:
        if t_bin:
            ratio = t_bp / t_bin
            print(f"binary matmul {size}: {fmt_time(t_bin)}, {ratio:.3f} of {args.backend}'s "
                  f"throughput (target >= 0.1): {'yes' if ratio >= 0.1 else 'NO'}")


if __name__ == "__main__":
    main()

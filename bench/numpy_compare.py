#!/usr/bin/python3
"""Compare backplane with NumPy on every op family (target: at least as fast).

For every case (an op spec and a shape, the syntax of `backplane bench
--op SPEC --size S`) this runs NumPy (in this process) and `backplane bench
--json` (a subprocess, one case at a time), alternating for --rounds rounds
so that machine noise hits both alike, and reports the median of the
per-round medians. Both sides time the same thing: one call that makes a new
output (NumPy's `a + b`; backplane's bp_add with its output release), after a
warm-up, repeated until at least --min-reps samples and --min-time seconds,
with tiny ops batched so one sample lasts >= 1 ms. Inputs are uniform random
values in the same ranges on both sides (see `backplane bench --help`).

ratio = NumPy time / backplane time, i.e. backplane's throughput relative to
NumPy's (higher is better), the form of the issues' targets. Where NumPy has
no single function for an op, its time is that of the usual NumPy
composition (rsqrt is 1/np.sqrt, softmax the stable three-pass formula,
logsumexp max + log(sum(exp)), bf16 the bit manipulation of float32 a NumPy
user writes); erf and gelu use scipy.special.erf when SciPy is installed,
else a per-element Python call (np.frompyfunc), which says nothing useful.

--vs LABEL=PATH (repeatable) times another build's backplane CLI in the same
rounds, interleaved with the others (e.g. the branch point's build, to see
what a change did on a noisy machine): the table gets one more ratio column
per build, each against the same NumPy samples. LABEL=PATH@CONFIG gives that
build its own config file instead of --config's (e.g. the same build with
`[backend.blas_cpu] simd = avx2`, to time the AVX2 kernels on an AVX-512
machine in the same rounds).

Before the table it says what ran: the CPU model and its SIMD extensions,
the SIMD levels NumPy found and dispatches to (its baseline and dispatch
lists, as numpy.show_config() prints them), and the instruction level of
backplane's vector math that each timed build dispatched to (the `vector
math:` part of its device's detail in `backplane info --json`) with the
OpenBLAS core, so that a table says which machine and which kernels it
describes. --config FILE (e.g. one with `[backend.blas_cpu] simd = avx2`)
times another level on the same machine.

The "medium" family repeats every elementwise op at 65536 and 4096
elements, where per-call costs (thread hand-off, allocation, chunking)
weigh more than at 2^22. The "half" family runs a few elementwise ops on
f16 (both sides convert each element to float and back).

--binary also times the binary (reference) backend against blas_cpu limited
to one thread (a config file with `threads = 1`) on the elementwise cases,
and the binary backend's matmul against blas_cpu's: the targets are at
least 1/3 and 1/10 of blas_cpu's throughput.

usage: bench/numpy_compare.py --backplane build/bin/backplane [--backend blas_cpu]
           [--rounds 3] [--min-time 0.2] [--min-reps 5] [--config FILE]
           [--only REGEX] [--binary] [--vs LABEL=PATH[@CONFIG]]... [--list] [--json FILE]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

try:
    import scipy.special as _sps
except ImportError:  # pragma: no cover - depends on the machine
    _sps = None

UNARY = ["neg", "abs", "sign", "exp", "log", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tan",
         "tanh", "sigmoid", "relu", "gelu", "erf", "floor", "ceil", "round", "isnan", "isinf",
         "logical_not"]
BINARY = ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "mod"]
COMPARE = ["eq", "ne", "lt", "le", "gt", "ge"]
LOGICAL = ["logical_and", "logical_or", "logical_xor"]
REDUCE = ["sum", "prod", "mean", "max", "min", "argmax", "argmin", "logsumexp"]
CAST_DTYPES = ["f32", "f64", "f16", "bf16", "i32", "i64"]
M22, M24, M16 = "4194304", "16777216", "65536"


def cases():
    """(spec, size, family, target): every op family, in one table."""
    out = []
    add = lambda spec, size, fam, target=1.0: out.append((spec, size, fam, target))
    for op in UNARY:
        add(op, M22, "unary")
    for op in ("exp", "log", "sqrt", "tanh", "sin", "sigmoid"):
        add(op + ":f64", M22, "unary")
    for op in ("exp", "tanh", "neg"):
        add(op, M16, "unary")
        add(op, M24, "unary")
    for op in BINARY + COMPARE + LOGICAL:
        add(op, M22, "binary")
    for op in ("add", "mul", "lt"):
        add(op + ":f64", M22, "binary")
        add(op + ":i32", M22, "binary")
    add("add", M16, "binary")
    add("add", M24, "binary")
    for op in ("add", "mul", "relu", "floor", "exp"):
        add(op + ":f16", M22, "half")
    add("where", M22, "where")
    add("where", M24, "where")
    have = {(spec, size) for spec, size, _, _ in out}
    for size in (M16, "4096"):
        for op in UNARY + BINARY + COMPARE + LOGICAL:
            if (op, size) not in have:
                add(op, size, "medium")
    for op in REDUCE:
        add(op + ":0", "4096x4096", "reduce")
        add(op + ":1", "4096x4096", "reduce")
        add(op + ":1", "256x256x256", "reduce")
        add(op + ":all", "4096x4096", "reduce")
    for op in ("sum", "max", "argmax"):
        add(op + ":0", "256x256", "reduce")
        add(op + ":1", "256x256", "reduce")
        add(op + ":0:f64", "2048x2048", "reduce")
        add(op + ":1:f64", "2048x2048", "reduce")
    for op in ("softmax", "log_softmax"):
        add(op + ":1", "4096x1024", "softmax")
        add(op + ":0", "4096x1024", "softmax")
        add(op + ":1", "64x1024x64", "softmax")
        add(op + ":1:f64", "2048x1024", "softmax")
    add("softmax:1", "256x256", "softmax")
    for s in CAST_DTYPES:
        for d in CAST_DTYPES:
            if s != d:
                add(f"cast:{s}:{d}", M22, "cast")
    add("cast:f32:i32", M24, "cast")
    add("cast:f32:f16", M16, "cast")
    add("gather", "100000x64", "gather")
    add("gather:1", "4096x1024", "gather")
    add("concat:0", "2048x1024", "concat")
    add("concat:1", "2048x1024", "concat")
    add("pad", "2048x2048", "pad")
    add("slice", "2048x2048", "slice")
    add("transpose", "2048x2048", "transpose")
    add("transpose:0,2,1", "64x256x256", "transpose")
    add("transpose:2,0,1", "64x256x256", "transpose")
    for dt in ("", ":f64"):
        add("matmul" + dt, "1000", "matmul", 0.95)
        add("matmul" + dt, "1024", "matmul", 0.95)
        add("matmul" + dt, "128", "matmul", 0.95)
        add("matmul" + dt, "64x128x128x128", "matmul", 0.95)
        add("matmul" + dt, "4096x1024x64", "matmul", 0.95)
        add("matmul" + dt, "64x4096x1024", "matmul", 0.95)
    for op in ("add", "exp", "sum", "mul:f64", "max:1", "cast:f32:f64"):
        add(op, "4" if ":1" not in op else "2x2", "tiny", 2.0)
    return out


# ---- NumPy's side -------------------------------------------------------------

NP_DTYPE = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "i32": np.int32,
            "i64": np.int64, "u8": np.uint8, "i8": np.int8, "bool": np.bool_}


def parse_spec(spec):
    """NAME[:MOD]... -> (name, dtypes, axes or None, all_axes)."""
    parts = spec.split(":")
    name, dtypes, axes, all_axes = parts[0], [], None, False
    for m in parts[1:]:
        if m in NP_DTYPE or m == "bf16":
            dtypes.append(m)
        elif m == "all":
            all_axes = True
        else:
            axes = tuple(int(v) for v in m.split(","))
    if name == "add_tiny":
        name = "add"
    return name, dtypes, axes, all_axes


def parse_size(size):
    return tuple(1 << int(v[2:]) if v.startswith("2^") else int(v) for v in size.split("x"))


def f32_to_bf16(a):
    """float32 -> bf16 bits (uint16), round to nearest even, NaN kept quiet."""
    u = a.view(np.uint32)
    r = ((u + np.uint32(0x7FFF) + ((u >> 16) & np.uint32(1))) >> 16).astype(np.uint16)
    return np.where(np.isnan(a), ((u >> 16) | np.uint32(0x40)).astype(np.uint16), r)


def bf16_to_f32(b):
    return (b.astype(np.uint32) << 16).view(np.float32)


def value_range(name, which, dt, family):
    """The same ranges as `backplane bench` (its value_range)."""
    if dt not in ("f32", "f64", "f16", "bf16") or family == "cast":
        return -1000.0, 1000.0
    if family == "unary" and name in ("log", "sqrt", "rsqrt", "reciprocal"):
        return 0.1, 10.0
    if name == "pow":
        return (0.1, 10.0) if which == 0 else (-4.0, 4.0)
    if family == "unary" and name not in ("neg", "abs", "sign", "relu"):
        return -4.0, 4.0
    return -1.0, 1.0


def make(rng, shape, dt, lo, hi):
    u = rng.uniform(lo, hi, shape)
    if dt == "bool":
        return u > 0
    if dt == "bf16":
        return f32_to_bf16(u.astype(np.float32))
    if dt in ("i32", "i64", "u8", "i8"):
        return np.floor(u).astype(NP_DTYPE[dt])
    return u.astype(NP_DTYPE[dt])


def np_erf(x):
    if _sps is not None:
        return _sps.erf(x)
    import math
    return np.frompyfunc(math.erf, 1, 1)(x).astype(x.dtype)


def np_unary(name):
    f = {
        "neg": np.negative, "abs": np.abs, "sign": np.sign, "exp": np.exp, "log": np.log,
        "sqrt": np.sqrt, "rsqrt": lambda a: 1 / np.sqrt(a), "reciprocal": np.reciprocal,
        "sin": np.sin, "cos": np.cos, "tan": np.tan, "tanh": np.tanh,
        "sigmoid": lambda a: 1 / (1 + np.exp(-a)), "relu": lambda a: np.maximum(a, 0),
        "gelu": lambda a: 0.5 * a * (1 + np_erf(a * np.float32(0.7071067811865476))),
        "erf": np_erf, "floor": np.floor, "ceil": np.ceil, "round": np.rint,
        "isnan": np.isnan, "isinf": np.isinf, "logical_not": np.logical_not,
    }
    return f[name]


def np_binary(name):
    f = {
        "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
        "pow": np.power, "maximum": np.maximum, "minimum": np.minimum, "mod": np.mod,
        "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
        "gt": np.greater, "ge": np.greater_equal, "logical_and": np.logical_and,
        "logical_or": np.logical_or, "logical_xor": np.logical_xor,
    }
    return f[name]


def np_reduce(name, x, axes):
    ax = None if axes is None else (axes[0] if len(axes) == 1 else axes)
    if name == "logsumexp":
        m = x.max(axis=ax, keepdims=True)
        return np.log(np.exp(x - m).sum(axis=ax)) + np.squeeze(m, axis=ax)
    if name in ("argmax", "argmin") and ax is None:
        return getattr(x, name)()
    return getattr(x, name)(axis=ax)


def numpy_case(spec, size):
    """A zero-argument callable doing the op once, making its output."""
    rng = np.random.default_rng(1)
    name, dtypes, axes, all_axes = parse_spec(spec)
    dims = parse_size(size)
    dt = dtypes[0] if dtypes else ("bool" if name.startswith("logical") else "f32")
    fam = ("unary" if name in UNARY else "binary" if name in BINARY + COMPARE + LOGICAL else
           "reduce" if name in REDUCE else name)

    def inp(shape, which=0, dtype=dt):
        lo, hi = value_range(name, which, dtype, "cast" if name == "cast" else fam)
        return make(rng, shape, dtype, lo, hi)

    if name == "matmul":
        if len(dims) == 1:
            sa = sb = (dims[0], dims[0])
        elif len(dims) == 3:
            sa, sb = (dims[0], dims[1]), (dims[1], dims[2])
        else:
            sa, sb = (dims[0], dims[1], dims[2]), (dims[0], dims[2], dims[3])
        a, b = inp(sa), inp(sb, 1)
        return lambda: a @ b
    if fam == "unary":
        a, f = inp(dims), np_unary(name)
        return lambda: f(a)
    if fam == "binary":
        a, b, f = inp(dims), inp(dims, 1), np_binary(name)
        return lambda: f(a, b)
    if name == "where":
        c, a, b = inp(dims, 0, "bool"), inp(dims, 1), inp(dims, 2)
        return lambda: np.where(c, a, b)
    if fam == "reduce":
        x = inp(dims)
        ax = None if all_axes or axes is None else axes
        return lambda: np_reduce(name, x, ax)
    if name in ("softmax", "log_softmax"):
        if len(dims) == 1:
            dims = (dims[0], 1024)
        x = inp(dims)
        ax = axes[0] if axes else -1
        if name == "softmax":
            def softmax():  # the usual numerically stable way
                e = np.exp(x - x.max(axis=ax, keepdims=True))
                return e / e.sum(axis=ax, keepdims=True)
            return softmax

        def log_softmax():
            s = x - x.max(axis=ax, keepdims=True)
            return s - np.log(np.exp(s).sum(axis=ax, keepdims=True))
        return log_softmax
    if name == "cast":
        src, dst = dtypes
        x = inp(dims, 0, src)
        if src == "bf16" and dst == "f32":
            return lambda: bf16_to_f32(x)
        if src == "bf16":
            return lambda: bf16_to_f32(x).astype(NP_DTYPE[dst])
        if dst == "bf16":
            if src == "f32":
                return lambda: f32_to_bf16(x)
            return lambda: f32_to_bf16(x.astype(np.float32))
        return lambda: x.astype(NP_DTYPE[dst])
    if name == "gather":
        x = inp(dims)
        ax = axes[0] if axes else 0
        idx = rng.integers(0, dims[ax], dims[ax], dtype=np.int64)
        return lambda: np.take(x, idx, axis=ax)
    if name == "concat":
        a, b = inp(dims), inp(dims, 1)
        ax = axes[0] if axes else 0
        return lambda: np.concatenate((a, b), axis=ax)
    if name == "pad":
        x = inp(dims)
        return lambda: np.pad(x, 1)
    if name == "slice":
        x = inp(dims)
        sl = tuple(slice(1, -1) for _ in dims)
        return lambda: x[sl].copy()
    if name == "transpose":
        x = inp(dims)
        perm = axes if axes else tuple(reversed(range(len(dims))))
        return lambda: x.transpose(perm).copy()
    raise ValueError(spec)


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


def time_backplane(args, backend, spec, size, config=None, exe=None):
    """Median seconds of one case on one build (config: its own file, else --config)."""
    cmd = [exe or args.backplane, "bench", "--json", "--backend", backend, "--op", spec, "--size", size,
           "--min-time", str(args.min_time), "--min-reps", str(args.min_reps)]
    config = config or args.config
    if config:
        cmd += ["--config", config]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)[0]["median_s"]


def fmt_time(s):
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if s >= scale:
            return f"{s / scale:.3f} {unit}"
    return f"{s * 1e9:.1f} ns"


def cpu_description():
    """The CPU model and the SIMD extensions /proc/cpuinfo lists that matter here."""
    model, flags = "unknown CPU", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "model name" and model == "unknown CPU":
                    model = value.strip()
                elif key == "flags" and not flags:
                    flags = set(value.split())
    except OSError:
        pass
    want = ["sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512cd",
            "avx512dq", "avx512vl", "avx512_bf16", "avx512_fp16"]
    simd = [f for f in want if f in flags]
    return model, simd, os.cpu_count()


def numpy_simd():
    """NumPy's SIMD: the baseline it was built for and the dispatch targets this
    CPU has (what numpy.show_config() prints as baseline / found)."""
    for mod in ("numpy._core._multiarray_umath", "numpy.core._multiarray_umath"):
        try:
            m = __import__(mod, fromlist=["__cpu_features__"])
            feats = m.__cpu_features__
            baseline = list(m.__cpu_baseline__)
            found = [d for d in m.__cpu_dispatch__ if feats.get(d)]
            return baseline, found
        except (ImportError, AttributeError):
            continue
    return [], []


def backplane_kernels(exe, backend, config=None):
    """(vector math level, OpenBLAS core) of `backend` as `backplane info --json`
    reports it, or the reason it could not say."""
    cmd = [exe, "info", "--json"] + (["--config", config] if config else [])
    try:
        info = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    except (OSError, subprocess.CalledProcessError, ValueError) as e:
        return f"unknown ({e})", ""
    for plugin in info.get("plugins", []):
        for dev in plugin.get("devices", []):
            if dev.get("backend", "").split(":")[0] != backend:
                continue
            detail = dev.get("info", {}).get("detail", "")
            m = re.search(r"vector math: ([^;]*)", detail)
            blas = detail.split(";")[0] if "OpenBLAS" in detail else ""
            return (m.group(1) if m else "not reported (a build before the levels)"), blas
    return "backend not found", ""


def describe(args, others, other_config):
    """Lines saying which machine and which kernels the table describes."""
    model, simd, cores = cpu_description()
    baseline, found = numpy_simd()
    lines = [f"CPU: {model}, {cores} cores; SIMD: {' '.join(simd) or 'none listed'}",
             f"NumPy {np.__version__}: baseline {','.join(baseline) or '?'}; "
             f"dispatched to (found) {','.join(found) or '?'}"]
    builds = [("backplane", args.backplane)] + others
    for label, exe in builds:
        level, blas = backplane_kernels(exe, args.backend, other_config.get(label) or args.config)
        lines.append(f"{label} ({args.backend}): vector math {level}" + (f"; {blas}" if blas else ""))
    return lines


def load_average():
    try:
        return " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        return "?"


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--backplane", required=True, help="path of the backplane CLI")
    p.add_argument("--backend", default="blas_cpu")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--min-time", type=float, default=0.2)
    p.add_argument("--min-reps", type=int, default=5)
    p.add_argument("--config")
    p.add_argument("--only", help="run only the cases whose 'spec size' matches this regex")
    p.add_argument("--binary", action="store_true",
                   help="also time the binary backend (elementwise vs blas_cpu on one thread, "
                        "matmul vs blas_cpu)")
    p.add_argument("--vs", action="append", default=[], metavar="LABEL=PATH[@CONFIG]",
                   help="also time this backplane CLI (another build) in the same rounds; "
                        "repeatable")
    p.add_argument("--list", action="store_true", help="print the cases and exit")
    p.add_argument("--json", help="also write the rows as JSON to this file")
    args = p.parse_args()
    others, other_config = [], {}
    for v in args.vs:
        label, sep, path = v.partition("=")
        path, at, config = path.partition("@")
        if not sep or not label or not path or (at and not config):
            p.error(f"--vs wants LABEL=PATH or LABEL=PATH@CONFIG, got {v!r}")
        others.append((label, path))
        other_config[label] = config or None
    return args, others, other_config


def time_case(args, others, other_config, one_thread, i, n, case):
    """One case's row: the medians of its interleaved rounds."""
    spec, size, fam, target = case
    fn = numpy_case(spec, size)
    np_t, bp_t, bin_t, one_t = [], [], [], []
    vs_t = {label: [] for label, _ in others}
    bin_check = args.binary and (fam in ("unary", "binary", "where") or
                                 (fam == "matmul" and size in ("1024", "128")))
    for r in range(args.rounds):
        print(f"numpy_compare: [{i + 1}/{n}] {spec} {size} round {r + 1}/{args.rounds}",
              file=sys.stderr)
        np_t.append(time_numpy(fn, args.min_time, args.min_reps))
        bp_t.append(time_backplane(args, args.backend, spec, size))
        for label, exe in others:
            vs_t[label].append(time_backplane(args, args.backend, spec, size,
                                              other_config[label], exe=exe))
        if bin_check:
            bin_t.append(time_backplane(args, "binary", spec, size))
            if fam != "matmul":
                one_t.append(time_backplane(args, args.backend, spec, size, one_thread))
    return {"spec": spec, "size": size, "family": fam, "target": target,
            "numpy_s": statistics.median(np_t), "backplane_s": statistics.median(bp_t),
            "binary_s": statistics.median(bin_t) if bin_t else None,
            "one_thread_s": statistics.median(one_t) if one_t else None,
            "vs_s": {label: statistics.median(t) for label, t in vs_t.items()}}


def print_table(args, others, other_config, rows, machine, loads):
    for line in machine:
        print(line)
    print(f"NumPy {np.__version__} vs backplane ({args.backend}); medians of {args.rounds} "
          f"interleaved rounds; ratio = NumPy time / backplane time (higher is better); "
          f"load average {loads[0]} -> {loads[1]}")
    vs_head = "".join(f" {label[:8]:>8}" for label, _ in others)
    if others:
        print("other builds' columns: their ratio (NumPy time / their time) in the same rounds: "
              + ", ".join(f"{label} = {path}" + (f" with {other_config[label]}" if other_config[label] else "")
                          for label, path in others))
    print(f"{'op':<18} {'size':<15} {'NumPy':>11} {'backplane':>11} {'ratio':>6} {'target':>7}  met"
          + vs_head)
    missed = 0
    for row in rows:
        ratio = row["numpy_s"] / row["backplane_s"]
        row["ratio"] = ratio
        met = ratio >= row["target"]
        missed += not met
        print(f"{row['spec']:<18} {row['size']:<15} {fmt_time(row['numpy_s']):>11} "
              f"{fmt_time(row['backplane_s']):>11} {ratio:>6.2f} {'>= ' + str(row['target']):>7}"
              f"  {'yes' if met else 'NO '}"
              + "".join(f" {row['numpy_s'] / row['vs_s'][label]:>8.2f}" for label, _ in others))
    print(f"{len(rows) - missed} of {len(rows)} cases meet their target")


def print_binary(args, rows):
    print(f"\nbinary backend vs {args.backend} (ratio = {args.backend} time / binary time)")
    for row in rows:
        if row["binary_s"] is None:
            continue
        mm = row["family"] == "matmul"
        ref = row["backplane_s"] if mm else row["one_thread_s"]
        ratio = ref / row["binary_s"]
        row["binary_ratio"] = ratio
        want = 0.1 if mm else 1 / 3
        against = args.backend if mm else f"{args.backend}, 1 thread"
        print(f"{row['spec']:<18} {row['size']:<15} binary {fmt_time(row['binary_s']):>11}, "
              f"{against} {fmt_time(ref):>11}: {ratio:.3f} (>= {want:.3f}) "
              f"{'yes' if ratio >= want else 'NO'}")


def main():
    args, others, other_config = parse_args()
    todo = [c for c in cases() if not args.only or re.search(args.only, f"{c[0]} {c[1]}")]
    if args.list:
        for spec, size, fam, target in todo:
            print(f"{spec:<18} {size:<15} {fam:<10} >= {target}")
        return

    one_thread = None
    if args.binary:
        fd, one_thread = tempfile.mkstemp(suffix=".ini")
        with os.fdopen(fd, "w") as f:
            f.write(f"[backend.{args.backend}]\nthreads = 1\n")

    machine = describe(args, others, other_config)
    for line in machine:
        print(line, file=sys.stderr)
    load_before = load_average()
    rows = [time_case(args, others, other_config, one_thread, i, len(todo), case)
            for i, case in enumerate(todo)]
    load_after = load_average()
    if one_thread:
        os.unlink(one_thread)

    print_table(args, others, other_config, rows, machine, (load_before, load_after))
    if args.binary:
        print_binary(args, rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"numpy": np.__version__, "machine": machine, "load_before": load_before,
                       "load_after": load_after, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()

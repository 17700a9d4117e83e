#!/usr/bin/python3
"""Time nn.h's ops side by side in one process: binary, blas_cpu, NumPy.

Ops, each at two realistic sizes (see CASES): conv2d f32 3x3 pad 1, max_pool
f32 (ResNet's 3x3 stride-2 stem pool and a 2x2 stride-2 pool), layer_norm over
the last axis, inference batch_norm, softmax cross-entropy (mean over the
rows). Contenders per case:

  binary     the reference backend (double-precision kernels, one thread)
  blas_cpu   the OpenBLAS backend (im2col + sgemm conv, fused f32 norms and
             loss, the rest the binary kernels on its thread pool)
  numpy      a NumPy formulation of the same computation (conv as im2col by
             sliding_window_view + tensordot, i.e. NumPy's own OpenBLAS sgemm)
  sgemm      conv only: cblas_sgemm of the conv's own gemm shape (M x C*9 times
             C*9 x N*H*W, what im2col reduces the conv to), through the very
             libopenblas the blas_cpu plugin loaded; the target is the conv's
             GFLOP/s >= 0.5 x this

The targets are also printed: conv2d at N=32 C=64 H=W=56 K=64
against sgemm of the same FLOPs (square and conv-shaped), layer_norm and
cross-entropy on (4096, 4096) against NumPy (>= 1.0).

backplane is called through ctypes (libbackplane's C API: tensors made once,
each timed call makes its output and releases it, then synchronises); NumPy
calls make their output too. Rounds alternate the contenders of a case so
machine noise hits them alike; each reports the median of its per-round
medians. A contender whose first call takes longer than --slow seconds is
timed once per round instead of for --min-time.

usage: bench/nn_compare.py --lib build/lib/libbackplane.so [--rounds 3]
                           [--min-time 0.3] [--min-reps 3] [--only OP,...]
                           [--no-binary] [--no-targets]
"""
import argparse
import ctypes as C
import statistics
import sys
import time

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

BP_F32, BP_I64 = 7, 4
BP_LOSS_MEAN = 2


class Window(C.Structure):
    """bp_window (nn.h)."""
    _fields_ = [("struct_size", C.c_uint32), ("kernel", C.c_int64 * 3),
                ("strides", C.c_int64 * 3), ("dilations", C.c_int64 * 3),
                ("pads", C.c_int64 * 6), ("auto_pad", C.c_int), ("groups", C.c_int64),
                ("output_padding", C.c_int64 * 3), ("output_shape", C.c_int64 * 3),
                ("ceil_mode", C.c_bool), ("count_include_pad", C.c_bool),
                ("storage_order", C.c_int32)]


def window(kernel=(), strides=(), pads=()):
    w = Window(struct_size=C.sizeof(Window))
    w.kernel[:len(kernel)] = list(kernel)
    w.strides[:len(strides)] = list(strides)
    w.pads[:len(pads)] = list(pads)
    return w


class Backplane:
    """libbackplane's few entry points the benchmark needs, on one backend."""

    def __init__(self, lib, ctx, backend):
        self.lib, self.name = lib, backend
        self.be = C.c_void_p()
        self.check(lib.bp_backend_get(ctx, backend.encode(), C.byref(self.be)),
                   f"bp_backend_get({backend})")
        self.keep = []

    def check(self, st, what):
        if st != 0:
            sys.exit(f"nn_compare: {what} failed ({st}): {self.lib.bp_last_error().decode()}")

    def tensor(self, array, dtype=BP_F32):
        a = np.ascontiguousarray(array)
        self.keep.append(a)
        shape = (C.c_int64 * a.ndim)(*a.shape)
        t = C.c_void_p()
        self.check(self.lib.bp_tensor_from_host(self.be, dtype, a.ndim, shape,
                                                a.ctypes.data_as(C.c_void_p), C.byref(t)),
                   "bp_tensor_from_host")
        return t

    def timed(self, call):
        """call(out) makes one output; the callable also releases it and syncs.
        Its .fetch(like) returns the output as an array shaped like `like`."""
        out = C.c_void_p()
        L = self.lib

        def run():
            self.check(call(C.byref(out)), f"{self.name} op")
            L.bp_tensor_release(out)
            self.check(L.bp_backend_synchronize(self.be), "bp_backend_synchronize")

        def fetch(like):
            got = np.empty(np.shape(like), np.float32)
            self.check(call(C.byref(out)), f"{self.name} op")
            st = L.bp_tensor_to_host(out, got.ctypes.data_as(C.c_void_p), got.nbytes)
            L.bp_tensor_release(out)
            self.check(st, "bp_tensor_to_host")
            return got
        run.fetch = fetch
        return run


def open_lib(path):
    L = C.CDLL(path)
    P = C.c_void_p
    L.bp_last_error.restype = C.c_char_p
    for name, args in {
        "bp_context_create": [C.c_char_p, C.POINTER(P)],
        "bp_backend_get": [P, C.c_char_p, C.POINTER(P)],
        "bp_tensor_from_host": [P, C.c_int, C.c_int32, C.POINTER(C.c_int64), P, C.POINTER(P)],
        "bp_conv": [P, P, P, C.POINTER(Window), C.POINTER(P)],
        "bp_max_pool": [P, C.POINTER(Window), C.POINTER(P), C.POINTER(P)],
        "bp_layer_norm": [P, C.c_int32, P, P, C.c_double, C.POINTER(P), C.POINTER(P),
                          C.POINTER(P)],
        "bp_batch_norm": [P, P, P, P, P, C.c_double, C.POINTER(P)],
        "bp_softmax_cross_entropy_loss": [P, P, P, C.c_int, P, C.POINTER(P), C.POINTER(P)],
        "bp_backend_synchronize": [P],
        "bp_tensor_to_host": [P, P, C.c_size_t],
    }.items():
        getattr(L, name).argtypes = args
        getattr(L, name).restype = C.c_int
    L.bp_tensor_release.argtypes = [P]
    L.bp_tensor_release.restype = None
    ctx = P()
    st = L.bp_context_create(None, C.byref(ctx))
    if st != 0:
        sys.exit(f"nn_compare: bp_context_create failed: {L.bp_last_error().decode()}")
    return L, ctx


def mapped(part):
    """The files this process has mapped whose path contains part."""
    libs = []
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if part in path and path not in libs:
                libs.append(path)
    return libs


def loaded_openblas():
    """The libopenblas files this process has mapped (blas_cpu's, NumPy's)."""
    return mapped("openblas")


def sgemm_call(blas, m, n, k):
    rng = np.random.default_rng(3)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    c = np.empty((m, n), np.float32)
    f = blas.cblas_sgemm
    f.restype = None
    f.argtypes = [C.c_int, C.c_int, C.c_int, C.c_int, C.c_int, C.c_int, C.c_float, C.c_void_p,
                  C.c_int, C.c_void_p, C.c_int, C.c_float, C.c_void_p, C.c_int]
    pa, pb, pc = (x.ctypes.data_as(C.c_void_p) for x in (a, b, c))
    keep = (a, b, c)
    return lambda: (f(101, 111, 111, m, n, k, 1.0, pa, k, pb, n, 0.0, pc, n), keep)


# ---- the NumPy formulations -------------------------------------------------------------

def np_conv3x3(x, w):
    """x (N, C, H, W), w (K, C, 3, 3), pad 1, stride 1: im2col + one sgemm."""
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    cols = sliding_window_view(xp, (3, 3), axis=(2, 3))  # N C H W 3 3 (a view)
    return np.tensordot(w, cols, axes=([1, 2, 3], [1, 4, 5])).transpose(1, 0, 2, 3)


def np_max_pool(x, k, s, p):
    """One np.maximum per tap over strided views (faster in NumPy than a
    max over sliding_window_view's window axes)."""
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), constant_values=-np.inf) if p else x
    ho, wo = (xp.shape[2] - k) // s + 1, (xp.shape[3] - k) // s + 1
    y = None
    for a in range(k):
        for b in range(k):
            v = xp[:, :, a:a + s * (ho - 1) + 1:s, b:b + s * (wo - 1) + 1:s]
            y = v.copy() if y is None else np.maximum(y, v, out=y)
    return y


def np_layer_norm(x, g, b, eps):
    m = x.mean(axis=-1, keepdims=True)
    d = x - m
    v = (d * d).mean(axis=-1, keepdims=True)
    return d / np.sqrt(v + eps) * g + b


def np_batch_norm(x, scale, bias, mean, var, eps):
    sh = (1, -1) + (1,) * (x.ndim - 2)
    a = (scale / np.sqrt(var + eps)).astype(np.float32)
    return x * a.reshape(sh) + (bias - mean * a).reshape(sh)


def np_cross_entropy(x, labels):
    m = x.max(axis=1, keepdims=True)
    lse = np.log(np.exp(x - m).sum(axis=1)) + m[:, 0]
    return (lse - x[np.arange(x.shape[0]), labels]).mean()


# ---- the cases --------------------------------------------------------------------------

def make_cases(L, bps, blas, want, with_targets):
    """[(op, size label, flops or None, {contender: callable})]"""
    rng = np.random.default_rng(1)
    u = lambda *s, lo=-1.0, hi=1.0: rng.uniform(lo, hi, s).astype(np.float32)  # noqa: E731
    cases = []
    eps = 1e-5

    def conv(N, Cin, H, K, with_sgemm, backends):
        x, w = u(N, Cin, H, H), u(K, Cin, 3, 3)
        win = window(pads=(1, 1, 1, 1))
        fs = {}
        for bp in backends:
            tx, tw = bp.tensor(x), bp.tensor(w)
            fs[bp.name] = bp.timed(lambda out, tx=tx, tw=tw, L=L: L.bp_conv(tx, tw, None,
                                                                            C.byref(win), out))
        fs["numpy"] = lambda: np_conv3x3(x, w)
        if with_sgemm and blas:
            fs["sgemm"] = sgemm_call(blas, K, N * H * H, Cin * 9)
        return (f"{N}x{Cin}x{H}x{H}, {K} 3x3", 2.0 * N * K * Cin * 9 * H * H, fs)

    if "conv2d" in want:
        for N, Cin, H, K in ((1, 64, 56, 64), (8, 128, 28, 128)):
            label, flops, fs = conv(N, Cin, H, K, True, bps)
            cases.append(("conv2d", label, flops, fs))

    if "max_pool" in want:
        for shape, k, s, p in (((8, 64, 112, 112), 3, 2, 1), ((32, 64, 56, 56), 2, 2, 0)):
            x = u(*shape)
            win = window((k, k), (s, s), (p, p, p, p))
            fs = {}
            for bp in bps:
                tx = bp.tensor(x)
                fs[bp.name] = bp.timed(lambda out, tx=tx, win=win, L=L:
                                       L.bp_max_pool(tx, C.byref(win), out, None))
            fs["numpy"] = lambda x=x, k=k, s=s, p=p: np_max_pool(x, k, s, p)
            cases.append(("max_pool", f"{'x'.join(map(str, shape))}, {k}x{k}/{s} pad {p}",
                          None, fs))

    if "layer_norm" in want:
        for R, D in ((4096, 768), (4096, 4096)):
            x, g, b = u(R, D, lo=-4, hi=4), u(D, lo=0.5, hi=1.5), u(D)
            fs = {}
            for bp in bps:
                tx, tg, tb = bp.tensor(x), bp.tensor(g), bp.tensor(b)
                fs[bp.name] = bp.timed(lambda out, tx=tx, tg=tg, tb=tb, L=L:
                                       L.bp_layer_norm(tx, -1, tg, tb, eps, out, None, None))
            fs["numpy"] = lambda x=x, g=g, b=b: np_layer_norm(x, g, b, eps)
            cases.append(("layer_norm", f"{R}x{D}", None, fs))

    if "batch_norm" in want:
        for shape in ((32, 64, 56, 56), (32, 256, 14, 14)):
            Cc = shape[1]
            x = u(*shape, lo=-4, hi=4)
            sc, bi, mu, va = u(Cc, lo=0.5, hi=1.5), u(Cc), u(Cc), u(Cc, lo=0.5, hi=2.0)
            fs = {}
            for bp in bps:
                t = [bp.tensor(a) for a in (x, sc, bi, mu, va)]
                fs[bp.name] = bp.timed(lambda out, t=t, L=L:
                                       L.bp_batch_norm(t[0], t[1], t[2], t[3], t[4], eps, out))
            fs["numpy"] = lambda x=x, a=(sc, bi, mu, va): np_batch_norm(x, *a, eps)
            cases.append(("batch_norm", "x".join(map(str, shape)), None, fs))

    if "cross_entropy" in want:
        for R, K in ((4096, 4096), (512, 32000)):
            x = u(R, K, lo=-4, hi=4)
            labels = rng.integers(0, K, R).astype(np.int64)
            fs = {}
            for bp in bps:
                tx, tl = bp.tensor(x), bp.tensor(labels, BP_I64)
                fs[bp.name] = bp.timed(lambda out, tx=tx, tl=tl, L=L:
                                       L.bp_softmax_cross_entropy_loss(tx, tl, None,
                                                                       BP_LOSS_MEAN, None, out,
                                                                       None))
            fs["numpy"] = lambda x=x, labels=labels: np_cross_entropy(x, labels)
            cases.append(("cross_entropy", f"{R}x{K}, mean", None, fs))

    if with_targets and "conv2d" in want and blas:
        # the conv target: blas_cpu only (the binary backend's direct
        # double kernel would take tens of seconds per call at this size)
        blas_only = [bp for bp in bps if bp.name == "blas_cpu"]
        N, Cin, H, K = 32, 64, 56, 64
        label, flops, fs = conv(N, Cin, H, K, True, blas_only)
        del fs["numpy"]
        side = round((flops / 2) ** (1 / 3))
        fs[f"sgemm {side}^3"] = sgemm_call(blas, side, side, side)
        cases.append(("conv2d (target: >= 0.5x sgemm)", label, flops, fs))
    return cases


def median_time(fn, min_time, min_reps, slow):
    t0 = time.perf_counter()
    fn()  # warm-up
    if time.perf_counter() - t0 > slow:
        min_reps, min_time = 1, 0.0
    samples, start = [], time.perf_counter()
    while len(samples) < min_reps or time.perf_counter() - start < min_time:
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def fmt(t):
    return f"{t * 1e3:9.2f} ms" if t >= 1e-3 else f"{t * 1e6:9.1f} us"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--lib", required=True, help="path of libbackplane.so")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--min-time", type=float, default=0.3)
    p.add_argument("--min-reps", type=int, default=3)
    p.add_argument("--slow", type=float, default=0.3,
                   help="a contender whose warm-up call takes longer is timed once a round")
    p.add_argument("--only", default="conv2d,max_pool,layer_norm,batch_norm,cross_entropy")
    p.add_argument("--no-binary", action="store_true", help="leave the binary backend out")
    p.add_argument("--no-targets", action="store_true",
                   help="leave out the N=32 conv target (the longest case)")
    args = p.parse_args()
    L, ctx = open_lib(args.lib)
    names = ["blas_cpu"] if args.no_binary else ["binary", "blas_cpu"]
    bps = [Backplane(L, ctx, n) for n in names]
    blas_paths = [x for x in loaded_openblas() if "numpy" not in x and "scipy" not in x]
    blas = C.CDLL(blas_paths[0]) if blas_paths else None
    want = set(args.only.split(","))
    cases = make_cases(L, bps, blas, want, not args.no_targets)

    for op, label, flops, fs in cases:  # every backend's output against NumPy's, once
        if "numpy" not in fs:
            continue
        want = np.asarray(fs["numpy"](), np.float64)
        for name, fn in fs.items():
            if hasattr(fn, "fetch"):
                got = fn.fetch(want)
                err = np.max(np.abs(got - want) / (1.0 + np.abs(want))) if want.size else 0.0
                if not err <= 1e-4:
                    sys.exit(f"nn_compare: {op} {label}: {name} differs from NumPy by {err:g}")

    started = time.time()
    results = []
    for op, label, flops, fs in cases:
        times = {k: [] for k in fs}
        for r in range(args.rounds):
            print(f"nn_compare: {op} {label} round {r + 1}/{args.rounds}", file=sys.stderr)
            for name, fn in fs.items():
                times[name].append(median_time(fn, args.min_time, args.min_reps, args.slow))
        results.append((op, label, flops, {k: statistics.median(v) for k, v in times.items()}))

    print(f"backplane (ctypes, {args.lib}) vs NumPy {np.__version__}; medians of "
          f"{args.rounds} interleaved rounds; {time.time() - started:.0f} s")
    print(f"OpenBLAS mapped: {', '.join(loaded_openblas())}")
    print(f"plugins mapped: {', '.join(mapped('/bp_'))}")
    print("ratio x/blas_cpu = x's time / blas_cpu's time (> 1: blas_cpu is faster)")
    for op, label, flops, t in results:
        print(f"\n{op} f32 {label}" + (f" ({flops * 1e-9:.2f} GFLOP)" if flops else ""))
        for name, v in t.items():
            line = f"  {name:16s} {fmt(v)}"
            if flops:
                line += f"  {flops / v * 1e-9:7.1f} GFLOP/s"
            if "blas_cpu" in t and name != "blas_cpu":
                line += f"  x/blas_cpu {v / t['blas_cpu']:7.2f}"
            print(line)
    for op, label, flops, t in results:  # the targets
        if op.startswith("conv2d (target"):
            for name in t:
                if name.startswith("sgemm"):
                    print(f"target: conv {label} GFLOP/s / {name}'s = "
                          f"{t[name] / t['blas_cpu']:.2f} (>= 0.5)")
        if (op, label) in (("layer_norm", "4096x4096"), ("cross_entropy", "4096x4096, mean")):
            print(f"target: {op} 4096x4096 NumPy / blas_cpu = "
                  f"{t['numpy'] / t['blas_cpu']:.2f} (>= 1.0)")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""ONNX models on backplane (backplane.onnx) against onnxruntime's CPU
provider, with the same number of threads.

The models: ONNX's light ResNet-50, SqueezeNet, ShuffleNet and Inception v1
(PyPI onnx's backend test data: the real topologies, batch 1, 224x224), fed
ONNX's dummy inputs; silero-vad's model (its wheel's silero_vad.onnx: a run
is the chunk loop over 2 s of generated 16 kHz audio, 62 chunks, each
side carrying its own state) and magika's classifier (a batch of 64 rows
of random bytes), where their wheels are installed (pip install --no-deps
silero-vad magika). Each side runs in a process of its own, the two
alternating (A B A B ...): in one process, onnxruntime's spinning thread
pool and OpenBLAS's each take the cores from the other's runs, which
measured backplane up to 3x slower than alone. Each process runs its
model untimed for --warmup seconds after the first run (an OpenBLAS
library's idle thread spins for some 0.1 s after it loads, which slowed
backplane's first two-thread runs by half). Prints, per model: load +
first run against session creation + first run, the median time per run
(the median over the processes of each one's median) and the throughput
ratio (onnxruntime's time / backplane's: above 1, backplane is faster), and
the geometric mean. Checks first that the two agree on the logits. A
measurement, not a test: it never fails on speed. Needs onnx and
onnxruntime (pip install onnx onnxruntime).

    PYTHONPATH=build/python python3 bench/onnx_vs_onnxruntime.py [--rounds 15] [--repeats 3]
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

# ONNX's light models and the inputs ONNX's runner gives them, shared with
# the tests.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "python"))
from onnx_light import dummy_inputs, light_model  # noqa: E402
from real_models import (SileroFeeds, generated_speech, magika_bytes, magika_path,  # noqa: E402
                         silero_paths, silero_rows)

LIGHT = ("resnet50", "squeezenet", "shufflenet", "inception_v1")


def silero_path():
    return next((p for p in silero_paths() if p.endswith("/silero_vad.onnx")), None)


REAL = {"silero_vad": silero_path, "magika": magika_path}
MODELS = LIGHT + tuple(name for name, where in REAL.items() if where())


def load_proto(name):
    import onnx
    return light_model(name) if name in LIGHT else onnx.load(REAL[name]())


def calls(name, m):
    """The calls one run makes: a list of feeds, and whether each carries the
    previous call's state (silero-vad's chunk loop)."""
    if name == "silero_vad":
        names = [i.name for i in m.graph.input]
        feeds = SileroFeeds(names)
        return [feeds.feeds(r[None]) for r in silero_rows(generated_speech(2))], True
    if name == "magika":
        return [{"bytes": magika_bytes(64)}], False
    return [dummy_inputs(m)], False


def with_logits(m):
    """The model with the final Softmax's input as a second output: the
    dummy inputs drive the logits to 1e10, where the softmax of values an
    ulp apart compares nothing, so the agreement is checked on them."""
    import onnx
    logits = next(n.input[0] for n in reversed(m.graph.node) if n.op_type == "Softmax")
    m.graph.output.append(onnx.helper.make_empty_tensor_value_info(logits))
    return m, logits


def ort_session(m, threads):
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    return ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def side(args):
    """One side's timings in this process, as JSON on stdout."""
    m = load_proto(args.model)
    steps, stateful = calls(args.model, m)
    t0 = time.perf_counter()
    if args.side == "backplane":
        import backplane as bp
        import backplane.onnx as bo
        steps = [{k: bp.asarray(v, backend=args.backend) for k, v in f.items()} for f in steps]
        model = bo.load(m, backend=args.backend)
        names = [o.name for o in model.outputs]

        def run():
            state = None
            for f in steps:
                outs = model.run(dict(f, **state) if state else f)
                if stateful:  # the next chunk takes this one's state, on the backend
                    state = {"state": outs[names[1]]}
            for t in outs.values():
                t.numpy()
    else:
        sess = ort_session(m, args.threads)

        def run():
            state = None
            for f in steps:
                outs = sess.run(None, dict(f, **state) if state else f)
                if stateful:
                    state = {"state": outs[1]}
    run()
    first = time.perf_counter() - t0
    # untimed runs first, the same on both sides: right after an OpenBLAS
    # library loads (numpy's, and blas_cpu's when the model loads) its own
    # idle thread spins for some 0.1 s (OpenBLAS's thread timeout) and
    # takes a core from a two-thread run; the table is the steady state
    warm_until = time.perf_counter() + args.warmup
    while time.perf_counter() < warm_until:
        run()
    times = []
    for _ in range(args.rounds):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    print(json.dumps({"first": first, "median": statistics.median(times)}))


def check(name, backend, threads):
    """backplane and onnxruntime agree on the model's logits (the light
    models), on every output of the first call (the others)."""
    import backplane.onnx as bo
    if name not in LIGHT:
        m = load_proto(name)
        feeds = calls(name, m)[0][0]
        mine = bo.load(m, backend=backend).run(feeds)
        theirs = ort_session(m, threads).run(None, feeds)
        for o, want in zip(m.graph.output, theirs):
            np.testing.assert_allclose(mine[o.name].numpy(), want, rtol=1e-4, atol=1e-4)
        return len(m.graph.node)
    m, logits = with_logits(light_model(name))
    feeds = dummy_inputs(m)
    mine = bo.load(m, backend=backend).run(feeds)[logits].numpy()
    theirs = ort_session(m, threads).run([logits], feeds)[0]
    scale = float(np.max(np.abs(theirs)))
    np.testing.assert_allclose(mine, theirs, rtol=1e-4, atol=1e-5 * scale)
    return len(m.graph.node)


def measure(name, args, config):
    res = {"backplane": [], "onnxruntime": []}
    for _ in range(args.repeats):
        for s in res:
            out = subprocess.run([sys.executable, __file__, "--side", s, "--model", name,
                                  "--backend", args.backend, "--threads", str(args.threads),
                                  "--rounds", str(args.rounds), "--warmup", str(args.warmup)],
                                 capture_output=True, text=True, check=True,
                                 env=dict(os.environ, BP_CONFIG=config))
            res[s].append(json.loads(out.stdout.strip().splitlines()[-1]))
    return {s: (statistics.median(r["first"] for r in v), statistics.median(r["median"] for r in v))
            for s, v in res.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=15, help="timed runs per process")
    ap.add_argument("--warmup", type=float, default=1.0,
                    help="seconds of untimed runs per process after the first (default 1)")
    ap.add_argument("--repeats", type=int, default=3, help="processes per side, alternating")
    ap.add_argument("--backend", default="blas_cpu")
    ap.add_argument("--threads", type=int, default=os.cpu_count(),
                    help="onnxruntime's intra-op threads and blas_cpu's pool (its threads key, "
                         "through a BP_CONFIG file; default: the CPUs)")
    ap.add_argument("--side", choices=["backplane", "onnxruntime"], help=argparse.SUPPRESS)
    ap.add_argument("--model", help=argparse.SUPPRESS)
    ap.add_argument("models", nargs="*", default=list(MODELS))
    args = ap.parse_args()
    if args.side:
        return side(args)
    import onnx
    import onnxruntime as ort

    import backplane as bp
    print(f"backplane {bp.__version__} on {args.backend}, onnxruntime {ort.__version__} "
          f"({args.threads} threads), onnx {onnx.__version__}; {args.repeats} processes a side, "
          f"alternating, {args.rounds} runs each after {args.warmup:g} s of untimed runs")
    print(f"{'model':<14} {'nodes':>5} {'bp load+1':>9} {'ort new+1':>9} {'bp ms/run':>10} "
          f"{'ort ms/run':>10} {'ratio':>8}")
    ratios = []
    # blas_cpu's pool takes the same threads as onnxruntime: a config file
    # for the backplane side's processes
    with tempfile.NamedTemporaryFile("w", suffix=".ini", prefix="bp-bench-") as config:
        config.write(f"[backend.blas_cpu]\nthreads = {args.threads}\n")
        config.flush()
        for name in args.models:
            ratios.append(run_one(name, args, config.name))
    geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    print(f"geometric mean of the ratios (onnxruntime time / backplane time): {geo:.2f}x")


def run_one(name, args, config):
    """Checks and measures one model, prints its line, returns its ratio."""
    nodes = check(name, args.backend, args.threads)
    r = measure(name, args, config)
    (bf, bm), (of, om) = r["backplane"], r["onnxruntime"]
    print(f"{name:<14} {nodes:>5} {bf * 1e3:>9.1f} {of * 1e3:>9.1f} {bm * 1e3:>10.2f} "
          f"{om * 1e3:>10.2f} {om / bm:>7.2f}x", flush=True)
    return om / bm


if __name__ == "__main__":
    main()

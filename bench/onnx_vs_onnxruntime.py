#!/usr/bin/env python3
"""ONNX models on backplane (backplane.onnx) against onnxruntime's CPU
provider, side by side, with the same number of threads.

The models: ONNX's light ResNet-50, SqueezeNet, ShuffleNet and Inception v1
(PyPI onnx's backend test data: the real topologies, batch 1, 224x224), fed
ONNX's dummy inputs. Prints, per model: load + first run against session
creation + first run, then the median time per run over interleaved rounds
and the throughput ratio (onnxruntime's time / backplane's: above 1,
backplane is faster), and the geometric mean. Checks first that the two
agree. A measurement, not a test: it never fails on speed. Needs onnx and
onnxruntime (pip install onnx onnxruntime).

    PYTHONPATH=build/python python3 bench/onnx_vs_onnxruntime.py [--rounds 7] [--backend NAME]
"""
import argparse
import math
import os
import statistics
import time

import numpy as np

import backplane as bp
import backplane.onnx as bo

MODELS = ("resnet50", "squeezenet", "shufflenet", "inception_v1")


def dummy_inputs(m):
    """ONNX's backend runner's inputs (generate_dummy_data, random=False)."""
    inits = {t.name for t in m.graph.initializer}
    feeds = {}
    for x in m.graph.input:
        if x.name in inits:
            continue
        shape = tuple(d.dim_value if d.HasField("dim_value") else 1
                      for d in x.type.tensor_type.shape.dim)
        n = int(np.prod(shape))
        feeds[x.name] = (np.arange(n).reshape(shape) / n).astype(np.float32)
    return feeds


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def one_model(name, backend, threads, rounds, onnx, ort):
    path = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light",
                        f"light_{name}.onnx")
    m = onnx.load(path)
    feeds = dummy_inputs(m)
    tensors = {k: bp.asarray(v, backend=backend) for k, v in feeds.items()}
    # The agreement is checked on the logits (the final Softmax's input): the
    # dummy inputs drive them to 1e10, where the softmax of values an ulp
    # apart is not a comparison of the two runtimes.
    logits = next(n.input[0] for n in reversed(m.graph.node) if n.op_type == "Softmax")
    m.graph.output.append(onnx.helper.make_empty_tensor_value_info(logits))
    out = m.graph.output[0].name

    def bp_first():
        model = bo.load(m, backend=backend)
        return model, model.run(tensors)[logits].numpy()

    (model, mine), bp_load = timed(bp_first)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1

    def ort_first():
        sess = ort.InferenceSession(m.SerializeToString(), opts,
                                    providers=["CPUExecutionProvider"])
        return sess, sess.run([logits], feeds)[0]

    (sess, theirs), ort_load = timed(ort_first)
    scale = float(np.max(np.abs(theirs)))
    np.testing.assert_allclose(mine, theirs, rtol=1e-4, atol=1e-5 * scale)

    def bp_run():  # both compute every output: the model's and the logits
        for t in model.run(tensors).values():
            t.numpy()

    def ort_run():
        sess.run(None, feeds)

    t_bp, t_ort = [], []
    for _ in range(rounds):  # interleaved: the machine's noise hits both alike
        t_bp.append(timed(bp_run)[1])
        t_ort.append(timed(ort_run)[1])
    a, b = statistics.median(t_bp), statistics.median(t_ort)
    print(f"{name:<14} {len(m.graph.node):>5} {bp_load * 1e3:>9.1f} {ort_load * 1e3:>9.1f} "
          f"{a * 1e3:>10.2f} {b * 1e3:>10.2f} {b / a:>7.2f}x", flush=True)
    return b / a


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--backend", default="blas_cpu")
    ap.add_argument("--threads", type=int, default=os.cpu_count(),
                    help="onnxruntime's intra-op threads (default: the CPUs, as blas_cpu's pool)")
    ap.add_argument("models", nargs="*", default=list(MODELS))
    args = ap.parse_args()
    import onnx
    import onnxruntime as ort
    print(f"backplane {bp.__version__} on {args.backend}, onnxruntime {ort.__version__} "
          f"({args.threads} threads), onnx {onnx.__version__}; median of {args.rounds} "
          f"interleaved rounds")
    print(f"{'model':<14} {'nodes':>5} {'bp load+1':>9} {'ort new+1':>9} {'bp ms/run':>10} "
          f"{'ort ms/run':>10} {'ratio':>8}")
    ratios = [one_model(n, args.backend, args.threads, args.rounds, onnx, ort)
              for n in args.models]
    geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    print(f"geometric mean of the ratios (onnxruntime time / backplane time): {geo:.2f}x")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A compiled MLP forward pass, backplane.jit against jax.jit (CPU), side by
side.

The model: 784-512-512-10, batch 256, relu, f32, logits out. Prints each
one's first call (trace + compile + run) and the median time per call over
interleaved rounds, and the ratio; checks that the two agree first. A
measurement, not a test: it never fails on speed. Needs jax (pip install
jax).

    PYTHONPATH=build/python python3 bench/mlp_forward_vs_jax.py [--rounds 7] [--backend NAME]
"""
import argparse
import statistics
import time
import timeit

import numpy as np

import backplane as bp

SIZES = (784, 512, 512, 10)
BATCH = 256


def forward(p, x, relu):
    h = x
    for i in range(len(SIZES) - 1):
        h = h @ p[f"w{i}"] + p[f"b{i}"]
        if i < len(SIZES) - 2:
            h = relu(h)
    return h


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--backend", default=None, help="backplane backend (default: the default)")
    args = ap.parse_args()
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(0)
    params = {}
    for i, (a, b) in enumerate(zip(SIZES, SIZES[1:])):
        params[f"w{i}"] = (rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32)
        params[f"b{i}"] = rng.standard_normal(b).astype(np.float32) * 0.1
    x = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)

    bp_p = {k: bp.asarray(v, backend=args.backend) for k, v in params.items()}
    bp_x = bp.asarray(x, backend=args.backend)
    jx_p = {k: jnp.asarray(v) for k, v in params.items()}
    jx_x = jnp.asarray(x)

    bp_f = bp.jit(lambda p, x: forward(p, x, bp.relu))
    jx_f = jax.jit(lambda p, x: forward(p, x, jax.nn.relu))
    t0 = time.perf_counter()
    got = bp_f(bp_p, bp_x).numpy()
    t_bp_first = time.perf_counter() - t0
    t0 = time.perf_counter()
    want = np.asarray(jx_f(jx_p, jx_x).block_until_ready())
    t_jx_first = time.perf_counter() - t0
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)  # f32 GEMMs of two libraries
    s = bp_f.lower(bp_p, bp_x)
    number = 20
    t_bp, t_jx = [], []
    for _ in range(args.rounds):
        t_bp.append(timeit.timeit(lambda: bp_f(bp_p, bp_x).numpy(), number=number) / number)
        t_jx.append(timeit.timeit(lambda: np.asarray(jx_f(jx_p, jx_x).block_until_ready()),
                                  number=number) / number)
    b, j = statistics.median(t_bp) * 1e3, statistics.median(t_jx) * 1e3
    print(f"jax {jax.__version__}; backplane on {s['backend']}: {s['nodes_planned']} nodes, "
          f"{s['nodes_fused']} in {s['fused_groups']} fused group(s), peak {s['peak_bytes']} bytes")
    print(f"first call   backplane {t_bp_first * 1e3:8.1f} ms   jax {t_jx_first * 1e3:8.1f} ms")
    print(f"per call     backplane {b:8.2f} ms   jax {j:8.2f} ms   jax/backplane {j / b:.2f}x")


if __name__ == "__main__":
    main()

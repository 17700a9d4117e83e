#!/usr/bin/env python3
"""A compiled MLP training step, backplane against JAX (CPU), side by side,
and against PyTorch's eager step (CPU) where torch imports.

The model: 784-512-512-10, batch 256, relu, softmax cross-entropy, Adam
(PyTorch's formulas), f32. backplane: jit(value_and_grad(loss) + optim.Adam's
update); JAX: jax.jit of value_and_grad plus the same Adam written in
jax.numpy; PyTorch (optional): the same model eagerly with autograd and
torch.optim.Adam. Prints each one's first call (trace + compile + run) and
the median step time over interleaved rounds, and the ratios. backplane's
step donates its parameters and state (--no-donate: it does not). A
measurement, not a test: it never fails. Needs jax (pip install jax).

    PYTHONPATH=build/python python3 bench/train_step_vs_jax.py [--rounds 7] [--backend NAME]
"""
import argparse
import statistics
import time

import numpy as np

import backplane as bp

SIZES = (784, 512, 512, 10)
BATCH = 256


def make_data(rng):
    params = {}
    for i, (a, b) in enumerate(zip(SIZES, SIZES[1:])):
        params[f"w{i}"] = (rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32)
        params[f"b{i}"] = np.zeros(b, np.float32)
    x = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
    y = rng.integers(0, SIZES[-1], BATCH)
    return params, x, y


def bp_step_fn(opt, donate):
    def loss(p, x, y):
        h = x
        for i in range(len(SIZES) - 1):
            h = h @ p[f"w{i}"] + p[f"b{i}"]
            if i < len(SIZES) - 2:
                h = bp.relu(h)
        return bp.softmax_cross_entropy_loss(h, y)

    def step(p, s, x, y):
        value, grads = bp.value_and_grad(loss)(p, x, y)
        p, s = opt.update(p, grads, s)
        return value, p, s
    return bp.jit(step, donate_argnums=(0, 1) if donate else ())


def jax_step_fn():
    import jax
    import jax.numpy as jnp

    def loss(p, x, y):
        h = x
        for i in range(len(SIZES) - 1):
            h = h @ p[f"w{i}"] + p[f"b{i}"]
            if i < len(SIZES) - 2:
                h = jax.nn.relu(h)
        logp = jax.nn.log_softmax(h, -1)
        return -jnp.take_along_axis(logp, y[:, None], 1).mean()

    b1, b2, lr, eps = 0.9, 0.999, 1e-3, 1e-8

    @jax.jit
    def step(p, m, v, t, x, y):
        value, g = jax.value_and_grad(loss)(p, x, y)
        t = t + 1
        m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, g)
        v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
        c1, c2 = 1 - b1 ** t, 1 - b2 ** t
        p = jax.tree_util.tree_map(
            lambda p, m, v: p - lr / c1 * m / (jnp.sqrt(v) / jnp.sqrt(c2) + eps), p, m, v)
        return value, p, m, v, t
    return step


def torch_step_fn(params):
    """PyTorch's eager step, or None where torch does not import."""
    try:
        import torch
    except ImportError:
        return None, None
    p = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
    opt = torch.optim.Adam(list(p.values()), lr=1e-3)

    def step(x, y):
        opt.zero_grad(set_to_none=True)
        h = x
        for i in range(len(SIZES) - 1):
            h = h @ p[f"w{i}"] + p[f"b{i}"]
            if i < len(SIZES) - 2:
                h = torch.relu(h)
        loss = torch.nn.functional.cross_entropy(h, y)
        loss.backward()
        opt.step()
        return loss
    return step, torch


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--steps", type=int, default=10, help="steps per timing")
    ap.add_argument("--backend", default=None)
    ap.add_argument("--no-donate", action="store_true", help="backplane's step keeps its inputs")
    args = ap.parse_args()
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        print("jax is not installed (pip install jax): nothing to compare with")
        return
    rng = np.random.default_rng(0)
    params, x, y = make_data(rng)

    opt = bp.optim.Adam(lr=1e-3)
    bstep = bp_step_fn(opt, not args.no_donate)
    bp_p = {k: bp.asarray(v, backend=args.backend) for k, v in params.items()}
    bp_s = opt.init(bp_p)
    bx, by = bp.asarray(x, backend=args.backend), bp.asarray(y, backend=args.backend)
    t0 = time.perf_counter()
    value, bp_p, bp_s = bstep(bp_p, bp_s, bx, by)
    float(value)
    bp_first = time.perf_counter() - t0

    jstep = jax_step_fn()
    jp = {k: jnp.asarray(v) for k, v in params.items()}
    jm = jax.tree_util.tree_map(jnp.zeros_like, jp)
    jv = jax.tree_util.tree_map(jnp.zeros_like, jp)
    jt = jnp.zeros((), jnp.float32)
    jx, jy = jnp.asarray(x), jnp.asarray(y)
    t0 = time.perf_counter()
    out = jstep(jp, jm, jv, jt, jx, jy)
    out[0].block_until_ready()
    jax_first = time.perf_counter() - t0
    _, jp, jm, jv, jt = out

    tstep, torch = torch_step_fn(params)
    if tstep:
        tx, ty = torch.tensor(x), torch.tensor(y)
        t0 = time.perf_counter()
        tstep(tx, ty).item()
        torch_first = time.perf_counter() - t0

    bp_times, jax_times, torch_times = [], [], []
    for _ in range(args.rounds):
        t0 = time.perf_counter()
        for _ in range(args.steps):
            value, bp_p, bp_s = bstep(bp_p, bp_s, bx, by)
        float(value)
        bp_times.append((time.perf_counter() - t0) / args.steps)
        t0 = time.perf_counter()
        for _ in range(args.steps):
            value_j, jp, jm, jv, jt = jstep(jp, jm, jv, jt, jx, jy)
        value_j.block_until_ready()
        jax_times.append((time.perf_counter() - t0) / args.steps)
        if tstep:
            t0 = time.perf_counter()
            for _ in range(args.steps):
                value_t = tstep(tx, ty)
            value_t.item()
            torch_times.append((time.perf_counter() - t0) / args.steps)
    b, j = statistics.median(bp_times), statistics.median(jax_times)
    print(f"backend {bx.backend}, jax {jax.__version__} on {jax.devices()[0].platform}")
    print(f"first call (trace, compile, run): backplane {bp_first * 1e3:.1f} ms, "
          f"jax {jax_first * 1e3:.1f} ms ({bp_first / jax_first:.4f} of jax's)")
    print(f"step, median of {args.rounds} rounds of {args.steps}: backplane {b * 1e3:.2f} ms, "
          f"jax {j * 1e3:.2f} ms; jax/backplane {j / b:.2f} (at least 1.0: backplane as fast)")
    if tstep:
        t = statistics.median(torch_times)
        print(f"pytorch {torch.__version__} eager, {torch.get_num_threads()} threads: first "
              f"step {torch_first * 1e3:.1f} ms, step {t * 1e3:.2f} ms; pytorch/backplane "
              f"{t / b:.2f} (at least 1.0: backplane as fast)")
    else:
        print("pytorch: torch does not import here, not compared")
    print(f"losses after the run: backplane {float(value):.6f}, jax {float(value_j):.6f}"
          + (f", pytorch {value_t.item():.6f}" if tstep else ""))


if __name__ == "__main__":
    main()

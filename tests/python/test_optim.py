"""backplane.optim: SGD, Adam and AdamW over pytrees against PyTorch's
formulas in NumPy; a jitted training step (value_and_grad + update) equal to
the eager one bit for bit; a checkpoint resuming bit for bit; refusals."""
import os

import numpy as np
import pytest

import backplane as bp


def numpy_adam(p, grads, lr, b1=0.9, b2=0.999, eps=1e-8, wd=0.0, decoupled=False):
    m = np.zeros_like(p)
    v = np.zeros_like(p)
    for t, g in enumerate(grads, 1):
        if decoupled:
            p = p * (1 - lr * wd)
        elif wd:
            g = g + wd * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        p = p - lr / (1 - b1 ** t) * m / (np.sqrt(v) / np.sqrt(1 - b2 ** t) + eps)
    return p


def numpy_sgd(p, grads, lr, momentum=0.0, nesterov=False, wd=0.0):
    buf = None
    for g in grads:
        g = g + wd * p
        if momentum:
            buf = g.copy() if buf is None else momentum * buf + g
            g = g + momentum * buf if nesterov else buf
        p = p - lr * g
    return p


RNG = np.random.default_rng(3)
P0 = {"a": RNG.standard_normal((2, 3)), "b": [RNG.standard_normal(4)]}
GRADS = [{"a": RNG.standard_normal((2, 3)), "b": [RNG.standard_normal(4)]} for _ in range(4)]


def run(opt):
    p = {"a": bp.asarray(P0["a"]), "b": [bp.asarray(P0["b"][0])]}
    state = opt.init(p)
    for g in GRADS:
        p, state = opt.update(p, {"a": bp.asarray(g["a"]), "b": [bp.asarray(g["b"][0])]}, state)
    assert float(state["step"]) == len(GRADS)
    return p


@pytest.mark.parametrize("opt,ref", [
    (bp.optim.SGD(lr=0.1), lambda p, gs: numpy_sgd(p, gs, 0.1)),
    (bp.optim.SGD(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
     lambda p, gs: numpy_sgd(p, gs, 0.1, 0.9, True, 0.01)),
    (bp.optim.Adam(lr=0.05, weight_decay=0.1), lambda p, gs: numpy_adam(p, gs, 0.05, wd=0.1)),
    (bp.optim.AdamW(lr=0.05), lambda p, gs: numpy_adam(p, gs, 0.05, wd=0.01, decoupled=True)),
])
def test_the_optimizers_follow_pytorchs_formulas_over_a_pytree(opt, ref):
    p = run(opt)
    np.testing.assert_allclose(p["a"].numpy(), ref(P0["a"], [g["a"] for g in GRADS]),
                               rtol=1e-12)
    np.testing.assert_allclose(p["b"][0].numpy(), ref(P0["b"][0], [g["b"][0] for g in GRADS]),
                               rtol=1e-12)


def loss_fn(p, x, y):
    h = bp.tanh(x @ p["w"] + p["c"])
    return bp.softmax_cross_entropy_loss(h, y)


def data():
    x = bp.asarray(RNG.standard_normal((16, 5)).astype("float32"))
    y = bp.asarray(RNG.integers(0, 3, 16))
    p = {"w": bp.asarray(RNG.standard_normal((5, 3)).astype("float32")),
         "c": bp.zeros(3, dtype="float32")}
    return p, x, y


def test_a_jitted_training_step_equals_the_eager_step_bit_for_bit():
    opt = bp.optim.AdamW(lr=0.01, max_grad_norm=1.0)
    p, x, y = data()

    def step(p, state, x, y):
        loss, grads = bp.value_and_grad(loss_fn)(p, x, y)
        p, state = opt.update(p, grads, state)
        return loss, p, state

    jstep = bp.jit(step)
    pe, se = p, opt.init(p)
    pj, sj = p, opt.init(p)
    first = None
    for _ in range(5):
        le, pe, se = step(pe, se, x, y)
        lj, pj, sj = jstep(pj, sj, x, y)
        assert le.numpy().tobytes() == lj.numpy().tobytes()
        first = first if first is not None else float(le)
    for k in p:
        assert pe[k].numpy().tobytes() == pj[k].numpy().tobytes()
    assert float(le) < first
    assert jstep.cache_size() == 1


def test_a_step_that_donates_params_and_state_gives_the_same_bits_and_holds_less():
    opt = bp.optim.Adam(lr=0.01)
    p, x, y = data()

    def step(p, state, x, y):
        loss, grads = bp.value_and_grad(loss_fn)(p, x, y)
        p, state = opt.update(p, grads, state)
        return loss, p, state

    plain = bp.jit(step)
    donating = bp.jit(step, donate_argnums=(0, 1))
    assert donating.lower(p, opt.init(p), x, y)["donatable_outputs"] > 0
    pa, sa = p, opt.init(p)
    pb, sb = {k: v + 0 for k, v in p.items()}, opt.init(p)
    for _ in range(3):
        la, pa, sa = plain(pa, sa, x, y)
        old = pb
        before = bp.stats()["bytes_in_use"]
        lb, pb, sb = donating(pb, sb, x, y)
        grown = bp.stats()["bytes_in_use"] - before
        assert la.numpy().tobytes() == lb.numpy().tobytes()
        with pytest.raises(bp.InvalidArgumentError, match="donated"):
            old["w"] + 1
    for k in p:
        assert pa[k].numpy().tobytes() == pb[k].numpy().tobytes()
    # the step's new parameters and state took donated memory: what a step
    # adds is less than all of them
    def leaves(t):
        if isinstance(t, dict):
            return [x for v in t.values() for x in leaves(v)]
        if isinstance(t, (list, tuple)):
            return [x for v in t for x in leaves(v)]
        return [t]

    news = sum(t.nbytes for t in leaves(pb) + leaves(sb))
    assert grown < news, (grown, news)


def test_a_checkpoint_of_params_and_state_resumes_bit_for_bit(tmp_path):
    opt = bp.optim.Adam(lr=0.02)
    p, x, y = data()
    step = bp.jit(lambda p, s, x, y: opt.update(p, bp.grad(loss_fn)(p, x, y), s))
    a, sa = p, opt.init(p)
    for _ in range(6):
        a, sa = step(a, sa, x, y)
    b, sb = p, opt.init(p)
    for _ in range(3):
        b, sb = step(b, sb, x, y)
    path = os.path.join(tmp_path, "ckpt.safetensors")
    bp.save_safetensors(path, {**{f"p.{k}": v for k, v in b.items()},
                               **{f"s.{k}": v for k, v in sb.items()}})
    back = bp.load_safetensors(path)
    b = {k: back[f"p.{k}"] for k in b}
    sb = {k: back[f"s.{k}"] for k in sb}
    for _ in range(3):
        b, sb = step(b, sb, x, y)
    for k in a:
        assert a[k].numpy().tobytes() == b[k].numpy().tobytes()


def test_refusals_name_what_is_wrong():
    opt = bp.optim.SGD(lr=0.1)
    p = {"w": bp.zeros(3)}
    s = opt.init(p)
    with pytest.raises(ValueError, match="structure of params"):
        opt.update(p, [bp.zeros(3)], s)
    with pytest.raises(bp.InvalidArgumentError, match="lr"):
        bp.optim.SGD(lr=-1.0).init(p)
    with pytest.raises(bp.InvalidArgumentError, match="nesterov"):
        bp.optim.SGD(nesterov=True).init(p)
    with pytest.raises(bp.ShapeError):
        opt.update(p, {"w": bp.zeros(4)}, s)
    with pytest.raises(bp.InvalidArgumentError, match="make it with init"):
        bp.optim.Adam().update(p, {"w": bp.zeros(3)}, s)


def test_stats_show_the_peak_bytes_in_use_and_reset_restarts_it():
    be = bp.backend()
    bp.stats(be, reset=True)
    base = bp.stats(be)["peak_bytes_in_use"]
    big = bp.zeros((1 << 16,), dtype="float64")  # 512 KiB
    del big
    s = bp.stats(be, reset=True)
    assert s["peak_bytes_in_use"] >= base + (1 << 19)
    assert bp.stats(be)["peak_bytes_in_use"] == bp.stats(be)["bytes_in_use"]

"""backplane.grad and backplane.value_and_grad: against analytic NumPy
gradients and finite differences, over pytrees, with aux outputs, composed
with jit and with themselves (second order), the refusals; against JAX's
value_and_grad where jax is importable (docs/gradients.md)."""
import numpy as np
import pytest

import backplane as bp

RNG = np.random.default_rng(7)


def finite_differences(f, arrays, k, eps=1e-6):
    """d f / d arrays[k] by central differences, f taking NumPy arrays."""
    x = arrays[k]
    g = np.zeros_like(x)
    for j in np.ndindex(x.shape):
        keep = x[j]
        x[j] = keep + eps
        hi = f(*arrays)
        x[j] = keep - eps
        lo = f(*arrays)
        x[j] = keep
        g[j] = (hi - lo) / (2 * eps)
    return g


def mlp_loss(params, x, y):
    h = bp.tanh(x @ params["w1"] + params["b1"])
    logits = h @ params["w2"] + params["b2"]
    return -(bp.log_softmax(logits, -1) * y).sum() / x.shape[0]


def mlp_loss_np(w1, b1, w2, b2, x, y):
    h = np.tanh(x @ w1 + b1)
    z = h @ w2 + b2
    z = z - z.max(-1, keepdims=True)
    ls = z - np.log(np.exp(z).sum(-1, keepdims=True))
    return -(ls * y).sum() / x.shape[0]


def mlp_data():
    params = {"w1": RNG.standard_normal((4, 6)), "b1": RNG.standard_normal(6),
              "w2": RNG.standard_normal((6, 3)), "b2": RNG.standard_normal(3)}
    x = RNG.standard_normal((5, 4))
    y = np.eye(3)[RNG.integers(0, 3, 5)]
    return params, x, y


def test_value_and_grad_of_an_mlp_over_a_dict_of_parameters_matches_finite_differences():
    params, x, y = mlp_data()
    tp = {k: bp.asarray(v) for k, v in params.items()}
    value, grads = bp.value_and_grad(mlp_loss)(tp, bp.asarray(x), bp.asarray(y))
    order = ["w1", "b1", "w2", "b2"]
    arrays = [params[k].copy() for k in order] + [x, y]
    assert abs(float(value) - mlp_loss_np(*arrays)) < 1e-12
    assert set(grads) == set(order)
    for k, name in enumerate(order):
        want = finite_differences(mlp_loss_np, arrays, k)
        np.testing.assert_allclose(grads[name].numpy(), want, rtol=1e-5, atol=1e-7)


def test_grad_with_argnums_tuple_gives_a_tuple_in_the_arguments_structure():
    a, b = RNG.standard_normal((3, 2)), RNG.standard_normal((2,))

    def f(a, lst):
        return (bp.sin(a) * lst[0]).sum() + (lst[1] ** 2).sum()

    ga, gl = bp.grad(f, argnums=(0, 1))(bp.asarray(a), [bp.asarray(b), bp.asarray(a)])
    np.testing.assert_allclose(ga.numpy(), np.cos(a) * b, rtol=1e-13)
    assert isinstance(gl, list) and len(gl) == 2
    np.testing.assert_allclose(gl[0].numpy(), np.sin(a).sum(0), rtol=1e-13)
    np.testing.assert_allclose(gl[1].numpy(), 2 * a, rtol=1e-13)


def test_has_aux_returns_the_aux_values_beside_the_gradient():
    x = RNG.standard_normal(4)

    def f(x):
        y = x * x
        return y.sum(), {"y": y, "n": bp.exp(x)}

    (value, aux), g = bp.value_and_grad(f, has_aux=True)(bp.asarray(x))
    np.testing.assert_allclose(float(value), (x * x).sum(), rtol=1e-14)
    np.testing.assert_allclose(aux["y"].numpy(), x * x, rtol=1e-14)
    np.testing.assert_allclose(aux["n"].numpy(), np.exp(x), rtol=1e-14)
    np.testing.assert_allclose(g.numpy(), 2 * x, rtol=1e-14)
    g2, aux2 = bp.grad(f, has_aux=True)(bp.asarray(x))
    np.testing.assert_allclose(g2.numpy(), 2 * x, rtol=1e-14)


def test_grad_is_traced_once_per_signature_and_reruns_the_plan():
    calls = []

    def f(x):
        calls.append(1)
        return (x ** 3).sum()

    df = bp.grad(f)
    for _ in range(3):
        g = df(bp.asarray(np.arange(3.0)))
    assert len(calls) == 1
    np.testing.assert_allclose(g.numpy(), 3 * np.arange(3.0) ** 2)
    df(bp.asarray(np.arange(4.0)))  # a new shape: traced again
    assert len(calls) == 2


def test_jit_of_value_and_grad_is_one_plan_with_both():
    params, x, y = mlp_data()
    tp = {k: bp.asarray(v) for k, v in params.items()}
    step = bp.jit(bp.value_and_grad(mlp_loss))
    v1, g1 = step(tp, bp.asarray(x), bp.asarray(y))
    v2, g2 = bp.value_and_grad(mlp_loss)(tp, bp.asarray(x), bp.asarray(y))
    assert float(v1) == float(v2)
    for k in g1:
        np.testing.assert_array_equal(g1[k].numpy(), g2[k].numpy())


def test_jit_of_a_jitted_function_calls_the_function_not_the_inner_ones_attributes():
    def f(x):
        return bp.tanh(x) * 2

    x = bp.asarray(RNG.standard_normal(3))
    np.testing.assert_array_equal(bp.jit(bp.jit(f))(x).numpy(), f(x).numpy())
    g = bp.grad(bp.jit(lambda x: (x * x).sum()))(x)
    np.testing.assert_allclose(g.numpy(), 2 * x.numpy(), rtol=1e-14)


def test_the_gradient_of_a_gradient_is_the_second_derivative():
    x = RNG.standard_normal(5)

    def f(x):
        return (bp.sin(x) * x).sum()

    def df_dot_v(x, v):
        return (bp.grad(f)(x) * v).sum()

    v = RNG.standard_normal(5)
    hv = bp.grad(df_dot_v)(bp.asarray(x), bp.asarray(v))
    np.testing.assert_allclose(hv.numpy(), (2 * np.cos(x) - np.sin(x) * x) * v, rtol=1e-12)


def test_a_hessian_vector_product_through_matmul_matches_differences_of_the_gradient():
    x = RNG.standard_normal((6, 4))
    w = RNG.standard_normal((4, 3))
    v = RNG.standard_normal((4, 3))

    def f(w, x):
        return (bp.tanh(x @ w) ** 2).sum() + (w * w * w).sum()

    def hvp(w, x, v):
        return (bp.grad(f)(w, x) * v).sum()

    got = bp.grad(hvp)(bp.asarray(w), bp.asarray(x), bp.asarray(v)).numpy()
    eps = 1e-6
    g = [bp.grad(f)(bp.asarray(w + s * eps * v), bp.asarray(x)).numpy() for s in (1, -1)]
    np.testing.assert_allclose(got, (g[0] - g[1]) / (2 * eps), rtol=1e-6, atol=1e-8)


def test_an_argument_the_loss_does_not_use_gets_zeros():
    g = bp.grad(lambda a, b: (a * 2).sum(), argnums=1)(bp.asarray([1.0, 2.0]),
                                                        bp.asarray([3.0, 4.0, 5.0]))
    np.testing.assert_array_equal(g.numpy(), np.zeros(3))


def test_refusals_say_what_to_do():
    x = bp.asarray([1.0, 2.0])
    with pytest.raises(bp.ShapeError, match="scalar"):
        bp.grad(lambda x: x * 2)(x)
    with pytest.raises(bp.DTypeError, match="float"):
        bp.grad(lambda x: (x * 2).sum())(bp.asarray([1, 2]))
    with pytest.raises(TypeError, match="argnums names argument 3"):
        bp.grad(lambda x: x.sum(), argnums=3)(x)
    with pytest.raises(TypeError, match="scalar Tensor"):
        bp.grad(lambda x: 3.0)(x)
    with pytest.raises(TypeError, match="has_aux"):
        bp.grad(lambda x: x.sum(), has_aux=True)(x)
    with pytest.raises(bp.UnsupportedOpError, match="i64"):
        bp.grad(lambda x: (x * bp.argmax(x).astype("float64")).sum())(x)


def test_value_and_grad_matches_jax_on_an_mlp_loss():
    jax = pytest.importorskip("jax", reason="jax is an optional oracle (pip install jax)")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    params, x, y = mlp_data()

    def jloss(p, x, y):
        h = jnp.tanh(x @ p["w1"] + p["b1"])
        logits = h @ p["w2"] + p["b2"]
        return -(jax.nn.log_softmax(logits, -1) * y).sum() / x.shape[0]

    jv, jg = jax.value_and_grad(jloss)(params, x, y)
    tp = {k: bp.asarray(v) for k, v in params.items()}
    v, g = bp.value_and_grad(mlp_loss)(tp, bp.asarray(x), bp.asarray(y))
    assert abs(float(v) - float(jv)) <= 1e-10 * abs(float(jv))
    for k in params:
        np.testing.assert_allclose(g[k].numpy(), np.asarray(jg[k]), rtol=1e-10, atol=1e-12)


def cnn_data():
    params = {"w": RNG.standard_normal((4, 2, 3, 3)) * 0.5, "b": RNG.standard_normal(4),
              "scale": RNG.standard_normal(16) + 1.0, "shift": RNG.standard_normal(16),
              "v": RNG.standard_normal((16, 3)) * 0.5}
    x = RNG.standard_normal((3, 2, 6, 6))
    labels = RNG.integers(0, 3, 3)
    return params, x, labels


def cnn_loss(p, x, labels):
    """conv (stride 1, pad 1) -> relu -> 2x2 max_pool -> layer_norm over the
    flattened features -> linear -> softmax cross-entropy."""
    h = bp.relu(bp.conv(x, p["w"], p["b"], pads=[1, 1, 1, 1]))          # (3, 4, 6, 6)
    h = bp.max_pool(h, [2, 2], strides=[2, 2])                          # (3, 4, 3, 3)
    h = bp.max_pool(h, [2, 2], strides=[1, 1])                          # (3, 4, 2, 2)
    h = h.reshape((x.shape[0], 16))
    h = bp.layer_norm(h, -1, p["scale"], p["shift"], epsilon=1e-5)
    return bp.softmax_cross_entropy_loss(h @ p["v"], labels)


def attention_data():
    params = {"wq": RNG.standard_normal((8, 8)) * 0.4, "wk": RNG.standard_normal((8, 8)) * 0.4,
              "wv": RNG.standard_normal((8, 8)) * 0.4, "wo": RNG.standard_normal((8, 8)) * 0.4,
              "g": RNG.standard_normal(8) + 1.0}
    x = RNG.standard_normal((2, 5, 8))
    return params, x


def attention_loss(p, x):
    """One pre-norm self-attention block with two heads and a residual."""
    b, t, d = x.shape
    h = bp.layer_norm(x, -1, p["g"], None, epsilon=1e-6)

    def heads(m):                                     # (b, t, d) -> (b, 2, t, d / 2)
        return bp.transpose((h @ m).reshape((b, t, 2, d // 2)), (0, 2, 1, 3))

    q, k, v = heads(p["wq"]), heads(p["wk"]), heads(p["wv"])
    a = bp.softmax(q @ bp.transpose(k, (0, 1, 3, 2)) / np.sqrt(d // 2), -1)
    o = bp.transpose(a @ v, (0, 2, 1, 3)).reshape((b, t, d)) @ p["wo"]
    y = x + o
    return (y * y).mean()


def test_value_and_grad_matches_jax_on_a_cnn_and_an_attention_block():
    jax = pytest.importorskip("jax", reason="jax is an optional oracle (pip install jax)")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    lax = jax.lax

    def jcnn(p, x, labels):
        h = lax.conv_general_dilated(x, p["w"], (1, 1), ((1, 1), (1, 1)))
        h = jax.nn.relu(h + p["b"][None, :, None, None])
        h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
        h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 1, 1), "VALID")
        h = h.reshape(x.shape[0], 16)
        mu = h.mean(-1, keepdims=True)
        var = ((h - mu) ** 2).mean(-1, keepdims=True)
        h = (h - mu) / jnp.sqrt(var + 1e-5) * p["scale"] + p["shift"]
        ls = jax.nn.log_softmax(h @ p["v"], -1)
        return -ls[jnp.arange(x.shape[0]), labels].mean()

    def jattention(p, x):
        b, t, d = x.shape
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        h = (x - mu) / jnp.sqrt(var + 1e-6) * p["g"]

        def heads(m):
            return (h @ m).reshape(b, t, 2, d // 2).transpose(0, 2, 1, 3)

        q, k, v = heads(p["wq"]), heads(p["wk"]), heads(p["wv"])
        a = jax.nn.softmax(q @ k.transpose(0, 1, 3, 2) / np.sqrt(d // 2), -1)
        y = x + (a @ v).transpose(0, 2, 1, 3).reshape(b, t, d) @ p["wo"]
        return (y * y).mean()

    params, x, labels = cnn_data()
    cases = [(cnn_loss, jcnn, params, (x, labels))]
    params, x = attention_data()
    cases.append((attention_loss, jattention, params, (x,)))
    for loss, jloss, params, rest in cases:
        jv, jg = jax.value_and_grad(jloss)(params, *rest)
        tp = {k: bp.asarray(v) for k, v in params.items()}
        v, g = bp.value_and_grad(loss)(tp, *(bp.asarray(a) for a in rest))
        assert abs(float(v) - float(jv)) <= 1e-10 * abs(float(jv)), loss.__name__
        for k in params:
            np.testing.assert_allclose(g[k].numpy(), np.asarray(jg[k]), rtol=1e-10, atol=1e-12,
                                       err_msg=f"{loss.__name__}: d/d{k}")

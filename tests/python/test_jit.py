"""backplane.jit: one trace and one compiled plan per signature, the plan's
results equal to eager calls bit for bit, and the errors a traced function
meets named in Python's terms."""
import re
import warnings

import numpy as np
import pytest

import backplane as bp


def rand(shape, seed=0, dtype="float32", backend=None):
    a = np.random.default_rng(seed).uniform(-3, 3, shape).astype(dtype)
    return bp.asarray(a, backend=backend)


def gelu(x):
    return 0.5 * x * (1 + bp.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


def mlp(x, w, b):
    return bp.relu(x @ w + b)


def softmax(x):
    e = bp.exp(x - bp.max(x, axis=-1, keepdims=True))
    return e / bp.sum(e, axis=-1, keepdims=True)


def same_bits(a, b):
    a, b = a.numpy(), b.numpy()
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def test_gelu_of_primitive_ops_equals_eager_bit_for_bit(backend):
    x = rand((7, 33), backend=backend)
    y = bp.jit(gelu)(x)
    assert y.backend == x.backend
    assert same_bits(y, gelu(x))


def test_mlp_layer_equals_eager_bit_for_bit(backend):
    x, w, b = rand((16, 32), 1, backend=backend), rand((32, 8), 2, backend=backend), \
        rand((8,), 3, backend=backend)
    f = bp.jit(mlp)
    assert same_bits(f(x, w, b), mlp(x, w, b))
    assert same_bits(f(x, w, b), mlp(x, w, b))  # the cached plan, again


def test_softmax_of_primitives_compiles_to_the_softmax_op_with_its_bits(backend):
    """The plan rewrites max, sub, exp, sum and div into one softmax node:
    the op's bits, within the op's tolerance of the primitives run eagerly
    (the row's sum is taken in another order)."""
    x = rand((5, 17), 4, dtype="float64", backend=backend)
    f = bp.jit(softmax)
    assert same_bits(f(x), bp.softmax(x, -1))
    assert f.lower(x)["nodes_planned"] == 1
    np.testing.assert_allclose(f(x).numpy(), softmax(x).numpy(), rtol=1e-14, atol=0)
    assert same_bits(bp.jit(bp.softmax)(x), bp.softmax(x))  # a library op jitted as is


def test_second_call_with_the_same_signature_does_not_trace():
    calls = []

    def f(x):
        calls.append(1)
        return bp.exp(x) + 1

    g = bp.jit(f)
    x1, x2 = rand((4, 3), 1), rand((4, 3), 2)
    assert same_bits(g(x1), f(x1))
    calls.clear()
    for x in (x1, x2, x1):
        assert same_bits(g(x), bp.exp(x) + 1)
    assert calls == []
    assert g.cache_size() == 1


def test_a_new_shape_or_dtype_traces_again():
    calls = []

    def f(x):
        calls.append(x.shape)
        return x * 2

    g = bp.jit(f)
    g(rand((4,)))
    g(rand((5,)))
    g(rand((5,), dtype="float64"))
    g(rand((5,)))
    assert calls == [(4,), (5,), (5,)]
    assert g.cache_size() == 3


def test_static_argnums_take_part_in_the_signature():
    calls = []

    def power(x, n):
        calls.append(n)
        y = x
        for _ in range(n - 1):  # Python control flow, recorded as it ran
            y = y * x
        return y

    g = bp.jit(power, static_argnums=(1,))
    x = rand((6,))
    assert same_bits(g(x, 2), x * x)
    assert same_bits(g(x, 3), x * x * x)
    assert same_bits(g(x, 2), x * x)
    assert calls == [2, 3]
    assert bp.jit(power, static_argnums=-1)(x, 4).shape == (6,)


def test_an_unmarked_python_number_is_refused_with_the_fix():
    g = bp.jit(lambda x, n: x * n)
    with pytest.raises(TypeError, match=r"static_argnums=\(1,\)"):
        g(rand((3,)), 2)


def test_an_unhashable_static_argument_is_refused():
    g = bp.jit(lambda x, n: x, static_argnums=1)
    with pytest.raises(TypeError, match="not hashable"):
        g(rand((3,)), [1])
    with pytest.raises(TypeError, match="static but is a Tensor"):
        g(rand((3,)), rand((1,)))


def test_a_closed_over_tensor_is_captured_by_reference():
    host = np.arange(4, dtype=np.float32)
    w = bp.asarray(host, copy=False)  # the tensor is host's memory
    calls = []

    def f(x):
        calls.append(1)
        return x + w

    g = bp.jit(f)
    x = bp.asarray(np.ones(4, np.float32))
    assert g(x).tolist() == [1, 2, 3, 4]
    host[:] = [10, 20, 30, 40]  # new values, same memory: no retrace, new values used
    assert g(x).tolist() == [11, 21, 31, 41]
    assert calls == [1]


def test_python_scalars_and_lists_inside_become_constants():
    g = bp.jit(lambda x: x * 3 + [1.0, 2.0, 3.0])
    x = rand((2, 3), dtype="float64")
    assert same_bits(g(x), x * 3 + [1.0, 2.0, 3.0])


@pytest.mark.parametrize("read", [float, bool, int, lambda x: x.numpy(), lambda x: x.item(),
                                  print, str, repr])
def test_reading_a_traced_value_says_it_is_symbolic_and_what_to_do(read):
    def f(x):
        read(bp.sum(x))
        return x

    g = bp.jit(f)
    with pytest.raises(bp.InvalidArgumentError) as e:
        g(rand((3,)))
    msg = str(e.value)
    assert "symbolic" in msg and "static" in msg and "outside the jitted function" in msg
    assert "bp_graph" not in msg


def test_branching_on_a_traced_value_is_an_error():
    def f(x):
        if bp.sum(x) > 0:
            return x
        return -x

    with pytest.raises(bp.InvalidArgumentError, match="symbolic"):
        bp.jit(f)(rand((3,)))


def test_eight_signatures_warn_once_naming_the_argument(capfd):
    def f(x, w):
        return x * 2 + w

    g = bp.jit(f)
    w = rand((1,))
    capfd.readouterr()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(1, 12):
            g(rand((n,)), w)
    storms = [c for c in caught if issubclass(c.category, bp.RecompilationWarning)]
    assert len(storms) == 1
    msg = str(storms[0].message)
    # the same warning, once, in the C library's log (stderr), nothing on stdout
    out, err = capfd.readouterr()
    assert out == "" and err.count("backplane: warn: backplane.jit: ") == 1
    assert ".f has been compiled for 8 different signatures" in err
    assert "f" in msg and "argument 0 ('x')" in msg and "shape" in msg
    assert "pad" in msg and "static" in msg
    assert "'w'" not in msg
    assert storms[0].filename == __file__  # points at the caller
    assert g.cache_size() == 11


def test_stats_count_the_compilations():
    before = bp.stats()["jit_compiles"]
    g = bp.jit(lambda x: x + 1)
    b = bp.backend().name
    g(rand((2,), backend=b))
    g(rand((2,), backend=b))
    g(rand((3,), backend=b))
    assert bp.stats()["jit_compiles"] == before + 2
    bp.stats(reset=True)
    assert bp.stats()["jit_compiles"] == 0


def test_a_tuple_or_list_of_outputs_comes_back_as_such():
    def f(x, y):
        return x + y, x * y, x  # an input returned as is too

    g = bp.jit(f)
    x, y = rand((3, 2), 1), rand((3, 2), 2)
    out = g(x, y)
    assert isinstance(out, tuple) and len(out) == 3
    for a, b in zip(out, f(x, y)):
        assert same_bits(a, b)
    lst = bp.jit(lambda x: [x - 1, bp.exp(x)])(x)
    assert isinstance(lst, list) and same_bits(lst[1], bp.exp(x))


def test_an_output_that_depends_on_no_argument_is_a_constant():
    c = rand((2,), 5)
    g = bp.jit(lambda x: (x + 1, c))
    a, b = g(rand((2,)))
    assert b is c
    assert bp.jit(lambda: c)() is c


def test_an_error_in_the_function_propagates_and_leaves_the_jit_usable():
    fail = [True]

    def f(x):
        y = bp.exp(x)
        if fail[0]:
            raise KeyError("boom")
        return y

    g = bp.jit(f)
    x = rand((3,))
    with pytest.raises(KeyError, match="boom"):
        g(x)
    assert g.cache_size() == 0
    fail[0] = False
    assert same_bits(g(x), bp.exp(x))
    with pytest.raises(bp.ShapeError):  # an op's own error, at trace time
        bp.jit(lambda a, b: a + b)(rand((2,)), rand((3,)))
    assert same_bits(g(x), bp.exp(x))


def test_a_wrong_return_is_a_type_error():
    with pytest.raises(TypeError, match="result is or holds a int"):
        bp.jit(lambda x: 3)(rand((2,)))
    with pytest.raises(TypeError, match="holds a str"):
        bp.jit(lambda x: {"a": x, "b": "no"})(rand((2,)))


def test_a_jitted_function_may_return_a_pytree_of_tensors():
    x = rand((3,))
    f = bp.jit(lambda x: (x + 1, {"e": bp.exp(x), "none": None, "l": [x * 2]}))
    for _ in range(2):  # traced, then the plan
        a, d = f(x)
        assert same_bits(a, x + 1)
        assert same_bits(d["e"], bp.exp(x)) and d["none"] is None
        assert isinstance(d["l"], list) and same_bits(d["l"][0], x * 2)
    assert f.cache_size() == 1


def test_jit_inside_jit_traces_through():
    inner = bp.jit(lambda x: x * x)
    outer = bp.jit(lambda x: inner(x) + 1)
    x = rand((4,))
    assert same_bits(outer(x), x * x + 1)
    assert inner.cache_size() == 0


def test_decorator_form_and_wrapping():
    @bp.jit(static_argnums=(1,))
    def scale(x, k):
        """doc"""
        return x * k

    assert scale.__doc__ == "doc" and scale.__name__ == "scale"
    x = rand((3,))
    assert same_bits(scale(x, 2.5), x * 2.5)


def test_conv_with_captured_weights_is_prepared_on_blas_cpu_and_matches_eager():
    if "blas_cpu" not in bp.backends():
        pytest.skip("blas_cpu is not built here")
    x = rand((2, 8, 20, 20), backend="blas_cpu")
    w = rand((24, 8, 3, 3), seed=1, backend="blas_cpu") * 0.1
    b = rand((24,), seed=2, backend="blas_cpu")

    def layer(x):
        return bp.relu(bp.conv(x, w, b, pads=1))

    g = bp.jit(layer)
    s = g.lower(x)
    # the direct kernel where the CPU has fma, else the GEMM path: either
    # way prepared, with the Relu after it stored by the convolution
    assert s["nodes_prepared"] == 1 and s["epilogues_fused"] == 1
    assert " = conv(" in s.as_text() and "[prepared, with the relu after it]" in s.as_text()
    got, want = g(x).numpy(), layer(x).numpy()
    # another order of summation: within the sum's rounding bound (each of
    # the k = 72 terms and the bias, twice f32's epsilon), not eager's bits
    terms = bp.conv(bp.abs(x), bp.abs(w), bp.abs(b), pads=1).numpy()
    bound = 2 * 73 * np.finfo(np.float32).eps * terms
    assert np.all(np.abs(got - want) <= bound)


def test_lower_and_repr_show_the_plan():
    def chain(x):
        for _ in range(10):
            x = bp.tanh(x) * 0.5
        return x

    g = bp.jit(chain)
    x = rand((64,))
    s = g.lower(x)
    assert s["nodes_planned"] >= 20 and s["inputs"] == 1 and s["outputs"] == 1
    assert 0 <= s["peak_bytes"] < s["sum_bytes"]
    if s["backend"].startswith("blas_cpu"):  # the chain is one fused group: no buffer
        assert s["fused_groups"] == 1 and s["nodes_fused"] == 20 and s["peak_bytes"] == 0
    else:
        assert s["fused_groups"] == 0 and s["peak_bytes"] > 0
    assert "nodes planned" in repr(g) and "peak" in repr(g) and "fused groups" in repr(g)
    text = s.as_text()
    assert str(s) == text and text.startswith("plan on ") and text.count(" = tanh(") == 10
    assert "input 0: v0 : f32 (64,)" in text and "[output 0]" in text
    assert g.cache_size() == 1


def test_lowered_profile_times_each_step():
    def f(x, w):
        return bp.tanh(bp.matmul(x, w)) * 0.5

    g = bp.jit(f)
    x, w = rand((32, 16)), rand((16, 8), seed=1)
    low = g.lower(x, w)
    prof = low.profile(runs=3)
    assert prof.runs == 3 and len(prof.steps) >= 2, prof
    assert prof.steps[0]["op"] == "matmul" and prof.steps[0]["node"] == 0
    assert all(s["ms"] > 0 and s["line"] for s in prof.steps), prof.steps
    assert abs(sum(s["share"] for s in prof.steps) - 1) < 1e-9
    assert abs(sum(ms for _, ms, _, _ in prof.by_op()) - prof.total_ms) < 1e-9
    assert " = matmul(" in prof.steps[0]["line"]
    assert "profile: 3 run(s)" in str(prof) and "matmul" in str(prof)
    assert "profile: 3 run(s)" in prof.as_text()
    assert re.search(r"\[[0-9.]+ (ms|us), [0-9.]+%\]", prof.as_text()), prof.as_text()
    assert g.cache_size() == 1  # the lowered plan, not a new one
    for bad in (0, -1, True, 1.5):
        with pytest.raises(ValueError, match="runs must be an int"):
            low.profile(runs=bad)
    again = low.profile(runs=1, warmup=0)  # a new profile: the times restart
    assert again.runs == 1 and len(again.steps) == len(prof.steps)


def test_symbolic_tensors_do_not_leak():
    g = bp.jit(gelu)
    x = rand((8,))
    g(x)
    live = bp._backplane._live_tensors()
    for n in range(2, 6):
        g(rand((n,)))
    del n
    assert bp._backplane._live_tensors() == live + 0


def test_tensors_of_two_backends_are_refused_before_tracing():
    if not {"binary", "blas_cpu"} <= set(bp.backends()):
        pytest.skip("needs binary and blas_cpu")
    calls = []
    g = bp.jit(lambda x, y: calls.append(1) or x + y)
    a, b = rand((3,), backend="binary"), rand((3,), backend="blas_cpu")
    with pytest.raises(bp.BackendMismatchError, match=r"argument 1 \('y'\) holds a tensor on "
                       r"backend blas_cpu:0 but argument 0 \('x'\) one on binary:0.*"
                       r"\.to\('binary:0'\)"):
        g(a, b)
    assert calls == [] and g.cache_size() == 0
    assert same_bits(g(a, b.to("binary")), a + b.to("binary"))


def test_a_jitted_function_is_a_jitted_object():
    g = bp.jit(gelu)
    assert isinstance(g, bp.Jitted) and callable(g)


def test_lists_tuples_and_dicts_of_tensors_are_traced():
    calls = []

    def net(params, x):
        calls.append(1)
        for w, b in params["layers"]:
            x = mlp(x, w, b)
        return x * params["scale"]

    layers = [(rand((8, 8), s), rand((8,), s + 10)) for s in range(3)]
    params = {"layers": layers, "scale": rand((), 7)}
    x = rand((4, 8), 9)
    g = bp.jit(net)
    assert same_bits(g(params, x), net(params, x))
    calls.clear()
    params2 = {"layers": [(w * 2, b) for w, b in layers], "scale": params["scale"]}
    assert same_bits(g(params2, x), net(params2, x))  # new values, same signature
    assert g.cache_size() == 1 and calls == [1]  # only the eager call above
    g(dict(params, layers=layers[:2]), x)  # one layer less: a new signature
    assert g.cache_size() == 2


def test_a_nested_non_tensor_names_the_argument():
    with pytest.raises(TypeError, match=r"argument 0 \('xs'\) is or holds a float"):
        bp.jit(lambda xs: xs[0])([rand((2,)), 1.5])


def test_plans_release_their_memory_and_captures_with_the_jitted_function():
    import gc

    gc.collect()
    used = bp.stats()["bytes_in_use"]
    big = bp.asarray(np.ones((256, 256), np.float32))  # 256 KiB, captured
    g = bp.jit(lambda x: bp.tanh(x) + big)
    x = bp.asarray(np.zeros((256, 256), np.float32))
    for _ in range(3):
        y = g(x)
    assert same_bits(y, bp.tanh(x) + big)
    del y
    gc.collect()
    running = bp.stats()["bytes_in_use"]
    for _ in range(50):  # runs allocate per call and give everything back
        g(x)
    gc.collect()
    assert bp.stats()["bytes_in_use"] == running
    del g, big, x
    gc.collect()
    assert bp.stats()["bytes_in_use"] == used  # the plan and its capture are gone


def test_keyword_arguments_are_traced_or_static_by_name():
    calls = []

    def f(x, *, bias=None, n=1):
        calls.append(n)
        for _ in range(n):
            x = x * 2
        return x if bias is None else x + bias

    g = bp.jit(f, static_argnames="n")
    x, b = rand((3,), 1), rand((3,), 2)
    assert same_bits(g(x, bias=b, n=2), f(x, bias=b, n=2))
    assert same_bits(g(x, n=2, bias=b), x * 2 * 2 + b)  # keyword order does not matter
    assert same_bits(g(x, n=3), x * 2 * 2 * 2)
    assert calls == [2, 2, 3] and g.cache_size() == 2
    with pytest.raises(TypeError, match=r"argument 'n' is or holds a int.*"
                                        r"static_argnames=\('n',\)"):
        bp.jit(f)(x, n=2)


def test_a_keyword_that_keeps_changing_is_named_in_the_warning():
    g = bp.jit(lambda x, *, y: x + y[0])
    x = rand((1,))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(1, 9):
            g(x, y=rand((n,)))
    storms = [c for c in caught if issubclass(c.category, bp.RecompilationWarning)]
    assert len(storms) == 1 and "argument 'y' changed shape" in str(storms[0].message)


def test_threads_trace_and_run_one_jitted_function_at_once():
    import threading

    g = bp.jit(softmax)
    xs = [rand((n, 16384 // n), n) for n in (1, 2, 4, 8)]  # big enough to release the GIL
    want = [bp.softmax(x, -1) for x in xs]  # what the plan runs (the rewritten pattern)
    errors = []

    def work(k):
        try:
            for _ in range(20):
                for x, w in zip(xs[k:] + xs[:k], want[k:] + want[:k]):
                    assert same_bits(g(x), w)
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert g.cache_size() == 4


def test_fresh_draws_give_each_call_the_eager_draws_further_on(backend):
    """Call r of a function jitted with fresh_draws draws what the eager
    call draws with its offset r spans on (dropout's mask; a draw made on
    a traced tensor's backend); without it each call repeats call 0."""
    x = rand((4, 8), 5, backend=backend)

    def step(x):
        y = bp.dropout(x, 0.5, training=True, seed=3, offset=0)
        return y + bp.random_uniform((4, 8), seed=1, offset=100, dtype="float32", backend=x)

    def eager(r):
        return (bp.dropout(x, 0.5, training=True, seed=3, offset=32 * r) +
                bp.random_uniform((4, 8), seed=1, offset=100 + 32 * r, dtype="float32",
                                  backend=x.backend))

    fresh, replay = bp.jit(step, fresh_draws=True), bp.jit(step)
    for r in range(3):
        assert same_bits(fresh(x), eager(r)), r
        assert same_bits(replay(x), eager(0)), r
    assert not same_bits(eager(1), eager(0))
    assert "offset 100 + 32 per run" in str(fresh.lower(x))


def test_seek_draws_repeats_a_call_and_needs_fresh_draws():
    x = rand((16,), 6)
    f = bp.jit(lambda x: bp.dropout(x, 0.25, training=True, seed=9), fresh_draws=True)
    calls = [f(x) for _ in range(4)]
    f.seek_draws(2)
    assert same_bits(f(x), calls[2])
    assert same_bits(f(x), calls[3])
    with pytest.raises(ValueError, match="an int in"):
        f.seek_draws(-1)
    g = bp.jit(lambda x: bp.dropout(x, 0.25, training=True, seed=9))
    with pytest.raises(ValueError, match="fresh_draws=True"):
        g.seek_draws(1)
    # a signature compiled after the seek starts from the sought call
    f.seek_draws(5)
    y = rand((8,), 7)
    assert same_bits(f(y), bp.dropout(y, 0.25, training=True, seed=9, offset=5 * 8))


def test_a_jitted_gradient_step_with_fresh_draws_uses_each_steps_own_mask():
    """Training with dropout: each call of the jitted gradient draws a new
    mask, and the gradient flows through that call's mask (the draw is one
    node that the forward and backward passes share)."""
    x = bp.asarray(np.arange(1, 17, dtype=np.float32))
    w = bp.asarray(np.full(16, 2.0, np.float32))

    def loss(w, x):
        return bp.sum(bp.dropout(x * w, 0.5, training=True, seed=1))

    step = bp.jit(bp.grad(loss), fresh_draws=True)
    masks = []
    for r in range(3):
        g = step(w, x).numpy()
        _, m = bp.dropout(x, 0.5, training=True, seed=1, offset=16 * r, return_mask=True)
        np.testing.assert_array_equal(g, x.numpy() * m.numpy() / np.float32(0.5))
        masks.append(m.numpy())
    assert not np.array_equal(masks[0], masks[1])

"""backplane.onnx: loading ONNX models onto a backend and running them on
graphs. Hand-made models (onnx.helper) check each behaviour; ONNX's own
model tests run in tests/onnx (ctest onnx_models.*). Skipped without PyPI's
onnx; the comparisons with onnxruntime without onnxruntime."""
import os
import subprocess
import sys
import warnings

import pytest

np = pytest.importorskip("numpy")
onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import backplane as bp  # noqa: E402
import backplane.onnx as bo  # noqa: E402
from onnx_light import dummy_inputs, light_paths  # noqa: E402

F32 = TensorProto.FLOAT


def vi(name, shape, elem=F32):
    return helper.make_tensor_value_info(name, elem, shape)


def model_of(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "m", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def mlp(batch="N"):
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((4, 8)).astype(np.float32)
    b1 = rng.standard_normal(8).astype(np.float32)
    w2 = rng.standard_normal((8, 3)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h0"]),
             helper.make_node("Add", ["h0", "b1"], ["h1"]),
             helper.make_node("Relu", ["h1"], ["h"]),
             helper.make_node("MatMul", ["h", "w2"], ["z"]),
             helper.make_node("Softmax", ["z"], ["y"], axis=-1)]
    m = model_of(nodes, [vi("x", [batch, 4])], [vi("y", [batch, 3])],
                 [numpy_helper.from_array(a, n) for a, n in ((w1, "w1"), (b1, "b1"), (w2, "w2"))])

    def reference(x):
        z = np.maximum(x @ w1 + b1, 0) @ w2
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    return m, reference


def test_a_model_runs_and_matches_its_reference(backend):
    m, ref = mlp()
    model = bo.load(m, backend=backend.name)
    x = np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32)
    y = model.run({"x": x})["y"]
    assert y.backend == model.backend
    np.testing.assert_allclose(y.numpy(), ref(x), rtol=1e-5, atol=1e-6)
    # the keyword form gives the same
    np.testing.assert_array_equal(model(x=x)["y"].numpy(), y.numpy())


def test_load_reads_a_path_bytes_or_a_proto(tmp_path):
    m, ref = mlp()
    path = tmp_path / "mlp.onnx"
    onnx.save(m, str(path))
    x = np.ones((2, 4), np.float32)
    for source in (str(path), path, m.SerializeToString(), m):
        np.testing.assert_allclose(bo.load(source).run({"x": x})["y"].numpy(), ref(x),
                                   rtol=1e-5, atol=1e-6)


def test_inputs_and_outputs_are_inspectable_with_symbolic_extents():
    model = bo.load(mlp()[0])
    assert [(i.name, i.dtype, i.shape) for i in model.inputs] == [("x", "float32", ("N", 4))]
    assert [(o.name, o.dtype, o.shape) for o in model.outputs] == [("y", "float32", ("N", 3))]
    assert "5 nodes" in repr(model) and "x: float32" in repr(model)


def test_each_input_signature_compiles_once_and_runs_the_plan_after():
    model = bo.load(mlp()[0], backend="binary")
    before = bp.stats("binary")["jit_compiles"]
    for batch in (2, 2, 7, 2, 7):
        model.run({"x": np.ones((batch, 4), np.float32)})
    assert bp.stats("binary")["jit_compiles"] - before == 2


def test_a_fixed_shape_model_is_compiled_at_load():
    m, _ = mlp(batch=3)
    before = bp.stats("binary")["jit_compiles"]
    model = bo.load(m, backend="binary")
    assert bp.stats("binary")["jit_compiles"] - before == 1
    model.run({"x": np.ones((3, 4), np.float32)})
    assert bp.stats("binary")["jit_compiles"] - before == 1


def test_jit_false_runs_op_by_op_with_the_same_values():
    m, _ = mlp()
    x = np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32)
    a = bo.load(m, backend="blas_cpu").run({"x": x})["y"].numpy()
    b = bo.load(m, backend="blas_cpu", jit=False).run({"x": x})["y"].numpy()
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_shapes_computed_in_the_model_are_resolved_at_record_time():
    # y = reshape(-x, shape(transpose(x))): Shape's result feeds Reshape
    nodes = [helper.make_node("Transpose", ["x"], ["xt"]),
             helper.make_node("Shape", ["xt"], ["s"]),
             helper.make_node("Neg", ["x"], ["n"]),
             helper.make_node("Reshape", ["n", "s"], ["y"])]
    model = bo.load(model_of(nodes, [vi("x", ["a", "b"])], [vi("y", ["b", "a"])]))
    for shape in ((3, 4), (2, 5)):
        x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
        np.testing.assert_array_equal(model.run({"x": x})["y"].numpy(),
                                      (-x).reshape(shape[::-1]))


def test_an_input_that_decides_a_shape_is_a_constant_of_the_signature():
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["y"])]
    model = bo.load(model_of(nodes, [vi("x", [6]), vi("shape", [2], TensorProto.INT64)],
                             [vi("y", None)]))
    x = np.arange(6, dtype=np.float32)
    for target in ((2, 3), (3, 2), (2, 3)):
        y = model.run({"x": x, "shape": np.array(target, np.int64)})["y"]
        assert y.shape == target
        np.testing.assert_array_equal(y.numpy(), x.reshape(target))


def test_a_shape_computed_from_an_inputs_data_takes_that_input_as_a_constant():
    # Reshape by values computed from a float input's data (Cast of relu(x))
    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("Cast", ["r"], ["s"], to=TensorProto.INT64),
             helper.make_node("Reshape", ["r", "s"], ["y"])]
    model = bo.load(model_of(nodes, [vi("x", [2])], [vi("y", None)]))
    # x is then taken as a constant of the signature: its values decide y's shape
    y = model.run({"x": np.array([1, 2], np.float32)})["y"]
    assert y.shape == (1, 2)
    np.testing.assert_array_equal(y.numpy(), [[1, 2]])
    y = model.run({"x": np.array([2, 1], np.float32)})["y"]
    assert y.shape == (2, 1)


def test_an_op_with_no_mapping_is_an_error_at_load_naming_node_op_and_opset():
    nodes = [helper.make_node("Relu", ["x"], ["a"]),
             helper.make_node("StringNormalizer", ["a"], ["y"], name="norm")]
    with pytest.raises(bo.UnsupportedModelError) as e:
        bo.load(model_of(nodes, [vi("x", [2])], [vi("y", [2])]))
    msg = str(e.value)
    assert "node 1 'norm' (StringNormalizer)" in msg and "opset 17" in msg, msg
    assert (e.value.op, e.value.opset, e.value.reason) == ("StringNormalizer", 17, "op")


def test_an_attribute_value_the_library_lacks_is_an_error_at_load():
    nodes = [helper.make_node("Resize", ["x", "roi", "scales"], ["y"], mode="cubic",
                              coordinate_transformation_mode="tf_crop_and_resize")]
    init = [numpy_helper.from_array(np.array([0, 0, 0.1, 0.1, 1, 1, 0.9, 0.9], np.float32), "roi"),
            numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")]
    with pytest.raises(bo.UnsupportedModelError, match=r"node 0 \(Resize\) of opset 17: Resize "
                                                      r"mode 'cubic' with tf_crop_and_resize "
                                                      r"coordinates \(nearest, linear\)"):
        bo.load(model_of(nodes, [vi("x", [1, 1, 4, 4])], [vi("y", [1, 1, 8, 8])], init))


def test_einsum_spells_out_ellipses_and_takes_diagonals_first(backend):
    """'...ii->...i' (a batch of diagonals) and 'i...i,j' in implicit mode
    (the ellipsis first in the output), against NumPy's einsum."""
    rng = np.random.default_rng(12)
    x = rng.standard_normal((2, 3, 4, 4)).astype(np.float32)
    m = model_of([helper.make_node("Einsum", ["x"], ["y"], equation="...ii ->...i")],
                 [vi("x", [2, 3, 4, 4])], [vi("y", [2, 3, 4])])
    y = bo.load(m, backend=backend.name).run({"x": x})["y"].numpy()
    np.testing.assert_allclose(y, np.einsum("...ii->...i", x), rtol=1e-6)
    a = rng.standard_normal((3, 2, 5, 3)).astype(np.float32)
    b = rng.standard_normal((4,)).astype(np.float32)
    m = model_of([helper.make_node("Einsum", ["a", "b"], ["y"], equation="i...i,j")],
                 [vi("a", [3, 2, 5, 3]), vi("b", [4])], [vi("y", None)])
    y = bo.load(m, backend=backend.name).run({"a": a, "b": b})["y"].numpy()
    np.testing.assert_allclose(y, np.einsum("i...i,j", a, b), rtol=1e-5, atol=1e-6)


def test_an_opset_past_the_importers_is_refused_naming_the_converter():
    nodes = [helper.make_node("Relu", ["x"], ["y"])]
    m = model_of(nodes, [vi("x", [2])], [vi("y", [2])], opset=17)
    m.opset_import[0].version = 99
    with pytest.raises(bo.UnsupportedModelError, match="opset 99.*convert_version"):
        bo.load(m)


def loop_model(cond_from_data=False):
    """y_out = y_in + x * iteration, scan output y_out, for trip_count
    iterations; the body's condition is its input's, or (cond_from_data)
    whether y_out's sum is below 100."""
    body_nodes = [helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT),
                  helper.make_node("Mul", ["x", "fi"], ["step"]),
                  helper.make_node("Add", ["y_in", "step"], ["y_out"]),
                  helper.make_node("Identity", ["y_out"], ["scan"])]
    if cond_from_data:
        body_nodes += [helper.make_node("ReduceSum", ["y_out"], ["total"], keepdims=0),
                       helper.make_node("Less", ["total", "hundred"], ["c_out"])]
    else:
        body_nodes += [helper.make_node("Identity", ["c_in"], ["c_out"])]
    body = helper.make_graph(body_nodes, "body",
                             [vi("i", [], TensorProto.INT64), vi("c_in", [], TensorProto.BOOL),
                              vi("y_in", [3])],
                             [vi("c_out", [], TensorProto.BOOL), vi("y_out", [3]),
                              vi("scan", [3])])
    node = helper.make_node("Loop", ["n", "c", "y0"], ["y", "ys"], body=body)
    return model_of([node], [vi("n", [], TensorProto.INT64), vi("c", [], TensorProto.BOOL),
                             vi("y0", [3]), vi("x", [3])], [vi("y", [3]), vi("ys", None)],
                    [numpy_helper.from_array(np.array(100.0, np.float32), "hundred")])


def test_loop_unrolls_its_trip_count_carrying_values_and_stacking_scan_outputs(backend):
    ort = pytest.importorskip("onnxruntime")
    m = loop_model()
    model = bo.load(m, backend=backend.name)
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for trips, cond in ((4, True), (1, True), (3, False)):
        feeds = {"n": np.array(trips, np.int64), "c": np.array(cond),
                 "y0": np.array([1, 2, 3], np.float32), "x": np.array([0.5, -1, 2], np.float32)}
        want = sess.run(None, feeds)
        if not cond:  # no iteration: the scan output has no shape to take
            with pytest.raises(bo.UnsupportedModelError, match="no iterations"):
                model.run(feeds)
            continue
        got = model.run(feeds)
        np.testing.assert_allclose(got["y"].numpy(), want[0], rtol=1e-6)
        np.testing.assert_allclose(got["ys"].numpy(), want[1], rtol=1e-6)


def test_a_loop_whose_condition_comes_from_tensor_data_is_refused_naming_it():
    model = bo.load(loop_model(cond_from_data=True), backend="binary")
    feeds = {"n": np.array(4, np.int64), "c": np.array(True),
             "y0": np.zeros(3, np.float32), "x": np.ones(3, np.float32)}
    with pytest.raises(bo.UnsupportedModelError, match="c_out.*tensor data") as e:
        model.run(feeds)
    assert e.value.op == "Loop"


def if_model():
    """y = If(c) then x * 2 (reading x from the outer scope, with an
    initializer of its own) else relu(x) of another shape (x's first row)."""
    two = numpy_helper.from_array(np.array(2.0, np.float32), "two")
    then = helper.make_graph([helper.make_node("Mul", ["x", "two"], ["t"])], "then", [],
                             [vi("t", [2, 3])], [two])
    first_row = numpy_helper.from_array(np.array([0], np.int64), "first_row")
    other = helper.make_graph([helper.make_node("Gather", ["x", "first_row"], ["g"], axis=0),
                               helper.make_node("Relu", ["g"], ["e"])], "else", [],
                              [vi("e", [1, 3])], [first_row])
    nodes = [helper.make_node("Greater", ["s", "zero"], ["c"]),
             helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)]
    return model_of(nodes, [vi("s", [], TensorProto.FLOAT), vi("x", [2, 3])], [vi("y", None)],
                    [numpy_helper.from_array(np.array(0.0, np.float32), "zero")])


def test_if_runs_the_branch_its_condition_names_with_the_outer_values_in_scope(backend):
    model = bo.load(if_model(), backend=backend.name)
    x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    before = bp.stats(backend.name)["jit_compiles"]
    for s in (1.0, -1.0, 3.0, -2.0):
        y = model.run({"s": np.array(s, np.float32), "x": x})["y"].numpy()
        want = x * 2 if s > 0 else np.maximum(x[:1], 0)
        np.testing.assert_array_equal(y, want, err_msg=f"s = {s}")
    # the condition is a constant of the signature: one plan per value of s
    assert bp.stats(backend.name)["jit_compiles"] - before == 4


def test_inputs_are_checked_by_name_and_dtype_and_never_converted():
    model = bo.load(mlp()[0])
    with pytest.raises(KeyError, match="input 'x'.*missing"):
        model.run({})
    with pytest.raises(KeyError, match="no input z"):
        model.run({"x": np.ones((1, 4), np.float32), "z": 1})
    with pytest.raises(TypeError, match="input 'x' is float64; the model declares float32"):
        model.run({"x": np.ones((1, 4))})


def test_a_tensor_of_another_backend_is_refused_naming_both():
    model = bo.load(mlp()[0], backend="binary")
    if "blas_cpu" not in bp.backends():
        pytest.skip("one host backend here")
    x = bp.asarray(np.ones((1, 4), np.float32), backend="blas_cpu")
    with pytest.raises(ValueError, match="on backend blas_cpu.*the model is on binary"):
        model.run({"x": x})


def test_a_node_the_library_refuses_names_the_node():
    nodes = [helper.make_node("MatMul", ["x", "x"], ["y"], name="mm")]
    model = bo.load(model_of(nodes, [vi("x", ["a", "b"])], [vi("y", None)]))
    with pytest.raises(bp.ShapeError, match="node 0 'mm' \\(MatMul\\)"):
        model.run({"x": np.ones((2, 3), np.float32)})


def test_a_conv_net_matches_onnxruntime():
    ort = pytest.importorskip("onnxruntime")
    rng = np.random.default_rng(3)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    fc = rng.standard_normal((4, 5)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("GlobalAveragePool", ["p"], ["g"]),
             helper.make_node("Flatten", ["g"], ["f"]),
             helper.make_node("Gemm", ["f", "fc"], ["y"])]
    m = model_of(nodes, [vi("x", ["N", 3, 8, 8])], [vi("y", ["N", 5])],
                 [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b"),
                  numpy_helper.from_array(fc, "fc")], opset=13)
    x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    want = sess.run(None, {"x": x})[0]
    for be in [b for b in ("binary", "blas_cpu") if b in bp.backends()]:
        got = bo.load(m, backend=be).run({"x": x})["y"].numpy()
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_the_command_line_prints_outputs_and_compares(tmp_path):
    m, _ = mlp(batch=2)
    path = tmp_path / "mlp.onnx"
    onnx.save(m, str(path))
    x = tmp_path / "x.npy"
    np.save(x, np.ones((2, 4), np.float32))
    args = [sys.executable, "-m", "backplane.onnx", str(path), "--input", f"x={x}",
            "--bench", "3"]
    try:
        import onnxruntime  # noqa: F401
        args += ["--compare", "onnxruntime"]
    except ImportError:
        pass
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    assert "y: float32 [2, 3]" in out and "median of 3 runs" in out, out
    if "--compare" in args:
        line = next(ln for ln in out.splitlines() if "largest |backplane - onnxruntime|" in ln)
        assert float(line.split()[-1]) < 1e-5, line


def test_the_command_line_profiles_each_step(tmp_path):
    m, _ = mlp(batch=2)
    path = tmp_path / "mlp.onnx"
    onnx.save(m, str(path))
    args = [sys.executable, "-m", "backplane.onnx", str(path), "--profile", "3"]
    try:
        import onnxruntime  # noqa: F401
        args += ["--compare", "onnxruntime"]
    except ImportError:
        pass
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    assert "profile: 3 run(s)" in out and "slowest steps:" in out, out
    assert any(ln.startswith(("  matmul ", "  gemm ")) for ln in out.splitlines()), out
    if "--compare" in args:
        assert "onnxruntime profile: 3 run(s)" in out and "Gemm" in out, out


def test_the_command_line_gives_onnxruntime_the_backends_threads(tmp_path):
    pytest.importorskip("onnxruntime")
    if "blas_cpu" not in bp.backends():
        pytest.skip("needs the blas_cpu backend")
    m, _ = mlp(batch=2)
    path = tmp_path / "mlp.onnx"
    onnx.save(m, str(path))
    args = [sys.executable, "-m", "backplane.onnx", str(path), "--backend", "blas_cpu",
            "--compare", "onnxruntime"]
    ini = tmp_path / "one.ini"
    ini.write_text("[backend.blas_cpu]\nthreads = 1\n")
    out = subprocess.run(args, capture_output=True, text=True, check=True,
                         env={**os.environ, "BP_CONFIG": str(ini)}).stdout
    assert "onnxruntime (CPUExecutionProvider): 1 thread(s)" in out, out
    ini.write_text("[backend.blas_cpu]\n")
    out = subprocess.run(args, capture_output=True, text=True, check=True,
                         env={**os.environ, "BP_CONFIG": str(ini)}).stdout
    assert "its default threads" in out, out


def test_recompiling_for_every_input_shape_warns_once():
    model = bo.load(mlp()[0], backend="binary")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for batch in range(1, 10):
            model.run({"x": np.ones((batch, 4), np.float32)})
    storms = [w for w in seen if issubclass(w.category, bp.RecompilationWarning)]
    assert len(storms) == 1, [str(w.message) for w in seen]


# ---- ONNX's light models (PyPI's onnx wheel: ResNet-50, SqueezeNet, ...) ------------------

# The light models the binary backend (plain C loops) takes 5-25 s each to run.
BINARY_SLOW = ("vgg19", "resnet50", "densenet121", "inception_v2")


@pytest.mark.parametrize("path", light_paths(), ids=lambda p: p.rsplit("/", 1)[-1][6:-5])
def test_light_models_match_onnx_expected_outputs(path, backend):
    """ONNX's tolerances for them (rtol 1e-3, atol 1e-7). One known
    difference, checked: SqueezeNet on blas_cpu. Its activations reach 1e10
    (the inputs are ONNX's arange, not images), where a float32 ulp is 1024;
    OpenBLAS sums the identical output channels of conv10 in two orders (by
    block), so they may differ by an ulp or two, and the final softmax of
    logits 2048 apart gives 0 where the reference gives 1/1000. Whether they
    do depends on the layers before (blas_cpu's direct 3x3 convolutions
    gave conv10 inputs whose sums come out equal): both are checked."""
    if backend.name.startswith("binary") and any(k in path for k in BINARY_SLOW) and \
            not os.environ.get("BPT_ONNX_ALL_LIGHT"):
        pytest.skip("5-25 s on the reference backend (BPT_ONNX_ALL_LIGHT=1 runs it; "
                    "docs/onnx.md records its last result)")
    m = onnx.load(path)
    feeds = dummy_inputs(m)
    expected = numpy_helper.to_array(onnx.load_tensor(path[:-5] + "_output_0.pb"))
    out = m.graph.output[0].name
    known = backend.name.startswith("blas_cpu") and "squeezenet" in path
    if known:
        m.graph.output.append(helper.make_empty_tensor_value_info("r65"))
    got = bo.load(m, backend=backend.name).run(feeds)
    if not known:
        np.testing.assert_allclose(got[out].numpy(), expected, rtol=1e-3, atol=1e-7)
        return
    ort = pytest.importorskip("onnxruntime")
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    want_logits = sess.run(["r65"], feeds)[0]
    logits = got["r65"].numpy()
    np.testing.assert_allclose(logits, want_logits, rtol=1e-6)   # the logits agree ...
    if np.max(logits) == np.min(logits):  # ... all equal: the reference's softmax
        np.testing.assert_allclose(got[out].numpy(), expected, rtol=1e-3, atol=1e-7)
        return
    assert np.max(logits) - np.min(logits) >= 1024               # ... or an ulp apart at 1e10
    z = logits.reshape(-1).astype(np.float64)
    soft = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    np.testing.assert_allclose(got[out].numpy().reshape(-1), soft, rtol=1e-6, atol=1e-7)


def conv_bn_model(bn_params_as_inputs=False):
    rng = np.random.default_rng(4)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    scale, bias, mean = (rng.standard_normal(4).astype(np.float32) for _ in range(3))
    var = rng.random(4).astype(np.float32) + 0.5
    params = {"scale": scale, "bias": bias, "mean": mean, "var": var}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["n"],
                              epsilon=1e-3),
             helper.make_node("Relu", ["n"], ["y"])]
    inputs = [vi("x", ["N", 3, 6, 6])]
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")]
    if bn_params_as_inputs:
        inputs += [vi(k, [4]) for k in params]
    else:
        inits += [numpy_helper.from_array(v, k) for k, v in params.items()]
    m = model_of(nodes, inputs, [vi("y", ["N", 4, 6, 6])], inits)
    x = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
    feeds = {"x": x, **(params if bn_params_as_inputs else {})}

    def reference():
        import numpy.lib.stride_tricks as st
        xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
        win = st.sliding_window_view(xp, (3, 3), axis=(2, 3))          # N C 6 6 3 3
        c = np.einsum("nchwij,mcij->nmhw", win, w.astype(np.float64)) + b[None, :, None, None]
        s = (scale / np.sqrt(var.astype(np.float64) + 1e-3))[None, :, None, None]
        return np.maximum((c - mean[None, :, None, None]) * s + bias[None, :, None, None], 0)
    return m, feeds, reference()


def test_a_batch_norm_after_a_conv_is_folded_into_it(backend):
    m, feeds, want = conv_bn_model()
    model = bo.load(m, backend=backend.name)
    plan = str(model.lower(feeds))
    assert "conv(" in plan and "batch_norm" not in plan, plan
    got = model.run(feeds)["y"].numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    as_written = bo.load(m, backend=backend.name, optimize=False)
    assert "batch_norm" in str(as_written.lower(feeds))
    np.testing.assert_allclose(as_written.run(feeds)["y"].numpy(), want, rtol=1e-5, atol=1e-5)


def test_a_batch_norm_folded_a_block_of_filters_at_a_time_gives_the_same_bits(backend,
                                                                              monkeypatch):
    from backplane import _onnx_fold
    m, feeds, want = conv_bn_model()
    whole = bo.load(m, backend=backend.name).run(feeds)["y"].numpy()
    monkeypatch.setattr(_onnx_fold, "_FOLD_BLOCK_BYTES", 8 * 3 * 3 * 3)  # one filter a block
    blocks = bo.load(m, backend=backend.name).run(feeds)["y"].numpy()
    assert whole.tobytes() == blocks.tobytes()
    np.testing.assert_allclose(blocks, want, rtol=1e-5, atol=1e-5)


def test_a_batch_norm_whose_parameters_are_inputs_is_not_folded():
    m, feeds, want = conv_bn_model(bn_params_as_inputs=True)
    model = bo.load(m, backend="binary")
    assert "batch_norm" in str(model.lower(feeds))
    np.testing.assert_allclose(model.run(feeds)["y"].numpy(), want, rtol=1e-5, atol=1e-5)


def one_hot_matmul_model(w, via_expand=True, dtype=TensorProto.INT32):
    """jax's one_hot before a dense layer, as jax2tf writes it (magika's
    first layer): Equal(Expand(x), iota) -> Cast -> MatMul(., w)."""
    K, N = w.shape
    iota = np.arange(K, dtype=np.int32 if dtype == TensorProto.INT32 else np.int64)
    nodes = []
    if via_expand:
        nodes.append(helper.make_node("Expand", ["x", "shape"], ["xe"]))
    nodes += [helper.make_node("Equal", ["xe" if via_expand else "x", "iota"], ["eq"]),
              helper.make_node("Cast", ["eq"], ["oh"], to=TensorProto.FLOAT),
              helper.make_node("MatMul", ["oh", "w"], ["y"])]
    inits = [numpy_helper.from_array(w, "w"),
             numpy_helper.from_array(iota.reshape(1, 1, K), "iota")]
    if via_expand:
        inits.append(numpy_helper.from_array(np.array([2, 5, K], np.int64), "shape"))
    return model_of(nodes, [vi("x", [2, 5, 1], dtype)], [vi("y", [2, 5, N])], inits)


def test_a_one_hot_times_a_matrix_is_a_lookup_of_its_rows(backend):
    """The product's rows are w's rows picked by x, zeros where x is outside
    0 .. K-1: the same values, bit for bit, as the one-hot product recorded
    as written."""
    rng = np.random.default_rng(11)
    w = rng.standard_normal((7, 3)).astype(np.float32)
    x = np.array([0, 6, 3, -1, 7, 2, 2, 1000, 5, 4], np.int32).reshape(2, 5, 1)
    want = np.stack([[w[v] if 0 <= v < 7 else np.zeros(3, np.float32) for v in row[:, 0]]
                     for row in x])
    for via_expand in (True, False):
        m = one_hot_matmul_model(w, via_expand)
        model = bo.load(m, backend=backend.name)
        plan = str(model.lower({"x": x}))
        assert "gather(" in plan and "matmul(" not in plan, plan
        got = model.run({"x": x})["y"].numpy()
        np.testing.assert_array_equal(got, want)
        as_written = bo.load(m, backend=backend.name, optimize=False)
        assert "matmul(" in str(as_written.lower({"x": x}))
        np.testing.assert_array_equal(as_written.run({"x": x})["y"].numpy(), got)


def test_a_one_hot_times_a_matrix_with_an_infinity_stays_a_product():
    """0 * inf is NaN: a matrix that is not all finite keeps the product,
    whose NaNs a lookup would not give."""
    w = np.ones((4, 2), np.float32)
    w[2, 1] = np.inf
    x = np.array([0, 1, 3, 2, 9, 0, 1, 1, 1, 1], np.int32).reshape(2, 5, 1)
    model = bo.load(one_hot_matmul_model(w), backend="binary")
    assert "matmul(" in str(model.lower({"x": x}))
    got = model.run({"x": x})["y"].numpy()
    assert np.isnan(got[0, 0, 1]) and got[0, 3, 1] == np.inf


def test_isinf_detecting_neither_sign_is_false_everywhere(backend):
    m = model_of([helper.make_node("IsInf", ["x"], ["y"], detect_positive=0, detect_negative=0)],
                 [vi("x", [4])], [vi("y", [4], TensorProto.BOOL)])
    x = np.array([np.inf, -np.inf, np.nan, 1.0], np.float32)
    y = bo.load(m, backend=backend.name).run({"x": x})["y"].numpy()
    np.testing.assert_array_equal(y, np.zeros(4, bool))


def test_a_window_of_one_point_is_its_peak_and_of_none_is_empty(backend):
    """A symmetric window of size 1 divides 0 by 0 in ONNX's formula; NumPy's
    hanning(1) (and PyTorch's) is [1]."""
    for size, periodic, want in ((1, 0, [1.0]), (1, 1, [0.0]), (0, 1, [])):
        m = model_of([helper.make_node("HannWindow", ["n"], ["w"], periodic=periodic)],
                     [], [vi("w", [None])],
                     [numpy_helper.from_array(np.array(size, np.int64), "n")])
        w = bo.load(m, backend=backend.name).run({})["w"].numpy()
        np.testing.assert_array_equal(w, np.array(want, np.float32), err_msg=f"{size} {periodic}")


def test_compress_reads_its_condition_once_per_value_and_gathers_the_kept_rows(backend):
    m = model_of([helper.make_node("Compress", ["x", "c"], ["y"], axis=0)],
                 [vi("x", [3, 2]), vi("c", [3], TensorProto.BOOL)], [vi("y", [None, 2])])
    model = bo.load(m, backend=backend.name)
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    for c in ([True, False, True], [False, True, False]):
        y = model.run({"x": x, "c": np.array(c)})["y"].numpy()
        np.testing.assert_array_equal(y, x[np.array(c)])


@pytest.mark.parametrize("mode,np_mode", [("edge", "edge"), ("reflect", "reflect"),
                                          ("wrap", "wrap")])
def test_pad_modes_match_numpys_pad_including_pads_longer_than_the_axis(backend, mode, np_mode):
    """Opset 19 (wrap), with opset 18's axes input: pads on axis 1 only, one
    of them longer than the axis."""
    m = model_of([helper.make_node("Pad", ["x", "pads", "", "axes"], ["y"], mode=mode)],
                 [vi("x", [2, 3])], [vi("y", [2, None])],
                 [numpy_helper.from_array(np.array([4, 1], np.int64), "pads"),
                  numpy_helper.from_array(np.array([1], np.int64), "axes")], opset=19)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = bo.load(m, backend=backend.name).run({"x": x})["y"].numpy()
    np.testing.assert_array_equal(y, np.pad(x, ((0, 0), (4, 1)), mode=np_mode))


def test_pow_of_an_integer_base_by_a_float_exponent_truncates_to_the_bases_type(backend):
    m = model_of([helper.make_node("Pow", ["x", "e"], ["y"])],
                 [vi("x", [3], TensorProto.INT32), vi("e", [3])], [vi("y", [3], TensorProto.INT32)])
    y = bo.load(m, backend=backend.name).run(
        {"x": np.array([2, 3, 10], np.int32), "e": np.array([0.5, 2.5, -1.0], np.float32)})["y"]
    assert str(y.dtype) == "int32"
    np.testing.assert_array_equal(y.numpy(), [1, 15, 0])  # 1.41, 15.59, 0.1 truncated


def test_adam_of_the_training_domain_takes_the_step_as_a_value_so_one_plan_serves_every_step(
        backend):
    """ONNX's Adam with the step count T an input: T = 0 updates without the
    bias correction, T > 0 with it, and a training loop feeding T = 0, 1, 2, 3
    compiles once (T is never read on the host)."""
    node = helper.make_node("Adam", ["R", "T", "X", "G", "V", "H"], ["X2", "V2", "H2"],
                            domain="ai.onnx.preview.training", alpha=0.9, beta=0.99,
                            epsilon=1e-3)
    graph = helper.make_graph([node], "adam",
                              [vi("R", []), vi("T", [], TensorProto.INT64), vi("X", [3]),
                               vi("G", [3]), vi("V", [3]), vi("H", [3])],
                              [vi("X2", [3]), vi("V2", [3]), vi("H2", [3])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                helper.make_opsetid("ai.onnx.preview.training", 1)])
    model = bo.load(m, backend=backend.name)
    before = bp.stats(backend.name)["jit_compiles"]
    x = np.array([1.0, -2.0, 0.5])
    v, h = np.zeros(3), np.zeros(3)
    for t in range(4):
        g = np.array([0.3, -0.1, 2.0]) * (t + 1)
        out = model.run({"R": np.array(0.1, np.float32), "T": np.array(t, np.int64),
                         "X": x.astype(np.float32), "G": g.astype(np.float32),
                         "V": v.astype(np.float32), "H": h.astype(np.float32)})
        v = 0.9 * v + 0.1 * g
        h = 0.99 * h + 0.01 * g * g
        rate = 0.1 * np.sqrt(1 - 0.99 ** t) / (1 - 0.9 ** t) if t > 0 else 0.1
        x = x - rate * v / (np.sqrt(h) + 1e-3)
        np.testing.assert_allclose(out["X2"].numpy(), x, rtol=1e-5, err_msg=f"T = {t}")
        np.testing.assert_allclose(out["V2"].numpy(), v, rtol=1e-5)
        np.testing.assert_allclose(out["H2"].numpy(), h, rtol=1e-5)
    assert bp.stats(backend.name)["jit_compiles"] == before  # compiled at load


def test_quantize_linear_rounds_half_to_even_saturates_and_dequantizes_per_axis(backend):
    """Per axis 1: scales (2, 0.5), zero points (10, 250) in uint8; halves
    round to even (2.5 -> 2, 3.5 -> 4), and 300 saturates to 255."""
    q = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=1)
    d = helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=1)
    m = model_of([q, d], [vi("x", [2, 2])],
                 [vi("q", [2, 2], TensorProto.UINT8), vi("y", [2, 2])],
                 [numpy_helper.from_array(np.array([2.0, 0.5], np.float32), "s"),
                  numpy_helper.from_array(np.array([10, 250], np.uint8), "z")])
    x = np.array([[5.0, 1.75], [7.0, 300.0]], np.float32)
    out = bo.load(m, backend=backend.name).run({"x": x})
    # x / s = [[2.5, 3.5], [3.5, 600]] -> round: [[2, 4], [4, 600]] -> + z, saturated
    np.testing.assert_array_equal(out["q"].numpy(), np.array([[12, 254], [14, 255]], np.uint8))
    np.testing.assert_array_equal(out["y"].numpy(), np.array([[4.0, 2.0], [8.0, 2.5]],
                                                            np.float32))


def test_max_unpool_puts_each_value_at_its_index_and_pads_to_output_shape(backend):
    pool = helper.make_node("MaxPool", ["x"], ["p", "i"], kernel_shape=[2, 2], strides=[2, 2])
    unpool = helper.make_node("MaxUnpool", ["p", "i", "shape"], ["y"], kernel_shape=[2, 2],
                              strides=[2, 2])
    m = model_of([pool, unpool], [vi("x", [1, 1, 4, 4])], [vi("y", [1, 1, 5, 5])],
                 [numpy_helper.from_array(np.array([1, 1, 5, 5], np.int64), "shape")])
    x = np.random.default_rng(3).permutation(16).astype(np.float32).reshape(1, 1, 4, 4)
    y = bo.load(m, backend=backend.name).run({"x": x})["y"].numpy()
    want = np.zeros((1, 1, 5, 5), np.float32)
    for r in range(0, 4, 2):
        for c in range(0, 4, 2):
            win = x[0, 0, r:r + 2, c:c + 2]
            k = np.argmax(win)
            want[0, 0, r + k // 2, c + k % 2] = win.max()
    np.testing.assert_array_equal(y, want)


def test_unique_in_first_occurrence_order_and_nonzero_read_their_input_once_per_value(backend):
    u = helper.make_node("Unique", ["x"], ["y", "first", "inverse", "counts"], sorted=0)
    nz = helper.make_node("NonZero", ["x"], ["where"])
    m = model_of([u, nz], [vi("x", [6])],
                 [vi("y", [None]), vi("first", [None], TensorProto.INT64),
                  vi("inverse", [6], TensorProto.INT64), vi("counts", [None], TensorProto.INT64),
                  vi("where", [1, None], TensorProto.INT64)])
    model = bo.load(m, backend=backend.name)
    out = model.run({"x": np.array([3, 0, 3, 1, 0, 3], np.float32)})
    np.testing.assert_array_equal(out["y"].numpy(), [3, 0, 1])
    np.testing.assert_array_equal(out["first"].numpy(), [0, 1, 3])
    np.testing.assert_array_equal(out["inverse"].numpy(), [0, 1, 0, 2, 1, 0])
    np.testing.assert_array_equal(out["counts"].numpy(), [3, 2, 1])
    np.testing.assert_array_equal(out["where"].numpy(), [[0, 2, 3, 5]])
    out = model.run({"x": np.array([0, 0, 5, 0, 0, 0], np.float32)})
    np.testing.assert_array_equal(out["y"].numpy(), [0, 5])
    np.testing.assert_array_equal(out["where"].numpy(), [[2]])


def test_matmul_integer_is_exact_with_per_row_zero_points_and_extreme_values(backend):
    """K = 700 products of int8 values at their extremes, centred by a zero
    point per row of A: every sum is exact (int64 NumPy as the oracle)."""
    rng = np.random.default_rng(5)
    a = rng.choice(np.array([-128, 127, -1, 0], np.int8), size=(3, 700))
    b = rng.choice(np.array([-128, 127, 3], np.int8), size=(700, 4))
    za = np.array([-128, 5, 127], np.int8)
    m = model_of([helper.make_node("MatMulInteger", ["a", "b", "za"], ["y"])],
                 [vi("a", [3, 700], TensorProto.INT8), vi("b", [700, 4], TensorProto.INT8),
                  vi("za", [3], TensorProto.INT8)], [vi("y", [3, 4], TensorProto.INT32)])
    y = bo.load(m, backend=backend.name).run({"a": a, "b": b, "za": za})["y"]
    assert str(y.dtype) == "int32"
    want = (a.astype(np.int64) - za.astype(np.int64)[:, None]) @ b.astype(np.int64)
    np.testing.assert_array_equal(y.numpy(), want)


def test_qlinear_matmul_matches_onnxruntime_rounding_and_saturation(backend):
    ort = pytest.importorskip("onnxruntime")
    rng = np.random.default_rng(6)
    node = helper.make_node("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"], ["y"])
    init = [numpy_helper.from_array(np.array(v, np.float32), k)
            for k, v in (("sa", 0.02), ("sb", 0.015), ("sy", 0.05))]
    init += [numpy_helper.from_array(np.array(v, np.uint8), k)
             for k, v in (("za", 120), ("zb", 131), ("zy", 128))]
    m = model_of([node], [vi("a", [8, 50], TensorProto.UINT8), vi("b", [50, 6], TensorProto.UINT8)],
                 [vi("y", [8, 6], TensorProto.UINT8)], init)
    feeds = {"a": rng.integers(0, 256, (8, 50), dtype=np.uint8),
             "b": rng.integers(0, 256, (50, 6), dtype=np.uint8)}
    y = bo.load(m, backend=backend.name).run(feeds)["y"].numpy()
    want = ort.InferenceSession(m.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    np.testing.assert_array_equal(y, want)
    assert ((y == 0) | (y == 255)).any() and ((y > 0) & (y < 255)).any()  # both kinds occur


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [0, 1])
def test_grid_sample_matches_onnxs_reference_with_coordinates_far_outside(mode, padding, align):
    """Grid coordinates in [-3.5, 3.5] (several reflections deep) and exact
    halves (nearest rounds them to even), against ONNX's ReferenceEvaluator
    (the same model in opset 20's mode names, which it reads) and
    onnxruntime. onnxruntime departs from ONNX's reference for bicubic with
    border padding (0.15 apart here), so that case is checked against the
    reference alone."""
    from onnx.reference import ReferenceEvaluator
    ort = pytest.importorskip("onnxruntime")
    rng = np.random.default_rng(7)

    def model(mode_name, opset):
        node = helper.make_node("GridSample", ["x", "g"], ["y"], mode=mode_name,
                                padding_mode=padding, align_corners=align)
        return model_of([node], [vi("x", [2, 3, 5, 4]), vi("g", [2, 6, 7, 2])],
                        [vi("y", [2, 3, 6, 7])], opset=opset)
    m = model(mode, 16)
    grid = rng.uniform(-3.5, 3.5, (2, 6, 7, 2)).astype(np.float32)
    grid[0, 0, :4] = [[-0.75, 0.25], [0.5, -0.5], [1.25, -1.0], [0.0, 0.0]]  # halves after scaling
    feeds = {"x": rng.standard_normal((2, 3, 5, 4)).astype(np.float32), "g": grid}
    y = bo.load(m, backend="binary").run(feeds)["y"].numpy()
    reference = ReferenceEvaluator(model({"bilinear": "linear", "bicubic": "cubic"}.get(mode, mode),
                                         20)).run(None, feeds)[0]
    np.testing.assert_allclose(y, reference, rtol=1e-5, atol=1e-5)
    if not (mode == "bicubic" and padding == "border"):
        want = ort.InferenceSession(m.SerializeToString(),
                                    providers=["CPUExecutionProvider"]).run(None, feeds)[0]
        np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("inverse,onesided,length", [(0, 0, None), (1, 0, None), (0, 1, None),
                                                      (0, 0, 12), (0, 1, 5)])
def test_dft_of_a_complex_signal_along_a_middle_axis_matches_numpys_fft(inverse, onesided, length):
    """float64 (so the comparison is tight): (2, 8, 3, 2) along axis 1, the
    signal zero-padded to 12 points or truncated to 5 where dft_length says."""
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 8, 3, 2))
    inputs = ["x"] + (["n"] if length else [])
    init = [numpy_helper.from_array(np.array(length, np.int64), "n")] if length else []
    node = helper.make_node("DFT", inputs, ["y"], axis=1, inverse=inverse, onesided=onesided)
    m = model_of([node], [vi("x", [2, 8, 3, 2], TensorProto.DOUBLE)],
                 [vi("y", None, TensorProto.DOUBLE)], init)
    y = bo.load(m, backend="binary").run({"x": x})["y"].numpy()
    c = x[..., 0] + 1j * x[..., 1]
    n = length or 8
    want = (np.fft.ifft if inverse else np.fft.fft)(c, n=n, axis=1)
    if onesided:
        want = want[:, :n // 2 + 1]
    np.testing.assert_allclose(y, np.stack([want.real, want.imag], axis=-1), rtol=1e-12,
                               atol=1e-12)


def test_stft_with_a_window_matches_numpy_frame_by_frame():
    rng = np.random.default_rng(9)
    signal = rng.standard_normal((2, 100, 1))
    window = np.hanning(16)
    node = helper.make_node("STFT", ["s", "step", "w"], ["y"])
    m = model_of([node], [vi("s", [2, 100, 1], TensorProto.DOUBLE),
                          vi("w", [16], TensorProto.DOUBLE)],
                 [vi("y", None, TensorProto.DOUBLE)],
                 [numpy_helper.from_array(np.array(6, np.int64), "step")])
    y = bo.load(m, backend="binary").run({"s": signal, "w": window})["y"].numpy()
    frames = 1 + (100 - 16) // 6
    want = np.stack([np.fft.rfft(signal[:, f * 6:f * 6 + 16, 0] * window, axis=1)
                     for f in range(frames)], axis=1)
    assert y.shape == (2, frames, 9, 2)
    np.testing.assert_allclose(y, np.stack([want.real, want.imag], axis=-1), rtol=1e-12,
                               atol=1e-12)


def test_scan_runs_its_body_per_step_with_directions_axes_and_outer_values_as_onnxruntime():
    """A running sum over x's axis 1 read backwards, times an outer value w;
    y's rows are x's axis 0 read forwards; the per-step outputs stacked
    along axis 1, the second in reverse order."""
    ort = pytest.importorskip("onnxruntime")
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "a"], ["s_out"]),
         helper.make_node("Mul", ["s_out", "w"], ["o1"]),
         helper.make_node("Add", ["b", "s_out"], ["o2"])],
        "body", [vi("s_in", [2]), vi("a", [2]), vi("b", [2])],
        [vi("s_out", [2]), vi("o1", [2]), vi("o2", [2])])
    node = helper.make_node("Scan", ["s0", "x", "y"], ["s", "out1", "out2"], body=body,
                            num_scan_inputs=2, scan_input_axes=[1, 0],
                            scan_input_directions=[1, 0], scan_output_axes=[1, 0],
                            scan_output_directions=[0, 1])
    m = model_of([node], [vi("s0", [2]), vi("x", [2, 4]), vi("y", [4, 2]), vi("w", [2])],
                 [vi("s", [2]), vi("out1", [2, 4]), vi("out2", [4, 2])])
    rng = np.random.default_rng(10)
    feeds = {k: rng.standard_normal(s).astype(np.float32)
             for k, s in (("s0", (2,)), ("x", (2, 4)), ("y", (4, 2)), ("w", (2,)))}
    got = bo.load(m, backend="binary").run(feeds)
    want = ort.InferenceSession(m.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)
    for name, w in zip(("s", "out1", "out2"), want):
        np.testing.assert_allclose(got[name].numpy(), w, rtol=1e-6, atol=1e-6, err_msg=name)


def test_batch_norm_in_training_mode_uses_the_batch_statistics_and_moves_the_running_ones(
        backend):
    rng = np.random.default_rng(11)
    node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv"],
                            training_mode=1, momentum=0.8, epsilon=1e-3)
    m = model_of([node], [vi("x", [4, 3, 5]), vi("s", [3]), vi("b", [3]), vi("m", [3]),
                          vi("v", [3])], [vi("y", [4, 3, 5]), vi("rm", [3]), vi("rv", [3])],
                 opset=15)
    feeds = {"x": rng.standard_normal((4, 3, 5)).astype(np.float32) * 3 + 1,
             "s": rng.standard_normal(3).astype(np.float32),
             "b": rng.standard_normal(3).astype(np.float32),
             "m": rng.standard_normal(3).astype(np.float32),
             "v": rng.uniform(0.5, 2, 3).astype(np.float32)}
    got = bo.load(m, backend=backend.name).run(feeds)
    x = feeds["x"].astype(np.float64)
    mean, var = x.mean(axis=(0, 2)), x.var(axis=(0, 2))
    y = (x - mean[:, None]) / np.sqrt(var[:, None] + 1e-3) * feeds["s"][:, None] + \
        feeds["b"][:, None]
    np.testing.assert_allclose(got["y"].numpy(), y, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got["rm"].numpy(), feeds["m"] * 0.8 + mean * 0.2, rtol=1e-5)
    np.testing.assert_allclose(got["rv"].numpy(), feeds["v"] * 0.8 + var * 0.2, rtol=1e-5)


@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("ratio", [0, 2])
def test_roi_align_matches_onnxs_reference_and_onnxruntime(mode, ratio):
    """Two images, four regions (one reaching past the map, one thinner than
    a cell), an adaptive or a fixed sampling ratio, spatial_scale 0.5."""
    from onnx.reference import ReferenceEvaluator
    ort = pytest.importorskip("onnxruntime")
    rng = np.random.default_rng(13)
    node = helper.make_node("RoiAlign", ["x", "rois", "idx"], ["y"], mode=mode,
                            output_height=3, output_width=2, sampling_ratio=ratio,
                            spatial_scale=0.5)
    m = model_of([node], [vi("x", [2, 3, 8, 9]), vi("rois", [4, 4]),
                          vi("idx", [4], TensorProto.INT64)], [vi("y", [4, 3, 3, 2])], opset=16)
    feeds = {"x": rng.standard_normal((2, 3, 8, 9)).astype(np.float32),
             "rois": np.array([[0, 0, 10, 12], [3, 2, 20, 19], [5.5, 1, 6, 15], [-4, -4, 3, 3]],
                              np.float32),
             "idx": np.array([0, 1, 1, 0], np.int64)}
    y = bo.load(m, backend="binary").run(feeds)["y"].numpy()
    np.testing.assert_allclose(y, ReferenceEvaluator(m).run(None, feeds)[0], rtol=1e-5,
                               atol=1e-6)
    want = ort.InferenceSession(m.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)


def test_det_by_pivoted_lu_matches_numpy_including_singular_and_pivot_needing_matrices(backend):
    """float64, a batch (2, 3) of 5 x 5 matrices: random ones, one with a
    zero in the first pivot's place (a swap is needed), one singular (two
    equal rows), one permutation matrix (the sign alone)."""
    rng = np.random.default_rng(14)
    x = rng.standard_normal((2, 3, 5, 5))
    x[0, 1, 0, 0] = 0.0
    x[1, 0, 3] = x[1, 0, 1]
    x[1, 2] = np.eye(5)[[2, 0, 1, 4, 3]]
    m = model_of([helper.make_node("Det", ["x"], ["y"])],
                 [vi("x", [2, 3, 5, 5], TensorProto.DOUBLE)], [vi("y", [2, 3], TensorProto.DOUBLE)])
    y = bo.load(m, backend=backend.name).run({"x": x})["y"].numpy()
    np.testing.assert_allclose(y, np.linalg.det(x), rtol=1e-10, atol=1e-12)
    assert y[1, 0] == 0 or abs(y[1, 0]) < 1e-12
    assert y[1, 2] == -1.0  # a 3-cycle and a swap: an odd permutation


@pytest.mark.parametrize("center", [0, 1])
def test_non_max_suppression_matches_onnxs_reference_and_onnxruntime_with_ties(center):
    """Two batches, three classes, 40 boxes on a coarse grid (overlaps, equal
    scores to break by index, flipped corners and zero-area boxes), a
    score threshold and a limit per class."""
    from onnx.reference import ReferenceEvaluator
    ort = pytest.importorskip("onnxruntime")
    rng = np.random.default_rng(15)
    node = helper.make_node("NonMaxSuppression", ["boxes", "scores", "limit", "iou", "floor"],
                            ["sel"], center_point_box=center)
    m = model_of([node], [vi("boxes", [2, 40, 4]), vi("scores", [2, 3, 40]),
                          vi("limit", [1], TensorProto.INT64), vi("iou", [1]), vi("floor", [1])],
                 [vi("sel", ["n", 3], TensorProto.INT64)])
    boxes = rng.integers(0, 6, (2, 40, 4)).astype(np.float32)
    scores = (rng.integers(0, 8, (2, 3, 40)) / 8).astype(np.float32)
    for limit, iou, floor in ((5, 0.3, 0.2), (40, 0.0, 0.0), (3, 0.9, 0.5)):
        feeds = {"boxes": boxes, "scores": scores, "limit": np.array([limit], np.int64),
                 "iou": np.array([iou], np.float32), "floor": np.array([floor], np.float32)}
        sel = bo.load(m, backend="binary").run(feeds)["sel"].numpy()
        np.testing.assert_array_equal(sel, ReferenceEvaluator(m).run(None, feeds)[0])
        want = ort.InferenceSession(m.SerializeToString(),
                                    providers=["CPUExecutionProvider"]).run(None, feeds)[0]
        np.testing.assert_array_equal(sel, want)
        assert sel.shape[0] > 0


@pytest.mark.parametrize("mode", ["linear", "nearest"])
def test_resize_crop_and_resize_fills_positions_outside_the_input_with_the_extrapolation_value(
        mode, backend):
    """A region of interest reaching past the input on both spatial axes
    (starts below 0, ends past 1), sizes given: the positions outside read
    extrapolation_value, the rest interpolate inside the region, as ONNX's
    reference and onnxruntime."""
    from onnx.reference import ReferenceEvaluator
    rng = np.random.default_rng(16)
    node = helper.make_node("Resize", ["x", "roi", "", "sizes"], ["y"], mode=mode,
                            coordinate_transformation_mode="tf_crop_and_resize",
                            extrapolation_value=-7.0)
    roi = numpy_helper.from_array(np.array([0, 0, -0.3, 0.2, 1, 1, 0.9, 1.4], np.float32), "roi")
    sizes = numpy_helper.from_array(np.array([2, 3, 5, 7], np.int64), "sizes")
    m = model_of([node], [vi("x", [2, 3, 4, 6])], [vi("y", [2, 3, 5, 7])], [roi, sizes])
    feeds = {"x": rng.standard_normal((2, 3, 4, 6)).astype(np.float32)}
    y = bo.load(m, backend=backend.name).run(feeds)["y"].numpy()
    want = ReferenceEvaluator(m).run(None, feeds)[0]
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)
    assert (y == -7.0).any() and (y != -7.0).any()
    ort = pytest.importorskip("onnxruntime")
    got = ort.InferenceSession(m.SerializeToString(),
                               providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    np.testing.assert_allclose(y, got, rtol=1e-5, atol=1e-6)


def sequence_model():
    """x (5, 6) split into a sequence along its last axis by sizes (2, 3, 1),
    the middle piece erased, x's first two columns inserted at `pos`, then
    the pieces concatenated again and stacked on a new axis, and the length
    and one piece read back."""
    i64 = TensorProto.INT64
    nodes = [
        helper.make_node("SplitToSequence", ["x", "sizes"], ["s"], axis=-1),
        helper.make_node("SequenceErase", ["s", "middle"], ["s1"]),
        helper.make_node("Slice", ["x", "zero", "two", "one"], ["head"]),
        helper.make_node("SequenceInsert", ["s1", "head", "pos"], ["s2"]),
        helper.make_node("ConcatFromSequence", ["s2"], ["cat"], axis=1),
        helper.make_node("SplitToSequence", ["x"], ["rows"], axis=0, keepdims=0),
        helper.make_node("ConcatFromSequence", ["rows"], ["stacked"], axis=-1, new_axis=1),
        helper.make_node("SequenceLength", ["s2"], ["n"]),
        helper.make_node("SequenceAt", ["s2", "at"], ["piece"]),
    ]
    consts = [numpy_helper.from_array(np.array(v, np.int64), name)
              for name, v in (("sizes", [2, 3, 1]), ("one", [1]), ("zero", [0]), ("two", [2]))]
    consts.append(numpy_helper.from_array(np.array(1, np.int64), "middle"))
    return model_of(nodes, [vi("x", [5, 6]), vi("pos", [], i64), vi("at", [], i64)],
                    [vi("cat", None), vi("stacked", None), vi("n", [], i64),
                     vi("piece", None)], consts)


@pytest.mark.parametrize("pos,at", [(0, 0), (2, -1), (-1, 1), (-2, 2)])
def test_sequences_inside_a_model_match_onnxruntime_and_onnxs_reference(backend, pos, at):
    """A sequence inside a model is a list of tensors while recording; its
    positions (model inputs here) become constants of the signature.
    Inserting at position 2 of a sequence of 2 appends (ONNX allows
    [-n, n]), as onnxruntime does; ONNX's ReferenceEvaluator (1.23) takes
    the position modulo n there and inserts at the front, so that case is
    checked against onnxruntime alone."""
    from onnx.reference import ReferenceEvaluator
    ort = pytest.importorskip("onnxruntime")
    m = sequence_model()
    x = np.arange(30, dtype=np.float32).reshape(5, 6)
    feeds = {"x": x, "pos": np.array(pos, np.int64), "at": np.array(at, np.int64)}
    got = bo.load(m, backend=backend).run(feeds)
    wants = [ort.InferenceSession(m.SerializeToString(),
                                  providers=["CPUExecutionProvider"]).run(None, feeds)]
    if pos != 2:
        wants.append(ReferenceEvaluator(m).run(None, feeds))
    for want in wants:
        for name, w in zip(("cat", "stacked", "n", "piece"), want):
            np.testing.assert_array_equal(got[name].numpy(), w, err_msg=name)


def test_a_sequence_position_outside_the_sequence_is_an_error_naming_the_range():
    m = sequence_model()
    feeds = {"x": np.zeros((5, 6), np.float32), "pos": np.array(7, np.int64),
             "at": np.array(0, np.int64)}
    with pytest.raises(IndexError, match=r"position 7 is outside a sequence of 2.*\[-2, 2\]"):
        bo.load(m, backend="binary").run(feeds)


def sequence_io_model():
    """s (a sequence of f32 tensors) and t in; s with t appended, and each
    element doubled by a SequenceMap, out as sequences; their count too."""
    body = helper.make_graph(
        [helper.make_node("Add", ["e", "e"], ["d"])], "twice",
        [vi("e", None)], [vi("d", None)])
    nodes = [helper.make_node("SequenceInsert", ["s", "t"], ["appended"]),
             helper.make_node("SequenceMap", ["appended"], ["doubled"], body=body),
             helper.make_node("SequenceLength", ["appended"], ["n"])]
    seq = helper.make_tensor_sequence_value_info
    return model_of(nodes, [seq("s", F32, None), vi("t", [2])],
                    [seq("appended", F32, None), seq("doubled", F32, None),
                     vi("n", [], TensorProto.INT64)])


@pytest.mark.parametrize("jit", [True, False])
def test_a_sequence_input_and_output_are_lists_of_tensors(backend, jit):
    model = bo.load(sequence_io_model(), backend=backend, jit=jit)
    assert [i.kind for i in model.inputs] == ["sequence", "tensor"]
    assert [o.kind for o in model.outputs] == ["sequence", "sequence", "tensor"]
    a, b, c = (np.full(2, v, np.float32) for v in (1.0, 2.0, 3.0))
    # The length is part of the signature; a signature met again runs its own
    # plan and its outputs keep that plan's structure, not the last traced one's.
    for items in ([a, b], [a], [], [a, b], [a]):
        got = model.run({"s": items, "t": c})
        want = items + [c]
        assert isinstance(got["appended"], list) and len(got["appended"]) == len(want)
        for g, w, d in zip(got["appended"], want, got["doubled"]):
            np.testing.assert_array_equal(g.numpy(), w)
            np.testing.assert_array_equal(d.numpy(), 2 * w)
        assert got["n"].item() == len(want)
    with pytest.raises(TypeError, match="'s' is a sequence: give a list"):
        model.run({"s": a, "t": c})
    with pytest.raises(TypeError, match="element 1 of input 's' is float64"):
        model.run({"s": [a, a.astype(np.float64)], "t": c})


def optional_io_model():
    """o (an optional f32 tensor) in; whether it holds one, and o itself
    (an optional) out; an If on the first picks o's element or zeros."""
    opt = helper.make_value_info("o", helper.make_optional_type_proto(
        helper.make_tensor_type_proto(F32, [2])))
    out = helper.make_value_info("o_out", helper.make_optional_type_proto(
        helper.make_tensor_type_proto(F32, [2])))
    then = helper.make_graph([helper.make_node("OptionalGetElement", ["o"], ["v"])], "then",
                             [], [vi("v", [2])])
    other = helper.make_graph([helper.make_node("Constant", [], ["z"], value=helper.make_tensor(
        "z", F32, [2], [0.0, 0.0]))], "else", [], [vi("z", [2])])
    nodes = [helper.make_node("OptionalHasElement", ["o"], ["has"]),
             helper.make_node("If", ["has"], ["picked"], then_branch=then, else_branch=other),
             helper.make_node("Identity", ["o"], ["o_out"])]
    return model_of(nodes, [opt], [vi("has", [], TensorProto.BOOL), vi("picked", [2]), out],
                    opset=18)


@pytest.mark.parametrize("jit", [True, False])
def test_an_optional_input_and_output_are_a_tensor_or_none(backend, jit):
    model = bo.load(optional_io_model(), backend=backend, jit=jit)
    assert [i.kind for i in model.inputs] == ["optional tensor"]
    a = np.array([1.5, -2.0], np.float32)
    got = model.run({"o": a})
    assert got["has"].item() is True
    np.testing.assert_array_equal(got["picked"].numpy(), a)
    np.testing.assert_array_equal(got["o_out"].numpy(), a)
    got = model.run({"o": None})  # empty: another signature
    assert got["has"].item() is False and got["o_out"] is None
    np.testing.assert_array_equal(got["picked"].numpy(), [0.0, 0.0])


def random_model(seeded):
    """Two RandomUniformLike draws and a Bernoulli of x's probabilities, with
    or without seed attributes; a training-mode Dropout of x."""
    kw = {"seed": 5.0} if seeded else {}
    nodes = [helper.make_node("RandomUniformLike", ["x"], ["u1"], low=-2.0, high=3.0, **kw),
             helper.make_node("RandomUniformLike", ["x"], ["u2"], low=-2.0, high=3.0, **kw),
             helper.make_node("Bernoulli", ["x"], ["b"], **kw),
             helper.make_node("Dropout", ["x", "ratio", "training"], ["y", "mask"],
                              **({"seed": 5} if seeded else {}))]
    consts = [numpy_helper.from_array(np.array(0.25, np.float32), "ratio"),
              numpy_helper.from_array(np.array(True), "training")]
    return model_of(nodes, [vi("x", [4, 50])],
                    [vi("u1", [4, 50]), vi("u2", [4, 50]), vi("b", [4, 50]), vi("y", [4, 50]),
                     vi("mask", [4, 50], TensorProto.BOOL)], consts)


@pytest.mark.parametrize("seeded", [True, False])
def test_random_ops_draw_keyed_values_the_same_on_every_backend_and_run(seeded):
    """Keyed draws: a node's seed attribute, else a seed of its own (so two
    seedless nodes differ and two with one seed agree); p = 0 and 1 give 0
    and 1; the dropout keeps x / (1 - ratio) where its mask says."""
    x = np.random.default_rng(3).uniform(0, 1, (4, 50)).astype(np.float32)
    x[0, :5], x[1, :5] = 0.0, 1.0
    runs = [bo.load(random_model(seeded), backend=b).run({"x": x})
            for b in ("binary", "blas_cpu") if b in bp.backends()]
    runs.append(bo.load(random_model(seeded), backend="binary", jit=False).run({"x": x}))
    first = {k: v.numpy() for k, v in runs[0].items()}
    for r in runs[1:]:
        for k, v in r.items():
            np.testing.assert_array_equal(v.numpy(), first[k], err_msg=k)
    u1, u2, b, y, mask = (first[k] for k in ("u1", "u2", "b", "y", "mask"))
    assert ((u1 >= -2) & (u1 < 3)).all() and u1.std() > 0.5
    assert np.array_equal(u1, u2) == seeded
    assert set(np.unique(b)) <= {0.0, 1.0} and (b[0, :5] == 0).all() and (b[1, :5] == 1).all()
    np.testing.assert_allclose(y, np.where(mask, x / 0.75, 0), rtol=1e-6)
    assert 0.5 < mask.mean() < 0.95


def gradient_model(w_is_initializer=False):
    """loss = ReduceSum(tanh(w * x)) and its Gradient with respect to w and x."""
    train = "ai.onnx.preview.training"
    nodes = [helper.make_node("Mul", ["w", "x"], ["wx"]),
             helper.make_node("Tanh", ["wx"], ["t"]),
             helper.make_node("ReduceSum", ["t"], ["loss"], keepdims=0),
             helper.make_node("Gradient", ["w", "x"], ["dw", "dx"], domain=train,
                              xs=["w", "x"], y="loss")]
    inits = [numpy_helper.from_array(np.full(3, 0.5, np.float32), "w")] if w_is_initializer else []
    inputs = ([] if w_is_initializer else [vi("w", [3])]) + [vi("x", [3])]
    graph = helper.make_graph(nodes, "g", inputs,
                              [vi("loss", []), vi("dw", [3]), vi("dx", [3])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12),
                                                   helper.make_opsetid(train, 1)])


def test_onnxs_gradient_op_is_the_librarys_reverse_mode_on_the_recorded_graph(backend):
    w = np.array([0.5, -1.0, 2.0], np.float32)
    x = np.array([1.0, 0.25, -0.5], np.float32)
    got = bo.load(gradient_model(), backend=backend).run({"w": w, "x": x})
    sech2 = 1 - np.tanh(w.astype(np.float64) * x) ** 2
    np.testing.assert_allclose(got["dw"].numpy(), sech2 * x, rtol=1e-6)
    np.testing.assert_allclose(got["dx"].numpy(), sech2 * w, rtol=1e-6)
    with pytest.raises(bo.UnsupportedModelError, match="jit=True"):
        bo.load(gradient_model(), backend=backend, jit=False).run({"w": w, "x": x})
    with pytest.raises(bo.UnsupportedModelError, match="'w', a constant of the plan"):
        bo.load(gradient_model(w_is_initializer=True), backend=backend).run({"x": x})


def _mapped_file_of(address):
    """The file mapped at a process address (/proc/self/maps), or None."""
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            lo, hi = (int(v, 16) for v in parts[0].split("-"))
            if lo <= address < hi:
                return parts[5] if len(parts) > 5 else None
    return None


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="needs /proc/self/maps")
def test_external_initializers_are_mapped_from_their_file_and_used_in_place(tmp_path):
    """A model saved with its weights in a file beside it (ONNX's external
    data), loaded by its path: a host backend's tensor is the file's mapped
    bytes (no copy), and the results are the weights'."""
    w = np.random.default_rng(4).standard_normal((64, 32)).astype(np.float32)
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "m",
                              [vi("x", [2, 64])], [vi("y", [2, 32])],
                              [numpy_helper.from_array(w, "w")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = str(tmp_path / "model.onnx")
    onnx.save_model(m, path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location="weights.bin", size_threshold=0)
    model = bo.load(path, backend="binary")
    x = np.random.default_rng(5).standard_normal((2, 64)).astype(np.float32)
    np.testing.assert_allclose(model.run({"x": x})["y"].numpy(), x @ w, rtol=1e-5, atol=1e-5)
    held = np.from_dlpack(model._initializers["w"])
    assert _mapped_file_of(held.ctypes.data) == str(tmp_path / "weights.bin")
    np.testing.assert_array_equal(held, w)
    # given as bytes, the file cannot be found: said so
    with open(path, "rb") as f:
        raw = f.read()
    with pytest.raises(ValueError, match="'weights.bin' beside the model: load the model by"):
        bo.load(raw, backend="binary")


def test_random_nodes_draw_afresh_on_each_run_and_seek_repeats_one(backend):
    """A model's RandomNormal, Bernoulli and training-mode Dropout draw new
    values on each run (as onnxruntime's do): run 0 the library's keyed
    draws, run r the same keys r spans further on; seek_draws repeats a
    run."""
    nodes = [helper.make_node("Dropout", ["x", "ratio", "t"], ["y"], seed=5),
             helper.make_node("RandomNormal", [], ["r"], shape=[2, 3], seed=2.0),
             helper.make_node("Bernoulli", ["x"], ["b"], seed=4.0)]
    m = model_of(nodes, [vi("x", [4, 8])], [vi("y", [4, 8]), vi("r", [2, 3]), vi("b", [4, 8])],
                 [numpy_helper.from_array(np.array(0.5, np.float32), "ratio"),
                  numpy_helper.from_array(np.array(True), "t")], opset=15)
    model = bo.load(m, backend=backend.name)
    xs = np.full((4, 8), 0.5, np.float32)
    x = bp.asarray(xs, backend=backend.name)
    runs = [{k: v.numpy() for k, v in model.run({"x": xs}).items()} for _ in range(3)]
    for r in range(3):
        np.testing.assert_array_equal(
            runs[r]["y"], bp.dropout(x, 0.5, training=True, seed=5, offset=32 * r).numpy())
        np.testing.assert_array_equal(
            runs[r]["r"], bp.random_normal((2, 3), seed=2, offset=6 * r, dtype="float32",
                                           backend=backend.name).numpy())
        u = bp.random_uniform((4, 8), seed=4, offset=32 * r, dtype="float32", backend=x)
        np.testing.assert_array_equal(runs[r]["b"], (u.numpy() < xs).astype(np.float32))
    assert not np.array_equal(runs[0]["r"], runs[1]["r"])
    model.seek_draws(1)
    again = model.run({"x": xs})
    for k in "yrb":
        np.testing.assert_array_equal(again[k].numpy(), runs[1][k])
    eager = bo.load(m, backend=backend.name, jit=False)
    with pytest.raises(ValueError, match="jit=False"):
        eager.seek_draws(1)


@pytest.mark.parametrize("starts, ends, steps, whole", [
    ([0, 0], [2**63 - 1, 2**63 - 1], [1, 1], True),
    ([-100, -3], [100, 3], [1, 1], True),      # clamped, counted from the end
    ([0, 1], [2, 3], [1, 1], False),
    ([0, 0], [2, -1], [1, 1], False),
    ([0, -1], [2, -2**63], [1, -1], False),    # reversed: every element, not in order
])
def test_a_whole_slice_or_an_expand_to_its_own_shape_is_the_value_itself(starts, ends, steps,
                                                                        whole):
    """A Slice that keeps every element in order, an Expand that broadcasts
    nothing, and an inference Dropout give the value itself: the plan holds
    no copy for them (magika's two whole Slices copied 6 M floats a run)."""
    i64 = lambda name, v: numpy_helper.from_array(np.array(v, np.int64), name)  # noqa: E731
    nodes = [helper.make_node("Slice", ["x", "s", "e", "a", "p"], ["y"]),
             helper.make_node("Expand", ["y", "shape"], ["z"]),
             helper.make_node("Dropout", ["z"], ["w"]),
             helper.make_node("Relu", ["w"], ["r"])]
    m = model_of(nodes, [vi("x", [2, 3])], [vi("r", None)],
                 [i64("s", starts), i64("e", ends), i64("a", [0, 1]), i64("p", steps),
                  i64("shape", [1, 1])])
    model = bo.load(m)
    x = np.arange(-3, 3, dtype=np.float32).reshape(2, 3)
    slices = tuple(slice(b, e, s) for b, e, s in zip(starts, ends, steps))
    np.testing.assert_array_equal(model.run({"x": x})["r"].numpy(), np.maximum(x[slices], 0))
    plan = model.lower({"x": x})
    assert plan["nodes_planned"] == (1 if whole else 2), str(plan)
    assert "broadcast_to" not in str(plan) and ("slice" in str(plan)) != whole, str(plan)

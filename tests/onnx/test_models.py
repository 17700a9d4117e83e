#!/usr/bin/env python3
"""ctest onnx.models_runner: the runner (execute.py, through backplane.onnx)
on hand-made models, so that each of its outcomes is shown to happen: a
model passes, a wrong expected value fails, an op with no mapping, a
sequence value and a refusal in the middle are reported as such, shapes
computed in the model feed the ops that need them at record time, and
PRelu's opset-6 per-channel slope.

usage: test_models.py PACKAGE_DIR   (the directory holding backplane/;
exit 77: no onnx or NumPy here)
"""
import os
import sys
import tempfile
import unittest

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:
    print(f"SKIPPED: {e.name} is not importable by {sys.executable}")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import testdata  # noqa: E402
from execute import run_case  # noqa: E402


def value(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


class Models(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_model(self, name, nodes, inputs, outputs, feeds, expected, opset=17,
                  initializers=()):
        """Writes the model and one data set as ONNX's test directories hold
        them, then runs it as the runner does."""
        graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        d = os.path.join(self.tmp.name, "models", name)
        os.makedirs(os.path.join(d, "test_data_set_0"))
        onnx.save(model, os.path.join(d, "model.onnx"))
        for kind, arrays in (("input", feeds), ("output", expected)):
            for k, a in enumerate(arrays):
                with open(os.path.join(d, "test_data_set_0", f"{kind}_{k}.pb"), "wb") as f:
                    f.write(numpy_helper.from_array(a).SerializeToString())
        node_root = os.path.join(self.tmp.name, "node")
        return run_case(testdata.load_model(node_root, f"models/{name}"), "binary")

    def mlp(self, name, expected_shift=0.0):
        x = np.array([[1, -2, 3], [0.5, 4, -1]], np.float32)
        w = np.array([[1, 0], [0, 1], [1, 1]], np.float32)
        b = np.array([0.25, -0.5], np.float32)
        want = np.maximum(x @ w + b, 0) + expected_shift
        nodes = [helper.make_node("MatMul", ["x", "w"], ["xw"]),
                 helper.make_node("Add", ["xw", "b"], ["h"]),
                 helper.make_node("Relu", ["h"], ["y"])]
        return self.run_model(name, nodes, [value("x", TensorProto.FLOAT, [2, 3])],
                              [value("y", TensorProto.FLOAT, [2, 2])], [x],
                              [want.astype(np.float32)],
                              initializers=[numpy_helper.from_array(w, "w"),
                                            numpy_helper.from_array(b, "b")])

    def test_a_three_node_model_with_initializers_passes(self):
        r = self.mlp("mlp")
        self.assertEqual(r.outcome, "PASS", r.detail)
        self.assertEqual(r.op, "3 nodes")

    def test_a_wrong_expected_output_fails_naming_it(self):
        r = self.mlp("mlp_wrong", expected_shift=0.01)
        self.assertEqual(r.outcome, "FAIL")
        self.assertIn("output: max |diff| 0.01", r.detail)

    def test_a_shape_computed_on_the_library_feeds_reshape(self):
        x = np.arange(12, dtype=np.float32).reshape(3, 4)
        nodes = [helper.make_node("Transpose", ["x"], ["xt"]),
                 helper.make_node("Shape", ["xt"], ["s"]),
                 helper.make_node("Neg", ["x"], ["n"]),
                 helper.make_node("Reshape", ["n", "s"], ["y"])]
        r = self.run_model("shape_of", nodes, [value("x", TensorProto.FLOAT, [3, 4])],
                           [value("y", TensorProto.FLOAT, [4, 3])], [x], [(-x).reshape(4, 3)])
        self.assertEqual(r.outcome, "PASS", r.detail)

    def test_ops_with_no_mapping_are_out_of_scope_naming_the_first_node_and_each_op(self):
        x = np.ones((2, 2), np.float32)
        nodes = [helper.make_node("Relu", ["x"], ["a"]),
                 helper.make_node("Nothing", ["a"], ["w"], domain="com.example"),
                 helper.make_node("StringNormalizer", ["a"], ["y"])]
        r = self.run_model("unmapped", nodes, [value("x", TensorProto.FLOAT, [2, 2])],
                           [value("y", TensorProto.FLOAT, [2, 2])], [x], [x])
        self.assertEqual((r.outcome, r.reason), ("OUT OF SCOPE", "op"))
        self.assertIn("node 1 (com.example.Nothing)", r.detail)
        self.assertEqual(r.missing, "StringNormalizer, com.example.Nothing")

    def test_a_map_input_is_out_of_scope_as_a_value(self):
        t = onnx.TypeProto()  # a map (ONNX 1.12's helper has no make_map_type_proto)
        t.map_type.key_type = TensorProto.INT64
        t.map_type.value_type.CopyFrom(helper.make_tensor_type_proto(TensorProto.FLOAT, [2]))
        m = helper.make_value_info("s", t)
        nodes = [helper.make_node("Identity", ["s"], ["y"])]
        r = self.run_model("map", nodes, [m], [value("y", TensorProto.FLOAT, [2])], [], [])
        self.assertEqual((r.outcome, r.reason), ("OUT OF SCOPE", "value"))
        self.assertIn("s (map_type)", r.detail)

    def test_a_refusal_in_the_middle_names_the_node(self):
        x = np.ones((2, 3), np.float32)
        nodes = [helper.make_node("Relu", ["x"], ["a"]),
                 helper.make_node("MatMul", ["a", "x"], ["y"], name="bad_matmul")]
        r = self.run_model("refused", nodes, [value("x", TensorProto.FLOAT, [2, 3])],
                           [value("y", TensorProto.FLOAT, [2, 3])], [x], [x])
        self.assertEqual(r.outcome, "FAIL")
        self.assertIn("refused: backplane.onnx: node 1 'bad_matmul' (MatMul)", r.detail)
        self.assertEqual((r.status, r.refused_by), ("BP_ERR_SHAPE", "matmul"))

    def test_prelu_before_opset_7_takes_one_slope_per_channel(self):
        x = np.linspace(-3, 3, 24, dtype=np.float32).reshape(2, 3, 4)
        slope = np.array([0.1, 0.2, 0.3], np.float32)
        want = np.where(x < 0, x * slope[None, :, None], x).astype(np.float32)
        nodes = [helper.make_node("PRelu", ["x", "slope"], ["y"])]
        r = self.run_model("prelu6", nodes, [value("x", TensorProto.FLOAT, [2, 3, 4])],
                           [value("y", TensorProto.FLOAT, [2, 3, 4])], [x], [want], opset=6,
                           initializers=[numpy_helper.from_array(slope, "slope")])
        self.assertEqual(r.outcome, "PASS", r.detail)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.path.insert(0, sys.argv.pop(1))
    unittest.main(verbosity=2)

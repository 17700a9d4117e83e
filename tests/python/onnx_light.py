"""ONNX's nine `light` models (ResNet-50, SqueezeNet, ...: the topologies
the onnx wheel carries with reference outputs) and the inputs ONNX's own
backend runner gives them; read by test_onnx_import.py and by
bench/onnx_vs_onnxruntime.py."""
import glob
import os

import numpy as np


def light_dir():
    import onnx
    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")


def light_paths():
    """Every light model's file, sorted."""
    return sorted(glob.glob(os.path.join(light_dir(), "light_*.onnx")))


def light_model(name):
    """The ModelProto of light_NAME.onnx ("resnet50", ...)."""
    import onnx
    return onnx.load(os.path.join(light_dir(), f"light_{name}.onnx"))


def dummy_inputs(m):
    """ONNX's backend runner's inputs for a light model
    (onnx.backend.test.runner: generate_dummy_data, random=False): each
    graph input that is not an initializer, arange(n) / n in its shape
    (unknown extents 1), float32."""
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

#!/usr/bin/env python3
"""Seeds for fuzz_safetensors, written by the reference implementation
(Python's safetensors, as tests/checkpoint uses it): a few small valid files
covering every dtype backplane knows, metadata, a zero-element tensor, a
scalar, and a dtype backplane lacks.

usage: make_safetensors_seeds.py OUT_DIR   (a Python with safetensors, numpy)"""
import os
import sys

import numpy as np
from safetensors.numpy import save

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
seeds = {
    "empty": ({}, None),
    "one_f32": ({"w": np.arange(6, dtype=np.float32).reshape(2, 3)}, None),
    "every_dtype": ({
        "b": np.array([True, False]), "u8": np.arange(3, dtype=np.uint8),
        "i8": np.arange(-2, 2, dtype=np.int8), "i32": np.arange(4, dtype=np.int32),
        "i64": np.arange(5, dtype=np.int64), "f16": np.ones(3, dtype=np.float16),
        "f64": np.linspace(0, 1, 4)}, {"format": "pt", "step": "7"}),
    "scalar_and_empty": ({"s": np.array(3.5, dtype=np.float32),
                          "z": np.zeros((0, 4), dtype=np.float32)}, None),
    "lacking_dtype": ({"h": np.arange(4, dtype=np.int16), "u": np.arange(2, dtype=np.uint32)},
                      None),
}
for name, (tensors, meta) in seeds.items():
    with open(os.path.join(out, name + ".safetensors"), "wb") as f:
        f.write(save(tensors, metadata=meta))

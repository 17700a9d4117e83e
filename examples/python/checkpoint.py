"""A safetensors checkpoint: written from any backend, loaded onto any backend,
read by Hugging Face's safetensors package where it is installed."""
import os
import tempfile

import numpy as np

import backplane as bp

params = {
    "w1": bp.random_normal((4, 8), seed=1, stddev=0.5, dtype="float32"),
    "b1": bp.zeros(8, dtype="float32"),
    "step": bp.asarray(100),
}
path = os.path.join(tempfile.mkdtemp(), "model.safetensors")
bp.save_safetensors(path, params, metadata={"model": "mlp", "step": "100"})

for name in bp.backends():
    loaded, meta = bp.load_safetensors(path, backend=name, metadata=True)
    for k, v in params.items():
        assert loaded[k].backend == bp.backend(name).name
        assert loaded[k].numpy().tobytes() == v.numpy().tobytes()
    print(f"{name}: loaded {sorted(loaded)} with metadata {meta}")

try:
    from safetensors.numpy import load_file
except ImportError:
    print("(safetensors is not installed: skipping the cross-check)")
else:
    theirs = load_file(path)
    assert np.array_equal(theirs["w1"], params["w1"].numpy())
    print("safetensors reads it:", {k: v.shape for k, v in theirs.items()})

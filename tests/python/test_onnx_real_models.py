"""Real trained models from PyPI against onnxruntime: every silero-vad model
in its wheel over 30 s of generated 16 kHz audio, chunk by chunk with its
state carried (each side carries its own), and magika's classifier on
random bytes. Skipped when the wheels (pip install --no-deps silero-vad
magika), onnx or onnxruntime are absent."""
import os

import numpy as np
import pytest

pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import backplane.onnx as bo  # noqa: E402
from real_models import (SileroFeeds, generated_speech, magika_bytes, magika_path,  # noqa: E402
                         silero_paths, silero_rows)

SILERO = silero_paths()
# On the reference backend a chunk takes some 9 ms: 2 s of audio there unless
# BPT_REAL_MODELS_FULL=1 (docs/onnx.md records the full run).
BINARY_SECONDS = 30 if os.environ.get("BPT_REAL_MODELS_FULL") else 2
# silero-vad's sequence model takes many chunks a call: this many.
SEQUENCE_ROWS = 16


def _session(path):
    so = ort.SessionOptions()
    so.log_severity_level = 3  # its notes about unused initializers are not ours
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


@pytest.mark.skipif(not SILERO, reason="silero-vad is not installed "
                                       "(pip install --no-deps silero-vad)")
@pytest.mark.parametrize("path", SILERO, ids=os.path.basename)
def test_silero_vad_matches_onnxruntime_on_every_chunk_with_its_state_carried(path, backend):
    """Probabilities within 1e-4. The state within 1e-4 relative to its size
    plus 1e-4: one model's LSTM cell state grows past 300, where 1e-4 is three
    float32 ulps, less than any other order of summation gives (measured:
    8e-4 apart at 304, 2.6e-6 relative)."""
    seconds = BINARY_SECONDS if backend.name.startswith("binary") else 30
    rows = silero_rows(generated_speech(seconds))
    s = _session(path)
    names = [i.name for i in s.get_inputs()]
    out_names = [o.name for o in s.get_outputs()]
    model = bo.load(path, backend=backend.name)
    mine, theirs = SileroFeeds(names), SileroFeeds(names)
    step = SEQUENCE_ROWS if mine.sequence else 1
    for k in range(0, len(rows), step):
        r = rows[k:k + step]
        got = model.run(mine.feeds(r))
        got = [got[n].numpy() for n in out_names]
        want = s.run(None, theirs.feeds(r))
        np.testing.assert_allclose(got[0], want[0], rtol=0, atol=1e-4,
                                   err_msg=f"probability, chunk {k}")
        for n, a, b in zip(out_names[1:], got[1:], want[1:]):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4, err_msg=f"{n}, chunk {k}")
        mine.carry(got, out_names)
        theirs.carry(want, out_names)


@pytest.mark.skipif(magika_path() is None, reason="magika is not installed "
                                                   "(pip install --no-deps magika)")
def test_magika_matches_onnxruntime_on_random_bytes(backend):
    x = magika_bytes(16)
    got = bo.load(magika_path(), backend=backend.name).run({"bytes": x})["target_label"]
    want = _session(magika_path()).run(None, {"bytes": x})[0]
    np.testing.assert_allclose(got.numpy(), want, rtol=0, atol=1e-4)
    assert (got.numpy().argmax(axis=1) == want.argmax(axis=1)).all()

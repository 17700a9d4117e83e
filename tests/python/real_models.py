"""Real trained ONNX models from PyPI wheels (silero-vad's voice-activity
models, magika's content-type classifier), found where pip put them
without importing their packages (their own dependencies are not needed),
and the inputs they are run on: shared by tests/python and bench/."""
import glob
import importlib.util
import os

import numpy as np

SAMPLE_RATE = 16000
CHUNK = 512          # silero-vad's window at 16 kHz
CONTEXT = 64         # the samples of the previous chunk its wrapper puts first


def package_dir(name):
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def silero_paths():
    """Every .onnx in the silero-vad wheel (empty if it is not installed)."""
    d = package_dir("silero_vad")
    return sorted(glob.glob(os.path.join(d, "data", "*.onnx"))) if d else []


def magika_path():
    d = package_dir("magika")
    path = os.path.join(d, "models", "standard_v3_3", "model.onnx") if d else None
    return path if path and os.path.exists(path) else None


def generated_speech(seconds, seed=0):
    """seconds of 16 kHz audio, float32 in [-1, 1]: voiced stretches (a
    fundamental of 110 to 230 Hz with eight harmonics under a syllable-rate
    envelope) between stretches of quiet noise."""
    rng = np.random.default_rng(seed)
    n = int(seconds * SAMPLE_RATE)
    t = np.arange(n) / SAMPLE_RATE
    out = 0.003 * rng.standard_normal(n)
    at = 0
    while at < n:
        quiet, voiced = rng.integers(3000, 12000), rng.integers(6000, 30000)
        lo, hi = at + quiet, min(at + quiet + voiced, n)
        if lo < hi:
            f0 = rng.uniform(110, 230)
            seg = t[lo:hi]
            tone = sum(np.sin(2 * np.pi * f0 * k * seg + rng.uniform(0, 6.3)) / k
                       for k in range(1, 9))
            env = 0.5 * (1 - np.cos(2 * np.pi * rng.uniform(3, 6) * (seg - seg[0])))
            out[lo:hi] += 0.25 * tone * env
        at = hi
    return np.clip(out, -1, 1).astype(np.float32)


def silero_rows(audio):
    """The model's input per chunk, as silero-vad's wrapper makes it: the
    last CONTEXT samples of the previous chunk (zeros at first), then the
    chunk: (chunks, CONTEXT + CHUNK)."""
    chunks = len(audio) // CHUNK
    padded = np.concatenate([np.zeros(CONTEXT, np.float32), audio[:chunks * CHUNK]])
    return np.stack([padded[k * CHUNK:k * CHUNK + CONTEXT + CHUNK] for k in range(chunks)])


class SileroFeeds:
    """Inputs and state for one silero-vad model, by its declared inputs:
    (input, state[, sr]) or the sequence form (input rows, h, c)."""

    def __init__(self, input_names):
        self.names = list(input_names)
        self.sequence = "h" in self.names
        if self.sequence:
            self.state = {"h": np.zeros((1, 1, 128), np.float32),
                          "c": np.zeros((1, 1, 128), np.float32)}
        else:
            self.state = {"state": np.zeros((2, 1, 128), np.float32)}

    def feeds(self, rows):
        f = {"input": rows}
        f.update(self.state)
        if "sr" in self.names:
            f["sr"] = np.array(SAMPLE_RATE, np.int64)
        return f

    def carry(self, outputs, output_names):
        """The next call's state from this call's outputs (in the declared
        order: the probability first, then the state(s))."""
        for name, value in zip(self.state, outputs[1:1 + len(self.state)]):
            self.state[name] = np.asarray(value, np.float32)
        return np.asarray(outputs[0], np.float64).ravel()


def magika_bytes(batch, seed=0):
    """magika's input: rows of 2048 byte values (0..255, 256 for padding),
    int32: random bytes, some rows padded part way."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 256, size=(batch, 2048)).astype(np.int32)
    for r in range(0, batch, 3):
        x[r, rng.integers(100, 2048):] = 256
    return x

#!/usr/bin/env python3
"""ctest checkpoint.reference: backplane's safetensors files against the
reference implementation (Python's safetensors package), bit for bit.

Python writes a file holding every dtype backplane has (bf16 through
ml_dtypes), with NaN payloads, -0, infinities, subnormals, integer limits, a
rank-0 and an empty tensor, and metadata; st_roundtrip loads it onto a
backend and saves it again; Python loads that file and compares every
tensor's dtype, shape and bytes, and the metadata.

usage: check_reference.py ST_ROUNDTRIP BACKEND...   (exit 77: not installed)
"""
import os
import subprocess
import sys
import tempfile

try:
    import ml_dtypes
    import numpy as np
    from safetensors import safe_open
    from safetensors.numpy import load_file, save_file
except ImportError as e:
    print(f"SKIPPED: the reference implementation is not installed ({e}); "
          "tools/bootstrap.sh test installs it in build/venv")
    sys.exit(77)


def specials(dtype, bits):
    """Edge values of a float dtype, some given as raw bits (NaN payloads)."""
    values = np.array([0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, 1e-3, 3.0e4], dtype=dtype)
    raw = np.array(bits, dtype={2: np.uint16, 4: np.uint32, 8: np.uint64}[np.dtype(dtype).itemsize])
    return np.concatenate([values, raw.view(dtype)])


def arrays():
    rng = np.random.default_rng(7)
    i64 = np.iinfo(np.int64)
    return {
        "bool": np.array([True, False, True, True]),
        "u8": np.array([0, 1, 127, 128, 255], dtype=np.uint8),
        "i8": np.array([-128, -1, 0, 1, 127], dtype=np.int8),
        "i32": np.array([[-2**31, -1], [0, 2**31 - 1]], dtype=np.int32),
        "i64": np.array([i64.min, -1, 0, 1, i64.max, 2**53 + 1], dtype=np.int64),
        "f16": specials(np.float16, [0x7E01, 0xFC01, 0x0001, 0x03FF, 0x7BFF]),
        "bf16": specials(ml_dtypes.bfloat16, [0x7FC1, 0xFF81, 0x0001, 0x007F, 0x7F7F]),
        "f32": np.concatenate([specials(np.float32, [0x7FC00001, 0xFF800001, 0x00000001]),
                               rng.standard_normal(61).astype(np.float32)]),
        "f64": specials(np.float64, [0x7FF8000000000001, 0x0000000000000001]),
        "rank0": np.array(3.25, dtype=np.float64),
        "empty": np.zeros((0, 3), dtype=np.float32),
        "rank3": rng.standard_normal((2, 3, 4)).astype(np.float32),
    }


def main():
    tool, backends = sys.argv[1], sys.argv[2:]
    want = arrays()
    meta = {"format": "np", "step": "7", "note": "gr\u00fc\u00dfe, \"quoted\""}
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "reference.safetensors")
        save_file(want, src, metadata=meta)
        for be in backends:
            dst = os.path.join(tmp, "backplane.safetensors")
            run = subprocess.run([tool, src, dst, be], capture_output=True, text=True)
            if run.returncode != 0:
                print(f"not ok - {be}: st_roundtrip failed: {run.stderr.strip()}")
                failures += 1
                continue
            got = load_file(dst)
            with safe_open(dst, "np") as f:
                got_meta = f.metadata()
            bad = []
            for name, a in want.items():
                b = got.get(name)
                if b is None or b.dtype != a.dtype or b.shape != a.shape or b.tobytes() != a.tobytes():
                    bad.append(f"{name}: wrote {a.dtype}{list(a.shape)}, read back "
                               f"{None if b is None else (str(b.dtype) + str(list(b.shape)))}"
                               + ("" if b is None or b.tobytes() == a.tobytes() else " (bytes differ)"))
            if set(got) != set(want):
                bad.append(f"names differ: {sorted(set(got) ^ set(want))}")
            if got_meta != meta:
                bad.append(f"metadata {got_meta} != {meta}")
            if bad:
                failures += 1
                print(f"not ok - {be}: " + "; ".join(bad))
            else:
                print(f"ok - {be}: {len(want)} tensors (every dtype) and the metadata "
                      "round-trip bit-exactly through the reference implementation")
    print(f"checkpoint.reference: {len(backends) - failures} of {len(backends)} backends passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

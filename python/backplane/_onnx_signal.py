"""backplane.onnx's mappings of ONNX's signal ops: DFT, STFT, MelWeightMatrix."""

import numpy as np

from ._onnx_ops import ONNX_DTYPES, _fn, maps, unsupported


# ---- signal: DFT, STFT, MelWeightMatrix ---------------------------------------------------
#
# A DFT of length N is a product with the N x K matrices of cos and sin of
# 2 pi n k / N (computed in float64 on the host, rounded once to the
# signal's dtype): a GEMM on blas_cpu. That is O(N K) work a point where an
# FFT is O(log N); for the frame lengths of speech and music features (a
# few hundred to a few thousand points) one GEMM over every frame at once
# is what a BLAS does best, and no FFT library is needed.

def _dft_matrices(n, length, bins, inverse, dtype):
    """cos and sin of 2 pi j k / length for the n input points j and the
    bins k (the sign of the sine is the caller's)."""
    j = np.arange(n, dtype=np.float64)[:, None]
    k = np.arange(bins, dtype=np.float64)[None, :]
    angle = 2 * np.pi * ((j * k) % length) / length
    cos, sin = np.cos(angle), np.sin(angle)
    if inverse:
        cos, sin = cos / length, sin / length
    return cos.astype(dtype), sin.astype(dtype)


def _dft_last(n, re, im, length, onesided, inverse):
    """The DFT along the last axis of re (and im, or None for a real
    signal), of `length` points (the signal truncated or zero-padded to
    it): (real part, imaginary part)."""
    points = re.shape[-1]
    if points > length:
        re = re[..., :length]
        im = im[..., :length] if im is not None else None
        points = length
    bins = length // 2 + 1 if onesided else length
    cos, sin = _dft_matrices(points, length, bins, inverse, str(re.dtype))
    c, s = n.constant(cos), n.constant(sin)
    sign = 1.0 if inverse else -1.0  # e^{-i..} forward, e^{+i..} inverse
    out_re = _fn("matmul")(re, c)
    out_im = _fn("matmul")(re, s) * sign
    if im is not None:
        out_re = out_re - _fn("matmul")(im, s) * sign
        out_im = out_im + _fn("matmul")(im, c)
    return out_re, out_im


def _complex_parts(x):
    """A signal of shape [..., 1] (real) or [..., 2] (real, imaginary)."""
    comp = x.shape[-1]
    if comp not in (1, 2):
        raise unsupported(f"a signal whose last axis holds {comp} values (ONNX: 1 or 2)")
    re = _fn("squeeze")(x[..., 0:1], [len(x.shape) - 1])
    im = _fn("squeeze")(x[..., 1:2], [len(x.shape) - 1]) if comp == 2 else None
    return re, im


@maps("DFT")
def dft(n):
    if n.opset >= 20:
        raise unsupported("DFT of opset 20 (axis as an input); this importer maps DFT-17")
    x = n.tensor(0)
    rank = len(x.shape)
    axis = int(n.attr("axis", 1)) % (rank - 1)
    inverse, onesided = bool(n.attr("inverse", 0)), bool(n.attr("onesided", 0))
    if inverse and onesided:
        raise unsupported("DFT with inverse and onesided both set (ONNX does not define it)")
    length = n.ints(1)[0] if n.has_input(1) else x.shape[axis]
    re, im = _complex_parts(x)
    perm = [d for d in range(rank - 1) if d != axis] + [axis]
    back = list(np.argsort(perm))
    if axis != rank - 2:
        re = _fn("transpose")(re, perm)
        im = _fn("transpose")(im, perm) if im is not None else None
    out_re, out_im = _dft_last(n, re, im, length, onesided, inverse)
    if axis != rank - 2:
        out_re, out_im = _fn("transpose")(out_re, back), _fn("transpose")(out_im, back)
    return [_fn("stack")([out_re, out_im], axis=rank - 1)]


@maps("STFT")
def stft(n):
    """Frames of frame_length every frame_step samples (one gather), times
    the window, then a DFT of each frame (onesided by default)."""
    signal = n.tensor(0)
    step = n.ints(1)[0]
    window = n.tensor(2)
    length = n.ints(3)[0] if n.has_input(3) else (window.shape[0] if window is not None else None)
    if length is None:
        raise unsupported("STFT with neither a window nor a frame_length")
    if window is not None and window.shape[0] != length:
        raise unsupported(f"STFT window of {window.shape[0]} points for frames of {length}")
    total = signal.shape[1]
    frames = 1 + (total - length) // step
    if frames < 1 or step < 1:
        raise unsupported(f"STFT of {total} samples in frames of {length} every {step}")
    index = (np.arange(frames)[:, None] * step + np.arange(length)[None, :]).ravel()
    re, im = _complex_parts(signal)          # [batch, samples]
    batch = signal.shape[0]

    def framed(t):
        f = _fn("reshape")(_fn("gather")(t, n.constant(index.astype(np.int64)), axis=1),
                           [batch, frames, length])
        return f * window if window is not None else f
    out_re, out_im = _dft_last(n, framed(re), framed(im) if im is not None else None, length,
                               bool(n.attr("onesided", 1)), False)
    return [_fn("stack")([out_re, out_im], axis=3)]


@maps("MelWeightMatrix")
def mel_weight_matrix(n):
    """Triangular filters, equally spaced in mels from lower_edge_hertz to
    upper_edge_hertz, over the dft_length // 2 + 1 bins of a onesided DFT:
    computed on the host from the five scalars (a constant of the
    signature), as ONNX's test data and reference compute it: the
    num_mel_bins + 2 edges step (high - low) / (num_mel_bins + 2) mels
    apart, each edge's bin floor((dft_length + 1) hz / sample_rate)."""
    mels, length, rate = n.ints(0)[0], n.ints(1)[0], n.ints(2)[0]
    lo_hz, hi_hz = float(n.value(3).ravel()[0]), float(n.value(4).ravel()[0])
    to_mel = lambda hz: 2595 * np.log1p(hz / 700) / np.log(10)  # noqa: E731
    lo, hi = to_mel(lo_hz), to_mel(hi_hz)
    edges = np.arange(mels + 2) * ((hi - lo) / (mels + 2)) + lo
    hz = 700 * np.expm1(edges / 2595 * np.log(10))
    bins = (((length + 1) * hz) // rate).astype(int)
    out = np.zeros((length // 2 + 1, mels))
    for m in range(mels):
        left, centre, right = bins[m], bins[m + 1], bins[m + 2]
        if centre == left:
            out[centre, m] = 1
        else:
            for j in range(left, centre + 1):
                out[j, m] = (j - left) / (centre - left)
        for j in range(centre, right):
            out[j, m] = (right - j) / (right - centre)
    dtype = ONNX_DTYPES.get(int(n.attr("output_datatype", 1)))
    if dtype is None:
        raise unsupported(f"MelWeightMatrix output_datatype {n.attr('output_datatype')}")
    return [n.constant(out, dtype)]

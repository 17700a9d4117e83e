"""Host values as the runner holds them: NumPy arrays in the storage type of
the library's dtype (dtypes.STORAGE), bf16 as its 16 bits in a uint16 array.
No ONNX here, so the comparison and its unit tests need only NumPy."""
import numpy as np

FLOATS = ("f16", "bf16", "f32", "f64")


def bf16_bits_to_f32(bits):
    """bf16 bit patterns widened (exactly) to float32."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16_bits(values, truncate=False):
    """float32 values as bf16 bit patterns, rounded to nearest even (NaN kept a
    quiet NaN), or truncated (the low 16 bits dropped) if truncate."""
    u = np.asarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    if truncate:
        return (u >> 16).astype(np.uint16)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    nan = np.isnan(np.asarray(values, dtype=np.float32))
    return np.where(nan, (u >> 16) | 0x40, rounded).astype(np.uint16)


def as_float64(dtype, host):
    """The values of a host array as float64 (bool as 0/1; bf16 widened exactly)."""
    if dtype == "bf16":
        return bf16_bits_to_f32(host).astype(np.float64)
    return np.asarray(host).astype(np.float64)

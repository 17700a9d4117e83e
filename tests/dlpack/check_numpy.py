#!/usr/bin/env python3
"""ctest dlpack.numpy: tensors handed to NumPy through DLPack and back,
zero-copy both ways, via ctypes on libbackplane (the C side of the DLPack
protocol: a capsule named "dltensor" holding a DLManagedTensor, renamed
"used_dltensor" by whoever takes it).

usage: check_numpy.py LIBBACKPLANE.so [SANITIZE]   (exit 77: cannot run here)
"""
import ctypes
import sys
from ctypes import POINTER, byref, c_char_p, c_double, c_float, c_int, c_int32, c_int64, c_size_t, c_void_p

if len(sys.argv) > 2 and sys.argv[2] == "ON":
    print("SKIPPED: an AddressSanitizer build cannot be loaded into an uninstrumented Python")
    sys.exit(77)
try:
    import numpy as np
except ImportError:
    print("SKIPPED: NumPy is not installed (tools/bootstrap.sh test installs it in build/venv)")
    sys.exit(77)

BP_OK, BP_U8, BP_I64, BP_F32, BP_F64, BP_BOOL = 0, 1, 4, 7, 8, 0
lib = ctypes.CDLL(sys.argv[1])
for name, args in {
    "bp_context_create": [c_char_p, POINTER(c_void_p)],
    "bp_backend_get": [c_void_p, c_char_p, POINTER(c_void_p)],
    "bp_tensor_from_host": [c_void_p, c_int, c_int32, POINTER(c_int64), c_void_p, POINTER(c_void_p)],
    "bp_tensor_to_host": [c_void_p, c_void_p, c_size_t],
    "bp_tensor_to_dlpack": [c_void_p, POINTER(c_void_p)],
    "bp_tensor_from_dlpack": [c_void_p, c_void_p, POINTER(c_void_p)],
}.items():
    getattr(lib, name).argtypes = args
    getattr(lib, name).restype = c_int
lib.bp_tensor_release.argtypes = [c_void_p]
lib.bp_context_destroy.argtypes = [c_void_p]
lib.bp_last_error.restype = c_char_p

capsule_new = ctypes.pythonapi.PyCapsule_New
capsule_new.restype, capsule_new.argtypes = ctypes.py_object, [c_void_p, c_char_p, c_void_p]
capsule_ptr = ctypes.pythonapi.PyCapsule_GetPointer
capsule_ptr.restype, capsule_ptr.argtypes = c_void_p, [ctypes.py_object, c_char_p]
capsule_rename = ctypes.pythonapi.PyCapsule_SetName
capsule_rename.restype, capsule_rename.argtypes = c_int, [ctypes.py_object, c_char_p]

failures = 0


def check(name, cond, detail=""):
    global failures
    print(("ok - " if cond else "not ok - ") + name + ("" if cond else f": {detail}"))
    failures += not cond


def ok(st, what):
    if st != BP_OK:
        raise SystemExit(f"{what}: status {st}: {lib.bp_last_error().decode()}")


class Lent:
    """What np.from_dlpack asks for: a producer of a DLPack capsule."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, *args, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU, device 0


ctx, cpu = c_void_p(), c_void_p()
ok(lib.bp_context_create(None, byref(ctx)), "bp_context_create")
ok(lib.bp_backend_get(ctx, b"binary", byref(cpu)), "bp_backend_get")

# backplane -> NumPy
data = (c_float * 6)(1.5, -2, 3, 4, 5, 6)
t = c_void_p()
ok(lib.bp_tensor_from_host(cpu, BP_F32, 2, (c_int64 * 2)(2, 3), data, byref(t)), "from_host")
managed = c_void_p()
ok(lib.bp_tensor_to_dlpack(t, byref(managed)), "bp_tensor_to_dlpack")
arr = np.from_dlpack(Lent(capsule_new(managed, b"dltensor", None)))
check("numpy_reads_a_lent_tensor", arr.dtype == np.float32 and arr.shape == (2, 3) and
      arr.tolist() == [[1.5, -2, 3], [4, 5, 6]], f"{arr.dtype} {arr.shape} {arr}")
data_ptr = ctypes.cast(managed, POINTER(c_void_p))[0]  # DLTensor.data, the first member
check("numpy_shares_the_lent_memory", arr.ctypes.data == data_ptr,
      f"{arr.ctypes.data:#x} != {data_ptr:#x}")
lib.bp_tensor_release(t)  # NumPy's array keeps the tensor alive
check("a_lent_tensor_outlives_its_handle", arr.sum() == 17.5, str(arr))
del arr


def take(array, dtype_code):
    """array -> a backplane tensor via its own __dlpack__."""
    capsule = array.__dlpack__()
    t = c_void_p()
    ok(lib.bp_tensor_from_dlpack(cpu, capsule_ptr(capsule, b"dltensor"), byref(t)),
       "bp_tensor_from_dlpack")
    capsule_rename(capsule, b"used_dltensor")  # the protocol: ours now
    return t


def read(t, n, ctype):
    out = (ctype * n)()
    ok(lib.bp_tensor_to_host(t, out, ctypes.sizeof(out)), "to_host")
    return list(out)


# NumPy -> backplane
src = np.arange(12, dtype=np.float64).reshape(3, 4)
t = take(src, 2)
check("backplane_reads_a_numpy_array", read(t, 12, c_double) == src.ravel().tolist())
src[0, 0] = 99.0  # the tensor is NumPy's memory itself (never do this to a tensor)
check("backplane_shares_the_numpy_memory", read(t, 12, c_double)[0] == 99.0)
lib.bp_tensor_release(t)

t = take(src.T, 2)  # strided: copied into a dense tensor
check("a_strided_array_is_copied_dense", read(t, 12, c_double) == src.T.ravel().tolist())
lib.bp_tensor_release(t)

flags = np.array([True, False, True])
t = take(flags, 1)
check("bool_arrays_cross_as_bool", read(t, 3, ctypes.c_uint8) == [1, 0, 1])
lib.bp_tensor_release(t)

lib.bp_context_destroy(ctx)
print(f"dlpack.numpy: {failures} failed")
sys.exit(1 if failures else 0)

#!/usr/bin/env python3
"""exchange: hand a NumPy array to backplane and a backplane tensor to NumPy
through DLPack, without copying either way (on a host backend).

    python3 exchange.py /path/to/libbackplane.so

A binding would wrap these calls; here ctypes shows the protocol itself: a
PyCapsule named "dltensor" around a DLManagedTensor, renamed "used_dltensor"
by whoever takes it."""
import ctypes
import sys
from ctypes import POINTER, byref, c_char_p, c_int, c_void_p

import numpy as np

lib = ctypes.CDLL(sys.argv[1] if len(sys.argv) > 1 else "libbackplane.so")
lib.bp_context_create.argtypes = [c_char_p, POINTER(c_void_p)]
lib.bp_backend_get.argtypes = [c_void_p, c_char_p, POINTER(c_void_p)]
lib.bp_tensor_from_dlpack.argtypes = [c_void_p, c_void_p, POINTER(c_void_p)]
lib.bp_tensor_to_dlpack.argtypes = [c_void_p, POINTER(c_void_p)]
lib.bp_softmax.argtypes = [c_void_p, ctypes.c_int32, POINTER(c_void_p)]
lib.bp_tensor_release.argtypes = [c_void_p]
lib.bp_context_destroy.argtypes = [c_void_p]
lib.bp_last_error.restype = c_char_p
pyapi = ctypes.pythonapi
pyapi.PyCapsule_GetPointer.restype = c_void_p
pyapi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, c_char_p]
pyapi.PyCapsule_SetName.argtypes = [ctypes.py_object, c_char_p]
pyapi.PyCapsule_New.restype = ctypes.py_object
pyapi.PyCapsule_New.argtypes = [c_void_p, c_char_p, c_void_p]


def ok(status):
    if status != 0:
        raise RuntimeError(lib.bp_last_error().decode())


class Capsule:
    """What np.from_dlpack wants: an object with __dlpack__."""

    def __init__(self, managed):
        self.capsule = pyapi.PyCapsule_New(managed, b"dltensor", None)

    def __dlpack__(self, *args, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


ctx, cpu = c_void_p(), c_void_p()
ok(lib.bp_context_create(None, byref(ctx)))
ok(lib.bp_backend_get(ctx, b"binary", byref(cpu)))

logits = np.array([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]], dtype=np.float32)
capsule = logits.__dlpack__()                      # NumPy -> backplane
x = c_void_p()
ok(lib.bp_tensor_from_dlpack(cpu, pyapi.PyCapsule_GetPointer(capsule, b"dltensor"), byref(x)))
pyapi.PyCapsule_SetName(capsule, b"used_dltensor")

y, managed = c_void_p(), c_void_p()
ok(lib.bp_softmax(x, 1, byref(y)))                  # computed by backplane
ok(lib.bp_tensor_to_dlpack(y, byref(managed)))      # backplane -> NumPy
probs = np.from_dlpack(Capsule(managed))
print("softmax by backplane, read by NumPy without a copy:")
print(probs)
assert np.allclose(probs.sum(axis=1), 1.0)

lib.bp_tensor_release(x)
lib.bp_tensor_release(y)                            # NumPy's array still holds it
del probs
lib.bp_context_destroy(ctx)

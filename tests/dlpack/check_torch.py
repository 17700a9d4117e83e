#!/usr/bin/env python3
"""ctest dlpack.torch: CUDA tensors exchanged with PyTorch through DLPack,
zero-copy both ways, via ctypes on libbackplane: a torch tensor
on cuda:0 taken by the cuda backend is its memory (bp_tensor_to_dlpack of it
hands out the same address), and a cuda backend tensor given to
torch.utils.dlpack.from_dlpack is backplane's memory (the same address,
the same values). Skipped (77) without PyTorch, without a CUDA device, or
without the cuda backend.

usage: check_torch.py LIBBACKPLANE.so [SANITIZE]
"""
import ctypes
import sys
from ctypes import (CFUNCTYPE, POINTER, Structure, byref, c_char_p, c_float, c_int, c_int32,
                    c_int64, c_size_t, c_uint8, c_uint16, c_uint64, c_void_p)

if len(sys.argv) > 2 and sys.argv[2] == "ON":
    print("SKIPPED: an AddressSanitizer build cannot be loaded into an uninstrumented Python")
    sys.exit(77)
try:
    import torch
    import torch.utils.dlpack
except ImportError:
    print(f"SKIPPED: PyTorch is not installed for {sys.executable}")
    sys.exit(77)
if not torch.cuda.is_available():
    print("SKIPPED: PyTorch sees no CUDA device")
    sys.exit(77)


class DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(Structure):
    _fields_ = [("data", c_void_p), ("device", DLDevice), ("ndim", c_int32),
                ("dtype", DLDataType), ("shape", POINTER(c_int64)),
                ("strides", POINTER(c_int64)), ("byte_offset", c_uint64)]


class DLManagedTensor(Structure):
    pass


DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_void_p),
                            ("deleter", CFUNCTYPE(None, POINTER(DLManagedTensor)))]

BP_OK, BP_F32, KDL_CUDA = 0, 7, 2
lib = ctypes.CDLL(sys.argv[1])
for name, args in {
    "bp_context_create": [c_char_p, POINTER(c_void_p)],
    "bp_backend_get": [c_void_p, c_char_p, POINTER(c_void_p)],
    "bp_tensor_from_host": [c_void_p, c_int, c_int32, POINTER(c_int64), c_void_p, POINTER(c_void_p)],
    "bp_tensor_to_host": [c_void_p, c_void_p, c_size_t],
    "bp_tensor_to_dlpack": [c_void_p, POINTER(c_void_p)],
    "bp_tensor_from_dlpack": [c_void_p, c_void_p, POINTER(c_void_p)],
    "bp_synchronize": [c_void_p],
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


def managed(ptr):
    return ctypes.cast(ptr, POINTER(DLManagedTensor)).contents


ctx, gpu = c_void_p(), c_void_p()
ok(lib.bp_context_create(None, byref(ctx)), "bp_context_create")
if lib.bp_backend_get(ctx, b"cuda", byref(gpu)) != BP_OK:
    print(f"SKIPPED: the cuda backend does not open: {lib.bp_last_error().decode()}")
    sys.exit(77)

# PyTorch -> backplane, in place
t = torch.arange(6, dtype=torch.float32, device="cuda:0") * 1.5
torch.cuda.synchronize()
cap = torch.utils.dlpack.to_dlpack(t)
bt = c_void_p()
ok(lib.bp_tensor_from_dlpack(gpu, capsule_ptr(cap, b"dltensor"), byref(bt)), "from_dlpack")
capsule_rename(cap, b"used_dltensor")  # backplane owns it now
got = (c_float * 6)()
ok(lib.bp_tensor_to_host(bt, got, ctypes.sizeof(got)), "to_host")
check("a torch tensor reads back through backplane", list(got) == [0, 1.5, 3, 4.5, 6, 7.5],
      list(got))
m = c_void_p()
ok(lib.bp_tensor_to_dlpack(bt, byref(m)), "to_dlpack of the taken tensor")
mt = managed(m)
check("the taken tensor is torch's memory (no copy)",
      mt.dl_tensor.data + mt.dl_tensor.byte_offset == t.data_ptr(),
      f"{mt.dl_tensor.data:#x} + {mt.dl_tensor.byte_offset} vs {t.data_ptr():#x}")
mt.deleter(ctypes.cast(m, POINTER(DLManagedTensor)))
lib.bp_tensor_release(bt)
ok(lib.bp_synchronize(gpu), "bp_synchronize")  # gives torch's memory back
check("torch's tensor is intact after backplane let it go",
      t.cpu().tolist() == [0, 1.5, 3, 4.5, 6, 7.5], t.cpu().tolist())

# backplane -> PyTorch, in place
data = (c_float * 4)(1, -2, 3.5, 4)
src = c_void_p()
ok(lib.bp_tensor_from_host(gpu, BP_F32, 2, (c_int64 * 2)(2, 2), data, byref(src)), "from_host")
m2 = c_void_p()
ok(lib.bp_tensor_to_dlpack(src, byref(m2)), "to_dlpack")
lib.bp_tensor_release(src)  # the DLPack tensor holds it
mt2 = managed(m2)
check("a cuda tensor is handed out as kDLCUDA memory",
      mt2.dl_tensor.device.device_type == KDL_CUDA, mt2.dl_tensor.device.device_type)
address = mt2.dl_tensor.data + mt2.dl_tensor.byte_offset
tt = torch.utils.dlpack.from_dlpack(capsule_new(m2, b"dltensor", None))
check("torch sees backplane's memory (no copy)", tt.data_ptr() == address,
      f"{tt.data_ptr():#x} vs {address:#x}")
check("on the device backplane named", tt.device == torch.device("cuda", mt2.dl_tensor.device.device_id),
      str(tt.device))
check("with its values", tt.cpu().tolist() == [[1, -2], [3.5, 4]], tt.cpu().tolist())
del tt
torch.cuda.synchronize()
lib.bp_context_destroy(ctx)
sys.exit(1 if failures else 0)

"""ctypes binding to libbackplane: the calls the ONNX runner makes, nothing more.

Every op is called through one signature table (SIGNATURES), read from the
op table's schema (opcodes.h's BP_OP_SCHEMA, ops.h's BP_FN_SCHEMA), so a new
library function needs nothing here. A failing
call raises BpError carrying the status name and bp_last_error()'s message; tensors are released by the Arena that
made or received them, so a test never leaks into the next one.
"""
import ctypes
import importlib.util
from ctypes import (POINTER, Structure, byref, c_bool, c_char_p, c_double, c_int, c_int32, c_int64,
                    c_size_t, c_uint32, c_uint64, c_void_p, sizeof)
from pathlib import Path

import numpy as np

# dtype.h's BP_DTYPE_LIST: name -> (code, bytes, NumPy storage dtype). bf16 is
# carried as its 16 bits (NumPy has no bf16).
DTYPES = {
    "bool": (0, 1, np.bool_),
    "u8": (1, 1, np.uint8),
    "i8": (2, 1, np.int8),
    "i32": (3, 4, np.int32),
    "i64": (4, 8, np.int64),
    "f16": (5, 2, np.float16),
    "bf16": (6, 2, np.uint16),
    "f32": (7, 4, np.float32),
    "f64": (8, 8, np.float64),
}
DTYPE_BY_CODE = {code: name for name, (code, _, _) in DTYPES.items()}

# bp_scatter_reduction
SCATTER = {"none": 0, "add": 1, "mul": 2, "max": 3, "min": 4}



class Window(Structure):
    """nn.h's bp_window (struct_size set by window())."""
    _fields_ = [("struct_size", c_uint32), ("kernel", c_int64 * 3), ("strides", c_int64 * 3),
                ("dilations", c_int64 * 3), ("pads", c_int64 * 6), ("auto_pad", c_int),
                ("groups", c_int64), ("output_padding", c_int64 * 3),
                ("output_shape", c_int64 * 3), ("ceil_mode", c_bool),
                ("count_include_pad", c_bool), ("storage_order", c_int32)]


# bp_auto_pad
AUTO_PAD = {"NOTSET": 0, "SAME_UPPER": 1, "SAME_LOWER": 2, "VALID": 3}


def window(**fields):
    """A bp_window as BP_WINDOW_INIT makes it, then `fields` (lists fill the
    arrays from their start)."""
    w = Window()
    w.struct_size = sizeof(Window)
    for name, value in fields.items():
        if isinstance(value, (list, tuple)):
            arr = getattr(w, name)
            for i, v in enumerate(value):
                arr[i] = int(v)
        else:
            setattr(w, name, value)
    return w


class ResizeOptions(Structure):
    """nn.h's bp_resize_options (struct_size set by resize_options())."""
    _fields_ = [("struct_size", c_uint32), ("mode", c_int), ("coordinates", c_int),
                ("nearest", c_int), ("cubic_coeff_a", c_double), ("exclude_outside", c_bool)]


# bp_resize_mode, bp_resize_coordinates, bp_resize_nearest
RESIZE_MODE = {"nearest": 0, "linear": 1, "cubic": 2}
RESIZE_COORDINATES = {"half_pixel": 0, "asymmetric": 1, "align_corners": 2,
                      "pytorch_half_pixel": 3, "tf_half_pixel_for_nn": 4}
RESIZE_NEAREST = {"round_prefer_floor": 0, "round_prefer_ceil": 1, "floor": 2, "ceil": 3}


def resize_options(mode, coordinates, nearest, cubic_coeff_a, exclude_outside):
    o = ResizeOptions()
    o.struct_size = sizeof(ResizeOptions)
    o.mode, o.coordinates, o.nearest = mode, coordinates, nearest
    o.cubic_coeff_a, o.exclude_outside = cubic_coeff_a, exclude_outside
    return o


# bp_loss_reduction
LOSS_REDUCTION = {"none": 0, "sum": 1, "mean": 2}

# Argument kinds of the op signatures. 'o' is an output: the binding passes a
# fresh bp_tensor ** and returns what the call wrote there. 'o?' is an
# optional output: the caller passes whether it is wanted, and NULL goes to
# the library (and None comes back) when it is not.
_T, _O, _OPT = "t", "o", "o?"
_KINDS = {
    "t": c_void_p,                 # const bp_tensor * (None: NULL)
    "o": POINTER(c_void_p),        # bp_tensor **
    "o?": POINTER(c_void_p),       # bp_tensor ** or NULL
    "b": c_void_p,                 # bp_backend *
    "dt": c_int,                   # bp_dtype
    "i32": c_int32,
    "i64": c_int64,
    "u64": c_uint64,
    "f64": c_double,
    "bool": c_bool,
    "i32[]": POINTER(c_int32),     # None: NULL
    "i64[]": POINTER(c_int64),
    "f64[]": POINTER(c_double),    # None: NULL
    "win": POINTER(Window),        # const bp_window * (None: NULL)
    "resize": POINTER(ResizeOptions),
    "t[]": POINTER(c_void_p),      # const bp_tensor *const *
    "str": c_char_p,
}

# The C types of the headers' parameters, as argument kinds.
_C_KINDS = {
    "const bp_tensor*": _T, "bp_tensor**": _O, "bp_backend*": "b", "bp_dtype": "dt",
    "int32_t": "i32", "int64_t": "i64", "uint64_t": "u64", "double": "f64", "bool": "bool",
    "const int32_t*": "i32[]", "const int64_t*": "i64[]", "const double*": "f64[]",
    "const bp_window*": "win", "const bp_resize_options*": "resize",
    "const bp_tensor*const*": "t[]", "const char*": "str",
    "bp_scatter_reduction": "i32", "bp_loss_reduction": "i32",
}


def _load_generator():
    spec = importlib.util.spec_from_file_location("gen_ops", _REPO / "python" / "gen_ops.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    return gen


def _read_schema():
    """Every public function's schema row (opcodes.h's BP_OP_SCHEMA, ops.h's
    BP_FN_SCHEMA), read by the reader the Python package's generator uses
    (python/gen_ops.py), and its Params in C order."""
    gen = _load_generator()
    schema = gen.read_schema(_REPO / "core" / "include" / "backplane")
    return {name: (names, args, gen.params_of(name, args, outputs))
            for name, (names, args, outputs) in schema.items()}


def _read_signatures():
    """Every op function's argument kinds, from its schema's C types, so a
    new library function needs nothing here. Those with a parameter of a
    type not in _C_KINDS are left out: the runner calls the functions of
    each op."""
    signatures = {}
    for name, (_names, _args, params) in SCHEMA.items():
        kinds = []
        for p in params:
            for ctype in p.ctypes:
                kind = _C_KINDS.get(ctype.replace(" *", "*"))
                kinds.append(_OPT if kind == _O and p.optional else kind)
        if None not in kinds:
            signatures["bp_" + name] = kinds
    return signatures


def _read_onnx_functions():
    """The ONNX operators that are one function each (the schema's
    "onnx:Op"): Op -> (function, how many tensors it takes first, its
    parameters as (ONNX attribute, Python type))."""
    convert = {"f64": float, "i32": int, "i64": int, "bool": bool}
    functions = {}
    for name, (names, args, _params) in SCHEMA.items():
        for op in names.get("onnx", []):
            tensors = [a for a in args if a["type"] == "tensor"]
            attrs = [(a["onnx"] or a["name"], convert[a["type"]]) for a in args
                     if a["type"] != "tensor"]
            functions[op] = (name, len(tensors), attrs)
    return functions


_REPO = Path(__file__).resolve().parents[2]
SCHEMA = _read_schema()
SIGNATURES = _read_signatures()
# ONNX operator -> (function, tensors, attributes) for the schema's "onnx:Op"
ONNX_FUNCTIONS = _read_onnx_functions()


class BpError(Exception):
    """A library call returned a status other than BP_OK."""

    def __init__(self, function, status, message):
        super().__init__(f"{function}: {status}: {message}")
        self.function, self.status, self.message = function, status, message


class Library:
    """libbackplane.so, opened once per process."""

    def __init__(self, path):
        self.path = path
        lib = self._lib = ctypes.CDLL(path)
        for name, kinds in SIGNATURES.items():
            fn = getattr(lib, name)
            fn.argtypes = [_KINDS[k] for k in kinds]
            fn.restype = c_int
        for name, args in {
            "bp_context_create": [c_char_p, POINTER(c_void_p)],
            "bp_backend_get": [c_void_p, c_char_p, POINTER(c_void_p)],
            "bp_tensor_from_host": [c_void_p, c_int, c_int32, POINTER(c_int64), c_void_p,
                                    POINTER(c_void_p)],
            "bp_tensor_to_host": [c_void_p, c_void_p, c_size_t],
            "bp_split": [c_void_p, c_int32, c_int32, POINTER(c_int64), POINTER(c_void_p)],
        }.items():
            getattr(lib, name).argtypes = args
            getattr(lib, name).restype = c_int
        lib.bp_context_destroy.argtypes = [c_void_p]
        lib.bp_context_destroy.restype = None
        lib.bp_tensor_release.argtypes = [c_void_p]
        lib.bp_tensor_release.restype = None
        lib.bp_tensor_dtype.argtypes = [c_void_p]
        lib.bp_tensor_dtype.restype = c_int
        lib.bp_tensor_rank.argtypes = [c_void_p]
        lib.bp_tensor_rank.restype = c_int32
        lib.bp_tensor_shape.argtypes = [c_void_p]
        lib.bp_tensor_shape.restype = POINTER(c_int64)
        lib.bp_tensor_nbytes.argtypes = [c_void_p]
        lib.bp_tensor_nbytes.restype = c_size_t
        lib.bp_backend_name.argtypes = [c_void_p]
        lib.bp_backend_name.restype = c_char_p
        for name in ("bp_status_string", "bp_status_message"):
            getattr(lib, name).argtypes = [c_int]
            getattr(lib, name).restype = c_char_p
        lib.bp_last_error.argtypes = []
        lib.bp_last_error.restype = c_char_p
        lib.bp_version.restype = c_char_p

    def version(self):
        return self._lib.bp_version().decode()

    def check(self, function, status):
        if status != 0:
            # The thread's detailed message; the code's one-line meaning if none.
            detail = self._lib.bp_last_error().decode(errors="replace") or \
                self._lib.bp_status_message(status).decode()
            raise BpError(function, self._lib.bp_status_string(status).decode(), detail)

    def context(self):
        ctx = c_void_p()
        # NULL: the layered defaults (ctest clears $BP_CONFIG and the user's file)
        self.check("bp_context_create", self._lib.bp_context_create(None, byref(ctx)))
        return Context(self, ctx)


class Context:
    def __init__(self, lib, handle):
        self.lib, self.handle = lib, handle

    def backend(self, name):
        b = c_void_p()
        self.lib.check("bp_backend_get",
                       self.lib._lib.bp_backend_get(self.handle, name.encode(), byref(b)))
        return Backend(self.lib, b, self.lib._lib.bp_backend_name(b).decode())

    def destroy(self):
        self.lib._lib.bp_context_destroy(self.handle)
        self.handle = None


class Backend:
    def __init__(self, lib, handle, name):
        self.lib, self.handle, self.name = lib, handle, name


class Tensor:
    """A borrowed bp_tensor *: owned (and released) by its Arena."""

    def __init__(self, arena, handle):
        self.arena, self.handle = arena, handle

    @property
    def _raw(self):
        return self.arena.lib._lib

    @property
    def dtype(self):
        return DTYPE_BY_CODE[self._raw.bp_tensor_dtype(self.handle)]

    @property
    def shape(self):
        rank = self._raw.bp_tensor_rank(self.handle)
        p = self._raw.bp_tensor_shape(self.handle)
        return tuple(p[i] for i in range(rank))

    def to_host(self):
        """The elements as a NumPy array of the dtype's storage type (synchronises)."""
        _, _, storage = DTYPES[self.dtype]
        out = np.empty(self.shape, dtype=storage)
        nbytes = self._raw.bp_tensor_nbytes(self.handle)
        if nbytes != out.nbytes:
            raise BpError("bp_tensor_nbytes", "MISMATCH",
                          f"{nbytes} bytes for shape {self.shape} of {self.dtype}")
        self.arena.lib.check("bp_tensor_to_host", self._raw.bp_tensor_to_host(
            self.handle, out.ctypes.data_as(c_void_p), c_size_t(out.nbytes)))
        return out


class Arena:
    """Makes tensors on one backend and calls ops; release() drops every tensor
    it made or received."""

    def __init__(self, backend):
        self.backend, self.lib = backend, backend.lib
        self._owned = []

    def _own(self, handle):
        t = Tensor(self, handle)
        self._owned.append(handle)
        return t

    def release(self):
        for h in self._owned:
            self.lib._lib.bp_tensor_release(h)
        self._owned = []

    def from_host(self, dtype, array):
        """A tensor of `dtype` holding `array` (already in the dtype's storage type)."""
        code, _, storage = DTYPES[dtype]
        a = np.array(array, dtype=storage, order="C")  # (ascontiguousarray makes rank 0 rank 1)
        shape = (c_int64 * max(a.ndim, 1))(*a.shape)
        out = c_void_p()
        self.lib.check("bp_tensor_from_host", self.lib._lib.bp_tensor_from_host(
            self.backend.handle, code, a.ndim, shape,
            a.ctypes.data_as(c_void_p) if a.size else None, byref(out)))
        return self._own(out)

    def _arg(self, kind, value, keep):
        if kind == "t":
            return None if value is None else value.handle
        if kind == "b":
            return self.backend.handle
        if kind == "dt":
            return DTYPES[value][0]
        if kind in ("i32[]", "i64[]", "f64[]"):
            if value is None:
                return None
            ctype, conv = {"i32[]": (c_int32, int), "i64[]": (c_int64, int),
                           "f64[]": (c_double, float)}[kind]
            arr = (ctype * max(len(value), 1))(*[conv(v) for v in value])
            keep.append(arr)
            return arr
        if kind in ("win", "resize"):
            if value is None:
                return None
            keep.append(value)
            return byref(value)
        if kind == "t[]":
            arr = (c_void_p * max(len(value), 1))(*[t.handle for t in value])
            keep.append(arr)
            return arr
        if kind == "str":
            return value.encode()
        return value

    def call(self, function, *args):
        """Call bp_<function> with the inputs of its signature (the backend is
        filled in for 'b'; an 'o?' takes whether that output is wanted);
        returns its output tensor, or a tuple of them (None for an output not
        wanted)."""
        name = "bp_" + function
        kinds = SIGNATURES[name]
        ins = [k for k in kinds if k not in ("o", "b")]
        if len(args) != len(ins):
            raise TypeError(f"{name} takes {len(ins)} arguments ({', '.join(ins)}), "
                            f"got {len(args)}")
        keep, cargs, outs, it = [], [], [], iter(args)
        for k in kinds:
            if k == "o" or (k == "o?" and next(it)):
                outs.append(c_void_p())
                cargs.append(byref(outs[-1]))
            elif k == "o?":
                outs.append(c_void_p())  # stays NULL: no tensor comes back
                cargs.append(None)
            elif k == "b":
                cargs.append(self.backend.handle)
            else:
                cargs.append(self._arg(k, next(it), keep))
        status = getattr(self.lib._lib, name)(*cargs)
        # Outputs written before a failure still belong to the caller.
        owned = [self._own(o) if o.value else None for o in outs]
        self.lib.check(name, status)
        return owned[0] if len(owned) == 1 else tuple(owned)

    def split(self, x, axis, n, sizes):
        outs = (c_void_p * n)()
        sz = None if sizes is None else (c_int64 * n)(*[int(s) for s in sizes])
        status = self.lib._lib.bp_split(x.handle, axis, n, sz, outs)
        owned = [self._own(outs[i]) for i in range(n) if outs[i]]
        self.lib.check("bp_split", status)
        return owned

"""backplane's dtypes as objects that compare as NumPy users expect.

``Tensor.dtype`` is one of thirteen ``backplane.dtype`` objects. Each is a
``str`` holding NumPy's name ('float32', 'bfloat16', ...), so code that
printed, compared or used the names as dict keys keeps working, and it also
compares equal to everything ``numpy.dtype()`` accepts for that type:
``t.dtype == np.float32``, ``== 'f4'``, ``== '<f4'``, ``== np.dtype('float32')``
(``float`` means float64, ``int`` int64, ``bool`` bool, as in NumPy).
"""

# In the library's enum order (dtype.h): those of plugin ABI 1.10 and 1.11 last.
_NAMES = ("bool", "uint8", "int8", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "int16", "uint16", "uint32", "uint64")
_ITEMSIZE = {"bool": 1, "uint8": 1, "int8": 1, "int32": 4, "int64": 8, "float16": 2,
             "bfloat16": 2, "float32": 4, "float64": 8, "int16": 2, "uint16": 2, "uint32": 4,
             "uint64": 8}
_KIND = {"bool": "b", "uint8": "u", "int8": "i", "int32": "i", "int64": "i", "float16": "f",
         "bfloat16": "V", "float32": "f", "float64": "f", "int16": "i", "uint16": "u",
         "uint32": "u", "uint64": "u"}
# The library's short names, which backplane's functions also accept.
_SHORT = {"bool": "bool", "uint8": "u8", "int8": "i8", "int32": "i32", "int64": "i64",
          "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
          "int16": "i16", "uint16": "u16", "uint32": "u32", "uint64": "u64"}
_PYTHON_TYPES = {float: "float64", int: "int64", bool: "bool"}


class dtype(str):
    """A backplane element type: a str holding NumPy's name, equal to every
    spelling numpy.dtype() accepts for it. ``backplane.dtype('f4')`` gives
    ``float32``."""

    __slots__ = ()

    def __new__(cls, spec):
        name = _name_of(spec)
        if name is None:
            raise TypeError(f"data type {spec!r} is not one of backplane's: {', '.join(_NAMES)}")
        return _DTYPES[name]

    def __eq__(self, other):
        if isinstance(other, dtype):
            return str.__eq__(self, other)
        try:
            name = _name_of(other)
        except Exception:  # an object numpy.dtype() refuses is simply not equal
            return False
        return name is not None and str.__eq__(self, name)

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = str.__hash__  # hashes as its name: a str key finds it in a dict

    def __repr__(self):
        return f"dtype('{str(self)}')"

    def __reduce__(self):
        return (dtype, (str(self),))

    @property
    def name(self):
        """NumPy's name: 'float32'."""
        return str(self)

    @property
    def itemsize(self):
        """Bytes per element."""
        return _ITEMSIZE[str(self)]

    @property
    def kind(self):
        """NumPy's kind character: 'b' bool, 'u' unsigned, 'i' signed, 'f' float
        ('V' for bfloat16, as ml_dtypes has it)."""
        return _KIND[str(self)]

    @property
    def numpy(self):
        """The matching numpy.dtype (bfloat16 needs the ml_dtypes package)."""
        import numpy as np

        if str(self) == "bfloat16":
            import ml_dtypes

            return np.dtype(ml_dtypes.bfloat16)
        return np.dtype(str(self))


def _name_of(spec):
    """NumPy's name for anything numpy.dtype() (or backplane) accepts; None
    for a type backplane lacks."""
    if isinstance(spec, dtype):
        return str(spec)
    if isinstance(spec, str):
        if spec in _ITEMSIZE:
            return spec
        for full, short in _SHORT.items():
            if spec == short:
                return full
        if spec == "bool_":
            return "bool"
    elif isinstance(spec, type) and spec in _PYTHON_TYPES:
        return _PYTHON_TYPES[spec]
    elif spec is None:
        return None
    try:
        import numpy as np
    except ImportError:
        return None
    try:
        d = np.dtype(spec)
    except TypeError:
        if isinstance(spec, str):
            return None
        raise
    if not d.isnative and d.itemsize > 1:
        return None  # big-endian data is not a backplane dtype as such
    return d.name if d.name in _ITEMSIZE else None


_DTYPES = {n: str.__new__(dtype, n) for n in _NAMES}
DTYPES = tuple(_DTYPES[n] for n in _NAMES)  # in the library's enum order

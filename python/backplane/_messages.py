"""The C library's messages in Python's terms.

The library's errors end with the fix, spelled as C calls (``bp_cast``,
``bp_backend_copy(<the b tensor>, <backend binary:0>, &copy)``). Raised from
Python, they name what a Python user writes: ``.astype(...)``, ``.to(...)``,
``backplane.NAME``.
"""
import re

_DTYPES = {"BOOL": "bool", "U8": "uint8", "I8": "int8", "I32": "int32", "I64": "int64",
           "F16": "float16", "BF16": "bfloat16", "F32": "float32", "F64": "float64",
           "I16": "int16", "U16": "uint16", "U32": "uint32",
           "U64": "uint64"}

_RULES = [
    # A symbolic tensor read: in Python, that is a traced value inside backplane.jit.
    (re.compile(r"the tensor is symbolic \(recorded on a graph for backend ([^)]+)\) and "
                r"holds no values; mark it with bp_graph_output.*$", re.S),
     r"the tensor is symbolic: a value traced by backplane.jit (on backend \1), which holds "
     r"no values while the function is traced; mark the argument it comes from static "
     r"(jit(f, static_argnums=...)), or compute the value outside the jitted function and "
     r"pass it in"),
    # bp_backend_copy(<the b tensor>, <backend binary:0>, &copy) -> b.to('binary:0')
    (re.compile(r"bp_backend_copy\(<the (\w+) tensor>, <backend ([^>]+)>, &\w+\)"),
     r"\1.to('\2')"),
    (re.compile(r"bp_backend_copy\((\w+), <backend ([^>]+)>, &\w+\)"), r"\1.to('\2')"),
    (re.compile(r"bp_backend_copy\((\w+), <([^>]+)>, &\w+\)"), r"\1.to(<\2>)"),
    # bp_cast(x, BP_F32, &f) -> x.astype('float32')
    (re.compile(r"bp_cast\((\w+), BP_(\w+), &\w+\)"),
     lambda m: f"{m.group(1)}.astype('{_DTYPES.get(m.group(2), m.group(2).lower())}')"),
    (re.compile(r"\bbp_cast\b( it| them)?"), lambda m: ".astype(dtype)" if not m.group(1)
     else f"{m.group(1).strip()}.astype(dtype)"),
    (re.compile(r"\bbp_backend_copy\b"), "Tensor.to(backend)"),
    (re.compile(r"\bbp_tensor_to_host\b"), "Tensor.numpy()"),
    (re.compile(r"\bbp_item_(f64|i64|bool)\b"), "Tensor.item()"),
    (re.compile(r"\bBP_(BOOL|U8|I8|I32|I64|F16|BF16|F32|F64)\b"),
     lambda m: f"'{_DTYPES[m.group(1)]}'"),
]
_FUNCTION = re.compile(r"\bbp_([a-z][a-z0-9_]*)\b")


def python_message(msg):
    """msg with its C spellings replaced by Python's."""
    for pattern, repl in _RULES:
        msg = pattern.sub(repl, msg)
    import backplane

    def function(m):
        name = m.group(1)
        return f"backplane.{name}" if hasattr(backplane, name) else m.group(0)

    return _FUNCTION.sub(function, msg)

#!/usr/bin/env python3
"""Generate the Python functions of backplane's ops from the library's headers.

Run by CMake at build time (python/CMakeLists.txt):

    gen_ops.py INCLUDE_DIR OUT_C OUT_PYI

It reads
  - opcodes.h: the op table (BP_OP_TABLE): every op's name, and which of its
    input tensors and outputs are optional, and
  - ops.h, nn.h (and tensor.h's reshape / squeeze / unsqueeze): the public
    prototypes, which say how every argument reaches the C function,
and writes one C wrapper per public op function (OUT_C, compiled into the
extension) and its stub (OUT_PYI, appended to backplane/__init__.pyi).

Everything about an argument that the prototype does not say (its Python
name, its default, whether a tensor may be None, which outputs are
optional) is in the tables below: THIS FILE IS THE ONE PLACE TO CHANGE when
the Python face of an op changes. A new op in ops.h or nn.h whose arguments
follow the patterns below needs nothing here; one that does not, or an op
of opcodes.h that no function covers, stops the build with a message that
says what to add. What the op table says is not repeated here: an input
tensor its row marks optional defaults to None, and an output it marks
optional is asked for with return_NAME=True.
"""
import re
import sys
from pathlib import Path

# ---- the per-op facts the headers do not state -----------------------------------

# Defaults, as Python literals (ONNX's defaults where ONNX has the op). A
# parameter without one is required. Tensors defaulting to None are optional
# (passed as NULL). The unary ops' parameters (elu's alpha...) are added from
# opcodes.h by read_unary_params.
DEFAULTS = {
    "reduce_var": {"correction": "0.0"},
    "reduce_std": {"correction": "0.0"},
    "hardmax": {"axis": "-1"},
    "softmax": {"axis": "-1"},
    "log_softmax": {"axis": "-1"},
    "cumsum": {"axis": "0", "exclusive": "False", "reverse": "False"},
    "cumprod": {"axis": "0", "exclusive": "False", "reverse": "False"},
    "topk": {"axis": "-1", "largest": "True", "sorted": "True"},
    "sort": {"axis": "-1", "descending": "False"},
    "argsort": {"axis": "-1", "descending": "False"},
    "split": {"axis": "0"},
    "trilu": {"upper": "True", "k": "0"},
    "one_hot": {"axis": "-1"},
    "gather": {"axis": "0"},
    "gather_elements": {"axis": "0"},
    "gather_nd": {"batch_dims": "0"},
    "scatter_elements": {"axis": "0", "reduction": "'none'"},
    "scatter_nd": {"reduction": "'none'"},
    "depth_to_space": {"crd": "False"},
    "gemm": {"alpha": "1.0", "beta": "1.0", "trans_a": "False", "trans_b": "False"},
    "transpose": {"perm": "None"},
    "slice": {"stops": "None", "steps": "None"},
    "concat": {"axis": "0"},
    "pad": {"value": "0.0"},
    "full": {"dtype": "None"},
    "zeros": {"dtype": "'float64'"},
    "ones": {"dtype": "'float64'"},
    "eye": {"dtype": "'float64'"},
    "arange": {"step": "1", "dtype": "None"},
    "random_uniform": {"seed": "0", "offset": "0", "low": "0.0", "high": "1.0",
                       "dtype": "'float64'"},
    "random_normal": {"seed": "0", "offset": "0", "mean": "0.0", "stddev": "1.0",
                      "dtype": "'float64'"},
    "lrn": {"alpha": "0.0001", "beta": "0.75", "bias": "1.0"},
    "batch_norm": {"epsilon": "1e-05"},
    "instance_norm": {"epsilon": "1e-05"},
    "layer_norm": {"axis": "-1", "scale": "None", "epsilon": "1e-05"},
    "rms_norm": {"axis": "-1", "epsilon": "1e-05"},
    "nll_loss": {"reduction": "'mean'", "ignore_index": "None"},
    "softmax_cross_entropy_loss": {"reduction": "'mean'", "ignore_index": "None"},
    "dropout": {"ratio": "0.5", "training": "False", "seed": "0", "offset": "0"},
    "resize": {"scales": "None", "sizes": "None"},
    "squeeze": {"axes": "None"},
}

# Python names that differ from the C parameter's.
RENAME = {
    "transpose": {"perm": "axes"},
    "clip": {"lo": "min", "hi": "max"},
    "reshape": {"t": "x"},
    "squeeze": {"t": "x"},
    "unsqueeze": {"t": "x"},
}

# An axis list (n_axes, axes) is "axis" (NumPy's reductions) unless named here.
AXES_NAME = {"squeeze": "axes"}

# Tensors whose dtype is their own: a Python scalar beside them does not take
# it (every other tensor argument of an op shares one dtype).
OWN_DTYPE = {"cond", "indices", "target", "labels"}

# Optional outputs: NULL unless the caller asks with return_NAME=True; the
# result is then a tuple (the outputs asked for, in order). The op table's
# ('?' outputs) are added by read_op_table; the ops the core composes are
# not in the table and are listed here.
OPTIONAL_OUTPUTS = {
    "dropout": ["mask"],
}

# A tensor that is None becomes ones of x's shape from `axis` on (ONNX's
# layer normalisation always scales).
ONES_IF_NONE = {"layer_norm": ("scale", "axis")}

# dtype None: inferred from these numbers (NumPy: all ints give int64).
INFER_DTYPE = {"arange": ["start", "stop", "step"], "full": ["value"]}

# Window keywords (bp_window) each window op takes, ONNX's names.
WINDOW = {
    "conv": ["strides", "pads", "dilations", "groups", "auto_pad"],
    "conv_transpose": ["strides", "pads", "dilations", "groups", "auto_pad", "output_padding",
                       "output_shape"],
    "max_pool": ["kernel_shape", "strides", "pads", "dilations", "ceil_mode", "storage_order",
                 "auto_pad"],
    "average_pool": ["kernel_shape", "strides", "pads", "ceil_mode", "count_include_pad",
                     "auto_pad"],
}
WINDOW_REQUIRED = {"kernel_shape"}
# keyword: (kind, default, bp_window member)
WINDOW_KW = {
    "kernel_shape": ("seq", "None", None),
    "strides": ("seq", "None", None),
    "pads": ("seq", "None", None),
    "dilations": ("seq", "None", None),
    "output_padding": ("seq", "None", None),
    "output_shape": ("seq", "None", None),
    "auto_pad": ("str", "'NOTSET'", None),
    "groups": ("int", "1", "groups"),
    "ceil_mode": ("bool", "False", "ceil_mode"),
    "count_include_pad": ("bool", "False", "count_include_pad"),
    "storage_order": ("int", "0", "storage_order"),
}

# Enumerations taken as strings; the index is the C value.
CHOICES = {
    "bp_loss_reduction": ["none", "sum", "mean"],
    "bp_scatter_reduction": ["none", "add", "mul", "max", "min"],
}
RESIZE_KW = [
    # keyword, kind, default, choices / member
    ("mode", "choice", "'nearest'", ["nearest", "linear", "cubic"], "mode"),
    ("coordinate_transformation_mode", "choice", "'half_pixel'",
     ["half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel", "tf_half_pixel_for_nn"],
     "coordinates"),
    ("nearest_mode", "choice", "'round_prefer_floor'",
     ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"], "nearest"),
    ("cubic_coeff_a", "float", "-0.75", None, "cubic_coeff_a"),
    ("exclude_outside", "bool", "False", None, "exclude_outside"),
]

# Functions whose tensors come as separate arguments (einsum(eq, a, b)).
VARARGS = {"einsum"}

# NumPy's names for the same functions.
ALIASES = {
    "sub": ["subtract"], "mul": ["multiply"], "div": ["divide", "true_divide"],
    "pow": ["power"], "neg": ["negative"], "abs": ["absolute"], "eq": ["equal"],
    "ne": ["not_equal"], "lt": ["less"], "le": ["less_equal"], "gt": ["greater"],
    "ge": ["greater_equal"], "concat": ["concatenate"], "max": ["amax"], "min": ["amin"],
}

# Public prototypes that are not functions of their own in Python, and why.
SKIP = {
    "unary": "the unary ops by code: each op has its own function",
    "unary_params": "the unary ops by code, with parameters: each op has its own function",
    "binary": "the binary ops by code: each op has its own function",
    "reduce": "the reductions by code: each op has its own function",
    "clip_scalar": "clip takes numbers for min and max",
    "full_i64": "C's int64 form of full; Python's full takes the value as given",
    "arange_i64": "C's int64 form of arange; Python's arange takes the values as given",
}

# Ops of opcodes.h covered by a function of another name.
OP_FUNCTION = {
    "fill": "full",
    "copy": None,  # the core's strided copy behind movement ops; Tensor.to copies across backends
}

# tensor.h's functions that are ops for a Python user.
TENSOR_H_OPS = ["reshape", "squeeze", "unsqueeze"]

# ---- reading the headers ----------------------------------------------------------


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def read_op_table(opcodes):
    """The op table's rows: (name, inputs, outputs), each a list of
    (name, optional)."""
    text = strip_comments(opcodes)
    m = re.search(r"#define\s+BP_OP_TABLE\(X\)((?:[^\n]*\\\n)*[^\n]*)", text)
    if not m:
        sys.exit("gen_ops.py: found no BP_OP_TABLE in opcodes.h")
    rows = []
    body = m.group(1).replace("\\\n", " ")  # the macro's continuation lines
    for r in re.finditer(r'X\(\s*\w+\s*,\s*(\w+)\s*,\s*\w+\s*,\s*\d+\s*,\s*"([^"]*)"\s*,'
                         r'\s*"([^"]*)"', body):
        split = lambda names: [(n.rstrip("?"), n.endswith("?")) for n in names.split()]
        rows.append((r.group(1), split(r.group(2)), split(r.group(3))))
    if not rows:
        sys.exit("gen_ops.py: found no row in opcodes.h's BP_OP_TABLE")
    return rows


def read_unary_params(opcodes):
    """The unary ops' parameters and ONNX's defaults (BP_OP_UNARY_PARAMS) into
    DEFAULTS: elu's alpha 1.0, selu's alpha and gamma..."""
    text = strip_comments(opcodes)
    m = re.search(r"#define\s+BP_OP_UNARY_PARAMS\(X\)((?:[^\n]*\\\n)*[^\n]*)", text)
    if not m:
        sys.exit("gen_ops.py: found no BP_OP_UNARY_PARAMS in opcodes.h")
    body = m.group(1).replace("\\\n", " ")
    for r in re.finditer(r'X\(\s*(\w+)\s*,\s*"(\w*)"\s*,\s*([-+.\w]+)\s*,\s*"(\w*)"\s*,'
                         r'\s*([-+.\w]+)\s*\)', body):
        params = DEFAULTS.setdefault(r.group(1).lower(), {})
        for name, value in ((r.group(2), r.group(3)), (r.group(4), r.group(5))):
            if name:
                params[name] = repr(float(value))


def apply_op_table(rows):
    """What the table says of optional tensors, into the tables above."""
    for name, ins, outs in rows:
        for arg, optional in ins:
            if optional:
                DEFAULTS.setdefault(name, {}).setdefault(arg, "None")
        extra = [arg for arg, optional in outs if optional]
        if extra:
            OPTIONAL_OUTPUTS[name] = extra
    return [name for name, _, _ in rows]


def read_comments(text, header):
    """The comment above each prototype (shared by a group of them): its docstring."""
    docs, current = {}, ""
    for m in re.finditer(r"(/\*.*?\*/)|BP_API\s+bp_status\s+bp_(\w+)\s*\(", text, flags=re.S):
        if m.group(1):
            body = m.group(1)[2:-2]
            lines = [ln.strip().lstrip("*").strip() for ln in body.splitlines()]
            body = " ".join(ln for ln in lines if ln)
            if not re.match(r"^-+ .* -+$", body) and not body.startswith("===="):
                current = body
        else:
            docs[m.group(2)] = (current, header)
    return docs


def read_prototypes(text, only=None):
    text = strip_comments(text)
    protos = {}
    for m in re.finditer(r"BP_API\s+bp_status\s+bp_(\w+)\s*\(([^;]*?)\)\s*;", text, flags=re.S):
        name, params = m.group(1), m.group(2)
        if only is not None and name not in only:
            continue
        plist = []
        for p in params.split(","):
            p = " ".join(p.split())
            pm = re.match(r"(.*?)(\w+)$", p)
            ctype = pm.group(1).replace(" *", "*").replace("* ", "*").strip()
            plist.append((ctype, pm.group(2)))
        protos[name] = plist
    return protos


# ---- the argument patterns --------------------------------------------------------


class Param:
    """One Python parameter (or output) of a generated function."""

    def __init__(self, kind, cname, pyname=None, **kw):
        self.kind, self.cname, self.pyname = kind, cname, pyname or cname
        self.default = None
        self.__dict__.update(kw)


def classify(fname, cparams):
    """The C parameters of fname as Params; SystemExit for a pattern not known."""
    out, i = [], 0
    ren = RENAME.get(fname, {})
    while i < len(cparams):
        ctype, cname = cparams[i]
        nxt = cparams[i + 1] if i + 1 < len(cparams) else (None, None)
        nn = cparams[i + 2] if i + 2 < len(cparams) else (None, None)
        if ctype == "int32_t" and cname == "n_axes" and nxt == ("const int32_t*", "axes"):
            out.append(Param("axes", "axes", AXES_NAME.get(fname, "axis")))
            i += 2
            continue
        if ctype == "int32_t" and cname == "rank" and nxt == ("const int64_t*", "shape"):
            out.append(Param("shape", "shape"))
            i += 2
            continue
        if ctype == "int32_t" and cname == "n" and nxt[0] == "const bp_tensor*const*":
            out.append(Param("tlist", nxt[1], ren.get(nxt[1], nxt[1])))
            i += 2
            continue
        if (ctype == "int32_t" and cname == "n" and nxt == ("const int64_t*", "sizes")
                and nn == ("bp_tensor**", "outs")):
            out.append(Param("split", "split"))
            out.append(Param("outs", "outs"))
            i += 3
            continue
        pyname = ren.get(cname, cname)
        simple = {
            "const bp_tensor*": "tensor", "bp_tensor**": "out", "double": "float",
            "int32_t": "int", "int64_t": "int64", "uint64_t": "uint64", "bool": "bool",
            "bp_dtype": "dtype", "bp_backend*": "backend", "const int32_t*": "i32seq",
            "const int64_t*": "i64seq", "const double*": "f64seq",
            "const bp_window*": "window", "const bp_resize_options*": "resize",
            "const char*": "str", "bp_loss_reduction": "choice",
            "bp_scatter_reduction": "choice",
        }
        if ctype == "bp_op":
            return None
        if ctype not in simple:
            sys.exit(f"gen_ops.py: bp_{fname}: no Python pattern for parameter '{ctype} {cname}'; "
                     f"add one to classify() in python/gen_ops.py")
        kind = simple[ctype]
        p = Param(kind, cname, pyname)
        if kind == "choice":
            p.choices = CHOICES[ctype]
            p.ctype = ctype
        if kind == "i64seq" and cname == "ignore_index":
            p.kind = "optint"
        out.append(p)
        i += 1
    defaults = DEFAULTS.get(fname, {})
    for p in out:
        if p.cname in defaults:
            p.default = defaults[p.cname]
        elif p.kind == "axes":
            p.default = "None"
        elif p.kind == "bool" and p.cname == "keepdims":
            p.default = "False"
        elif p.kind == "backend":
            p.default = "None"
            p.pyname = "backend"
    if fname in INFER_DTYPE:
        for p in out:
            if p.cname in INFER_DTYPE[fname]:
                p.infer = True
    return out


# ---- emitting C --------------------------------------------------------------------

FMT = {"float": "d", "int": "i", "int64": "L", "uint64": "K", "bool": "p"}
CDECL = {"float": "double", "int": "int", "int64": "long long", "uint64": "unsigned long long",
         "bool": "int"}
PYTYPE = {
    "tensor": "TensorLike", "float": "float", "int": "int", "int64": "int", "uint64": "int",
    "bool": "bool", "dtype": "DTypeLike", "backend": "BackendLike", "axes": "Axes",
    "shape": "ShapeLike", "tlist": "Sequence[TensorLike]", "i32seq": "Sequence[int]",
    "i64seq": "Sequence[int]", "f64seq": "Sequence[float]", "str": "str", "choice": "str",
    "optint": "int", "split": "Union[int, Sequence[int]]",
}


def c_literal(kind, lit):
    if lit == "True":
        return "1"
    if lit == "False":
        return "0"
    return lit


def gen_function(fname, params):
    """The C wrapper and the stub of one function."""
    ins = [p for p in params if p.kind not in ("out", "outs", "window", "resize")]
    outs = [p for p in params if p.kind == "out"]
    has_outs_list = any(p.kind == "outs" for p in params)
    window = any(p.kind == "window" for p in params)
    resize = any(p.kind == "resize" for p in params)
    opt_outs = OPTIONAL_OUTPUTS.get(fname, [])
    for o in opt_outs:
        if o not in [p.cname for p in outs]:
            sys.exit(f"gen_ops.py: OPTIONAL_OUTPUTS[{fname!r}] names {o!r}, not an output of "
                     f"bp_{fname}")

    # Python parameters: (pyname, kind, default, C variable, format char)
    pyparams = []
    decls, parse_vars = [], []
    for p in ins:
        var = "o_" + p.cname
        if p.kind in FMT and not getattr(p, "infer", False):
            var = "v_" + p.cname
            init = c_literal(p.kind, p.default) if p.default is not None else "0"
            decls.append(f"{CDECL[p.kind]} {var} = {init};")
            pyparams.append((p.pyname, p.kind, p.default, var, FMT[p.kind]))
        else:
            init = "NULL" if p.default is None or getattr(p, "infer", False) else "Py_None"
            decls.append(f"PyObject *{var} = {init};")
            pyparams.append((p.pyname, p.kind, p.default, var, "O"))
        p.var = var
    if window:
        for kw in WINDOW[fname]:
            kind, default, member = WINDOW_KW[kw]
            if kw in WINDOW_REQUIRED:
                default = None
            if kind in ("int", "bool"):
                var = "w_" + kw
                decls.append(f"{CDECL[kind]} {var} = {c_literal(kind, default)};")
                pyparams.append((kw, kind, default, var, FMT[kind]))
            else:
                var = "w_" + kw
                decls.append(f"PyObject *{var} = {'NULL' if default is None else 'Py_None'};")
                pyparams.append((kw, "window_" + kind, default, var, "O"))
    if resize:
        for kw, kind, default, _choices, _member in RESIZE_KW:
            var = "r_" + kw
            if kind == "choice":
                decls.append(f"PyObject *{var} = NULL;")
                pyparams.append((kw, "choice", default, var, "O"))
            else:
                decls.append(f"{CDECL[kind]} {var} = {c_literal(kind, default)};")
                pyparams.append((kw, kind, default, var, FMT[kind]))
    for o in opt_outs:
        var = "want_" + o
        decls.append(f"int {var} = 0;")
        pyparams.append(("return_" + o, "bool", "False", var, "p"))

    varargs = fname in VARARGS
    required = [pp for pp in pyparams if pp[2] is None]
    # keyword-only in spirit: dtype, then backend, then the return_* flags last
    optional = sorted([pp for pp in pyparams if pp[2] is not None],
                      key=lambda pp: (pp[0].startswith("return_"), pp[1] == "backend",
                                      pp[1] == "dtype"))
    optional.sort(key=lambda pp: (pp[0].startswith("return_"), pp[1] == "backend"))
    if varargs:
        # einsum(equation, *xs): the tensors are the positional arguments after the first
        tl = [pp for pp in required if pp[1] == "tlist"]
        required = [pp for pp in required if pp[1] != "tlist"]
    order = required + optional
    fmt = "".join(pp[4] for pp in required) + ("|" if optional else "") + \
        "".join(pp[4] for pp in optional)
    kwlist = ", ".join(f'"{pp[0]}"' for pp in order) + ", NULL"

    c = []
    c.append(f"static PyObject *bpy_fn_{fname}(PyObject *self, PyObject *args, PyObject *kw)")
    c.append("{")
    c.append(f"    static char *kwlist[] = {{{kwlist}}};")
    c += ["    " + d for d in decls]
    if varargs:
        c.append("    Py_ssize_t n_args = PyTuple_Size(args);")
        c.append("    if (n_args < 1) {")
        c.append(f'        PyErr_SetString(PyExc_TypeError, "{fname}() needs the equation, then '
                 f'the tensors");')
        c.append("        return NULL;")
        c.append("    }")
        c.append("    PyObject *head = PyTuple_GetSlice(args, 0, 1);")
        c.append(f"    {tl[0][3]} = PyTuple_GetSlice(args, 1, n_args);")
        c.append(f"    if (!head || !{tl[0][3]} || !PyArg_ParseTupleAndKeywords(head, kw, "
                 f'"{fmt}:{fname}", kwlist, ' +
                 ", ".join("&" + pp[3] for pp in order) + ")) {")
        c.append("        Py_XDECREF(head);")
        c.append(f"        Py_XDECREF({tl[0][3]});")
        c.append("        return NULL;")
        c.append("    }")
        c.append("    Py_DECREF(head);")
    else:
        c.append(f'    if (!PyArg_ParseTupleAndKeywords(args, kw, "{fmt}:{fname}", kwlist, ' +
                 ", ".join("&" + pp[3] for pp in order) + "))")
        c.append("        return NULL;")
    c.append("    PyObject *result = NULL;")
    c.append("    bp_status st = BP_OK;")

    tensors = [p for p in ins if p.kind == "tensor"]
    nt = len(tensors)
    if nt:
        objs = ", ".join(p.var for p in tensors)
        group = ", ".join("0" if p.cname in OWN_DTYPE else "1" for p in tensors)
        opt = ", ".join("1" if p.default == "None" else "0" for p in tensors)
        names = ", ".join(f'"{p.pyname}"' for p in tensors)
        c.append(f"    PyObject *tobjs[{nt}] = {{{objs}}};")
        c.append(f"    static const char tgroup[{nt}] = {{{group}}}, topt[{nt}] = {{{opt}}};")
        c.append(f"    static const char *const tnames[{nt}] = {{{names}}};")
        c.append(f"    bp_tensor *t[{nt}];")
        c.append(f"    if (bpy_tensor_args(tobjs, tgroup, topt, {nt}, tnames, t) < 0)")
        if varargs:
            c.append("    {")
            c.append(f"        Py_DECREF({tl[0][3]});")
            c.append("        return NULL;")
            c.append("    }")
        else:
            c.append("        return NULL;")
        for k, p in enumerate(tensors):
            p.cexpr = f"t[{k}]"
    first_tensor = tensors[0].cexpr if tensors else None

    # outputs
    for p in outs:
        c.append(f"    bp_tensor *out_{p.cname} = NULL;")
    # locals for the other kinds
    pre = []
    lists = []
    for p in ins:
        what = p.pyname
        if p.kind == "axes":
            c.append(f"    int32_t ax_{p.cname}[BP_MAX_RANK], nax_{p.cname} = 0;")
            pre.append(f"bpy_axes_arg({p.var}, \"{what}\", ax_{p.cname}, &nax_{p.cname}) < 0")
            p.cexpr = f"nax_{p.cname}, nax_{p.cname} ? ax_{p.cname} : NULL"
        elif p.kind == "shape":
            c.append(f"    int64_t shp_{p.cname}[BP_MAX_RANK];")
            c.append(f"    int32_t rank_{p.cname} = 0;")
            pre.append(f"bpy_shape_arg({p.var}, shp_{p.cname}, &rank_{p.cname}) < 0")
            p.cexpr = f"rank_{p.cname}, shp_{p.cname}"
        elif p.kind == "tlist":
            c.append(f"    bp_tensor **tl_{p.cname} = NULL;")
            c.append(f"    int32_t ntl_{p.cname} = 0;")
            pre.append(f"bpy_tensor_list_arg({p.var}, \"{what}\", &tl_{p.cname}, "
                       f"&ntl_{p.cname}) < 0")
            lists.append(p)
            p.cexpr = f"ntl_{p.cname}, (const bp_tensor *const *)tl_{p.cname}"
        elif p.kind in ("i32seq", "i64seq", "f64seq"):
            ct = {"i32seq": "int32_t", "i64seq": "int64_t", "f64seq": "double"}[p.kind]
            c.append(f"    {ct} sq_{p.cname}[BP_MAX_RANK];")
            c.append(f"    int32_t nsq_{p.cname} = 0;")
            if p.kind == "i32seq":
                conv = f"bpy_axes_arg({p.var}, \"{what}\", sq_{p.cname}, &nsq_{p.cname}) < 0"
            elif p.kind == "i64seq":
                conv = (f"bpy_int64s_arg({p.var}, \"{what}\", sq_{p.cname}, BP_MAX_RANK, "
                        f"&nsq_{p.cname}) < 0")
            else:
                conv = (f"bpy_doubles_arg({p.var}, \"{what}\", sq_{p.cname}, BP_MAX_RANK, "
                        f"&nsq_{p.cname}) < 0")
            check = (f"bpy_check_len(\"{fname}: {what}\", nsq_{p.cname}, {first_tensor}) < 0"
                     if first_tensor else None)
            cond = f"({p.var} != Py_None && ({conv}" + (f" || {check}" if check else "") + "))"
            pre.append(cond)
            p.cexpr = f"{p.var} == Py_None ? NULL : sq_{p.cname}"
        elif p.kind == "optint":
            c.append(f"    int64_t oi_{p.cname} = 0;")
            pre.append(f"({p.var} != Py_None && bpy_int64s_arg({p.var}, \"{what}\", "
                       f"&oi_{p.cname}, 1, &(int32_t){{0}}) < 0)")
            p.cexpr = f"{p.var} == Py_None ? NULL : &oi_{p.cname}"
        elif p.kind == "dtype":
            c.append(f"    bp_dtype dt_{p.cname} = BP_F64;")
            infer = [q for q in ins if getattr(q, "infer", False)]
            if p.default == "None":
                objs = ", ".join(q.var for q in infer)
                pre.append(f"({p.var} == Py_None ? bpy_infer_dtype((PyObject *const[]){{{objs}}}, "
                           f"{len(infer)}, &dt_{p.cname}) : bpy_dtype_arg({p.var}, "
                           f"&dt_{p.cname})) < 0")
            elif p.default is not None:
                lit = p.default.strip("'")
                pre.append(f"({p.var} == Py_None ? (dt_{p.cname} = bpy_dtype_of_name(\"{lit}\"), "
                           f"0) : bpy_dtype_arg({p.var}, &dt_{p.cname})) < 0")
            else:
                pre.append(f"bpy_dtype_arg({p.var}, &dt_{p.cname}) < 0")
            p.cexpr = f"dt_{p.cname}"
        elif p.kind == "backend":
            c.append(f"    bp_backend *be_{p.cname} = NULL;")
            pre.append(f"bpy_backend_arg({p.var}, &be_{p.cname}) < 0")
            p.cexpr = f"be_{p.cname}"
        elif p.kind == "str":
            c.append(f"    PyObject *u8_{p.cname} = NULL;")
            pre.append(f"!(u8_{p.cname} = PyUnicode_AsUTF8String({p.var}))")
            p.cexpr = f"PyBytes_AsString(u8_{p.cname})"
        elif p.kind == "choice":
            arr = "CH_" + p.ctype
            ch0 = p.choices.index(p.default.strip("'")) if p.default not in (None, "None") else 0
            c.append(f"    int ch_{p.cname} = {ch0};")
            pre.append(f"({p.var} != Py_None && bpy_choice_arg({p.var}, \"{what}\", {arr}, "
                       f"&ch_{p.cname}) < 0)")
            p.cexpr = f"({p.ctype})ch_{p.cname}"
        elif p.kind == "split":
            c.append("    int64_t sp_sizes[4096];")
            c.append("    int32_t sp_n = 0;")
            c.append("    int sp_equal = 0;")
            pre.append(f"bpy_split_arg({p.var}, sp_sizes, 4096, &sp_n, &sp_equal) < 0")
            p.cexpr = "sp_n, sp_equal ? NULL : sp_sizes"
        elif getattr(p, "infer", False):
            c.append(f"    double d_{p.cname} = {p.default if p.default is not None else 0};")
            pre.append(f"({p.var} && bpy_double_arg({p.var}, \"{what}\", &d_{p.cname}) < 0)")
            p.cexpr = f"d_{p.cname}"
        elif p.kind in FMT:
            p.cexpr = f"({'bool' if p.kind == 'bool' else {'int': 'int32_t', 'int64': 'int64_t', 'uint64': 'uint64_t', 'float': 'double'}[p.kind]}){p.var}"
        elif p.kind == "tensor":
            pass
        else:
            sys.exit(f"gen_ops.py: internal: kind {p.kind}")
    if window:
        c.append("    bp_window win = BP_WINDOW_INIT;")
        kws = WINDOW[fname]
        args = []
        for k in ["kernel_shape", "strides", "pads", "dilations", "auto_pad", "output_padding",
                  "output_shape"]:
            args.append(f"w_{k}" if k in kws else "NULL")
        pre.append(f"bpy_window_arg(&win, {first_tensor}, {', '.join(args)}) < 0")
        for k in kws:
            kind, _d, member = WINDOW_KW[k]
            if member:
                c.append(f"    win.{member} = w_{k};")
    if resize:
        c.append("    bp_resize_options ropt = BP_RESIZE_OPTIONS_INIT;")
        for kw, kind, _default, choices, member in RESIZE_KW:
            if kind == "choice":
                c.append(f"    static const char *const CH_{kw}[] = {{" +
                         ", ".join(f'"{x}"' for x in choices) + ", NULL};")
                c.append(f"    int rc_{kw} = (int)ropt.{member};")
                pre.append(f"(r_{kw} && bpy_choice_arg(r_{kw}, \"{kw}\", CH_{kw}, &rc_{kw}) < 0)")
            else:
                c.append(f"    ropt.{member} = r_{kw};")
    if has_outs_list:
        c.append("    bp_tensor **outs = NULL;")

    c.append("    if (" + ("\n        || ".join(pre) if pre else "0") + ")")
    c.append("        goto done;")
    if resize:
        for kw, kind, _d, _c, member in RESIZE_KW:
            if kind == "choice":
                c.append(f"    ropt.{member} = rc_{kw};")
    if fname in ONES_IF_NONE:
        tname, axname = ONES_IF_NONE[fname]
        tp = next(p for p in tensors if p.cname == tname)
        axp = next(p for p in ins if p.cname == axname)
        c.append(f"    if (!{tp.cexpr} && bpy_ones_trailing({first_tensor}, (int32_t){axp.var}, "
                 f"&{tp.cexpr}) < 0)")
        c.append("        goto done;")
    if has_outs_list:
        c.append("    outs = PyMem_Calloc((size_t)sp_n + 1, sizeof *outs);")
        c.append("    if (!outs) {")
        c.append("        PyErr_NoMemory();")
        c.append("        goto done;")
        c.append("    }")

    # the call
    call_args = []
    for p in params:
        if p.kind == "out":
            if p.cname in opt_outs:
                call_args.append(f"want_{p.cname} ? &out_{p.cname} : NULL")
            else:
                call_args.append(f"&out_{p.cname}")
        elif p.kind == "outs":
            call_args.append("outs")
        elif p.kind == "window":
            call_args.append("&win")
        elif p.kind == "resize":
            call_args.append("&ropt")
        else:
            call_args.append(p.cexpr)
    rel = f"bpy_release_for(t, {nt})" if nt else "1"
    if lists:
        rel = "1"
    c.append(f"    BPY_CALL(st, {rel}, bp_{fname}({', '.join(call_args)}));")
    c.append("    if (st != BP_OK) {")
    c.append("        bpy_raise(st);")
    c.append("        goto done;")
    c.append("    }")
    # the result
    if has_outs_list:
        c.append("    result = PyList_New(sp_n);")
        c.append("    for (int32_t i = 0; result && i < sp_n; i++) {")
        c.append("        PyObject *w = bpy_wrap(outs[i]);")
        c.append("        outs[i] = NULL;")
        c.append("        if (!w || PyList_SetItem(result, i, w) < 0)")
        c.append("            Py_CLEAR(result);")
        c.append("    }")
    else:
        req = [p for p in outs if p.cname not in opt_outs]
        if not opt_outs and len(req) == 1:
            c.append(f"    result = bpy_wrap(out_{req[0].cname});")
            c.append(f"    out_{req[0].cname} = NULL;")
        else:
            c.append("    {")
            c.append("        PyObject *items[8];")
            c.append("        int n_items = 0, ok = 1;")
            for p in outs:
                cond = f"want_{p.cname}" if p.cname in opt_outs else "1"
                c.append(f"        if ({cond}) {{")
                c.append(f"            items[n_items] = bpy_wrap(out_{p.cname});")
                c.append(f"            out_{p.cname} = NULL;")
                c.append("            ok &= items[n_items++] != NULL;")
                c.append("        }")
            if opt_outs and len(req) == 1:
                c.append("        if (n_items == 1) {")
                c.append("            result = items[0];")
                c.append("        } else {")
            else:
                c.append("        {")
            c.append("            result = ok ? PyTuple_New(n_items) : NULL;")
            c.append("            for (int i = 0; i < n_items; i++) {")
            c.append("                if (result)")
            c.append("                    PyTuple_SetItem(result, i, items[i]);")
            c.append("                else")
            c.append("                    Py_XDECREF(items[i]);")
            c.append("            }")
            c.append("        }")
            c.append("    }")
    c.append("done:")
    for p in outs:
        c.append(f"    bp_tensor_release(out_{p.cname});")
    if has_outs_list:
        c.append("    if (outs)")
        c.append("        bpy_release_all(outs, sp_n);")
        c.append("    PyMem_Free(outs);")
    for p in lists:
        c.append(f"    bpy_tensor_list_free(tl_{p.cname}, ntl_{p.cname});")
    for p in ins:
        if p.kind == "str":
            c.append(f"    Py_XDECREF(u8_{p.cname});")
    if nt:
        c.append(f"    bpy_release_all(t, {nt});")
    if varargs:
        c.append(f"    Py_DECREF({tl[0][3]});")
    c.append("    return result;")
    c.append("}")

    # the stub
    sig = []
    stub_params = required + optional
    if varargs:
        sig.append("equation: str")
        sig.append("*xs: TensorLike")
        stub_params = [pp for pp in optional]
    for name, kind, default, _v, _f in stub_params:
        if varargs and name == "equation":
            continue
        t = PYTYPE.get(kind, "Any")
        if kind.startswith("window_"):
            t = "str" if kind == "window_str" else "Union[int, Sequence[int]]"
        if default == "None" and not t.startswith("Optional"):
            t = f"Optional[{t}]"
        sig.append(f"{name}: {t}" + (f" = {default}" if default is not None else ""))
    n_ret = len(outs) - len(opt_outs)
    if has_outs_list:
        ret = "List[Tensor]"
    elif opt_outs:
        ret = "Union[Tensor, Tuple[Tensor, ...]]"
    elif n_ret == 1:
        ret = "Tensor"
    else:
        ret = "Tuple[" + ", ".join(["Tensor"] * n_ret) + "]"
    stub = f"def {fname}({', '.join(sig)}) -> {ret}: ..."
    doc_sig = f"{fname}({', '.join(s.split(':')[0] + (' = ' + s.split(' = ')[1] if ' = ' in s else '') for s in sig)})"
    return "\n".join(c), stub, doc_sig


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: gen_ops.py INCLUDE_DIR OUT_C OUT_PYI")
    inc = Path(sys.argv[1]) / "backplane"
    opcodes = (inc / "opcodes.h").read_text()
    read_unary_params(opcodes)
    ops = apply_op_table(read_op_table(opcodes))
    protos = {}
    for h in ("ops.h", "nn.h"):
        protos.update(read_prototypes((inc / h).read_text()))
    protos.update(read_prototypes((inc / "tensor.h").read_text(), only=set(TENSOR_H_OPS)))
    comments = {}
    for h in ("tensor.h", "ops.h", "nn.h"):
        comments.update(read_comments((inc / h).read_text(), h))

    functions = []
    for fname, cparams in protos.items():
        if fname in SKIP:
            continue
        params = classify(fname, cparams)
        if params is None:
            sys.exit(f"gen_ops.py: bp_{fname} takes an op code; list it in SKIP with the reason")
        functions.append((fname, params))
    names = {f for f, _ in functions}
    for op in ops:
        if op in names:
            continue
        if op in OP_FUNCTION:
            if OP_FUNCTION[op] is None or OP_FUNCTION[op] in names:
                continue
        sys.exit(f"gen_ops.py: op '{op}' of opcodes.h has no public function bp_{op} in ops.h "
                 f"or nn.h: add the prototype, or map it in OP_FUNCTION (python/gen_ops.py)")
    for table in (DEFAULTS, RENAME, OPTIONAL_OUTPUTS, WINDOW, ALIASES, ONES_IF_NONE, INFER_DTYPE):
        for k in table:
            if k not in names:
                sys.exit(f"gen_ops.py: a table names '{k}', which is no generated function")

    c = ["/* Generated by python/gen_ops.py from opcodes.h, ops.h and nn.h: do not edit. */",
         '#include "bpy.h"', "",
         "int bpy_split_arg(PyObject *o, int64_t *sizes, int32_t max, int32_t *n, int *equal);",
         "bp_dtype bpy_dtype_of_name(const char *name);", ""]
    for ctype, choices in CHOICES.items():
        c.append(f"static const char *const CH_{ctype}[] = {{" +
                 ", ".join(f'"{x}"' for x in choices) + ", NULL};")
    c.append("")
    stubs = []
    table = []
    for fname, params in functions:
        body, stub, doc = gen_function(fname, params)
        c.append(body)
        c.append("")
        stubs.append(stub)
        table.append((fname, doc))
        for alias in ALIASES.get(fname, []):
            stubs.append(stub.replace(f"def {fname}(", f"def {alias}(", 1))
            table.append((alias, doc.replace(f"{fname}(", f"{alias}(", 1) +
                          f" (NumPy's name for {fname})"))
    c.append("PyMethodDef bpy_op_methods[] = {")
    for name, doc in table:
        fname = name
        for f, al in ALIASES.items():
            if name in al:
                fname = f
        text, header = comments.get(fname, ("", "ops.h"))
        text = text.replace("\\", "\\\\").replace('"', '\\"')
        sig, _, note = doc.partition(" (NumPy's")
        note = "(NumPy's" + note + "\\n\\n" if note else ""
        docstr = (sig.replace('"', '\\"') + "\\n--\\n\\n" + note + (text + "\\n\\n" if text else "") +
                  f"The C function: bp_{fname} ({header}).")
        c.append(f'    {{"{name}", (PyCFunction)(void (*)(void))bpy_fn_{fname}, '
                 f'METH_VARARGS | METH_KEYWORDS, "{docstr}"}},')
    c.append("    {NULL, NULL, 0, NULL}};")
    Path(sys.argv[2]).write_text("\n".join(c) + "\n")
    Path(sys.argv[3]).write_text("# Generated by python/gen_ops.py: one function per op.\n" +
                                 "\n".join(stubs) + "\n")


if __name__ == "__main__":
    main()

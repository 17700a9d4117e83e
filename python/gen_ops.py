#!/usr/bin/env python3
"""Generate the Python functions of backplane's ops from the op table's schema.

Run by CMake at build time (python/CMakeLists.txt):

    gen_ops.py INCLUDE_DIR OUT_C OUT_PYI

It reads
  - opcodes.h: the op table (BP_OP_TABLE: each op's inputs and outputs,
    which optional) and its schema (BP_OP_SCHEMA: each op's public function,
    its arguments in C order with their types, defaults and Python names),
  - ops.h's BP_FN_SCHEMA: the same for the public functions that are no
    row (zeros, split, einsum...),
  - ops.h, nn.h, tensor.h: the comment above each prototype (the docstring)
    and the order the functions are declared in,
and writes one C wrapper per function (OUT_C, compiled into the extension)
and its stub (OUT_PYI, appended to backplane/__init__.pyi), and the ONNX
operators that are one function each (OUT_ONNX_PY, the importer's
backplane/_onnx_functions.py). Each wrapper
calls the C function through a pointer of the type the schema describes, so
the compiler refuses a schema that disagrees with a prototype.

Nothing here is about one op: an op's Python face changes in its schema row.
What is here is how each schema type reaches C (the bp_window and
bp_resize_options keywords, the enums' names).
"""
import re
import sys
from pathlib import Path

# ---- what the schema's struct and enum types hold ------------------------------------

# Window keywords (bp_window): keyword: (kind, default, bp_window member).
WINDOW_REQUIRED = {"kernel_shape"}
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

# Public functions of ops.h / nn.h that are no Python function, and why.
SKIP = {
    "unary": "the unary ops by code: each op has its own function",
    "unary_params": "the unary ops by code, with parameters: each op has its own function",
    "binary": "the binary ops by code: each op has its own function",
    "reduce": "the reductions by code: each op has its own function",
    "op_domain": "the schema's domains, for test and benchmark programs",
    "full_i64": "C's int64 form of full: Python's full calls it for an int (__init__.py)",
    "arange_i64": "C's int64 form of arange: Python's arange calls it for ints (__init__.py)",
}

# schema type: (Param kind, the C parameter types it stands for)
TYPES = {
    "tensor": ("tensor", ["const bp_tensor *"]),
    "f64": ("float", ["double"]), "i32": ("int", ["int32_t"]), "i64": ("int64", ["int64_t"]),
    "u64": ("uint64", ["uint64_t"]), "bool": ("bool", ["bool"]),
    "dtype": ("dtype", ["bp_dtype"]), "backend": ("backend", ["bp_backend *"]),
    "axes": ("axes", ["int32_t", "const int32_t *"]),
    "shape": ("shape", ["int32_t", "const int64_t *"]),
    "tensors": ("tlist", ["int32_t", "const bp_tensor *const *"]),
    "split": ("split", ["int32_t", "const int64_t *"]),
    "i32[]": ("i32seq", ["const int32_t *"]), "i64[]": ("i64seq", ["const int64_t *"]),
    "f64[]": ("f64seq", ["const double *"]), "i64?": ("optint", ["const int64_t *"]),
    "window": ("window", ["const bp_window *"]),
    "resize": ("resize", ["const bp_resize_options *"]),
    "str": ("str", ["const char *"]),
    "loss_reduction": ("choice", ["bp_loss_reduction"]),
    "scatter_reduction": ("choice", ["bp_scatter_reduction"]),
}

# ---- reading the schema ---------------------------------------------------------------


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def macro_rows(text, macro, where):
    """The X(...) rows of #define MACRO(X), each a list of its fields (string
    literals joined, as C joins adjacent ones)."""
    text = strip_comments(text)
    m = re.search(r"#define\s+" + macro + r"\(X\)((?:[^\n]*\\\n)*[^\n]*)", text)
    if not m:
        sys.exit(f"gen_ops.py: found no {macro} in {where}")
    body = m.group(1).replace("\\\n", " ")
    rows = []
    for r in re.finditer(r"X\(((?:[^()\"]|\"[^\"]*\")*)\)", body):
        fields, cur, lits = [], "", []
        for tok in re.finditer(r'"([^"]*)"|([^",]+)|(,)', r.group(1)):
            if tok.group(3):
                fields.append("".join(lits) if lits else cur.strip())
                cur, lits = "", []
            elif tok.group(1) is not None:
                lits.append(tok.group(1))
            else:
                cur += tok.group(2)
        fields.append("".join(lits) if lits else cur.strip())
        rows.append(fields)
    if not rows:
        sys.exit(f"gen_ops.py: found no row in {where}'s {macro}")
    return rows


def split_top(text, sep=","):
    """text split at sep outside parentheses and brackets."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "([" and 1 or (ch in ")]" and -1 or 0)
        if ch == sep and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


ARG = re.compile(r"^(?P<star>\*?)(?P<name>\w+)(?P<opt>\??)\s*(?::\s*(?P<type>[\w\[\]?]+)"
                 r"(?:\((?P<targs>[^)]*)\))?)?\s*(?:=\s*(?P<default>[^@]+?))?\s*"
                 r"(?:@(?P<onnx>[\w-]+))?$")


def parse_signature(sig, where):
    """A schema signature: (arguments, outputs); each argument a dict of
    name, type, targs, default, onnx, optional, star."""
    sig, _, outs = sig.partition("->")
    args = []
    for text in split_top(sig):
        m = ARG.match(text)
        if not m:
            sys.exit(f"gen_ops.py: {where}: cannot read the argument '{text}'")
        a = m.groupdict()
        a["optional"] = a.pop("opt") == "?"
        a["type"] = a["type"] or "tensor"
        if a["type"] not in TYPES and a["type"] != "ones":
            sys.exit(f"gen_ops.py: {where}: '{a['type']}' is no schema type (opcodes.h lists them)")
        if (a["optional"] or a["type"] == "ones") and a["default"] is None:
            a["default"] = "None"
        args.append(a)
    outputs = [(o.strip().rstrip("?"), o.strip().endswith("?")) for o in outs.split(",")
               if o.strip()]
    return args, outputs


def names_field(text):
    """NAMES: {"onnx": [...], "numpy": [...], "fn": [...]}."""
    out = {}
    for item in text.split():
        key, _, value = item.partition(":")
        out.setdefault(key, []).append(value)
    return out


def read_schema(inc):
    """Every function's (names, arguments, outputs), keyed by its C name."""
    opcodes = (inc / "opcodes.h").read_text()
    table = macro_rows(opcodes, "BP_OP_TABLE", "opcodes.h")
    schema = macro_rows(opcodes, "BP_OP_SCHEMA", "opcodes.h")
    if [r[0] for r in table] != [r[0] for r in schema]:
        sys.exit("gen_ops.py: BP_OP_SCHEMA's rows are not BP_OP_TABLE's, in its order")
    functions = {}
    for row, (_, names, sig, _dom) in zip(table, schema):
        op, ins, outs = row[1], row[4].split(), row[5].split()
        names = names_field(names)
        fname = names.get("fn", [op])[0]
        if fname == "-":
            continue
        args, _ = parse_signature(sig, f"BP_OP_SCHEMA's {row[0]}")
        tensors = [(a["name"], a["optional"]) for a in args
                   if a["type"] in ("tensor", "ones", "tensors")]
        if [opt for _, opt in tensors] != [n.endswith("?") for n in ins]:
            sys.exit(f"gen_ops.py: BP_OP_SCHEMA's {row[0]} takes tensors {tensors}, its row's "
                     f"inputs are '{row[4]}' (the same count and optional ones, in order)")
        outputs = [(o.rstrip("?"), o.endswith("?")) for o in outs]
        functions[fname] = (names, args, outputs)
    for name, names, sig in macro_rows((inc / "ops.h").read_text(), "BP_FN_SCHEMA", "ops.h"):
        args, outputs = parse_signature(sig, f"BP_FN_SCHEMA's {name}")
        functions[name] = (names_field(names), args, outputs)
    return functions


def read_comments(text, header):
    """The comment above each prototype (shared by a group of them): its
    docstring, in the order of the header."""
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


# ---- the schema's arguments as Python parameters ----------------------------------------


class Param:
    """One Python parameter (or output) of a generated function."""

    def __init__(self, kind, cname, pyname=None, **kw):
        self.kind, self.cname, self.pyname = kind, cname, pyname or cname
        self.default, self.ctypes = None, []
        self.star = self.infer = self.own = self.optional = False
        self.__dict__.update(kw)


def py_default(a):
    d = a["default"]
    return {"true": "True", "false": "False"}.get(d, d)


def to_param(a):
    """One schema argument as a Param."""
    t = "tensor" if a["type"] == "ones" else a["type"]
    kind, ctypes = TYPES[t]
    p = Param(kind, a["name"], ctypes=list(ctypes), default=py_default(a), onnx=a["onnx"])
    targs = (a["targs"] or "").split()
    if a["type"] == "tensor":
        p.own = targs == ["own"]
    elif a["type"] == "ones":
        p.ones_from = targs[0]
    elif kind == "window":
        p.keywords = targs
    elif kind == "choice":
        p.ctype = ctypes[0]
        p.choices = CHOICES[p.ctype]
    elif kind == "dtype" and targs:
        p.infer_from = targs
    p.star = a["star"] == "*"
    return p


def params_of(fname, args, outputs):
    """The function's Params in C order, outputs last."""
    params = [to_param(a) for a in args]
    infer = {n for p in params for n in getattr(p, "infer_from", [])}
    for p in params:
        p.infer = p.cname in infer
    for name, optional in outputs:
        if name.endswith("[]"):
            params.append(Param("outs", "outs", ctypes=["bp_tensor **"]))
        else:
            params.append(Param("out", name, ctypes=["bp_tensor **"], optional=optional))
    return params


# ---- emitting C --------------------------------------------------------------------

# uint64 (seeds, offsets) goes through a converter: "K" would wrap negative
# and oversized ints modulo 2^64 without a word.
FMT = {"float": "d", "int": "i", "int64": "L", "uint64": "O&", "bool": "p"}
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


def arg_ref(pp):
    """What PyArg_ParseTupleAndKeywords takes for one parameter."""
    return f"bpy_uint64_conv, &{pp[3]}" if pp[4] == "O&" else "&" + pp[3]


class Fn:
    """What the emitters of one function share."""

    def __init__(self, fname, params):
        self.fname, self.params = fname, params
        self.ins = [p for p in params if p.kind not in ("out", "outs", "window", "resize")]
        self.outs = [p for p in params if p.kind == "out"]
        self.opt_outs = [p.cname for p in self.outs if p.optional]
        self.has_outs_list = any(p.kind == "outs" for p in params)
        self.window = next((p for p in params if p.kind == "window"), None)
        self.resize = any(p.kind == "resize" for p in params)
        self.star = next((p for p in params if p.star), None)
        self.tensors = [p for p in self.ins if p.kind == "tensor"]
        self.c, self.decls, self.pre, self.lists = [], [], [], []
        self.pyparams = []  # (pyname, kind, default, C variable, format char)


def python_params(f):
    """The Python parameters and the C variables they are parsed into."""
    for p in f.ins:
        var = "o_" + p.cname
        if p.kind in FMT and not p.infer:
            var = "v_" + p.cname
            init = c_literal(p.kind, p.default) if p.default is not None else "0"
            f.decls.append(f"{CDECL[p.kind]} {var} = {init};")
            f.pyparams.append((p.pyname, p.kind, p.default, var, FMT[p.kind]))
        else:
            init = "NULL" if p.default is None or p.infer else "Py_None"
            f.decls.append(f"PyObject *{var} = {init};")
            f.pyparams.append((p.pyname, p.kind, p.default, var, "O"))
        p.var = var
    for kw in f.window.keywords if f.window else []:
        kind, default, _member = WINDOW_KW[kw]
        default = None if kw in WINDOW_REQUIRED else default
        var = "w_" + kw
        if kind in ("int", "bool"):
            f.decls.append(f"{CDECL[kind]} {var} = {c_literal(kind, default)};")
            f.pyparams.append((kw, kind, default, var, FMT[kind]))
        else:
            f.decls.append(f"PyObject *{var} = {'NULL' if default is None else 'Py_None'};")
            f.pyparams.append((kw, "window_" + kind, default, var, "O"))
    for kw, kind, default, _choices, _member in RESIZE_KW if f.resize else []:
        var = "r_" + kw
        if kind == "choice":
            f.decls.append(f"PyObject *{var} = NULL;")
            f.pyparams.append((kw, "choice", default, var, "O"))
        else:
            f.decls.append(f"{CDECL[kind]} {var} = {c_literal(kind, default)};")
            f.pyparams.append((kw, kind, default, var, FMT[kind]))
    for o in f.opt_outs:
        f.decls.append(f"int want_{o} = 0;")
        f.pyparams.append(("return_" + o, "bool", "False", "want_" + o, "p"))
    f.required = [pp for pp in f.pyparams if pp[2] is None]
    # keyword-only in spirit: dtype, then backend, then the return_* flags last
    f.optional = sorted([pp for pp in f.pyparams if pp[2] is not None],
                        key=lambda pp: (pp[0].startswith("return_"), pp[1] == "backend",
                                        pp[1] == "dtype"))
    f.optional.sort(key=lambda pp: (pp[0].startswith("return_"), pp[1] == "backend"))
    f.tl = None
    if f.star:
        # einsum(equation, *xs): the tensors are the positional arguments after the first
        f.tl = next(pp for pp in f.required if pp[1] == "tlist")
        f.required = [pp for pp in f.required if pp[1] != "tlist"]


def emit_parse(f):
    """The function's head: PyArg_ParseTupleAndKeywords."""
    c, fname = f.c, f.fname
    order = f.required + f.optional
    fmt = "".join(pp[4] for pp in f.required) + ("|" if f.optional else "") + \
        "".join(pp[4] for pp in f.optional)
    kwlist = ", ".join(f'"{pp[0]}"' for pp in order) + ", NULL"
    refs = ", ".join(arg_ref(pp) for pp in order)
    c.append(f"static PyObject *bpy_fn_{fname}(PyObject *self, PyObject *args, PyObject *kw)")
    c.append("{")
    c.append(f"    static char *kwlist[] = {{{kwlist}}};")
    c += ["    " + d for d in f.decls]
    if f.star:
        tl = f.tl[3]
        c.append("    Py_ssize_t n_args = PyTuple_Size(args);")
        c.append("    if (n_args < 1) {")
        c.append(f'        PyErr_SetString(PyExc_TypeError, "{fname}() needs the equation, then '
                 f'the tensors");')
        c.append("        return NULL;")
        c.append("    }")
        c.append("    PyObject *head = PyTuple_GetSlice(args, 0, 1);")
        c.append(f"    {tl} = PyTuple_GetSlice(args, 1, n_args);")
        c.append(f"    if (!head || !{tl} || !PyArg_ParseTupleAndKeywords(head, kw, "
                 f'"{fmt}:{fname}", kwlist, ' + refs + ")) {")
        c.append("        Py_XDECREF(head);")
        c.append(f"        Py_XDECREF({tl});")
        c.append("        return NULL;")
        c.append("    }")
        c.append("    Py_DECREF(head);")
    else:
        c.append(f'    if (!PyArg_ParseTupleAndKeywords(args, kw, "{fmt}:{fname}", kwlist, ' +
                 refs + "))")
        c.append("        return NULL;")
    c.append("    PyObject *result = NULL;")
    c.append("    bp_status st = BP_OK;")


def emit_tensors(f):
    """The tensor arguments, converted together (they share a dtype)."""
    c, nt = f.c, len(f.tensors)
    if nt:
        objs = ", ".join(p.var for p in f.tensors)
        group = ", ".join("0" if p.own else "1" for p in f.tensors)
        opt = ", ".join("1" if p.default == "None" else "0" for p in f.tensors)
        names = ", ".join(f'"{p.pyname}"' for p in f.tensors)
        c.append(f"    PyObject *tobjs[{nt}] = {{{objs}}};")
        c.append(f"    static const char tgroup[{nt}] = {{{group}}}, topt[{nt}] = {{{opt}}};")
        c.append(f"    static const char *const tnames[{nt}] = {{{names}}};")
        c.append(f"    bp_tensor *t[{nt}];")
        c.append(f"    if (bpy_tensor_args(tobjs, tgroup, topt, {nt}, tnames, t) < 0)")
        if f.star:
            c.append("    {")
            c.append(f"        Py_DECREF({f.tl[3]});")
            c.append("        return NULL;")
            c.append("    }")
        else:
            c.append("        return NULL;")
        for k, p in enumerate(f.tensors):
            p.cexpr = f"t[{k}]"
    f.first_tensor = f.tensors[0].cexpr if f.tensors else None
    for p in f.outs:
        c.append(f"    bp_tensor *out_{p.cname} = NULL;")


def local_axes(f, p, what):
    f.c.append(f"    int32_t ax_{p.cname}[BP_MAX_RANK], nax_{p.cname} = 0;")
    f.pre.append(f"bpy_axes_arg({p.var}, \"{what}\", ax_{p.cname}, &nax_{p.cname}) < 0")
    p.cexpr = f"nax_{p.cname}, nax_{p.cname} ? ax_{p.cname} : NULL"


def local_shape(f, p, what):
    f.c.append(f"    int64_t shp_{p.cname}[BP_MAX_RANK];")
    f.c.append(f"    int32_t rank_{p.cname} = 0;")
    f.pre.append(f"bpy_shape_arg({p.var}, shp_{p.cname}, &rank_{p.cname}) < 0")
    p.cexpr = f"rank_{p.cname}, shp_{p.cname}"


def local_tlist(f, p, what):
    f.c.append(f"    bp_tensor **tl_{p.cname} = NULL;")
    f.c.append(f"    int32_t ntl_{p.cname} = 0;")
    f.pre.append(f"bpy_tensor_list_arg({p.var}, \"{what}\", &tl_{p.cname}, &ntl_{p.cname}) < 0")
    f.lists.append(p)
    p.cexpr = f"ntl_{p.cname}, (const bp_tensor *const *)tl_{p.cname}"


SEQ_CONV = {
    "i32seq": ("int32_t", "bpy_axes_arg({var}, \"{what}\", sq_{n}, &nsq_{n}) < 0"),
    "i64seq": ("int64_t", "bpy_int64s_arg({var}, \"{what}\", sq_{n}, BP_MAX_RANK, &nsq_{n}) < 0"),
    "f64seq": ("double", "bpy_doubles_arg({var}, \"{what}\", sq_{n}, BP_MAX_RANK, &nsq_{n}) < 0"),
}


def local_seq(f, p, what):
    ct, conv = SEQ_CONV[p.kind]
    f.c.append(f"    {ct} sq_{p.cname}[BP_MAX_RANK];")
    f.c.append(f"    int32_t nsq_{p.cname} = 0;")
    conv = conv.format(var=p.var, what=what, n=p.cname)
    check = (f"bpy_check_len(\"{f.fname}: {what}\", nsq_{p.cname}, {f.first_tensor}) < 0"
             if f.first_tensor else None)
    f.pre.append(f"({p.var} != Py_None && ({conv}" + (f" || {check}" if check else "") + "))")
    p.cexpr = f"{p.var} == Py_None ? NULL : sq_{p.cname}"


def local_optint(f, p, what):
    f.c.append(f"    int64_t oi_{p.cname} = 0;")
    f.pre.append(f"({p.var} != Py_None && bpy_int64s_arg({p.var}, \"{what}\", "
                 f"&oi_{p.cname}, 1, &(int32_t){{0}}) < 0)")
    p.cexpr = f"{p.var} == Py_None ? NULL : &oi_{p.cname}"


def local_dtype(f, p, what):
    f.c.append(f"    bp_dtype dt_{p.cname} = BP_F64;")
    infer = [q for q in f.ins if q.infer]
    if p.default == "None":
        objs = ", ".join(q.var for q in infer)
        f.pre.append(f"({p.var} == Py_None ? bpy_infer_dtype((PyObject *const[]){{{objs}}}, "
                     f"{len(infer)}, &dt_{p.cname}) : bpy_dtype_arg({p.var}, "
                     f"&dt_{p.cname})) < 0")
    elif p.default is not None:
        lit = p.default.strip("'")
        f.pre.append(f"({p.var} == Py_None ? (dt_{p.cname} = bpy_dtype_of_name(\"{lit}\"), "
                     f"0) : bpy_dtype_arg({p.var}, &dt_{p.cname})) < 0")
    else:
        f.pre.append(f"bpy_dtype_arg({p.var}, &dt_{p.cname}) < 0")
    p.cexpr = f"dt_{p.cname}"


def local_backend(f, p, what):
    f.c.append(f"    bp_backend *be_{p.cname} = NULL;")
    f.pre.append(f"bpy_backend_arg({p.var}, &be_{p.cname}) < 0")
    p.cexpr = f"be_{p.cname}"


def local_str(f, p, what):
    f.c.append(f"    PyObject *u8_{p.cname} = NULL;")
    f.pre.append(f"!(u8_{p.cname} = bpy_utf8_cstr({p.var}, \"{what}\"))")
    p.cexpr = f"PyBytes_AsString(u8_{p.cname})"


def local_choice(f, p, what):
    ch0 = p.choices.index(p.default.strip("'")) if p.default not in (None, "None") else 0
    f.c.append(f"    int ch_{p.cname} = {ch0};")
    f.pre.append(f"({p.var} != Py_None && bpy_choice_arg({p.var}, \"{what}\", CH_{p.ctype}, "
                 f"&ch_{p.cname}) < 0)")
    p.cexpr = f"({p.ctype})ch_{p.cname}"


def local_split(f, p, what):
    f.c.append("    int64_t sp_sizes[4096];")
    f.c.append("    int32_t sp_n = 0;")
    f.c.append("    int sp_equal = 0;")
    f.pre.append(f"bpy_split_arg({p.var}, sp_sizes, 4096, &sp_n, &sp_equal) < 0")
    p.cexpr = "sp_n, sp_equal ? NULL : sp_sizes"


def local_number(f, p, what):
    if p.infer:
        f.c.append(f"    double d_{p.cname} = {p.default if p.default is not None else 0};")
        f.pre.append(f"({p.var} && bpy_double_arg({p.var}, \"{what}\", &d_{p.cname}) < 0)")
        p.cexpr = f"d_{p.cname}"
    else:
        ct = {"int": "int32_t", "int64": "int64_t", "uint64": "uint64_t", "float": "double",
              "bool": "bool"}[p.kind]
        p.cexpr = f"({ct}){p.var}"


LOCALS = {
    "axes": local_axes, "shape": local_shape, "tlist": local_tlist, "i32seq": local_seq,
    "i64seq": local_seq, "f64seq": local_seq, "optint": local_optint, "dtype": local_dtype,
    "backend": local_backend, "str": local_str, "choice": local_choice, "split": local_split,
    "float": local_number, "int": local_number, "int64": local_number, "uint64": local_number,
    "bool": local_number, "tensor": lambda f, p, what: None,
}


def emit_locals(f):
    """The C values of the non-tensor arguments, and their conversions."""
    for p in f.ins:
        LOCALS[p.kind](f, p, p.pyname)
    c = f.c
    if f.window:
        c.append("    bp_window win = BP_WINDOW_INIT;")
        args = [f"w_{k}" if k in f.window.keywords else "NULL"
                for k in ["kernel_shape", "strides", "pads", "dilations", "auto_pad",
                          "output_padding", "output_shape"]]
        f.pre.append(f"bpy_window_arg(&win, {f.first_tensor}, {', '.join(args)}) < 0")
        for k in f.window.keywords:
            member = WINDOW_KW[k][2]
            if member:
                c.append(f"    win.{member} = w_{k};")
    if f.resize:
        c.append("    bp_resize_options ropt = BP_RESIZE_OPTIONS_INIT;")
    for kw, kind, _default, choices, member in RESIZE_KW if f.resize else []:
        if kind == "choice":
            c.append(f"    static const char *const CH_{kw}[] = {{" +
                     ", ".join(f'"{x}"' for x in choices) + ", NULL};")
            c.append(f"    int rc_{kw} = (int)ropt.{member};")
            f.pre.append(f"(r_{kw} && bpy_choice_arg(r_{kw}, \"{kw}\", CH_{kw}, &rc_{kw}) < 0)")
        else:
            c.append(f"    ropt.{member} = r_{kw};")
    if f.has_outs_list:
        c.append("    bp_tensor **outs = NULL;")


def emit_checks(f):
    """The conversions, in order, then what needs them all."""
    c = f.c
    c.append("    if (" + ("\n        || ".join(f.pre) if f.pre else "0") + ")")
    c.append("        goto done;")
    for kw, kind, _d, _c, member in RESIZE_KW if f.resize else []:
        if kind == "choice":
            c.append(f"    ropt.{member} = rc_{kw};")
    for tp in [p for p in f.tensors if getattr(p, "ones_from", None)]:
        axp = next(p for p in f.ins if p.cname == tp.ones_from)
        c.append(f"    if (!{tp.cexpr} && bpy_ones_trailing({f.first_tensor}, "
                 f"(int32_t){axp.var}, &{tp.cexpr}) < 0)")
        c.append("        goto done;")
    if f.has_outs_list:
        c.append("    outs = PyMem_Calloc((size_t)sp_n + 1, sizeof *outs);")
        c.append("    if (!outs) {")
        c.append("        PyErr_NoMemory();")
        c.append("        goto done;")
        c.append("    }")


def call_arg(f, p):
    if p.kind == "out":
        return f"want_{p.cname} ? &out_{p.cname} : NULL" if p.optional else f"&out_{p.cname}"
    return {"outs": "outs", "window": "&win", "resize": "&ropt"}.get(p.kind) or p.cexpr


def emit_call(f):
    """The call, through a pointer of the schema's types: a schema that
    disagrees with the prototype does not compile."""
    c = f.c
    ctypes = ", ".join(t for p in f.params for t in p.ctypes)
    c.append(f"    bp_status (*const call)({ctypes}) = bp_{f.fname};")
    nt = len(f.tensors)
    rel = f"bpy_release_for(t, {nt})" if nt and not f.lists else "1"
    args = ", ".join(call_arg(f, p) for p in f.params)
    c.append(f"    BPY_CALL(st, {rel}, call({args}));")
    c.append("    if (st != BP_OK) {")
    c.append("        bpy_raise(st);")
    c.append("        goto done;")
    c.append("    }")


def emit_outs_list(c):
    c.append("    result = PyList_New(sp_n);")
    c.append("    for (int32_t i = 0; result && i < sp_n; i++) {")
    c.append("        PyObject *w = bpy_wrap(outs[i]);")
    c.append("        outs[i] = NULL;")
    c.append("        if (!w || PyList_SetItem(result, i, w) < 0)")
    c.append("            Py_CLEAR(result);")
    c.append("    }")


def emit_tuple(f, req):
    c = f.c
    c.append("    {")
    c.append("        PyObject *items[8];")
    c.append("        int n_items = 0, ok = 1;")
    for p in f.outs:
        cond = f"want_{p.cname}" if p.optional else "1"
        c.append(f"        if ({cond}) {{")
        c.append(f"            items[n_items] = bpy_wrap(out_{p.cname});")
        c.append(f"            out_{p.cname} = NULL;")
        c.append("            ok &= items[n_items++] != NULL;")
        c.append("        }")
    if f.opt_outs and len(req) == 1:
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


def emit_result(f):
    """The Python result, then what every path releases."""
    c = f.c
    req = [p for p in f.outs if not p.optional]
    if f.has_outs_list:
        emit_outs_list(c)
    elif not f.opt_outs and len(req) == 1:
        c.append(f"    result = bpy_wrap(out_{req[0].cname});")
        c.append(f"    out_{req[0].cname} = NULL;")
    else:
        emit_tuple(f, req)
    c.append("done:")
    for p in f.outs:
        c.append(f"    bp_tensor_release(out_{p.cname});")
    if f.has_outs_list:
        c.append("    if (outs)")
        c.append("        bpy_release_all(outs, sp_n);")
        c.append("    PyMem_Free(outs);")
    for p in f.lists:
        c.append(f"    bpy_tensor_list_free(tl_{p.cname}, ntl_{p.cname});")
    for p in f.ins:
        if p.kind == "str":
            c.append(f"    Py_XDECREF(u8_{p.cname});")
    if f.tensors:
        c.append(f"    bpy_release_all(t, {len(f.tensors)});")
    if f.star:
        c.append(f"    Py_DECREF({f.tl[3]});")
    c.append("    return result;")
    c.append("}")


def stub_of(f):
    """The .pyi line and the signature the docstring starts with."""
    sig = []
    stub_params = f.required + f.optional
    if f.star:
        sig.append("equation: str")
        sig.append("*xs: TensorLike")
        stub_params = list(f.optional)
    for name, kind, default, _v, _f in stub_params:
        t = PYTYPE.get(kind, "Any")
        if kind.startswith("window_"):
            t = "str" if kind == "window_str" else "Union[int, Sequence[int]]"
        if default == "None" and not t.startswith("Optional"):
            t = f"Optional[{t}]"
        sig.append(f"{name}: {t}" + (f" = {default}" if default is not None else ""))
    n_ret = len(f.outs) - len(f.opt_outs)
    if f.has_outs_list:
        ret = "List[Tensor]"
    elif f.opt_outs:
        ret = "Union[Tensor, Tuple[Tensor, ...]]"
    elif n_ret == 1:
        ret = "Tensor"
    else:
        ret = "Tuple[" + ", ".join(["Tensor"] * n_ret) + "]"
    stub = f"def {f.fname}({', '.join(sig)}) -> {ret}: ..."
    doc_args = [s.split(":")[0] + (" = " + s.split(" = ")[1] if " = " in s else "") for s in sig]
    return stub, f"{f.fname}({', '.join(doc_args)})"


def gen_function(fname, params):
    """The C wrapper and the stub of one function."""
    f = Fn(fname, params)
    python_params(f)
    emit_parse(f)
    emit_tensors(f)
    emit_locals(f)
    emit_checks(f)
    emit_call(f)
    emit_result(f)
    stub, doc = stub_of(f)
    return "\n".join(f.c), stub, doc


def method_row(name, fname, doc, comments):
    text, header = comments.get(fname, ("", "ops.h"))
    text = text.replace("\\", "\\\\").replace('"', '\\"')
    sig, _, note = doc.partition(" (NumPy's")
    note = "(NumPy's" + note + "\\n\\n" if note else ""
    docstr = (sig.replace('"', '\\"') + "\\n--\\n\\n" + note + (text + "\\n\\n" if text else "") +
              f"The C function: bp_{fname} ({header}).")
    return (f'    {{"{name}", (PyCFunction)(void (*)(void))bpy_fn_{fname}, '
            f'METH_VARARGS | METH_KEYWORDS, "{docstr}"}},')


def ordered_functions(inc, schema):
    """The schema's functions in the order the headers declare them, with
    their doc comments; SystemExit for a public function without a row."""
    comments = {}
    for h in ("ops.h", "nn.h", "tensor.h"):
        comments.update(read_comments((inc / h).read_text(), h))
    for name in comments:
        if name not in schema and name not in SKIP and comments[name][1] != "tensor.h":
            sys.exit(f"gen_ops.py: bp_{name} has no schema row: add one to opcodes.h's "
                     f"BP_OP_SCHEMA (an op) or ops.h's BP_FN_SCHEMA")
    order = [n for n in comments if n in schema] + [n for n in schema if n not in comments]
    return order, comments


def onnx_functions(schema):
    """backplane/_onnx_functions.py: the ONNX operators that are one function
    each (the schema's "onnx:Op" names), for the ONNX importer: Op ->
    (function, how many tensors it takes first, its other parameters as
    (ONNX attribute, Python keyword, schema type))."""
    rows = []
    for fname, (names, args, _outputs) in sorted(schema.items()):
        tensors = [a for a in args if a["type"] == "tensor"]
        attrs = tuple((a["onnx"] or a["name"], a["name"], a["type"]) for a in args
                      if a["type"] != "tensor")
        for op in names.get("onnx", []):
            rows.append(f"    {op!r}: ({fname!r}, {len(tensors)}, {attrs!r}),")
    return ("# Generated by python/gen_ops.py from the op table's schema: do not edit.\n"
            "ONNX_FUNCTIONS = {\n" + "\n".join(sorted(rows)) + "\n}\n")


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit("usage: gen_ops.py INCLUDE_DIR OUT_C OUT_PYI [OUT_ONNX_PY]")
    inc = Path(sys.argv[1]) / "backplane"
    schema = read_schema(inc)
    order, comments = ordered_functions(inc, schema)
    c = ["/* Generated by python/gen_ops.py from opcodes.h and ops.h's schemas: do not edit. */",
         '#include "bpy.h"', "",
         "int bpy_split_arg(PyObject *o, int64_t *sizes, int32_t max, int32_t *n, int *equal);",
         "bp_dtype bpy_dtype_of_name(const char *name);", ""]
    for ctype, choices in CHOICES.items():
        c.append(f"static const char *const CH_{ctype}[] = {{" +
                 ", ".join(f'"{x}"' for x in choices) + ", NULL};")
    c.append("")
    stubs, methods = [], []
    for fname in order:
        names, args, outputs = schema[fname]
        if names.get("python") == ["-"]:
            continue
        body, stub, doc = gen_function(fname, params_of(fname, args, outputs))
        c += [body, ""]
        stubs.append(stub)
        methods.append(method_row(fname, fname, doc, comments))
        for alias in names.get("numpy", []):
            stubs.append(stub.replace(f"def {fname}(", f"def {alias}(", 1))
            methods.append(method_row(alias, fname, doc.replace(f"{fname}(", f"{alias}(", 1) +
                                      f" (NumPy's name for {fname})", comments))
    c.append("PyMethodDef bpy_op_methods[] = {")
    c += methods
    c.append("    {NULL, NULL, 0, NULL}};")
    Path(sys.argv[2]).write_text("\n".join(c) + "\n")
    Path(sys.argv[3]).write_text("# Generated by python/gen_ops.py: one function per op.\n" +
                                 "\n".join(stubs) + "\n")
    if len(sys.argv) == 5:
        Path(sys.argv[4]).write_text(onnx_functions(schema))


if __name__ == "__main__":
    main()

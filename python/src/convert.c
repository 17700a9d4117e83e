/* backplane's Python extension: Python objects in, tensors out. Scalars,
 * nested lists, NumPy arrays and DLPack producers become tensors here, and
 * the arguments of the generated op functions (axes, shapes, enums, window
 * geometry) become the C values the library takes. */
#include "bpy.h"

#include <backplane/cast.h>
#include <dlpack/dlpack.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

int bpy_from_capsule(PyObject *capsule, bp_backend *b, bp_tensor **out);

/* ---- dtypes ----------------------------------------------------------------------- */

static const char *const NUMPY_NAMES[BP_DTYPE_COUNT] = {
    [BP_BOOL] = "bool",     [BP_U8] = "uint8",      [BP_I8] = "int8",
    [BP_I32] = "int32",     [BP_I64] = "int64",     [BP_F16] = "float16",
    [BP_BF16] = "bfloat16", [BP_F32] = "float32",   [BP_F64] = "float64",
    [BP_I16] = "int16",     [BP_U16] = "uint16",    [BP_U32] = "uint32",
    [BP_U64] = "uint64"};

const char *bpy_dtype_name(bp_dtype dt)
{
    return bp_dtype_valid((int)dt) ? NUMPY_NAMES[dt] : "?";
}

#define DTYPE_CHOICES                                                                       \
    "bool, uint8, int8, int16, uint16, int32, uint32, int64, uint64, float16, bfloat16, "     \
    "float32, float64"

/* A name (NumPy's, or the library's short one) -> dtype; -1 if none. */
static int dtype_from_name(const char *s)
{
    for (int i = 0; i < BP_DTYPE_COUNT; i++)
        if (strcmp(s, NUMPY_NAMES[i]) == 0 || strcmp(s, bp_dtype_name((bp_dtype)i)) == 0)
            return i;
    if (strcmp(s, "bool_") == 0)
        return BP_BOOL;
    return -1;
}

static PyObject *utf8(PyObject *s)
{
    return PyUnicode_AsUTF8String(s);
}

/* The name of o's type, as a new str ("?" when it cannot be had). */
static PyObject *type_name(PyObject *o)
{
    PyObject *n = PyObject_GetAttrString((PyObject *)Py_TYPE(o), "__name__");
    if (!n) {
        PyErr_Clear();
        n = PyUnicode_FromString("?");
    }
    return n;
}

static int refuse_dtype_name(const char *s)
{
    bpy_raise_msg(BP_ERR_DTYPE, "dtype %s is not supported by backplane; its dtypes are "
                                DTYPE_CHOICES " (convert first, e.g. with .astype('float32'))",
                  s);
    return -1;
}

/* NumPy's name for a dtype spelling it knows ('f4', '<f4', np.float32, an
 * ml_dtypes type): a new str, or NULL (no error set) when NumPy is missing,
 * refuses it, or it is of the other byte order (not a backplane dtype). */
static PyObject *numpy_dtype_name(PyObject *o)
{
    PyObject *np = PyImport_ImportModule("numpy");
    PyObject *d = np ? PyObject_CallMethod(np, "dtype", "(O)", o) : NULL;
    Py_XDECREF(np);
    PyObject *name = NULL, *nat = d ? PyObject_GetAttrString(d, "isnative") : NULL;
    if (nat && PyObject_IsTrue(nat) > 0)
        name = PyObject_GetAttrString(d, "name");
    Py_XDECREF(nat);
    Py_XDECREF(d);
    if (!name)
        PyErr_Clear();
    return name;
}

int bpy_dtype_arg(PyObject *o, bp_dtype *out)
{
    PyObject *name = NULL;
    if (PyUnicode_Check(o)) {
        name = o;
        Py_INCREF(name);
        PyObject *b = utf8(o);
        if (!b)
            return -1;
        int known = dtype_from_name(PyBytes_AsString(b)) >= 0;
        Py_DECREF(b);
        PyObject *np_name = known ? NULL : numpy_dtype_name(o);
        if (np_name) {
            Py_DECREF(name);
            name = np_name;
        }
    } else if (o == (PyObject *)&PyFloat_Type) {
        *out = BP_F64;
        return 0;
    } else if (o == (PyObject *)&PyLong_Type) {
        *out = BP_I64;
        return 0;
    } else if (o == (PyObject *)&PyBool_Type) {
        *out = BP_BOOL;
        return 0;
    } else if (o == (PyObject *)&PyComplex_Type) {
        return refuse_dtype_name("complex");
    } else if (PyType_Check(o)) {
        /* numpy.float32, ml_dtypes.bfloat16: their NumPy dtype's name */
        name = numpy_dtype_name(o);
        if (!name)
            name = PyObject_GetAttrString(o, "__name__");
    } else {
        name = PyObject_GetAttrString(o, "name"); /* a numpy.dtype */
    }
    if (!name || !PyUnicode_Check(name)) {
        Py_XDECREF(name);
        PyErr_Clear();
        PyObject *tn = type_name(o);
        PyErr_Format(PyExc_TypeError, "a dtype must be a name such as 'float32' or a NumPy "
                                      "dtype, not %S", tn);
        Py_XDECREF(tn);
        return -1;
    }
    PyObject *b = utf8(name);
    Py_DECREF(name);
    if (!b)
        return -1;
    const char *s = PyBytes_AsString(b);
    int dt = dtype_from_name(s);
    if (dt < 0) {
        refuse_dtype_name(s);
        Py_DECREF(b);
        return -1;
    }
    Py_DECREF(b);
    *out = (bp_dtype)dt;
    return 0;
}

/* ---- scalars and nested lists ------------------------------------------------------- */

enum { K_BOOL = 1, K_INT = 2, K_FLOAT = 3 };
typedef struct {
    int kind;
    int64_t i;   /* K_BOOL, K_INT */
    double d;    /* K_FLOAT */
    bool big;    /* K_INT above INT64_MAX: i holds the uint64's bits */
} leaf;

/* A NumPy scalar's dtype kind: 'b', 'i', 'u', 'f', ... (0 if none). */
static int attr_kind(PyObject *o)
{
    PyObject *d = PyObject_GetAttrString(o, "dtype");
    PyObject *k = d ? PyObject_GetAttrString(d, "kind") : NULL;
    Py_XDECREF(d);
    int kind = 0;
    if (k && PyUnicode_Check(k) && PyUnicode_GetLength(k) == 1)
        kind = (int)PyUnicode_ReadChar(k, 0);
    Py_XDECREF(k);
    if (!kind)
        PyErr_Clear();
    return kind;
}

/* One Python number; K_* or -1 with an error. */
static int read_leaf(PyObject *o, leaf *out)
{
    out->big = false;
    if (PyBool_Check(o)) {
        out->kind = K_BOOL, out->i = o == Py_True;
        return K_BOOL;
    }
    if (!PyLong_Check(o) && !PyFloat_Check(o) && !BPY_IS_TENSOR(o) &&
        PyObject_HasAttrString(o, "dtype") && attr_kind(o) == 'b') { /* numpy.bool_ */
        int v = PyObject_IsTrue(o);
        if (v < 0)
            return -1;
        out->kind = K_BOOL, out->i = v;
        return K_BOOL;
    }
    if (PyLong_Check(o)) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow > 0) { /* uint64's upper half, or beyond */
            unsigned long long u = PyLong_AsUnsignedLongLong(o);
            if (u == (unsigned long long)-1 && PyErr_Occurred()) {
                PyErr_SetString(PyExc_OverflowError, "a Python integer above 2**64 - 1, the "
                                                     "largest uint64, backplane's widest");
                return -1;
            }
            out->kind = K_INT, out->i = (int64_t)u, out->big = true;
            return K_INT;
        }
        if (overflow) {
            PyErr_SetString(PyExc_OverflowError, "a Python integer below -2**63, the smallest "
                                                 "int64, backplane's widest signed");
            return -1;
        }
        if (v == -1 && PyErr_Occurred())
            return -1;
        out->kind = K_INT, out->i = v;
        return K_INT;
    }
    if (PyFloat_Check(o)) {
        out->kind = K_FLOAT, out->d = PyFloat_AsDouble(o);
        return K_FLOAT;
    }
    if (PyComplex_Check(o)) {
        bpy_raise_msg(BP_ERR_DTYPE, "complex numbers are not supported by backplane; its "
                                    "dtypes are " DTYPE_CHOICES);
        return -1;
    }
    if (PyObject_HasAttrString(o, "__index__")) { /* numpy integers */
        PyObject *i = PyNumber_Index(o);
        if (!i)
            return -1;
        int rc = read_leaf(i, out);
        Py_DECREF(i);
        return rc;
    }
    if (PyObject_HasAttrString(o, "__float__") && !BPY_IS_TENSOR(o)) { /* numpy floats */
        double d = PyFloat_AsDouble(o);
        if (d == -1.0 && PyErr_Occurred())
            return -1;
        out->kind = K_FLOAT, out->d = d;
        return K_FLOAT;
    }
    PyObject *tn = type_name(o);
    PyErr_Format(PyExc_TypeError, "cannot make a tensor element from a %S (numbers, bools and "
                                  "nested lists of them are accepted)", tn);
    Py_XDECREF(tn);
    return -1;
}

static int is_seq(PyObject *o) { return PyList_Check(o) || PyTuple_Check(o); }

/* Walk the first elements for the shape. */
static int list_shape(PyObject *o, int64_t *shape, int32_t *rank)
{
    *rank = 0;
    while (is_seq(o)) {
        if (*rank >= BP_MAX_RANK) {
            bpy_raise_msg(BP_ERR_SHAPE, "a nested list deeper than %d levels: backplane tensors "
                                        "have at most %d axes", BP_MAX_RANK, BP_MAX_RANK);
            return -1;
        }
        Py_ssize_t n = PySequence_Size(o);
        if (n < 0)
            return -1;
        shape[(*rank)++] = n;
        if (n == 0)
            break;
        o = PySequence_GetItem(o, 0);
        if (!o)
            return -1;
        Py_DECREF(o); /* the list keeps it */
    }
    return 0;
}

/* Fill leaves in row-major order, checking that every level is rectangular. */
static int list_fill(PyObject *o, int32_t depth, const int64_t *shape, int32_t rank, leaf *leaves,
                     int64_t *pos, int *kind)
{
    if (depth == rank) {
        if (is_seq(o)) {
            bpy_raise_msg(BP_ERR_SHAPE, "ragged nested list: a sequence at depth %d where the "
                                        "first element's row has a number; backplane needs "
                                        "rectangular data", (int)depth);
            return -1;
        }
        leaf *l = &leaves[(*pos)++];
        int k = read_leaf(o, l);
        if (k < 0)
            return -1;
        if (k > *kind)
            *kind = k;
        return 0;
    }
    if (!is_seq(o)) {
        bpy_raise_msg(BP_ERR_SHAPE, "ragged nested list: a number at depth %d where the first "
                                    "row has a sequence of length %lld; backplane needs "
                                    "rectangular data", (int)depth, (long long)shape[depth]);
        return -1;
    }
    Py_ssize_t n = PySequence_Size(o);
    if (n != shape[depth]) {
        bpy_raise_msg(BP_ERR_SHAPE, "ragged nested list: a sequence of length %zd at depth %d "
                                    "where the first has %lld; backplane needs rectangular data",
                      n, (int)depth, (long long)shape[depth]);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_GetItem(o, i);
        if (!item)
            return -1;
        int rc = list_fill(item, depth + 1, shape, rank, leaves, pos, kind);
        Py_DECREF(item);
        if (rc < 0)
            return -1;
    }
    return 0;
}

static int kind_dtype(int kind)
{
    return kind == K_FLOAT ? BP_F64 : kind == K_INT ? BP_I64 : kind == K_BOOL ? BP_BOOL : BP_F64;
}

/* Whether a leaf of this kind may become dtype without promotion (a float
 * never silently becomes an integer; an integer must fit). */
/* The values of an integer dtype (an int64 holds them all). */
static void int_range(bp_dtype dt, int64_t *lo, int64_t *hi)
{
    switch (dt) {
    case BP_U8: *lo = 0, *hi = UINT8_MAX; break;
    case BP_I8: *lo = INT8_MIN, *hi = INT8_MAX; break;
    case BP_I16: *lo = INT16_MIN, *hi = INT16_MAX; break;
    case BP_U16: *lo = 0, *hi = UINT16_MAX; break;
    case BP_I32: *lo = INT32_MIN, *hi = INT32_MAX; break;
    case BP_U32: *lo = 0, *hi = UINT32_MAX; break;
    case BP_U64: *lo = 0, *hi = INT64_MAX; break; /* and every big leaf */
    default: *lo = INT64_MIN, *hi = INT64_MAX; break;
    }
}

static int check_leaf_fits(const leaf *l, bp_dtype dt)
{
    if (l->kind == K_FLOAT && !bp_dtype_is_float(dt)) {
        bpy_raise_msg(BP_ERR_DTYPE, "a Python float (%g) cannot become a %s element without "
                                    "promotion, which backplane never does implicitly: convert the "
                                    "tensor first (x.astype('float32'))",
                      l->d, bpy_dtype_name(dt));
        return -1;
    }
    if (l->kind == K_INT && dt == BP_BOOL) {
        bpy_raise_msg(BP_ERR_DTYPE, "a Python int (%lld) cannot become a bool element: use "
                                    "True/False, or cast the tensor first",
                      (long long)l->i);
        return -1;
    }
    if (l->kind == K_INT && bp_dtype_is_int(dt)) {
        int64_t lo = INT64_MIN, hi = INT64_MAX;
        int_range(dt, &lo, &hi);
        if (l->big && dt != BP_U64) {
            PyErr_Format(PyExc_OverflowError, "Python integer %llu out of bounds for %s",
                         (unsigned long long)l->i, bpy_dtype_name(dt));
            return -1;
        }
        if (!l->big && (l->i < lo || l->i > hi)) {
            PyErr_Format(PyExc_OverflowError, "Python integer %lld out of bounds for %s",
                         (long long)l->i, bpy_dtype_name(dt));
            return -1;
        }
    }
    return 0;
}

static void store_leaf(const leaf *l, bp_dtype dt, void *p)
{
    if (l->kind == K_FLOAT)
        bp_elem_store_f64(dt, p, l->d);
    else if (l->big && bp_dtype_is_float(dt))
        bp_elem_store_u64_float(dt, p, (uint64_t)l->i);
    else if (l->big && dt != BP_U64) /* saturates: an explicit cast of a float leaf's kind */
        bp_elem_cast_int(dt, p, BP_U64, &l->i);
    else
        bp_elem_store_i64(dt, p, l->i);
}

/* Leaves -> a tensor of dtype (explicit: converted by the cast rules) or of
 * the hint's dtype (checked: no promotion) or inferred. */
static int leaves_tensor(const leaf *leaves, int64_t n, int kind, int32_t rank,
                         const int64_t *shape, bp_backend *b, int dtype, int hint_dtype,
                         bp_tensor **out)
{
    bp_dtype dt = (bp_dtype)(dtype >= 0 ? dtype : hint_dtype >= 0 ? hint_dtype : kind_dtype(kind));
    bool big = false;
    for (int64_t i = 0; i < n; i++)
        big |= leaves[i].big;
    if (dtype < 0 && hint_dtype < 0 && big && kind == K_INT) {
        dt = BP_U64; /* NumPy's choice for ints above int64's range */
        for (int64_t i = 0; i < n; i++)
            if (check_leaf_fits(&leaves[i], dt) < 0)
                return -1;
    }
    if (dtype < 0 && hint_dtype >= 0)
        for (int64_t i = 0; i < n; i++)
            if (check_leaf_fits(&leaves[i], dt) < 0)
                return -1;
    /* An explicit integer dtype converts floats (truncating, as NumPy's
     * astype) but never saturates a Python int silently: NumPy raises. */
    if (dtype >= 0 && bp_dtype_is_int(dt))
        for (int64_t i = 0; i < n; i++)
            if (leaves[i].kind == K_INT && check_leaf_fits(&leaves[i], dt) < 0)
                return -1;
    size_t es = bp_dtype_size(dt);
    unsigned char small[64] = {0};
    unsigned char *buf = (size_t)n * es <= sizeof small ? small : PyMem_Malloc((size_t)n * es + 1);
    if (!buf) {
        PyErr_NoMemory();
        return -1;
    }
    for (int64_t i = 0; i < n; i++)
        store_leaf(&leaves[i], dt, buf + (size_t)i * es);
    bp_status st = bp_tensor_from_host(b, dt, rank, shape, buf, out);
    if (buf != small)
        PyMem_Free(buf);
    if (st != BP_OK) {
        bpy_raise(st);
        return -1;
    }
    return 0;
}

static int from_list(PyObject *o, bp_backend *b, int dtype, int hint_dtype, bp_tensor **out)
{
    int64_t shape[BP_MAX_RANK];
    int32_t rank = 0;
    if (list_shape(o, shape, &rank) < 0)
        return -1;
    int64_t n = 1;
    for (int32_t i = 0; i < rank; i++)
        n *= shape[i];
    leaf *leaves = PyMem_Calloc((size_t)n + 1, sizeof *leaves);
    if (!leaves) {
        PyErr_NoMemory();
        return -1;
    }
    int64_t pos = 0;
    int kind = 0;
    int rc = list_fill(o, 0, shape, rank, leaves, &pos, &kind);
    if (rc == 0)
        rc = leaves_tensor(leaves, n, kind, rank, shape, b, dtype, hint_dtype, out);
    PyMem_Free(leaves);
    return rc;
}

/* ---- NumPy arrays and DLPack producers ------------------------------------------------ */

static int attr_true(PyObject *o, const char *a, const char *b)
{
    PyObject *x = PyObject_GetAttrString(o, a);
    PyObject *y = x ? PyObject_GetAttrString(x, b) : NULL;
    Py_XDECREF(x);
    int r = y ? PyObject_IsTrue(y) : 0;
    Py_XDECREF(y);
    if (r < 0 || !y)
        PyErr_Clear();
    return r > 0;
}

static int shape_of(PyObject *o, int64_t *shape, int32_t *rank)
{
    PyObject *s = PyObject_GetAttrString(o, "shape");
    if (!s)
        return -1;
    int rc = bpy_int64s_arg(s, "shape", shape, BP_MAX_RANK, rank);
    Py_DECREF(s);
    return rc;
}

/* What an array-like object claims (its shape and dtype) must match the
 * bytes it hands over: an object may implement the protocol only in part,
 * and a tensor sized by its shape over a shorter buffer would read past it. */
static int check_byte_count(const int64_t *shape, int32_t rank, bp_dtype dt, Py_ssize_t len)
{
    uint64_t need = bp_dtype_size(dt);
    int overflow = 0;
    for (int32_t i = 0; i < rank; i++) {
        if (shape[i] < 0) {
            bpy_raise_msg(BP_ERR_SHAPE, "the object's shape has a negative extent (%lld at "
                                        "axis %d)", (long long)shape[i], (int)i);
            return -1;
        }
        if (shape[i] != 0 && need > UINT64_MAX / (uint64_t)shape[i])
            overflow = 1;
        need = overflow ? 0 : need * (uint64_t)shape[i];
    }
    if (overflow || need != (uint64_t)len) {
        PyErr_Format(PyExc_ValueError,
                     "the object's shape and dtype (%s) need %llu bytes but its tobytes() gave "
                     "%zd: it does not implement the array protocol consistently; convert it "
                     "with numpy.asarray first",
                     bpy_dtype_name(dt), overflow ? 0ULL : (unsigned long long)need, len);
        return -1;
    }
    return 0;
}

/* A NumPy array (or NumPy scalar): zero-copy through DLPack when it is
 * dense, aligned, native-endian and writable (NumPy refuses to export a
 * read-only one); otherwise its C-order bytes are copied. */
static int from_numpy(PyObject *o, bp_backend *b, int array_copy, bp_tensor **out)
{
    PyObject *dt = PyObject_GetAttrString(o, "dtype");
    PyObject *name = dt ? PyObject_GetAttrString(dt, "name") : NULL;
    PyObject *nb = name ? utf8(name) : NULL;
    Py_XDECREF(name);
    if (!nb) {
        Py_XDECREF(dt);
        return -1;
    }
    int bdt = dtype_from_name(PyBytes_AsString(nb));
    if (bdt < 0) {
        bpy_raise_msg(BP_ERR_DTYPE, "NumPy dtype %s is not supported by backplane; its dtypes "
                                    "are " DTYPE_CHOICES " (convert with .astype(...) first)",
                      PyBytes_AsString(nb));
        Py_DECREF(nb);
        Py_DECREF(dt);
        return -1;
    }
    Py_DECREF(nb);
    int native = attr_true(o, "dtype", "isnative");
    int64_t shape[BP_MAX_RANK];
    int32_t rank = 0;
    if (shape_of(o, shape, &rank) < 0) {
        Py_DECREF(dt);
        return -1;
    }
    if (array_copy != 1 && native && bdt != BP_BF16 && attr_true(o, "flags", "c_contiguous") &&
        attr_true(o, "flags", "writeable") && attr_true(o, "flags", "aligned") &&
        PyObject_HasAttrString(o, "__dlpack__")) {
        PyObject *cap = PyObject_CallMethod(o, "__dlpack__", NULL);
        if (cap) {
            int rc = bpy_from_capsule(cap, b, out);
            Py_DECREF(cap);
            if (rc == 0) {
                Py_DECREF(dt);
                return 0;
            }
        }
        PyErr_Clear(); /* fall back to a copy */
    }
    if (array_copy == 2) {
        Py_DECREF(dt);
        PyErr_SetString(PyExc_ValueError,
                        "asarray(copy=False): this array cannot be shared (only a dense, "
                        "aligned, writable, native-byte-order array of a backplane dtype other "
                        "than bfloat16, on a host backend, can be); pass copy=True");
        return -1;
    }
    PyObject *src = o;
    Py_INCREF(src);
    if (!native) {
        PyObject *nd = PyObject_CallMethod(dt, "newbyteorder", "s", "=");
        Py_DECREF(src);
        src = nd ? PyObject_CallMethod(o, "astype", "(O)", nd) : NULL;
        Py_XDECREF(nd);
        if (!src) {
            Py_DECREF(dt);
            return -1;
        }
    }
    Py_DECREF(dt);
    PyObject *bytes = PyObject_CallMethod(src, "tobytes", NULL);
    Py_DECREF(src);
    if (!bytes)
        return -1;
    char *data;
    Py_ssize_t len;
    if (PyBytes_AsStringAndSize(bytes, &data, &len) < 0 ||
        check_byte_count(shape, rank, (bp_dtype)bdt, len) < 0) {
        Py_DECREF(bytes);
        return -1;
    }
    bp_status st;
    Py_BEGIN_ALLOW_THREADS st = bp_tensor_from_host(b, (bp_dtype)bdt, rank, shape, data, out);
    Py_END_ALLOW_THREADS
    Py_DECREF(bytes);
    if (st != BP_OK) {
        bpy_raise(st);
        return -1;
    }
    return 0;
}

/* Anything else with __dlpack__ (PyTorch, CuPy, JAX...). Device memory goes
 * to the backend for that device when none was named. */
static int from_dlpack_producer(PyObject *o, bp_backend *b, int backend_given, bp_tensor **out)
{
    PyObject *dev = PyObject_CallMethod(o, "__dlpack_device__", NULL);
    if (!dev)
        PyErr_Clear();
    int dev_type = kDLCPU, dev_id = 0;
    if (dev && !PyArg_ParseTuple(dev, "ii", &dev_type, &dev_id))
        PyErr_Clear();
    Py_XDECREF(dev);
    if (!backend_given && dev_type == kDLCUDA) {
        char name[32];
        snprintf(name, sizeof name, "cuda:%d", dev_id);
        PyObject *n = PyUnicode_FromString(name);
        int rc = n ? bpy_backend_arg(n, &b) : -1;
        Py_XDECREF(n);
        if (rc < 0)
            return -1;
    }
    PyObject *cap = dev_type == kDLCUDA ? PyObject_CallMethod(o, "__dlpack__", "{s:i}", "stream", 1)
                                        : NULL;
    if (dev_type == kDLCUDA && !cap) {
        PyErr_Clear();
        cap = NULL;
    }
    if (!cap) {
        PyObject *meth = PyObject_GetAttrString(o, "__dlpack__");
        if (!meth)
            return -1;
        if (dev_type == kDLCUDA) {
            PyObject *args = PyTuple_New(0), *kw = Py_BuildValue("{s:i}", "stream", 1);
            cap = args && kw ? PyObject_Call(meth, args, kw) : NULL;
            Py_XDECREF(args);
            Py_XDECREF(kw);
        } else {
            cap = PyObject_CallObject(meth, NULL);
        }
        Py_DECREF(meth);
        if (!cap)
            return -1;
    }
    int rc = bpy_from_capsule(cap, b, out);
    Py_DECREF(cap);
    return rc;
}

/* ---- the one entry point ---------------------------------------------------------------- */

static int is_python_scalar(PyObject *o)
{
    return PyBool_Check(o) || PyLong_Check(o) || PyFloat_Check(o) || PyComplex_Check(o);
}

/* A NumPy scalar (numpy.float32(2), numpy.int64(3), numpy.bool_(True)):
 * beside a tensor it behaves as the Python scalar of its value does. */
static int is_numpy_scalar(PyObject *o)
{
    if (BPY_IS_TENSOR(o) || PyList_Check(o) || PyTuple_Check(o))
        return 0;
    PyObject *mod = PyObject_GetAttrString((PyObject *)Py_TYPE(o), "__module__");
    if (!mod) {
        PyErr_Clear();
        return 0;
    }
    int numpy = PyUnicode_Check(mod) && PyUnicode_CompareWithASCIIString(mod, "numpy") == 0;
    Py_DECREF(mod);
    if (!numpy)
        return 0;
    PyObject *shape = PyObject_GetAttrString(o, "shape");
    int scalar = shape && PyTuple_Check(shape) && PyTuple_Size(shape) == 0 &&
                 !PyObject_HasAttrString(o, "__array_function__");
    Py_XDECREF(shape);
    PyErr_Clear();
    return scalar && attr_kind(o) != 0;
}

static int scalar_like(PyObject *o) { return is_python_scalar(o) || is_numpy_scalar(o); }

int bpy_tensor_arg(PyObject *obj, const bpy_hint *hint, int dtype, bp_tensor **out)
{
    *out = NULL;
    if (BPY_IS_TENSOR(obj)) {
        bp_tensor *t = BPY_T(obj);
        if (dtype >= 0 && (bp_dtype)dtype != bp_tensor_dtype(t)) {
            bp_status st = bp_cast(t, (bp_dtype)dtype, out);
            if (st != BP_OK) {
                bpy_raise(st);
                return -1;
            }
            return 0;
        }
        bp_tensor_retain(t);
        *out = t;
        return 0;
    }
    bp_backend *b = hint ? hint->backend : NULL;
    /* Beside a symbolic tensor: a concrete tensor on the graph's device
     * backend, which the op captures as a constant. */
    bp_backend *real = b ? bpy_real_backend(b) : NULL;
    if (real)
        b = real;
    int backend_given = b != NULL;
    if (!b && bpy_backend_arg(Py_None, &b) < 0)
        return -1;
    int hint_dtype = hint ? hint->dtype : -1;
    if (is_python_scalar(obj) || (hint_dtype >= 0 && dtype < 0 && is_numpy_scalar(obj))) {
        leaf l;
        if (read_leaf(obj, &l) < 0)
            return -1;
        return leaves_tensor(&l, 1, l.kind, 0, NULL, b, dtype, hint_dtype, out);
    }
    if (is_seq(obj))
        return from_list(obj, b, dtype, hint_dtype, out);
    int rc;
    if (PyObject_HasAttrString(obj, "__array_interface__") &&
        PyObject_HasAttrString(obj, "dtype"))
        rc = from_numpy(obj, b, hint ? hint->array_copy : 0, out);
    else if (PyObject_HasAttrString(obj, "__dlpack__"))
        rc = from_dlpack_producer(obj, b, backend_given, out);
    else if (PyCapsule_CheckExact(obj))
        rc = bpy_from_capsule(obj, b, out);
    else {
        PyObject *tn = type_name(obj);
        PyErr_Format(PyExc_TypeError, "cannot make a tensor from a %S: give a Tensor, a NumPy "
                                      "array, a number, a nested list or an object with "
                                      "__dlpack__", tn);
        Py_XDECREF(tn);
        return -1;
    }
    if (rc < 0)
        return -1;
    if (dtype >= 0 && (bp_dtype)dtype != bp_tensor_dtype(*out)) {
        bp_tensor *c = NULL;
        bp_status st = bp_cast(*out, (bp_dtype)dtype, &c);
        bp_tensor_release(*out);
        *out = c;
        if (st != BP_OK) {
            bpy_raise(st);
            return -1;
        }
    }
    return 0;
}

void bpy_release_all(bp_tensor **ts, int n)
{
    for (int i = 0; i < n; i++) {
        bp_tensor_release(ts[i]);
        ts[i] = NULL;
    }
}

int bpy_tensor_args(PyObject *const *objs, const char *group, const char *optional, int n,
                    const char *const *names, bp_tensor **out)
{
    bpy_hint hint = {NULL, -1, 0};
    for (int i = 0; i < n; i++) {
        out[i] = NULL;
        if (objs[i] && BPY_IS_TENSOR(objs[i]) && !hint.backend)
            hint.backend = bp_tensor_backend(BPY_T(objs[i]));
    }
    /* Tensors, arrays and lists first; then Python scalars, which take the
     * dtype of their group's first tensor. */
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < n; i++) {
            PyObject *o = objs[i];
            if (!o || o == Py_None) {
                if (pass == 1)
                    continue;
                if (optional[i])
                    continue;
                PyErr_Format(PyExc_TypeError, "argument '%s' is required (a tensor)", names[i]);
                goto fail;
            }
            if ((pass == 0) == scalar_like(o))
                continue;
            bpy_hint h = hint;
            if (pass == 1 && group[i])
                for (int j = 0; j < n; j++)
                    if (group[j] && out[j]) {
                        h.dtype = (int)bp_tensor_dtype(out[j]);
                        break;
                    }
            if (bpy_tensor_arg(o, &h, -1, &out[i]) < 0)
                goto fail;
            if (!hint.backend)
                hint.backend = bp_tensor_backend(out[i]);
        }
    }
    return 0;
fail:
    bpy_release_all(out, n);
    return -1;
}

/* ---- other arguments -------------------------------------------------------------------- */

static int int_of(PyObject *o, const char *what, long long *v)
{
    if (PyBool_Check(o) || !(PyLong_Check(o) || PyObject_HasAttrString(o, "__index__"))) {
        PyObject *tn = type_name(o);
        PyErr_Format(PyExc_TypeError, "%s: expected an int, not %S", what, tn);
        Py_XDECREF(tn);
        return -1;
    }
    PyObject *i = PyNumber_Index(o);
    if (!i)
        return -1;
    *v = PyLong_AsLongLong(i);
    Py_DECREF(i);
    return (*v == -1 && PyErr_Occurred()) ? -1 : 0;
}

int bpy_int64s_arg(PyObject *o, const char *what, int64_t *vals, int32_t max, int32_t *n)
{
    if (!is_seq(o)) {
        long long v;
        if (PyLong_Check(o) && !PyBool_Check(o)) {
            if (int_of(o, what, &v) < 0)
                return -1;
            if (max < 1)
                return bpy_raise_msg(BP_ERR_SHAPE, "%s: too many entries", what), -1;
            vals[0] = v;
            *n = 1;
            return 0;
        }
        PyObject *tn = type_name(o);
        PyErr_Format(PyExc_TypeError, "%s: expected a sequence of ints, not %S", what, tn);
        Py_XDECREF(tn);
        return -1;
    }
    Py_ssize_t len = PySequence_Size(o);
    if (len < 0)
        return -1;
    if (len > max) {
        bpy_raise_msg(BP_ERR_SHAPE, "%s: %zd entries, at most %d", what, len, (int)max);
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        PyObject *item = PySequence_GetItem(o, i);
        long long v = 0;
        int rc = item ? int_of(item, what, &v) : -1;
        Py_XDECREF(item);
        if (rc < 0)
            return -1;
        vals[i] = v;
    }
    *n = (int32_t)len;
    return 0;
}

int bpy_doubles_arg(PyObject *o, const char *what, double *vals, int32_t max, int32_t *n)
{
    if (!is_seq(o)) {
        PyObject *tn = type_name(o);
        PyErr_Format(PyExc_TypeError, "%s: expected a sequence of numbers, not %S", what, tn);
        Py_XDECREF(tn);
        return -1;
    }
    Py_ssize_t len = PySequence_Size(o);
    if (len < 0)
        return -1;
    if (len > max) {
        bpy_raise_msg(BP_ERR_SHAPE, "%s: %zd entries, at most %d", what, len, (int)max);
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        PyObject *item = PySequence_GetItem(o, i);
        double v = item ? PyFloat_AsDouble(item) : -1.0;
        Py_XDECREF(item);
        if (v == -1.0 && PyErr_Occurred())
            return -1;
        vals[i] = v;
    }
    *n = (int32_t)len;
    return 0;
}

int bpy_axes_arg(PyObject *o, const char *what, int32_t *axes, int32_t *n)
{
    *n = 0;
    if (o == NULL || o == Py_None)
        return 0;
    int64_t v[BP_MAX_RANK];
    if (bpy_int64s_arg(o, what, v, BP_MAX_RANK, n) < 0)
        return -1;
    for (int32_t i = 0; i < *n; i++) {
        if (v[i] < INT32_MIN || v[i] > INT32_MAX)
            return bpy_raise_msg(BP_ERR_SHAPE, "%s: axis %lld out of range", what,
                                 (long long)v[i]), -1;
        axes[i] = (int32_t)v[i];
    }
    return 0;
}

int bpy_shape_arg(PyObject *o, int64_t *shape, int32_t *rank)
{
    return bpy_int64s_arg(o, "shape", shape, BP_MAX_RANK, rank);
}

int bpy_tensor_list_arg(PyObject *o, const char *what, bp_tensor ***out, int32_t *n)
{
    *out = NULL;
    *n = 0;
    if (!is_seq(o)) {
        PyObject *tn = type_name(o);
        PyErr_Format(PyExc_TypeError, "%s: expected a list or tuple of tensors, not %S", what, tn);
        Py_XDECREF(tn);
        return -1;
    }
    Py_ssize_t len = PySequence_Size(o);
    if (len < 0)
        return -1;
    if (len > INT32_MAX - 1)
        return bpy_raise_msg(BP_ERR_INVALID_ARGUMENT, "%s: too many tensors", what), -1;
    PyObject **objs = PyMem_Calloc((size_t)len + 1, sizeof *objs);
    char *group = PyMem_Calloc((size_t)len + 1, 1), *opt = PyMem_Calloc((size_t)len + 1, 1);
    const char **names = PyMem_Calloc((size_t)len + 1, sizeof *names);
    bp_tensor **ts = PyMem_Calloc((size_t)len + 1, sizeof *ts);
    int rc = -1;
    if (!objs || !group || !opt || !names || !ts) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        objs[i] = PySequence_GetItem(o, i);
        if (!objs[i])
            goto done;
        group[i] = 1;
        names[i] = what;
    }
    if (bpy_tensor_args(objs, group, opt, (int)len, names, ts) < 0)
        goto done;
    *out = ts;
    *n = (int32_t)len;
    ts = NULL;
    rc = 0;
done:
    for (Py_ssize_t i = 0; objs && i < len; i++)
        Py_XDECREF(objs[i]);
    PyMem_Free(objs);
    PyMem_Free(group);
    PyMem_Free(opt);
    PyMem_Free(names);
    PyMem_Free(ts);
    return rc;
}

void bpy_tensor_list_free(bp_tensor **ts, int32_t n)
{
    if (!ts)
        return;
    bpy_release_all(ts, n);
    PyMem_Free(ts);
}

int bpy_choice_arg(PyObject *o, const char *what, const char *const *choices, int *out)
{
    if (!PyUnicode_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s: expected a str", what);
        return -1;
    }
    PyObject *b = utf8(o);
    if (!b)
        return -1;
    const char *s = PyBytes_AsString(b);
    for (int i = 0; choices[i]; i++) {
        if (strcasecmp(s, choices[i]) == 0) {
            *out = i;
            Py_DECREF(b);
            return 0;
        }
    }
    char list[512] = "";
    for (int i = 0; choices[i]; i++) {
        strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
        strncat(list, choices[i], sizeof list - strlen(list) - 1);
    }
    bpy_raise_msg(BP_ERR_INVALID_ARGUMENT, "%s: '%s' is not one of %s", what, s, list);
    Py_DECREF(b);
    return -1;
}

int bpy_check_len(const char *what, int32_t n, const bp_tensor *x)
{
    int32_t r = bp_tensor_rank(x);
    if (n != r) {
        bpy_raise_msg(BP_ERR_SHAPE, "%s: %d entries for a tensor of rank %d (one per axis)",
                      what, (int)n, (int)r);
        return -1;
    }
    return 0;
}

/* One window member: a sequence of `want` ints (an int repeats), each at
 * least `least`. The C struct reads 0 as "the default" for strides and
 * dilations; a Python caller who writes strides=0 means something else, so
 * it is refused here rather than silently taken as 1. */
static int window_ints(PyObject *o, const char *what, int64_t *dst, int32_t want, int64_t least)
{
    if (!o || o == Py_None)
        return 0;
    int64_t v[6];
    int32_t n = 0;
    if (PyLong_Check(o) && !PyBool_Check(o)) {
        long long x;
        if (int_of(o, what, &x) < 0)
            return -1;
        for (int32_t i = 0; i < want; i++)
            v[i] = x;
        n = want;
    } else if (bpy_int64s_arg(o, what, v, 6, &n) < 0) {
        return -1;
    }
    if (n != want) {
        bpy_raise_msg(BP_ERR_SHAPE, "%s: %d entries where the input's %d spatial axes need %d",
                      what, (int)n, (int)(want > 3 ? want / 2 : want),
                      (int)want);
        return -1;
    }
    for (int32_t i = 0; i < n; i++)
        if (v[i] < least) {
            bpy_raise_msg(BP_ERR_INVALID_ARGUMENT, "%s: %lld at position %d; each must be at "
                                                   "least %lld",
                          what, (long long)v[i], (int)i, (long long)least);
            return -1;
        }
    memcpy(dst, v, (size_t)n * sizeof *v);
    return 0;
}

int bpy_window_arg(bp_window *w, const bp_tensor *x, PyObject *kernel_shape, PyObject *strides,
                   PyObject *pads, PyObject *dilations, PyObject *auto_pad,
                   PyObject *output_padding, PyObject *output_shape)
{
    int32_t s = bp_tensor_rank(x) - 2;
    if (s < 1 || s > 3) {
        bpy_raise_msg(BP_ERR_SHAPE, "a window op needs x of shape (N, C, spatial...) with 1 to "
                                    "3 spatial axes; x has rank %d", (int)bp_tensor_rank(x));
        return -1;
    }
    static const char *const AUTO_PAD[] = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", NULL};
    int ap = 0;
    if (window_ints(kernel_shape, "kernel_shape", w->kernel, s, 1) < 0 ||
        window_ints(strides, "strides", w->strides, s, 1) < 0 ||
        window_ints(pads, "pads", w->pads, 2 * s, 0) < 0 ||
        window_ints(dilations, "dilations", w->dilations, s, 1) < 0 ||
        window_ints(output_padding, "output_padding", w->output_padding, s, 0) < 0 ||
        window_ints(output_shape, "output_shape", w->output_shape, s, 0) < 0 ||
        (auto_pad && auto_pad != Py_None && bpy_choice_arg(auto_pad, "auto_pad", AUTO_PAD, &ap) < 0))
        return -1;
    w->auto_pad = (bp_auto_pad)ap;
    return 0;
}

int bpy_ones_trailing(const bp_tensor *x, int32_t axis, bp_tensor **out)
{
    int32_t r = bp_tensor_rank(x);
    int32_t ax = axis < 0 ? axis + r : axis;
    if (ax < 0 || ax >= r) {
        bpy_raise_msg(BP_ERR_SHAPE, "axis %d is out of range for a tensor of rank %d", (int)axis,
                      (int)r);
        return -1;
    }
    bp_status st = bp_ones(bp_tensor_backend(x), bp_tensor_dtype(x), r - ax,
                           bp_tensor_shape(x) + ax, out);
    if (st != BP_OK) {
        bpy_raise(st);
        return -1;
    }
    return 0;
}

/* dtype None for creation ops: int64 when every number given is an int,
 * float64 otherwise (NumPy's inference). */
int bpy_infer_dtype(PyObject *const *objs, int n, bp_dtype *out)
{
    int all_int = 1;
    for (int i = 0; i < n; i++)
        if (objs[i] && objs[i] != Py_None && !(PyLong_Check(objs[i]) && !PyBool_Check(objs[i])))
            all_int = 0;
    *out = all_int ? BP_I64 : BP_F64;
    return 0;
}

static PyObject *refuse_nul(PyObject *bytes, const char *what)
{
    char *data;
    Py_ssize_t len;
    if (PyBytes_AsStringAndSize(bytes, &data, &len) < 0) {
        Py_DECREF(bytes);
        return NULL;
    }
    if ((size_t)len != strlen(data)) {
        Py_DECREF(bytes);
        PyErr_Format(PyExc_ValueError, "%s: embedded null character", what);
        return NULL;
    }
    return bytes;
}

PyObject *bpy_utf8_cstr(PyObject *s, const char *what)
{
    if (!PyUnicode_Check(s)) {
        PyObject *tn = type_name(s);
        PyErr_Format(PyExc_TypeError, "%s: expected a str, not %S", what, tn);
        Py_XDECREF(tn);
        return NULL;
    }
    PyObject *b = PyUnicode_AsUTF8String(s);
    return b ? refuse_nul(b, what) : NULL;
}

PyObject *bpy_path_cstr(PyObject *path)
{
    PyObject *fs = PyOS_FSPath(path);
    if (!fs)
        return NULL;
    if (!PyUnicode_Check(fs)) {
        Py_DECREF(fs);
        PyErr_SetString(PyExc_TypeError, "path must be a str or os.PathLike of str");
        return NULL;
    }
    PyObject *b = PyUnicode_EncodeFSDefault(fs);
    Py_DECREF(fs);
    return b ? refuse_nul(b, "path") : NULL;
}

int bpy_uint64_conv(PyObject *o, void *out)
{
    if (PyBool_Check(o) || !(PyLong_Check(o) || PyObject_HasAttrString(o, "__index__"))) {
        PyObject *tn = type_name(o);
        PyErr_Format(PyExc_TypeError, "expected an int in [0, 2**64), not %S", tn);
        Py_XDECREF(tn);
        return 0;
    }
    PyObject *i = PyNumber_Index(o);
    if (!i)
        return 0;
    unsigned long long v = PyLong_AsUnsignedLongLong(i);
    Py_DECREF(i);
    if (v == (unsigned long long)-1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_OverflowError, "%S is out of range: seeds and offsets are "
                                              "integers in [0, 2**64)", o);
        }
        return 0;
    }
    *(unsigned long long *)out = v;
    return 1;
}

int bpy_double_arg(PyObject *o, const char *what, double *out)
{
    *out = PyFloat_AsDouble(o);
    if (*out == -1.0 && PyErr_Occurred()) {
        PyErr_Format(PyExc_TypeError, "%s: expected a number", what);
        return -1;
    }
    return 0;
}

bp_dtype bpy_dtype_of_name(const char *name);
bp_dtype bpy_dtype_of_name(const char *name)
{
    int dt = dtype_from_name(name);
    return dt < 0 ? BP_F64 : (bp_dtype)dt;
}

/* split's `split`: an int n (n equal parts) or the parts' sizes. */
int bpy_split_arg(PyObject *o, int64_t *sizes, int32_t max, int32_t *n, int *equal);
int bpy_split_arg(PyObject *o, int64_t *sizes, int32_t max, int32_t *n, int *equal)
{
    if (PyLong_Check(o) && !PyBool_Check(o)) {
        long long v = PyLong_AsLongLong(o);
        if (v == -1 && PyErr_Occurred())
            return -1;
        if (v < 1 || v > max) {
            bpy_raise_msg(BP_ERR_INVALID_ARGUMENT, "split: %lld parts; give 1 to %d", v,
                          (int)max);
            return -1;
        }
        *n = (int32_t)v;
        *equal = 1;
        return 0;
    }
    *equal = 0;
    return bpy_int64s_arg(o, "split", sizes, max, n);
}

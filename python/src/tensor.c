/* backplane's Python extension: the Tensor type. Operators go straight to
 * the library's ops (no Python frame in between): a 4-element a + b costs
 * one bp_add and one object. */
#include "bpy.h"

#include <dlpack/dlpack.h>
#include <stdint.h>
#include <string.h>

PyTypeObject *bpy_tensor_type;
Py_ssize_t bpy_live_tensors;

/* Python-level helpers the package registers at import (repr). */
static PyObject *repr_hook;

PyObject *bpy_wrap(bp_tensor *t)
{
    bpy_tensor *self = PyObject_New(bpy_tensor, bpy_tensor_type);
    if (!self) {
        bp_tensor_release(t);
        return NULL;
    }
    self->t = t;
    bpy_live_tensors++;
    return (PyObject *)self;
}

PyObject *bpy_wrap_all(bp_tensor **ts, Py_ssize_t n)
{
    PyObject *tuple = PyTuple_New(n);
    for (Py_ssize_t k = 0; k < n; k++) {
        bp_tensor *t = ts[k];
        ts[k] = NULL;
        if (!tuple) {
            bp_tensor_release(t);
            continue;
        }
        PyObject *o = bpy_wrap(t); /* releases t when it fails */
        if (!o) {
            Py_CLEAR(tuple); /* the Tensors wrapped so far go with it */
            continue;
        }
        PyTuple_SetItem(tuple, k, o);
    }
    return tuple;
}

static void tensor_dealloc(PyObject *o)
{
    PyTypeObject *type = Py_TYPE(o);
    bp_tensor_release(((bpy_tensor *)o)->t);
    bpy_live_tensors--;
    PyObject_Free(o);
    Py_DECREF(type);
}

/* ---- metadata ------------------------------------------------------------------ */

static PyObject *shape_tuple(const bp_tensor *t)
{
    int32_t r = bp_tensor_rank(t);
    const int64_t *s = bp_tensor_shape(t);
    PyObject *tup = PyTuple_New(r);
    for (int32_t i = 0; tup && i < r; i++) {
        PyObject *v = PyLong_FromLongLong(s[i]);
        if (!v || PyTuple_SetItem(tup, i, v) < 0) {
            Py_DECREF(tup);
            return NULL;
        }
    }
    return tup;
}

static PyObject *tensor_shape(PyObject *o, void *u) { return shape_tuple(BPY_T(o)); }
/* backplane.dtype objects (_dtypes.py), one per dtype in enum order; set by
 * the package at import. Until then (or if it fails) the plain names. */
static PyObject *dtype_objects[BP_DTYPE_COUNT];

static PyObject *tensor_dtype(PyObject *o, void *u)
{
    bp_dtype dt = bp_tensor_dtype(BPY_T(o));
    if (dtype_objects[dt]) {
        Py_INCREF(dtype_objects[dt]);
        return dtype_objects[dt];
    }
    return PyUnicode_FromString(bpy_dtype_name(dt));
}

static PyObject *set_dtypes(PyObject *m, PyObject *seq)
{
    if (!PyTuple_Check(seq) || PyTuple_Size(seq) != BP_DTYPE_COUNT) {
        PyErr_SetString(PyExc_TypeError, "_set_dtypes: a tuple of one object per dtype");
        return NULL;
    }
    for (int i = 0; i < BP_DTYPE_COUNT; i++) {
        PyObject *d = PyTuple_GetItem(seq, i);
        Py_INCREF(d);
        Py_XDECREF(dtype_objects[i]);
        dtype_objects[i] = d;
    }
    Py_RETURN_NONE;
}
static PyObject *tensor_backend(PyObject *o, void *u)
{
    return PyUnicode_FromString(bp_backend_name(bp_tensor_backend(BPY_T(o))));
}
static PyObject *tensor_ndim(PyObject *o, void *u) { return PyLong_FromLong(bp_tensor_rank(BPY_T(o))); }
static PyObject *tensor_size(PyObject *o, void *u)
{
    return PyLong_FromLongLong(bp_tensor_numel(BPY_T(o)));
}
static PyObject *tensor_nbytes(PyObject *o, void *u)
{
    return PyLong_FromSize_t(bp_tensor_nbytes(BPY_T(o)));
}
static PyObject *tensor_T(PyObject *o, void *u)
{
    bp_tensor *out = NULL;
    bp_status st = bp_transpose(BPY_T(o), NULL, &out);
    return st == BP_OK ? bpy_wrap(out) : bpy_raise(st);
}

static PyGetSetDef tensor_getset[] = {
    {"shape", tensor_shape, NULL, "The extents, a tuple of ints.", NULL},
    {"dtype", tensor_dtype, NULL, "The element type, a backplane.dtype: a str holding NumPy's "
                                  "name ('float32', 'bfloat16'...) that compares equal to NumPy's "
                                  "spellings of it (np.float32, 'f4').", NULL},
    {"backend", tensor_backend, NULL, "The name of the backend holding the tensor: 'blas_cpu:0'.", NULL},
    {"ndim", tensor_ndim, NULL, "The number of axes.", NULL},
    {"size", tensor_size, NULL, "The number of elements.", NULL},
    {"nbytes", tensor_nbytes, NULL, "The bytes of the elements.", NULL},
    {"T", tensor_T, NULL, "The tensor with its axes reversed.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

/* ---- to the host ------------------------------------------------------------------ */

static PyObject *numpy_mod;

static PyObject *get_numpy(void)
{
    if (!numpy_mod)
        numpy_mod = PyImport_ImportModule("numpy");
    return numpy_mod;
}

/* The NumPy dtype for dt: its name, or ml_dtypes' bfloat16. */
static PyObject *numpy_dtype(bp_dtype dt)
{
    if (dt != BP_BF16)
        return PyUnicode_FromString(bpy_dtype_name(dt));
    PyObject *ml = PyImport_ImportModule("ml_dtypes");
    if (!ml) {
        PyErr_Clear();
        return bpy_raise_msg(BP_ERR_DTYPE,
                             "a bfloat16 tensor has no NumPy dtype without the ml_dtypes package: "
                             "pip install ml_dtypes, or backplane.cast(x, 'float32') first");
    }
    PyObject *d = PyObject_GetAttrString(ml, "bfloat16");
    Py_DECREF(ml);
    return d;
}

/* A writable NumPy array holding a copy of the elements (one read). */
static PyObject *tensor_numpy(PyObject *o, PyObject *unused)
{
    bp_tensor *t = BPY_T(o);
    PyObject *np = get_numpy();
    if (!np)
        return NULL;
    PyObject *dtype = numpy_dtype(bp_tensor_dtype(t));
    if (!dtype)
        return NULL;
    size_t n = bp_tensor_nbytes(t);
    PyObject *buf = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)n);
    if (!buf) {
        Py_DECREF(dtype);
        return NULL;
    }
    char *dst = PyByteArray_AsString(buf);
    bp_status st;
    Py_BEGIN_ALLOW_THREADS st = bp_tensor_to_host(t, dst, n);
    Py_END_ALLOW_THREADS
    if (st != BP_OK) {
        Py_DECREF(dtype);
        Py_DECREF(buf);
        return bpy_raise(st);
    }
    PyObject *flat = PyObject_CallMethod(np, "frombuffer", "OO", buf, dtype);
    Py_DECREF(buf);
    Py_DECREF(dtype);
    if (!flat)
        return NULL;
    PyObject *shape = shape_tuple(t);
    PyObject *arr = shape ? PyObject_CallMethod(flat, "reshape", "(O)", shape) : NULL;
    Py_XDECREF(shape);
    Py_DECREF(flat);
    return arr;
}

static PyObject *tensor_array(PyObject *o, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"dtype", "copy", NULL};
    PyObject *dtype = Py_None, *copy = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO:__array__", kwlist, &dtype, &copy))
        return NULL;
    if (copy == Py_False) {
        PyErr_SetString(PyExc_ValueError,
                        "a backplane Tensor is immutable: NumPy gets a copy (np.from_dlpack(t) "
                        "shares the memory read-only where the backend is host memory)");
        return NULL;
    }
    PyObject *arr = tensor_numpy(o, NULL);
    if (!arr || dtype == Py_None)
        return arr;
    PyObject *conv = PyObject_CallMethod(arr, "astype", "(O)", dtype);
    Py_DECREF(arr);
    return conv;
}

/* The elements' bytes, C order, native byte order (one read). */
static PyObject *tensor_tobytes(PyObject *o, PyObject *unused)
{
    bp_tensor *t = BPY_T(o);
    size_t n = bp_tensor_nbytes(t);
    PyObject *b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)n);
    if (!b)
        return NULL;
    char *dst = PyBytes_AsString(b);
    bp_status st;
    Py_BEGIN_ALLOW_THREADS st = bp_tensor_to_host(t, dst, n);
    Py_END_ALLOW_THREADS
    if (st != BP_OK) {
        Py_DECREF(b);
        return bpy_raise(st);
    }
    return b;
}

static PyObject *tensor_tolist(PyObject *o, PyObject *unused)
{
    PyObject *arr = tensor_numpy(o, NULL);
    if (!arr)
        return NULL;
    PyObject *l = PyObject_CallMethod(arr, "tolist", NULL);
    Py_DECREF(arr);
    return l;
}

/* The one element of an integer tensor as a Python int (a u64 exactly). */
static PyObject *int_item(bp_tensor *t)
{
    int64_t v = 0;
    bp_status st;
    Py_BEGIN_ALLOW_THREADS st = bp_item_i64(t, &v); /* checks the element count */
    Py_END_ALLOW_THREADS
    if (st != BP_OK)
        return bpy_raise(st);
    if (bp_tensor_dtype(t) != BP_U64)
        return PyLong_FromLongLong(v);
    uint64_t u = 0;
    Py_BEGIN_ALLOW_THREADS st = bp_tensor_to_host(t, &u, sizeof u);
    Py_END_ALLOW_THREADS
    return st == BP_OK ? PyLong_FromUnsignedLongLong(u) : bpy_raise(st);
}

static PyObject *tensor_item(PyObject *o, PyObject *unused)
{
    bp_tensor *t = BPY_T(o);
    bp_dtype dt = bp_tensor_dtype(t);
    bp_status st;
    if (bp_dtype_is_float(dt)) {
        double v = 0;
        Py_BEGIN_ALLOW_THREADS st = bp_item_f64(t, &v);
        Py_END_ALLOW_THREADS
        return st == BP_OK ? PyFloat_FromDouble(v) : bpy_raise(st);
    }
    if (dt == BP_BOOL) {
        bool v = false;
        Py_BEGIN_ALLOW_THREADS st = bp_item_bool(t, &v);
        Py_END_ALLOW_THREADS
        if (st != BP_OK)
            return bpy_raise(st);
        return PyBool_FromLong(v);
    }
    return int_item(t);
}

static PyObject *tensor_to(PyObject *o, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"backend", NULL};
    PyObject *bo;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O:to", kwlist, &bo))
        return NULL;
    bp_backend *b = NULL;
    if (bpy_backend_arg(bo, &b) < 0)
        return NULL;
    bp_tensor *out = NULL;
    bp_status st;
    Py_BEGIN_ALLOW_THREADS st = bp_backend_copy(BPY_T(o), b, &out);
    Py_END_ALLOW_THREADS
    return st == BP_OK ? bpy_wrap(out) : bpy_raise(st);
}

/* ---- DLPack -------------------------------------------------------------------------- */

static void capsule_destructor(PyObject *capsule)
{
    /* Unconsumed (still "dltensor"): the producer's deleter runs here. */
    if (PyCapsule_IsValid(capsule, "dltensor")) {
        DLManagedTensor *mt = PyCapsule_GetPointer(capsule, "dltensor");
        if (mt && mt->deleter)
            mt->deleter(mt);
    }
}

static PyObject *tensor_dlpack(PyObject *o, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"stream", "max_version", "dl_device", "copy", NULL};
    PyObject *stream = Py_None, *maxv = Py_None, *dev = Py_None, *copy = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|$OOOO:__dlpack__", kwlist, &stream, &maxv,
                                     &dev, &copy))
        return NULL;
    bp_tensor *src = BPY_T(o), *fresh = NULL;
    bp_status st = BP_OK;
    if (copy == Py_True) {
        /* A tensor of its own on the same backend, handed over whole: the
         * consumer may then write to it (np.from_dlpack(t, copy=True)). */
        size_t n = bp_tensor_nbytes(src);
        void *buf = PyMem_Malloc(n ? n : 1);
        if (!buf)
            return PyErr_NoMemory();
        Py_BEGIN_ALLOW_THREADS st = bp_tensor_to_host(src, buf, n);
        if (st == BP_OK)
            st = bp_tensor_from_host(bp_tensor_backend(src), bp_tensor_dtype(src),
                                     bp_tensor_rank(src), bp_tensor_shape(src), buf, &fresh);
        Py_END_ALLOW_THREADS
        PyMem_Free(buf);
        if (st != BP_OK)
            return bpy_raise(st);
        src = fresh;
    }
    DLManagedTensor *mt = NULL;
    Py_BEGIN_ALLOW_THREADS st = bp_tensor_to_dlpack(src, &mt);
    Py_END_ALLOW_THREADS
    bp_tensor_release(fresh); /* the export holds its own reference */
    if (st != BP_OK)
        return bpy_raise(st);
    PyObject *cap = PyCapsule_New(mt, "dltensor", capsule_destructor);
    if (!cap)
        mt->deleter(mt);
    return cap;
}

static PyObject *tensor_dlpack_device(PyObject *o, PyObject *unused)
{
    bp_tensor *t = BPY_T(o);
    if (bpy_backend_is_host(bp_tensor_backend(t)))
        return Py_BuildValue("(ii)", (int)kDLCPU, 0);
    DLManagedTensor *mt = NULL;
    bp_status st;
    Py_BEGIN_ALLOW_THREADS st = bp_tensor_to_dlpack(t, &mt);
    Py_END_ALLOW_THREADS
    if (st != BP_OK)
        return bpy_raise(st);
    DLDevice d = mt->dl_tensor.device;
    mt->deleter(mt);
    return Py_BuildValue("(ii)", (int)d.device_type, (int)d.device_id);
}

int bpy_from_capsule(PyObject *capsule, bp_backend *b, bp_tensor **out);
int bpy_from_capsule(PyObject *capsule, bp_backend *b, bp_tensor **out)
{
    if (!PyCapsule_IsValid(capsule, "dltensor")) {
        PyErr_SetString(PyExc_ValueError, "from_dlpack: not an unconsumed DLPack capsule "
                                          "(named 'dltensor')");
        return -1;
    }
    DLManagedTensor *mt = PyCapsule_GetPointer(capsule, "dltensor");
    bp_status st;
    Py_BEGIN_ALLOW_THREADS st = bp_tensor_from_dlpack(b, (struct DLManagedTensor *)mt, out);
    Py_END_ALLOW_THREADS
    if (st != BP_OK) {
        bpy_raise(st);
        return -1;
    }
    /* The library owns it now: the capsule must not call the deleter. */
    if (PyCapsule_SetName(capsule, "used_dltensor") < 0) {
        bp_tensor_release(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

/* ---- operators ------------------------------------------------------------------------- */

typedef bp_status (*binary_fn)(const bp_tensor *, const bp_tensor *, bp_tensor **);
typedef bp_status (*unary_fn)(const bp_tensor *, bp_tensor **);

/* The operand that is not a Tensor becomes one on the Tensor's backend (a
 * Python scalar in the Tensor's dtype); NotImplemented if it cannot. */
static int operand(PyObject *o, const bp_tensor *peer, bp_tensor **out, int *own)
{
    if (BPY_IS_TENSOR(o)) {
        *out = BPY_T(o);
        *own = 0;
        return 0;
    }
    bpy_hint hint = {bp_tensor_backend(peer), (int)bp_tensor_dtype(peer), 0};
    if (bpy_tensor_arg(o, &hint, -1, out) < 0) {
        /* backplane's own errors (a float scalar with an integer tensor) are
         * the user's to see; an object of an unknown type lets Python try
         * the other operand's method. */
        if (!bpy_error_is_ours() && PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            return 1;
        }
        return -1;
    }
    *own = 1;
    return 0;
}

/* _operand(o, peer): o as an operator would take it beside peer. */
static PyObject *py_operand(PyObject *m, PyObject *args)
{
    PyObject *o, *peer;
    if (!PyArg_ParseTuple(args, "OO!:_operand", &o, bpy_tensor_type, &peer))
        return NULL;
    bp_tensor *t = NULL;
    int own = 0;
    int rc = operand(o, BPY_T(peer), &t, &own);
    if (rc > 0) {
        PyObject *tn = PyObject_GetAttrString((PyObject *)Py_TYPE(o), "__name__");
        PyErr_Format(PyExc_TypeError, "cannot use a %S as a tensor operand", tn);
        Py_XDECREF(tn);
        return NULL;
    }
    if (rc < 0)
        return NULL;
    if (!own)
        bp_tensor_retain(t);
    return bpy_wrap(t);
}

PyObject *bpy_binary_op(PyObject *a, PyObject *b, binary_fn fn)
{
    bp_tensor *ta, *tb, *out = NULL;
    int own_a = 0, own_b = 0;
    if (BPY_IS_TENSOR(a) && BPY_IS_TENSOR(b)) {
        ta = BPY_T(a);
        tb = BPY_T(b);
    } else {
        const bp_tensor *peer = BPY_IS_TENSOR(a) ? BPY_T(a) : BPY_T(b);
        int rc = operand(a, peer, &ta, &own_a);
        if (rc == 0 && (rc = operand(b, peer, &tb, &own_b)) != 0 && own_a)
            bp_tensor_release(ta);
        if (rc > 0)
            Py_RETURN_NOTIMPLEMENTED;
        if (rc < 0)
            return NULL;
    }
    bp_tensor *ins[2] = {ta, tb};
    bp_status st;
    BPY_CALL(st, bpy_release_for(ins, 2), fn(ta, tb, &out));
    if (own_a)
        bp_tensor_release(ta);
    if (own_b)
        bp_tensor_release(tb);
    return st == BP_OK ? bpy_wrap(out) : bpy_raise(st);
}

static PyObject *unary_op(PyObject *a, unary_fn fn)
{
    bp_tensor *out = NULL, *t = BPY_T(a);
    bp_status st;
    BPY_CALL(st, bpy_release_for(&t, 1), fn(t, &out));
    return st == BP_OK ? bpy_wrap(out) : bpy_raise(st);
}

static PyObject *nb_add(PyObject *a, PyObject *b) { return bpy_binary_op(a, b, bp_add); }
static PyObject *nb_sub(PyObject *a, PyObject *b) { return bpy_binary_op(a, b, bp_sub); }
static PyObject *nb_mul(PyObject *a, PyObject *b) { return bpy_binary_op(a, b, bp_mul); }
static PyObject *nb_div(PyObject *a, PyObject *b) { return bpy_binary_op(a, b, bp_div); }
static PyObject *nb_mod(PyObject *a, PyObject *b) { return bpy_binary_op(a, b, bp_mod); }
static PyObject *nb_matmul(PyObject *a, PyObject *b) { return bpy_binary_op(a, b, bp_matmul); }
static PyObject *nb_pow(PyObject *a, PyObject *b, PyObject *m)
{
    if (m != Py_None) {
        PyErr_SetString(PyExc_TypeError, "pow(a, b, mod): backplane has no modular power");
        return NULL;
    }
    return bpy_binary_op(a, b, bp_pow);
}
static bp_status and_fn(const bp_tensor *a, const bp_tensor *b, bp_tensor **o)
{
    return bp_tensor_dtype(a) == BP_BOOL ? bp_logical_and(a, b, o) : bp_bitwise_and(a, b, o);
}
static bp_status or_fn(const bp_tensor *a, const bp_tensor *b, bp_tensor **o)
{
    return bp_tensor_dtype(a) == BP_BOOL ? bp_logical_or(a, b, o) : bp_bitwise_or(a, b, o);
}
static bp_status xor_fn(const bp_tensor *a, const bp_tensor *b, bp_tensor **o)
{
    return bp_tensor_dtype(a) == BP_BOOL ? bp_logical_xor(a, b, o) : bp_bitwise_xor(a, b, o);
}
static bp_status invert_fn(const bp_tensor *a, bp_tensor **o)
{
    return bp_tensor_dtype(a) == BP_BOOL ? bp_logical_not(a, o) : bp_bitwise_not(a, o);
}
static PyObject *nb_and(PyObject *a, PyObject *b) { return bpy_binary_op(a, b, and_fn); }
static PyObject *nb_or(PyObject *a, PyObject *b) { return bpy_binary_op(a, b, or_fn); }
static PyObject *nb_xor(PyObject *a, PyObject *b) { return bpy_binary_op(a, b, xor_fn); }
static PyObject *nb_lshift(PyObject *a, PyObject *b) { return bpy_binary_op(a, b, bp_bitshift_left); }
static PyObject *nb_rshift(PyObject *a, PyObject *b) { return bpy_binary_op(a, b, bp_bitshift_right); }
static PyObject *nb_neg(PyObject *a) { return unary_op(a, bp_neg); }
static PyObject *nb_abs(PyObject *a) { return unary_op(a, bp_abs); }
static PyObject *nb_invert(PyObject *a) { return unary_op(a, invert_fn); }
static PyObject *nb_pos(PyObject *a)
{
    Py_INCREF(a);
    return a;
}

static int one_element(PyObject *o, const char *what)
{
    if (bp_tensor_numel(BPY_T(o)) != 1) {
        bpy_raise_msg(BP_ERR_SHAPE,
                      "%s of a tensor with %lld elements is ambiguous: it needs exactly one "
                      "(use backplane.reduce_any / reduce_all, or index an element)",
                      what, (long long)bp_tensor_numel(BPY_T(o)));
        return -1;
    }
    return 0;
}

static int nb_bool(PyObject *o)
{
    if (one_element(o, "the truth value") < 0)
        return -1;
    double v = 0;
    bp_status st = bp_item_f64(BPY_T(o), &v);
    if (st != BP_OK) {
        bpy_raise(st);
        return -1;
    }
    return v != 0.0;
}

static PyObject *nb_float(PyObject *o)
{
    if (one_element(o, "float()") < 0)
        return NULL;
    double v = 0;
    bp_status st = bp_item_f64(BPY_T(o), &v);
    return st == BP_OK ? PyFloat_FromDouble(v) : bpy_raise(st);
}

static PyObject *nb_int(PyObject *o)
{
    if (one_element(o, "int()") < 0)
        return NULL;
    bp_tensor *t = BPY_T(o);
    if (bp_dtype_is_float(bp_tensor_dtype(t))) {
        double v = 0;
        bp_status st = bp_item_f64(t, &v);
        return st == BP_OK ? PyLong_FromDouble(v) : bpy_raise(st);
    }
    return int_item(t);
}

static PyObject *richcompare(PyObject *a, PyObject *b, int op)
{
    switch (op) {
    case Py_LT: return bpy_binary_op(a, b, bp_lt);
    case Py_LE: return bpy_binary_op(a, b, bp_le);
    case Py_EQ: return bpy_binary_op(a, b, bp_eq);
    case Py_NE: return bpy_binary_op(a, b, bp_ne);
    case Py_GT: return bpy_binary_op(a, b, bp_gt);
    case Py_GE: return bpy_binary_op(a, b, bp_ge);
    }
    Py_RETURN_NOTIMPLEMENTED;
}

/* ---- len, indexing ----------------------------------------------------------------------- */

static Py_ssize_t tensor_len(PyObject *o)
{
    bp_tensor *t = BPY_T(o);
    if (bp_tensor_rank(t) == 0) {
        PyErr_SetString(PyExc_TypeError, "len() of a 0-d tensor");
        return -1;
    }
    return (Py_ssize_t)bp_tensor_shape(t)[0];
}

/* What takes an index the code below does not (an array of indices, a
 * boolean mask): backplane._indexing.getitem(t, key), set by the package. */
static PyObject *index_hook;

static PyObject *set_index_hook(PyObject *m, PyObject *f)
{
    Py_XDECREF(index_hook);
    index_hook = f == Py_None ? NULL : f;
    Py_XINCREF(index_hook);
    Py_RETURN_NONE;
}

/* t[key] = v: a tensor is immutable. The message shows the functional form. */
static int tensor_ass_subscript(PyObject *o, PyObject *key, PyObject *v)
{
    PyErr_SetString(PyExc_TypeError,
                    v ? "a backplane Tensor is immutable: x[i] = v cannot change it; write "
                        "x = x.at[i].set(v) (or .add(v)) for a new tensor with those elements"
                      : "a backplane Tensor is immutable: del x[i] cannot change it");
    return -1;
}

/* A slice key over an axis of extent n as bp_slice's start, stop and step,
 * and the extent it selects; -1 with a Python error. */
static int slice_key(PyObject *k, int64_t n, int64_t *start, int64_t *stop, int64_t *step,
                     int64_t *len)
{
    Py_ssize_t b, e, s;
    if (PySlice_Unpack(k, &b, &e, &s) < 0)
        return -1;
    *len = PySlice_AdjustIndices((Py_ssize_t)n, &b, &e, s);
    if (*len == 0) {
        /* Python's empty slices (x[-10::-1] on 3 elements adjusts to
         * start -1) would read as counting from the end below. */
        b = 0, e = 0, s = 1;
    }
    *start = b;
    /* ONNX Slice reads a negative stop as counting from the end: a
     * negative step that runs to the front says so with INT64_MIN. */
    *stop = (s < 0 && e < 0) ? INT64_MIN : e;
    *step = s;
    return 0;
}

/* An integer key (anything with __index__) over axis `axis` of extent n as
 * the index it selects, in [0, n); -1 with a Python error; 1 when
 * __index__ refuses it and the index hook should take the whole key. */
static int int_key(PyObject *k, int64_t n, int32_t axis, int64_t *index)
{
    PyObject *idx = PyNumber_Index(k);
    if (!idx && index_hook && PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        return 1;
    }
    if (!idx)
        return -1;
    long long v = PyLong_AsLongLong(idx);
    Py_DECREF(idx);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (v < -(long long)n || v >= (long long)n) {
        bpy_raise_msg(BP_ERR_INDEX, "index %lld is out of range for axis %d of extent %lld", v,
                      (int)axis, (long long)n);
        return -1;
    }
    *index = v < 0 ? v + n : v;
    return 0;
}

/* t[key] for ints, slices (any step), Ellipsis and None, alone or in a
 * tuple: one bp_slice, then one bp_reshape that drops the axes indexed by an
 * int and inserts those of None. */
static PyObject *tensor_subscript(PyObject *o, PyObject *key)
{
    bp_tensor *t = BPY_T(o);
    int32_t rank = bp_tensor_rank(t);
    const int64_t *shape = bp_tensor_shape(t);
    PyObject *items = PyTuple_Check(key) ? key : NULL;
    Py_ssize_t nk = items ? PyTuple_Size(items) : 1;
    int64_t starts[BP_MAX_RANK], stops[BP_MAX_RANK], steps[BP_MAX_RANK], out_shape[2 * BP_MAX_RANK];
    int32_t out_rank = 0, axis = 0;
    int sliced = 0, ellipsis = 0, empty = 0;
    Py_ssize_t consuming = 0;
    for (Py_ssize_t i = 0; i < nk; i++) {
        PyObject *k = items ? PyTuple_GetItem(items, i) : key;
        if (k != Py_None && k != Py_Ellipsis && !PyBool_Check(k))
            consuming++;
    }
    if (consuming > rank)
        return bpy_raise_msg(BP_ERR_INDEX, "too many indices for a tensor of rank %d: %zd",
                             (int)rank, consuming);
    for (Py_ssize_t i = 0; i < nk; i++) {
        PyObject *k = items ? PyTuple_GetItem(items, i) : key;
        if (k == Py_None || PyBool_Check(k)) {
            /* NumPy: a bool scalar index adds an axis, of extent 1 for True
             * (as None) and 0 for False (nothing selected). */
            if (out_rank >= 2 * BP_MAX_RANK)
                return bpy_raise_msg(BP_ERR_SHAPE, "too many new axes");
            if (k == Py_False)
                empty = 1;
            out_shape[out_rank++] = k != Py_False;
        } else if (k == Py_Ellipsis) {
            if (ellipsis++)
                return bpy_raise_msg(BP_ERR_INDEX, "an index can only have one ellipsis ('...')");
            for (Py_ssize_t fill = rank - consuming; fill > 0; fill--, axis++) {
                starts[axis] = 0, stops[axis] = shape[axis], steps[axis] = 1;
                out_shape[out_rank++] = shape[axis];
            }
        } else if (PySlice_Check(k)) {
            int64_t len;
            if (slice_key(k, shape[axis], &starts[axis], &stops[axis], &steps[axis], &len) < 0)
                return NULL;
            sliced |= len != shape[axis] || steps[axis] != 1;
            out_shape[out_rank++] = len;
            axis++;
        } else if (!BPY_IS_TENSOR(k) &&
                   (PyLong_Check(k) || PyObject_HasAttrString(k, "__index__"))) {
            int r = int_key(k, shape[axis], axis, &starts[axis]);
            if (r < 0)
                return NULL;
            if (r > 0) /* a NumPy array of indices or a mask: __index__ refuses it */
                return PyObject_CallFunctionObjArgs(index_hook, o, key, NULL);
            stops[axis] = starts[axis] + 1, steps[axis] = 1;
            sliced |= shape[axis] != 1;
            axis++;
        } else if (index_hook) {
            /* arrays of indices or a boolean mask: _indexing.py */
            return PyObject_CallFunctionObjArgs(index_hook, o, key, NULL);
        } else {
            return bpy_raise_msg(BP_ERR_INDEX,
                                 "only integers, slices, '...' and None index a tensor; for "
                                 "tensors of indices use backplane.gather or gather_nd");
        }
    }
    for (; axis < rank; axis++) {
        starts[axis] = 0, stops[axis] = shape[axis], steps[axis] = 1;
        out_shape[out_rank++] = shape[axis];
    }
    if (out_rank > BP_MAX_RANK)
        return bpy_raise_msg(BP_ERR_SHAPE, "the result would have %d axes; at most %d",
                             (int)out_rank, BP_MAX_RANK);
    bp_tensor *s = t, *r = NULL;
    bp_status st;
    if (empty) {
        /* x[False]: no element is selected; the result has the shape the
         * index gives, with the False axis (and so the whole) empty. */
        st = bp_zeros(bp_tensor_backend(t), bp_tensor_dtype(t), out_rank, out_shape, &r);
        return st == BP_OK ? bpy_wrap(r) : bpy_raise(st);
    }
    if (sliced) {
        BPY_CALL(st, bpy_release_for(&t, 1), bp_slice(t, starts, stops, steps, &s));
        if (st != BP_OK)
            return bpy_raise(st);
    }
    st = bp_reshape(s, out_rank, out_shape, &r);
    if (sliced)
        bp_tensor_release(s);
    return st == BP_OK ? bpy_wrap(r) : bpy_raise(st);
}

/* iter(t): over the first axis, as NumPy; a 0-d tensor is not iterable
 * (the sequence protocol alone would end at once on its IndexError). */
static PyObject *tensor_iter(PyObject *o)
{
    if (bp_tensor_rank(BPY_T(o)) == 0) {
        PyErr_SetString(PyExc_TypeError, "iteration over a 0-d tensor (use .item() for its "
                                         "value)");
        return NULL;
    }
    return PySeqIter_New(o);
}

static PyObject *tensor_item_at(PyObject *o, Py_ssize_t i)
{
    PyObject *k = PyLong_FromSsize_t(i);
    if (!k)
        return NULL;
    PyObject *r = tensor_subscript(o, k);
    Py_DECREF(k);
    return r;
}

/* ---- printing ------------------------------------------------------------------------- */

/* The library's NumPy-style text, without its header line. */
static PyObject *tensor_str(PyObject *o)
{
    size_t size = 8192;
    for (;;) {
        char *buf = PyMem_Malloc(size);
        if (!buf)
            return PyErr_NoMemory();
        bp_status st;
        Py_BEGIN_ALLOW_THREADS st = bp_tensor_format(BPY_T(o), buf, size, NULL);
        Py_END_ALLOW_THREADS
        if (st == BP_OK) {
            const char *body = strchr(buf, '\n');
            body = body ? body + 1 : buf;
            size_t n = strlen(body);
            while (n && body[n - 1] == '\n')
                n--;
            PyObject *s = PyUnicode_FromStringAndSize(body, (Py_ssize_t)n);
            PyMem_Free(buf);
            return s;
        }
        PyMem_Free(buf);
        if (st != BP_ERR_INVALID_ARGUMENT || size >= ((size_t)1 << 26))
            return bpy_raise(st);
        size *= 4;
    }
}

static PyObject *tensor_repr(PyObject *o)
{
    if (repr_hook)
        return PyObject_CallFunctionObjArgs(repr_hook, o, NULL);
    return tensor_str(o);
}

static PyObject *set_repr(PyObject *m, PyObject *f)
{
    Py_XDECREF(repr_hook);
    repr_hook = f == Py_None ? NULL : f;
    Py_XINCREF(repr_hook);
    Py_RETURN_NONE;
}

static PyMethodDef tensor_methods[] = {
    {"numpy", tensor_numpy, METH_NOARGS,
     "numpy() -> numpy.ndarray: a copy of the elements (bfloat16 needs ml_dtypes)."},
    {"__array__", (PyCFunction)(void (*)(void))tensor_array, METH_VARARGS | METH_KEYWORDS,
     "NumPy's array protocol: a copy."},
    {"tolist", tensor_tolist, METH_NOARGS, "tolist() -> nested lists of Python scalars."},
    {"tobytes", tensor_tobytes, METH_NOARGS,
     "tobytes() -> bytes: the elements in C order and the machine's byte order (a copy)."},
    {"item", tensor_item, METH_NOARGS,
     "item() -> the value of a one-element tensor as a Python float, int or bool."},
    {"to", (PyCFunction)(void (*)(void))tensor_to, METH_VARARGS | METH_KEYWORDS,
     "to(backend) -> Tensor: an explicit copy to another backend (the same tensor if it is "
     "already there)."},
    {"__dlpack__", (PyCFunction)(void (*)(void))tensor_dlpack, METH_VARARGS | METH_KEYWORDS,
     "DLPack export, without a copy (read-only for the consumer: tensors are immutable)."},
    {"__dlpack_device__", tensor_dlpack_device, METH_NOARGS,
     "(device_type, device_id) as DLPack numbers them."},
    {NULL, NULL, 0, NULL}};

static PyType_Slot tensor_slots[] = {
    {Py_tp_dealloc, tensor_dealloc},
    {Py_tp_repr, tensor_repr},
    {Py_tp_str, tensor_str},
    {Py_tp_hash, PyObject_HashNotImplemented},
    {Py_tp_getset, tensor_getset},
    {Py_tp_methods, tensor_methods},
    {Py_tp_richcompare, richcompare},
    {Py_nb_add, nb_add},
    {Py_nb_subtract, nb_sub},
    {Py_nb_multiply, nb_mul},
    {Py_nb_true_divide, nb_div},
    {Py_nb_remainder, nb_mod},
    {Py_nb_power, nb_pow},
    {Py_nb_matrix_multiply, nb_matmul},
    {Py_nb_and, nb_and},
    {Py_nb_or, nb_or},
    {Py_nb_xor, nb_xor},
    {Py_nb_lshift, nb_lshift},
    {Py_nb_rshift, nb_rshift},
    {Py_nb_negative, nb_neg},
    {Py_nb_positive, nb_pos},
    {Py_nb_absolute, nb_abs},
    {Py_nb_invert, nb_invert},
    {Py_nb_bool, nb_bool},
    {Py_nb_float, nb_float},
    {Py_nb_int, nb_int},
    {Py_mp_length, tensor_len},
    {Py_mp_subscript, tensor_subscript},
    {Py_mp_ass_subscript, tensor_ass_subscript},
    {Py_sq_length, tensor_len},
    {Py_sq_item, tensor_item_at},
    {Py_tp_iter, tensor_iter},
    {Py_tp_doc, "An immutable n-dimensional array on one backend. Make one with "
                "backplane.asarray (or an op); Tensor.to(backend) copies it explicitly."},
    {0, NULL}};
static PyType_Spec tensor_spec = {"backplane.Tensor", sizeof(bpy_tensor), 0, Py_TPFLAGS_DEFAULT,
                                  tensor_slots};

static PyMethodDef hook_methods[] = {
    {"_set_repr", set_repr, METH_O, "Register the function that makes repr(Tensor)."},
    {"_operand", py_operand, METH_VARARGS,
     "_operand(o, peer) -> Tensor: o as an operator takes it beside the Tensor peer."},
    {"_set_dtypes", set_dtypes, METH_O, "Register the dtype objects Tensor.dtype returns, one per dtype."},
    {"_set_index_hook", set_index_hook, METH_O,
     "Register the function that takes the indices Tensor's own indexing does not."},
    {NULL, NULL, 0, NULL}};

int bpy_tensor_type_init(PyObject *m)
{
    bpy_tensor_type = (PyTypeObject *)PyType_FromSpec(&tensor_spec);
    if (!bpy_tensor_type)
        return -1;
    /* NumPy's operators defer to ours (t + array runs here, on t's backend). */
    if (PyObject_SetAttrString((PyObject *)bpy_tensor_type, "__array_ufunc__", Py_None) < 0)
        return -1;
    Py_INCREF(bpy_tensor_type);
    if (PyModule_AddObject(m, "Tensor", (PyObject *)bpy_tensor_type) < 0)
        return -1;
    return PyModule_AddFunctions(m, hook_methods);
}

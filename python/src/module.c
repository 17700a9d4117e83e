/* backplane's Python extension: the module, its exceptions, contexts and
 * backends, and the functions that are not ops (ops_generated.c has those). */
#include "bpy.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <dlpack/dlpack.h>

PyTypeObject *bpy_backend_type;
PyTypeObject *bpy_context_type;

/* ---- exceptions ------------------------------------------------------------- */

/* One class per status, deriving from backplane.Error and, where one fits,
 * the builtin a Python programmer would catch. */
typedef struct {
    bp_status status;
    const char *name;
    const char *doc;
} bpy_error_spec;

static const bpy_error_spec ERROR_SPECS[] = {
    {BP_ERR_INVALID_ARGUMENT, "InvalidArgumentError", "An argument backplane refuses (ValueError)."},
    {BP_ERR_SHAPE, "ShapeError", "Shapes that do not fit the op (ValueError)."},
    {BP_ERR_DTYPE, "DTypeError", "A dtype the op does not accept, or operands that differ (TypeError)."},
    {BP_ERR_BACKEND_MISMATCH, "BackendMismatchError", "Tensors of two backends in one op; Tensor.to() moves one."},
    {BP_ERR_UNSUPPORTED_OP, "UnsupportedOpError", "The backend does not implement the op for the dtype (NotImplementedError)."},
    {BP_ERR_UNSUPPORTED_DEVICE, "UnsupportedDeviceError", "A device this backend's build cannot use."},
    {BP_ERR_PLUGIN, "PluginError", "A backend plugin that could not be loaded or is invalid."},
    {BP_ERR_CONFIG, "ConfigError", "An invalid configuration file or setting."},
    {BP_ERR_OUT_OF_MEMORY, "OutOfMemoryError", "Out of memory on the host or a device (MemoryError)."},
    {BP_ERR_IO, "IOError", "A file that could not be read or written (OSError)."},
    {BP_ERR_FORMAT, "FormatError", "Malformed data, e.g. a broken safetensors file (ValueError)."},
    {BP_ERR_BACKEND, "BackendError", "A failure inside a backend (RuntimeError)."},
    {BP_ERR_NOT_FOUND, "NotFoundError", "A backend, plugin or tensor name that does not exist (LookupError)."},
    {BP_ERR_INDEX, "IndexError", "An index out of range (IndexError)."},
};
#define N_ERROR_SPECS (sizeof ERROR_SPECS / sizeof ERROR_SPECS[0])

/* Every status but BP_OK has a class: the build fails when one is added to
 * status.h without one here. */
#define BPY__COUNT_STATUS(name, value, msg) +1
_Static_assert(N_ERROR_SPECS == (0 BP_STATUS_LIST(BPY__COUNT_STATUS)) - 1,
               "status.h gained a status: give it an exception class in ERROR_SPECS");

static PyObject *bpy_error_base;
static PyObject *bpy_errors[N_ERROR_SPECS + 1];

static PyObject *error_class(bp_status st)
{
    for (size_t i = 0; i < N_ERROR_SPECS; i++)
        if (ERROR_SPECS[i].status == st)
            return bpy_errors[i];
    return bpy_error_base;
}

/* backplane._python_message: rewrites the C library's hints (bp_cast,
 * bp_backend_copy(...)) in Python's terms; set by the package. */
static PyObject *message_hook;

static PyObject *set_message_hook(PyObject *m, PyObject *f)
{
    Py_XDECREF(message_hook);
    message_hook = f == Py_None ? NULL : f;
    Py_XINCREF(message_hook);
    Py_RETURN_NONE;
}

/* Raise cls with the text msg: bytes a library message may hold that are
 * not UTF-8 (an input's raw byte quoted back) are escaped, never allowed to
 * turn the error into an empty one or a UnicodeDecodeError. */
static void raise_text(PyObject *cls, const char *msg)
{
    PyObject *text = PyUnicode_DecodeUTF8(msg, (Py_ssize_t)strlen(msg), "backslashreplace");
    if (text && message_hook) {
        PyObject *py = PyObject_CallFunctionObjArgs(message_hook, text, NULL);
        if (py && PyUnicode_Check(py)) {
            Py_DECREF(text);
            text = py;
        } else {
            Py_XDECREF(py);
            PyErr_Clear(); /* the library's own words are still right */
        }
    }
    if (!text)
        return; /* the decoding's MemoryError stands */
    PyErr_SetObject(cls, text);
    Py_DECREF(text);
}

PyObject *bpy_raise(bp_status st)
{
    const char *msg = bp_last_error();
    if (!msg || !*msg)
        msg = bp_status_message(st);
    raise_text(error_class(st), msg);
    return NULL;
}

PyObject *bpy_raise_msg(bp_status st, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    raise_text(error_class(st), buf);
    return NULL;
}

int bpy_error_is_ours(void)
{
    return bpy_error_base && PyErr_ExceptionMatches(bpy_error_base);
}

static PyObject *builtin_base(bp_status st)
{
    switch (st) {
    case BP_ERR_INVALID_ARGUMENT: case BP_ERR_SHAPE: case BP_ERR_FORMAT: return PyExc_ValueError;
    case BP_ERR_DTYPE: return PyExc_TypeError;
    case BP_ERR_UNSUPPORTED_OP: return PyExc_NotImplementedError;
    case BP_ERR_OUT_OF_MEMORY: return PyExc_MemoryError;
    case BP_ERR_IO: return PyExc_OSError;
    case BP_ERR_BACKEND: return PyExc_RuntimeError;
    case BP_ERR_NOT_FOUND: return PyExc_LookupError;
    case BP_ERR_INDEX: return PyExc_IndexError;
    default: return NULL;
    }
}

static int add_errors(PyObject *m)
{
    bpy_error_base = PyErr_NewExceptionWithDoc(
        "backplane.Error",
        "Every error backplane raises; .status is the library's status name "
        "(\"BP_ERR_SHAPE\"), the message its detailed one.",
        NULL, NULL);
    if (!bpy_error_base)
        return -1;
    Py_INCREF(bpy_error_base);
    if (PyModule_AddObject(m, "Error", bpy_error_base) < 0)
        return -1;
    for (size_t i = 0; i < N_ERROR_SPECS; i++) {
        const bpy_error_spec *s = &ERROR_SPECS[i];
        PyObject *builtin = builtin_base(s->status);
        PyObject *bases = builtin ? PyTuple_Pack(2, bpy_error_base, builtin)
                                  : PyTuple_Pack(1, bpy_error_base);
        if (!bases)
            return -1;
        char qual[96];
        snprintf(qual, sizeof qual, "backplane.%s", s->name);
        PyObject *dict = Py_BuildValue("{s:s}", "status", bp_status_string(s->status));
        bpy_errors[i] = dict ? PyErr_NewExceptionWithDoc(qual, s->doc, bases, dict) : NULL;
        Py_DECREF(bases);
        Py_XDECREF(dict);
        if (!bpy_errors[i])
            return -1;
        Py_INCREF(bpy_errors[i]);
        if (PyModule_AddObject(m, s->name, bpy_errors[i]) < 0)
            return -1;
    }
    return 0;
}

/* ---- contexts ------------------------------------------------------------- */

static bpy_context *default_ctx;

static PyObject *context_make(PyTypeObject *type, PyObject *config)
{
    const char *path = NULL;
    PyObject *bytes = NULL;
    if (config && config != Py_None) {
        bytes = bpy_path_cstr(config);
        if (!bytes)
            return NULL;
        path = PyBytes_AsString(bytes);
    }
    bp_context *ctx = NULL;
    bp_status st;
    Py_BEGIN_ALLOW_THREADS st = bp_context_create(path, &ctx);
    Py_END_ALLOW_THREADS
    Py_XDECREF(bytes);
    if (st != BP_OK)
        return bpy_raise(st);
    bpy_context *self = PyObject_New(bpy_context, type);
    if (!self) {
        bp_context_destroy(ctx);
        return NULL;
    }
    self->ctx = ctx;
    self->config = config ? config : Py_None;
    Py_INCREF(self->config);
    self->default_b = NULL;
    return (PyObject *)self;
}

static PyObject *context_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"config", NULL};
    PyObject *config = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:Context", kwlist, &config))
        return NULL;
    return context_make(type, config);
}

static void context_dealloc(PyObject *o)
{
    bpy_context *self = (bpy_context *)o;
    PyTypeObject *type = Py_TYPE(o);
    /* Tensors of this context that are still alive keep it (the library
     * destroys it with the last of them). */
    bp_context_destroy(self->ctx);
    Py_XDECREF(self->config);
    freefunc free_fn = (freefunc)PyType_GetSlot(type, Py_tp_free);
    free_fn(o);
    Py_DECREF(type);
}

bpy_context *bpy_default_context(void)
{
    if (!default_ctx)
        default_ctx = (bpy_context *)context_make(bpy_context_type, NULL);
    return default_ctx;
}

static int context_default_backend(bpy_context *c, bp_backend **out)
{
    if (!c->default_b) {
        bp_status st;
        Py_BEGIN_ALLOW_THREADS st = bp_backend_default(c->ctx, &c->default_b);
        Py_END_ALLOW_THREADS
        if (st != BP_OK) {
            c->default_b = NULL;
            bpy_raise(st);
            return -1;
        }
    }
    *out = c->default_b;
    return 0;
}

static int context_get(bpy_context *c, PyObject *name, bp_backend **out)
{
    if (name == Py_None)
        return context_default_backend(c, out);
    PyObject *bytes = bpy_utf8_cstr(name, "backend name");
    if (!bytes)
        return -1;
    bp_status st;
    const char *s = PyBytes_AsString(bytes);
    Py_BEGIN_ALLOW_THREADS st = bp_backend_get(c->ctx, s, out);
    Py_END_ALLOW_THREADS
    Py_DECREF(bytes);
    if (st != BP_OK) {
        bpy_raise(st);
        return -1;
    }
    return 0;
}

static PyObject *context_backend(PyObject *o, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"name", NULL};
    PyObject *name = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:backend", kwlist, &name))
        return NULL;
    if (name != Py_None && !PyUnicode_Check(name)) {
        PyErr_SetString(PyExc_TypeError, "backend(name): name must be a str or None");
        return NULL;
    }
    bp_backend *b = NULL;
    if (context_get((bpy_context *)o, name, &b) < 0)
        return NULL;
    return bpy_backend_object(b, o);
}

/* The backends that open here: each plugin's devices, as bp_backend_get
 * takes their names ("binary", "cuda:1"). */
static PyObject *context_backends(PyObject *o, PyObject *unused)
{
    bpy_context *c = (bpy_context *)o;
    PyObject *list = PyList_New(0);
    if (!list)
        return NULL;
    size_t n = bp_context_plugin_count(c->ctx);
    for (size_t i = 0; i < n; i++) {
        Py_BEGIN_ALLOW_THREADS bp_context_plugin_open(c->ctx, i);
        Py_END_ALLOW_THREADS
        bp_plugin_record rec = {.struct_size = sizeof rec};
        if (bp_context_plugin(c->ctx, i, &rec) != BP_OK || !rec.loaded || !rec.opened)
            continue;
        for (int32_t d = 0; d < rec.device_count; d++) {
            PyObject *s = d == 0 ? PyUnicode_FromString(rec.name)
                                 : PyUnicode_FromFormat("%s:%d", rec.name, (int)d);
            if (!s || PyList_Append(list, s) < 0) {
                Py_XDECREF(s);
                Py_DECREF(list);
                return NULL;
            }
            Py_DECREF(s);
        }
    }
    return list;
}

static PyObject *context_repr(PyObject *o)
{
    bpy_context *c = (bpy_context *)o;
    const char *path = bp_context_config_path(c->ctx);
    return path ? PyUnicode_FromFormat("Context(config='%s')", path)
                : PyUnicode_FromString("Context(config=None)");
}

static PyObject *context_info(PyObject *o, PyObject *unused);

static PyMethodDef context_methods[] = {
    {"backend", (PyCFunction)(void (*)(void))context_backend, METH_VARARGS | METH_KEYWORDS,
     "backend(name=None) -> Backend: by name ('blas_cpu', 'cuda:1'), or the default "
     "backend of this context's preference list."},
    {"backends", context_backends, METH_NOARGS,
     "backends() -> list of the names of the backends that open here."},
    {"info", context_info, METH_NOARGS, "info() -> dict: what `backplane info --json` shows."},
    {NULL, NULL, 0, NULL}};

static PyType_Slot context_slots[] = {
    {Py_tp_new, context_new},
    {Py_tp_dealloc, context_dealloc},
    {Py_tp_methods, context_methods},
    {Py_tp_repr, context_repr},
    {Py_tp_doc, "Context(config=None): a backplane context read from an ini file (None: the "
                "layered defaults, $BP_CONFIG first). The module keeps a default one."},
    {0, NULL}};
static PyType_Spec context_spec = {"backplane.Context", sizeof(bpy_context), 0,
                                   Py_TPFLAGS_DEFAULT, context_slots};

/* ---- backends ------------------------------------------------------------- */

PyObject *bpy_backend_object(bp_backend *b, PyObject *ctx)
{
    bpy_backend *self = PyObject_New(bpy_backend, bpy_backend_type);
    if (!self)
        return NULL;
    self->b = b;
    if (!ctx)
        ctx = (PyObject *)bpy_default_context();
    self->context = ctx;
    Py_XINCREF(ctx);
    return (PyObject *)self;
}

static void backend_dealloc(PyObject *o)
{
    PyTypeObject *type = Py_TYPE(o);
    Py_XDECREF(((bpy_backend *)o)->context);
    freefunc free_fn = (freefunc)PyType_GetSlot(type, Py_tp_free);
    free_fn(o);
    Py_DECREF(type);
}

static PyObject *backend_repr(PyObject *o)
{
    return PyUnicode_FromFormat("Backend('%s')", bp_backend_name(((bpy_backend *)o)->b));
}

static PyObject *backend_get_name(PyObject *o, void *unused)
{
    return PyUnicode_FromString(bp_backend_name(((bpy_backend *)o)->b));
}

static PyObject *backend_get_plugin(PyObject *o, void *unused)
{
    return PyUnicode_FromString(bp_backend_plugin_name(((bpy_backend *)o)->b));
}

static PyObject *backend_richcompare(PyObject *a, PyObject *b, int op)
{
    if ((op != Py_EQ && op != Py_NE) || Py_TYPE(b) != bpy_backend_type)
        Py_RETURN_NOTIMPLEMENTED;
    int same = ((bpy_backend *)a)->b == ((bpy_backend *)b)->b;
    if ((op == Py_EQ) == same)
        Py_RETURN_TRUE;
    Py_RETURN_FALSE;
}

static Py_hash_t backend_hash(PyObject *o)
{
    Py_hash_t h = (Py_hash_t)(((uintptr_t)((bpy_backend *)o)->b) >> 4);
    return h == -1 ? -2 : h;
}

static PyGetSetDef backend_getset[] = {
    {"name", backend_get_name, NULL, "The backend's name, e.g. 'blas_cpu:0'.", NULL},
    {"plugin", backend_get_plugin, NULL, "The plugin's name, e.g. 'blas_cpu'.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot backend_slots[] = {
    {Py_tp_dealloc, backend_dealloc},
    {Py_tp_repr, backend_repr},
    {Py_tp_str, backend_get_name},
    {Py_tp_getset, backend_getset},
    {Py_tp_richcompare, backend_richcompare},
    {Py_tp_hash, backend_hash},
    {Py_tp_doc, "One device of one backend plugin (backplane.backend(name) makes one)."},
    {0, NULL}};
static PyType_Spec backend_spec = {"backplane.Backend", sizeof(bpy_backend), 0,
                                   Py_TPFLAGS_DEFAULT, backend_slots};

int bpy_backend_arg(PyObject *o, bp_backend **out)
{
    if (o == NULL || o == Py_None) {
        bpy_context *c = bpy_default_context();
        return c ? context_default_backend(c, out) : -1;
    }
    if (Py_TYPE(o) == bpy_backend_type) {
        *out = ((bpy_backend *)o)->b;
        return 0;
    }
    if (PyUnicode_Check(o)) {
        bpy_context *c = bpy_default_context();
        return c ? context_get(c, o, out) : -1;
    }
    if (BPY_IS_TENSOR(o)) { /* the backend it lives on (a graph's, while tracing) */
        *out = bp_tensor_backend(BPY_T(o));
        return 0;
    }
    PyErr_SetString(PyExc_TypeError,
                    "backend must be a backplane.Backend, a backend name such as 'blas_cpu', "
                    "a Tensor (the backend it lives on), or None");
    return -1;
}

/* Whether a backend's buffers are host memory, asked once per backend. */
#define HOST_CACHE 32
static struct {
    bp_backend *b;
    int host;
} host_cache[HOST_CACHE];

int bpy_backend_is_host(bp_backend *b)
{
    bp_backend *real = bpy_real_backend(b); /* a graph's: its device's answer */
    if (real)
        b = real;
    for (int i = 0; i < HOST_CACHE; i++) {
        if (host_cache[i].b == b)
            return host_cache[i].host;
        if (!host_cache[i].b) {
            bp_device_info info = {.struct_size = sizeof info};
            int host = bp_backend_device_info(b, &info) == BP_OK && info.host_addressable;
            host_cache[i].b = b;
            host_cache[i].host = host;
            return host;
        }
    }
    return 0;
}

int bpy_release_for(bp_tensor *const *ts, int n)
{
    int64_t total = 0;
    for (int i = 0; i < n; i++) {
        if (!ts[i])
            continue;
        if (!bpy_backend_is_host(bp_tensor_backend(ts[i])))
            return 1;
        total += bp_tensor_numel(ts[i]);
    }
    return total >= BPY_GIL_ELEMENTS;
}

/* ---- module functions ------------------------------------------------------ */

static PyObject *mod_backends(PyObject *m, PyObject *unused)
{
    bpy_context *c = bpy_default_context();
    return c ? context_backends((PyObject *)c, NULL) : NULL;
}

static PyObject *mod_backend(PyObject *m, PyObject *args, PyObject *kw)
{
    bpy_context *c = bpy_default_context();
    return c ? context_backend((PyObject *)c, args, kw) : NULL;
}

static PyObject *mod_synchronize(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"backend", NULL};
    PyObject *bo = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:synchronize", kwlist, &bo))
        return NULL;
    bp_backend *b = NULL;
    if (bpy_backend_arg(bo, &b) < 0)
        return NULL;
    bp_status st;
    Py_BEGIN_ALLOW_THREADS st = bp_synchronize(b);
    Py_END_ALLOW_THREADS
    if (st != BP_OK)
        return bpy_raise(st);
    Py_RETURN_NONE;
}

static PyObject *mod_stats(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"backend", "reset", NULL};
    PyObject *bo = Py_None;
    int reset = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|Op:stats", kwlist, &bo, &reset))
        return NULL;
    bp_backend *b = NULL;
    if (bpy_backend_arg(bo, &b) < 0)
        return NULL;
    bp_stats s = {.struct_size = sizeof s};
    bp_status st = bp_backend_stats(b, &s);
    if (st != BP_OK)
        return bpy_raise(st);
    if (reset && (st = bp_backend_stats_reset(b)) != BP_OK)
        return bpy_raise(st);
    return Py_BuildValue(
        "{s:s,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K}", "backend",
        bp_backend_name(b), "ops", (unsigned long long)s.ops, "h2d_calls",
        (unsigned long long)s.h2d_calls, "h2d_bytes", (unsigned long long)s.h2d_bytes,
        "d2h_calls", (unsigned long long)s.d2h_calls, "d2h_bytes",
        (unsigned long long)s.d2h_bytes, "copies_in", (unsigned long long)s.copies_in,
        "copies_in_bytes", (unsigned long long)s.copies_in_bytes, "copies_out",
        (unsigned long long)s.copies_out, "copies_out_bytes",
        (unsigned long long)s.copies_out_bytes, "copy_hits", (unsigned long long)s.copy_hits,
        "sync_reads", (unsigned long long)s.sync_reads, "allocs", (unsigned long long)s.allocs,
        "bytes_in_use", (unsigned long long)s.bytes_in_use, "peak_bytes_in_use",
        (unsigned long long)s.peak_bytes_in_use);
}

static PyObject *mod_info(PyObject *m, PyObject *unused)
{
    bpy_context *c = bpy_default_context();
    return c ? context_info((PyObject *)c, NULL) : NULL;
}

/* Set d[key] = value (a new reference, stolen); -1 on failure. */
static int set_item(PyObject *d, const char *key, PyObject *value)
{
    if (!value)
        return -1;
    int rc = PyDict_SetItemString(d, key, value);
    Py_DECREF(value);
    return rc;
}

static PyObject *str_or_none(const char *s)
{
    if (s)
        return PyUnicode_FromString(s);
    Py_RETURN_NONE;
}

static const char *level_name(bp_log_level l)
{
    switch (l) {
    case BP_LOG_DEBUG: return "debug";
    case BP_LOG_INFO: return "info";
    case BP_LOG_WARN: return "warn";
    case BP_LOG_ERROR: return "error";
    case BP_LOG_OFF: return "off";
    }
    return "?";
}

static PyObject *device_dict(bp_context *ctx, const char *plugin, int32_t d)
{
    char name[160];
    snprintf(name, sizeof name, "%s:%d", plugin, (int)d);
    PyObject *dev = PyDict_New();
    if (!dev || set_item(dev, "backend", PyUnicode_FromString(name)) < 0)
        goto fail;
    bp_backend *b = NULL;
    bp_status st;
    Py_BEGIN_ALLOW_THREADS st = bp_backend_get(ctx, name, &b);
    Py_END_ALLOW_THREADS
    if (set_item(dev, "status", PyUnicode_FromString(bp_status_string(st))) < 0)
        goto fail;
    if (st != BP_OK)
        return set_item(dev, "status_error", PyUnicode_FromString(bp_last_error())) < 0 ? NULL
                                                                                         : dev;
    bp_device_info info = {.struct_size = sizeof info};
    st = bp_backend_device_info(b, &info);
    if (st == BP_OK) {
        if (set_item(dev, "info",
                     Py_BuildValue("{s:s,s:s,s:O}", "name", info.name, "detail", info.detail,
                                   "host_addressable",
                                   info.host_addressable ? Py_True : Py_False)) < 0)
            goto fail;
    } else if (PyDict_SetItemString(dev, "info", Py_None) < 0 ||
               set_item(dev, "info_status", PyUnicode_FromString(bp_status_string(st))) < 0 ||
               set_item(dev, "info_status_error", PyUnicode_FromString(bp_last_error())) < 0) {
        goto fail;
    }
    bp_memory_info mem = {.struct_size = sizeof mem};
    st = bp_backend_memory_info(b, &mem);
    if (st == BP_OK) {
        if (set_item(dev, "memory",
                     Py_BuildValue("{s:K,s:K,s:K,s:K}", "used", (unsigned long long)mem.used,
                                   "reserved", (unsigned long long)mem.reserved, "device_free",
                                   (unsigned long long)mem.device_free, "device_total",
                                   (unsigned long long)mem.device_total)) < 0)
            goto fail;
    } else if (PyDict_SetItemString(dev, "memory", Py_None) < 0 ||
               set_item(dev, "memory_status", PyUnicode_FromString(bp_status_string(st))) < 0 ||
               set_item(dev, "memory_status_error",
                        PyUnicode_FromString("not reported by this backend")) < 0) {
        goto fail;
    }
    return dev;
fail:
    Py_XDECREF(dev);
    return NULL;
}

static PyObject *plugin_dict(bp_context *ctx, size_t i)
{
    Py_BEGIN_ALLOW_THREADS bp_context_plugin_open(ctx, i);
    Py_END_ALLOW_THREADS
    bp_plugin_record rec = {.struct_size = sizeof rec};
    bp_status st = bp_context_plugin(ctx, i, &rec);
    if (st != BP_OK)
        return Py_BuildValue("{s:s,s:s}", "record", bp_status_string(st), "record_error",
                             bp_last_error());
    PyObject *keys = PyList_New(0);
    for (const bp_config_key *k = rec.config_keys; keys && k && k->name; k++) {
        PyObject *kd = Py_BuildValue("{s:s,s:s,s:s}", "name", k->name, "help",
                                     k->help ? k->help : "", "default",
                                     k->default_value ? k->default_value : "");
        if (!kd || PyList_Append(keys, kd) < 0) {
            Py_XDECREF(kd);
            Py_CLEAR(keys);
        }
        Py_XDECREF(kd);
    }
    PyObject *devices = keys ? PyList_New(0) : NULL;
    for (int32_t d = 0; devices && rec.opened && d < rec.device_count; d++) {
        PyObject *dev = device_dict(ctx, rec.name, d);
        if (!dev || PyList_Append(devices, dev) < 0)
            Py_CLEAR(devices);
        Py_XDECREF(dev);
    }
    if (!devices) {
        Py_XDECREF(keys);
        return NULL;
    }
    return Py_BuildValue("{s:s,s:s,s:s,s:O,s:O,s:s,s:s,s:{s:I,s:I},s:i,s:N,s:N}", "name",
                         rec.name, "path", rec.path, "version", rec.version ? rec.version : "",
                         "loaded", rec.loaded ? Py_True : Py_False, "opened",
                         rec.opened ? Py_True : Py_False, "status",
                         bp_status_string(rec.status), "message",
                         rec.message ? rec.message : "", "abi", "major",
                         (unsigned)rec.abi_major, "minor", (unsigned)rec.abi_minor,
                         "device_count", (int)rec.device_count, "config_keys", keys, "devices",
                         devices);
}

/* The facts of `backplane info --json`, as a dict with the same keys. */
static PyObject *context_info(PyObject *o, PyObject *unused)
{
    bp_context *ctx = ((bpy_context *)o)->ctx;
    PyObject *d = PyDict_New();
    if (!d)
        return NULL;
    static const char *const env_vars[] = {"BP_CONFIG", "BP_DEFAULT_BACKEND", "BP_LOG_LEVEL",
                                           "BP_PLUGIN_PATH", "XDG_CONFIG_HOME"};
    PyObject *env = PyDict_New();
    for (size_t i = 0; env && i < sizeof env_vars / sizeof env_vars[0]; i++) {
        const char *v = getenv(env_vars[i]);
        if (v && set_item(env, env_vars[i], PyUnicode_FromString(v)) < 0)
            Py_CLEAR(env);
    }
    if (set_item(d, "version", PyUnicode_FromString(bp_version())) < 0 ||
        set_item(d, "abi", Py_BuildValue("{s:i,s:i}", "major", BP_ABI_MAJOR, "minor",
                                         BP_ABI_MINOR)) < 0 ||
        set_item(d, "config", str_or_none(bp_context_config_path(ctx))) < 0 ||
        set_item(d, "log_level", PyUnicode_FromString(level_name(bp_context_log_level(ctx)))) < 0 ||
        set_item(d, "environment", env) < 0)
        goto fail;
    /* every plugin loaded and opened first, as `backplane info` does: a
     * [backend.NAME] key counts as used once its plugin has declared it */
    for (size_t i = 0; i < bp_context_plugin_count(ctx); i++) {
        bp_plugin_record rec = {.struct_size = sizeof rec};
        bp_backend *be = NULL;
        if (bp_context_plugin(ctx, i, &rec) == BP_OK && !rec.loaded)
            (void)bp_backend_get(ctx, rec.name, &be); /* a refusal is in the plugin's record */
    }
    PyObject *settings = PyList_New(0);
    size_t ns = bp_context_setting_count(ctx);
    for (size_t i = 0; settings && i < ns; i++) {
        bp_setting s = {.struct_size = sizeof s};
        if (bp_context_setting(ctx, i, &s) != BP_OK)
            continue;
        PyObject *sd = Py_BuildValue("{s:s,s:s,s:s,s:s,s:O}", "section", s.section, "key", s.key,
                                     "value", s.value, "origin", s.origin, "used",
                                     s.used ? Py_True : Py_False);
        if (!sd || PyList_Append(settings, sd) < 0)
            Py_CLEAR(settings);
        Py_XDECREF(sd);
    }
    if (set_item(d, "settings", settings) < 0)
        goto fail;
    PyObject *plugins = PyList_New(0);
    size_t np = bp_context_plugin_count(ctx);
    for (size_t i = 0; plugins && i < np; i++) {
        PyObject *p = plugin_dict(ctx, i);
        if (!p || PyList_Append(plugins, p) < 0)
            Py_CLEAR(plugins);
        Py_XDECREF(p);
    }
    if (set_item(d, "plugins", plugins) < 0)
        goto fail;
    bp_backend *b = NULL;
    bp_status st;
    Py_BEGIN_ALLOW_THREADS st = bp_backend_default(ctx, &b);
    Py_END_ALLOW_THREADS
    PyObject *def = st == BP_OK
                        ? Py_BuildValue("{s:s,s:s}", "name", bp_backend_name(b), "status", "BP_OK")
                        : Py_BuildValue("{s:O,s:s,s:s}", "name", Py_None, "status",
                                        bp_status_string(st), "status_error", bp_last_error());
    if (set_item(d, "default_backend", def) < 0)
        goto fail;
    const char *reason = bp_context_default_reason(ctx);
    if (set_item(d, "default_reason", PyUnicode_FromString(reason ? reason : "")) < 0)
        goto fail;
    return d;
fail:
    Py_DECREF(d);
    return NULL;
}

/* ---- safetensors ------------------------------------------------------------ */

static PyObject *mod_load_safetensors(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"path", "backend", "metadata", "mmap", NULL};
    PyObject *path, *bo = Py_None;
    int want_meta = 0, mapped = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|Opp:load_safetensors", kwlist, &path, &bo,
                                     &want_meta, &mapped))
        return NULL;
    bp_backend *b = NULL;
    if (bpy_backend_arg(bo, &b) < 0)
        return NULL;
    PyObject *pb = bpy_path_cstr(path);
    if (!pb)
        return NULL;
    bp_safetensors *f = NULL;
    bp_status st;
    const char *p = PyBytes_AsString(pb);
    Py_BEGIN_ALLOW_THREADS st = bp_safetensors_open(p, &f);
    Py_END_ALLOW_THREADS
    Py_DECREF(pb);
    if (st != BP_OK)
        return bpy_raise(st);
    PyObject *out = PyDict_New(), *meta = want_meta ? PyDict_New() : NULL;
    size_t n = bp_safetensors_count(f);
    for (size_t i = 0; out && i < n; i++) {
        bp_safetensors_entry e = {.struct_size = sizeof e};
        bp_tensor *t = NULL;
        if ((st = bp_safetensors_entry_at(f, i, &e)) == BP_OK) {
            Py_BEGIN_ALLOW_THREADS st = mapped ? bp_safetensors_load_mapped(f, e.name, b, &t)
                                               : bp_safetensors_load(f, e.name, b, &t);
            Py_END_ALLOW_THREADS
        }
        PyObject *to = st == BP_OK ? bpy_wrap(t) : bpy_raise(st);
        if (!to || PyDict_SetItemString(out, e.name, to) < 0)
            Py_CLEAR(out);
        Py_XDECREF(to);
    }
    size_t nm = meta ? bp_safetensors_metadata_count(f) : 0;
    for (size_t i = 0; out && meta && i < nm; i++) {
        const char *k, *v;
        if (bp_safetensors_metadata_at(f, i, &k, &v) == BP_OK &&
            set_item(meta, k, PyUnicode_FromString(v)) < 0)
            Py_CLEAR(out);
    }
    bp_safetensors_close(f);
    if (!out || !want_meta) {
        Py_XDECREF(meta);
        return out;
    }
    if (!meta) {
        Py_DECREF(out);
        return NULL;
    }
    return Py_BuildValue("(NN)", out, meta);
}

static PyObject *mod_save_safetensors(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"path", "tensors", "metadata", NULL};
    PyObject *path, *tensors, *metadata = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|O:save_safetensors", kwlist, &path, &tensors,
                                     &metadata))
        return NULL;
    if (!PyDict_Check(tensors)) {
        PyErr_SetString(PyExc_TypeError, "save_safetensors: tensors must be a dict of name to "
                                         "Tensor (or array-like)");
        return NULL;
    }
    if (metadata != Py_None && !PyDict_Check(metadata)) {
        PyErr_SetString(PyExc_TypeError, "save_safetensors: metadata must be a dict of str to "
                                         "str, or None");
        return NULL;
    }
    PyObject *pb = bpy_path_cstr(path);
    if (!pb)
        return NULL;
    /* Snapshots of both dicts: converting a value may run Python code (a
     * __dlpack__, an __array__) that changes them, and so may another
     * thread while a conversion releases the GIL. The arrays below are
     * sized from the snapshots and filled from them alone. */
    PyObject *items = PyDict_Items(tensors);
    PyObject *meta_items = items && metadata != Py_None ? PyDict_Items(metadata) : NULL;
    if (!items || (metadata != Py_None && !meta_items)) {
        Py_XDECREF(items);
        Py_DECREF(pb);
        return NULL;
    }
    Py_ssize_t n = PyList_Size(items), nm = meta_items ? PyList_Size(meta_items) : 0;
    const char **names = PyMem_Calloc((size_t)n + 1, sizeof *names);
    bp_tensor **ts = PyMem_Calloc((size_t)n + 1, sizeof *ts);
    const char **meta = PyMem_Calloc(2 * (size_t)nm + 1, sizeof *meta);
    PyObject *keep = PyList_New(0); /* the UTF-8 bytes the pointers above point into */
    PyObject *result = NULL;
    if (!names || !ts || !meta || !keep) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *kv = PyList_GetItem(items, i), *k = PyTuple_GetItem(kv, 0),
                 *v = PyTuple_GetItem(kv, 1);
        if (!PyUnicode_Check(k)) {
            PyErr_SetString(PyExc_TypeError, "save_safetensors: every name must be a str");
            goto done;
        }
        PyObject *kb = bpy_utf8_cstr(k, "save_safetensors: a tensor name");
        if (!kb || PyList_Append(keep, kb) < 0) {
            Py_XDECREF(kb);
            goto done;
        }
        Py_DECREF(kb);
        names[i] = PyBytes_AsString(kb);
        if (bpy_tensor_arg(v, NULL, -1, &ts[i]) < 0)
            goto done;
    }
    for (Py_ssize_t i = 0, j = 0; i < nm; i++) {
        PyObject *kv = PyList_GetItem(meta_items, i), *k = PyTuple_GetItem(kv, 0),
                 *v = PyTuple_GetItem(kv, 1);
        if (!PyUnicode_Check(k) || !PyUnicode_Check(v)) {
            PyErr_SetString(PyExc_TypeError, "save_safetensors: metadata keys and values must "
                                             "be str (safetensors stores strings)");
            goto done;
        }
        PyObject *kb = bpy_utf8_cstr(k, "save_safetensors: a metadata key"),
                 *vb = kb ? bpy_utf8_cstr(v, "save_safetensors: a metadata value") : NULL;
        if (!vb || PyList_Append(keep, kb) < 0 || PyList_Append(keep, vb) < 0) {
            Py_XDECREF(kb);
            Py_XDECREF(vb);
            goto done;
        }
        meta[j++] = PyBytes_AsString(kb);
        meta[j++] = PyBytes_AsString(vb);
        Py_DECREF(kb);
        Py_DECREF(vb);
    }
    bp_status st;
    const char *p = PyBytes_AsString(pb);
    Py_BEGIN_ALLOW_THREADS st = bp_save_safetensors(p, (size_t)n, names,
                                                    (const bp_tensor *const *)ts,
                                                    nm ? meta : NULL);
    Py_END_ALLOW_THREADS
    if (st != BP_OK) {
        bpy_raise(st);
        goto done;
    }
    result = Py_None;
    Py_INCREF(result);
done:
    if (ts)
        bpy_release_all(ts, (int)n);
    PyMem_Free(ts);
    PyMem_Free(names);
    PyMem_Free(meta);
    Py_XDECREF(keep);
    Py_DECREF(items);
    Py_XDECREF(meta_items);
    Py_DECREF(pb);
    return result;
}

/* ---- arrays in ------------------------------------------------------------------ */

static PyObject *mod_asarray(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"obj", "backend", "dtype", "copy", NULL};
    PyObject *obj, *bo = Py_None, *dto = Py_None, *copy = Py_True;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OOO:asarray", kwlist, &obj, &bo, &dto, &copy))
        return NULL;
    if (copy != Py_True && copy != Py_False && copy != Py_None) {
        PyErr_SetString(PyExc_TypeError, "asarray: copy must be True, False or None");
        return NULL;
    }
    /* copy=True (the default): a NumPy array's values are copied, so that
     * changing the array later cannot change the tensor. None: shared where
     * it can be (the Array API's meaning). False: shared, or ValueError. */
    bpy_hint hint = {NULL, -1, copy == Py_True ? 1 : copy == Py_False ? 2 : 0};
    if (bo != Py_None && bpy_backend_arg(bo, &hint.backend) < 0)
        return NULL;
    bp_dtype dt = BP_F32;
    if (dto != Py_None && bpy_dtype_arg(dto, &dt) < 0)
        return NULL;
    bp_tensor *t = NULL;
    if (bpy_tensor_arg(obj, &hint, dto == Py_None ? -1 : (int)dt, &t) < 0)
        return NULL;
    /* A Tensor stays where it is unless a backend was named: then it is
     * copied there, explicitly asked for. */
    if (hint.backend && bp_tensor_backend(t) != hint.backend) {
        bp_tensor *c = NULL;
        bp_status st;
        Py_BEGIN_ALLOW_THREADS st = bp_backend_copy(t, hint.backend, &c);
        Py_END_ALLOW_THREADS
        bp_tensor_release(t);
        if (st != BP_OK)
            return bpy_raise(st);
        t = c;
    }
    return bpy_wrap(t);
}

int bpy_from_capsule(PyObject *capsule, bp_backend *b, bp_tensor **out);

static PyObject *mod_from_dlpack(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"x", "backend", NULL};
    PyObject *x, *bo = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:from_dlpack", kwlist, &x, &bo))
        return NULL;
    bpy_hint hint = {NULL, -1, 0};
    if (bo != Py_None && bpy_backend_arg(bo, &hint.backend) < 0)
        return NULL;
    if (BPY_IS_TENSOR(x) && (!hint.backend || hint.backend == bp_tensor_backend(BPY_T(x)))) {
        Py_INCREF(x);
        return x;
    }
    if (PyCapsule_CheckExact(x)) {
        bp_backend *b = hint.backend;
        if (!b && bpy_backend_arg(Py_None, &b) < 0)
            return NULL;
        bp_tensor *t = NULL;
        return bpy_from_capsule(x, b, &t) < 0 ? NULL : bpy_wrap(t);
    }
    if (!PyObject_HasAttrString(x, "__dlpack__")) {
        PyErr_SetString(PyExc_TypeError, "from_dlpack: the object has no __dlpack__ method "
                                         "(use backplane.asarray for lists and scalars)");
        return NULL;
    }
    bp_tensor *t = NULL;
    if (bpy_tensor_arg(x, &hint, -1, &t) < 0)
        return NULL;
    return bpy_wrap(t);
}

static PyObject *mod_from_bytes(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"data", "dtype", "shape", "backend", NULL};
    PyObject *data, *dto, *shape_o, *bo = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "SOO|O:_from_bytes", kwlist, &data, &dto,
                                     &shape_o, &bo))
        return NULL;
    bp_dtype dt;
    int64_t shape[BP_MAX_RANK];
    int32_t rank = 0;
    bp_backend *b = NULL;
    if (bpy_dtype_arg(dto, &dt) < 0 || bpy_shape_arg(shape_o, shape, &rank) < 0 ||
        bpy_backend_arg(bo, &b) < 0)
        return NULL;
    uint64_t need = bp_dtype_size(dt);
    for (int32_t i = 0; i < rank; i++) {
        if (shape[i] < 0 || (shape[i] && need > UINT64_MAX / (uint64_t)shape[i]))
            return bpy_raise_msg(BP_ERR_SHAPE, "_from_bytes: shape extent %lld is invalid",
                                 (long long)shape[i]);
        need *= (uint64_t)shape[i];
    }
    if (need != (uint64_t)PyBytes_Size(data))
        return bpy_raise_msg(BP_ERR_SHAPE, "_from_bytes: %zd bytes where the shape and dtype "
                             "need %llu", PyBytes_Size(data), (unsigned long long)need);
    bp_tensor *t = NULL;
    bp_status st = bp_tensor_from_host(b, dt, rank, shape, PyBytes_AsString(data), &t);
    return st == BP_OK ? bpy_wrap(t) : bpy_raise(st);
}

/* full and arange for Python ints: every bit of an int64 kept (the
 * generated functions take their numbers as doubles, exact only to 2^53). */
static PyObject *mod_full_i64(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"shape", "value", "dtype", "backend", NULL};
    PyObject *shape_o, *dto = Py_None, *bo = Py_None;
    long long value;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OL|OO:_full_i64", kwlist, &shape_o, &value, &dto,
                                     &bo))
        return NULL;
    int64_t shape[BP_MAX_RANK];
    int32_t rank = 0;
    bp_dtype dt = BP_I64;
    bp_backend *b = NULL;
    if (bpy_shape_arg(shape_o, shape, &rank) < 0 || (dto != Py_None && bpy_dtype_arg(dto, &dt) < 0) ||
        bpy_backend_arg(bo, &b) < 0)
        return NULL;
    bp_tensor *t = NULL;
    bp_status st = bp_full_i64(b, dt, rank, shape, (int64_t)value, &t);
    return st == BP_OK ? bpy_wrap(t) : bpy_raise(st);
}

static PyObject *mod_arange_i64(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"start", "stop", "step", "dtype", "backend", NULL};
    long long start, stop, step = 1;
    PyObject *dto = Py_None, *bo = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "LL|LOO:_arange_i64", kwlist, &start, &stop, &step,
                                     &dto, &bo))
        return NULL;
    bp_dtype dt = BP_I64;
    bp_backend *b = NULL;
    if ((dto != Py_None && bpy_dtype_arg(dto, &dt) < 0) || bpy_backend_arg(bo, &b) < 0)
        return NULL;
    bp_tensor *t = NULL;
    bp_status st = bp_arange_i64(b, dt, (int64_t)start, (int64_t)stop, (int64_t)step, &t);
    return st == BP_OK ? bpy_wrap(t) : bpy_raise(st);
}

static PyObject *mod_live_tensors(PyObject *m, PyObject *unused)
{
    return PyLong_FromSsize_t(bpy_live_tensors);
}

static PyObject *mod_version(PyObject *m, PyObject *unused)
{
    return PyUnicode_FromString(bp_version());
}

/* _log(message): a warning in the C library's log (stderr, at the default
 * context's level), beside the Python warning that says the same. */
static PyObject *mod_log(PyObject *m, PyObject *args)
{
    const char *msg;
    if (!PyArg_ParseTuple(args, "s:_log", &msg))
        return NULL;
    bpy_context *c = bpy_default_context();
    bp_context_log(c ? c->ctx : NULL, BP_LOG_WARN, msg);
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"_log", mod_log, METH_VARARGS, "_log(message): a warning in the C library's log."},
    {"backends", mod_backends, METH_NOARGS,
     "backends() -> list[str]: the backends that open here, as backend() takes their names."},
    {"backend", (PyCFunction)(void (*)(void))mod_backend, METH_VARARGS | METH_KEYWORDS,
     "backend(name=None) -> Backend: by name, or (None) the default as the configured "
     "preference list chooses it."},
    {"synchronize", (PyCFunction)(void (*)(void))mod_synchronize, METH_VARARGS | METH_KEYWORDS,
     "synchronize(backend=None): wait for the work queued on the backend; raises an error "
     "the device found while running it."},
    {"stats", (PyCFunction)(void (*)(void))mod_stats, METH_VARARGS | METH_KEYWORDS,
     "stats(backend=None, reset=False) -> dict: the backend's transfer, sync and memory "
     "counters (reset: zero them after reading)."},
    {"info", mod_info, METH_NOARGS,
     "info() -> dict: version, settings and their origins, plugins, devices and the "
     "default backend, as `backplane info --json` shows them."},
    {"load_safetensors", (PyCFunction)(void (*)(void))mod_load_safetensors,
     METH_VARARGS | METH_KEYWORDS,
     "load_safetensors(path, backend=None, metadata=False, mmap=False) -> dict of name to "
     "Tensor, copied from the file; with metadata=True, (tensors, metadata). mmap=True maps "
     "the file instead of copying it (host backends): then truncating or rewriting the file in "
     "place while a tensor lives kills the process with SIGBUS (save_safetensors, which writes "
     "a new file and renames it, is safe)."},
    {"save_safetensors", (PyCFunction)(void (*)(void))mod_save_safetensors,
     METH_VARARGS | METH_KEYWORDS,
     "save_safetensors(path, tensors, metadata=None): write a dict of name to Tensor (or "
     "array-like) atomically."},
    {"asarray", (PyCFunction)(void (*)(void))mod_asarray, METH_VARARGS | METH_KEYWORDS,
     "asarray(obj, backend=None, dtype=None, copy=True) -> Tensor from a NumPy array, a Python "
     "scalar or nested list, or anything with __dlpack__. A NumPy array is copied unless "
     "copy=False (share its memory, or ValueError) or copy=None (share where possible); "
     "DLPack producers are shared where the backend can address the memory."},
    {"from_dlpack", (PyCFunction)(void (*)(void))mod_from_dlpack, METH_VARARGS | METH_KEYWORDS,
     "from_dlpack(x, backend=None) -> Tensor: x's memory through DLPack, without a copy where "
     "the backend can address it."},
    {"_set_message_hook", set_message_hook, METH_O,
     "Register the function that puts the library's messages in Python's terms."},
    {"_from_bytes", (PyCFunction)(void (*)(void))mod_from_bytes, METH_VARARGS | METH_KEYWORDS,
     "_from_bytes(data, dtype, shape, backend=None) -> Tensor: the elements' bytes in C order "
     "(unpickling)."},
    {"_full_i64", (PyCFunction)(void (*)(void))mod_full_i64, METH_VARARGS | METH_KEYWORDS,
     "_full_i64(shape, value, dtype=None, backend=None): full for a Python int, exactly."},
    {"_arange_i64", (PyCFunction)(void (*)(void))mod_arange_i64, METH_VARARGS | METH_KEYWORDS,
     "_arange_i64(start, stop, step=1, dtype=None, backend=None): arange over ints, exactly."},
    {"_live_tensors", mod_live_tensors, METH_NOARGS,
     "The number of Tensor objects alive (for leak checks)."},
    {"_version", mod_version, METH_NOARGS, "libbackplane's version."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_backplane",
                                        "backplane's C extension (import backplane instead).",
                                        -1, NULL, NULL, NULL, NULL, NULL};

static int add_type(PyObject *m, PyType_Spec *spec, PyTypeObject **out, const char *name)
{
    *out = (PyTypeObject *)PyType_FromSpec(spec);
    if (!*out)
        return -1;
    Py_INCREF(*out);
    return PyModule_AddObject(m, name, (PyObject *)*out);
}

PyMODINIT_FUNC PyInit__backplane(void);
PyMODINIT_FUNC PyInit__backplane(void)
{
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    if (PyModule_AddFunctions(m, module_methods) < 0 ||
        PyModule_AddFunctions(m, bpy_op_methods) < 0 || add_errors(m) < 0 ||
        add_type(m, &context_spec, &bpy_context_type, "Context") < 0 ||
        add_type(m, &backend_spec, &bpy_backend_type, "Backend") < 0 ||
        bpy_tensor_type_init(m) < 0 || bpy_graph_init(m) < 0 || bpy_optim_init(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

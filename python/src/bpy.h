/* backplane's Python extension: what its files share.
 *
 * Written against CPython's limited API (Py_LIMITED_API 3.9, set by the
 * build): one abi3 module for every Python from 3.9 on. It uses only
 * libbackplane's public headers. */
#ifndef BPY_H
#define BPY_H

#include <Python.h>

#include <backplane/backplane.h>

/* A tensor: one reference to a bp_tensor, released with the object. */
typedef struct {
    PyObject_HEAD
    bp_tensor *t;
} bpy_tensor;

/* A context: the bp_context and the config path it was made from. */
typedef struct {
    PyObject_HEAD
    bp_context *ctx;
    PyObject *config;          /* str or None */
    bp_backend *default_b;     /* resolved on first use */
} bpy_context;

/* A backend: owned by its context, which the object keeps alive. */
typedef struct {
    PyObject_HEAD
    bp_backend *b;
    PyObject *context;         /* the bpy_context */
} bpy_backend;

extern PyTypeObject *bpy_tensor_type;
extern PyTypeObject *bpy_backend_type;
extern PyTypeObject *bpy_context_type;

#define BPY_IS_TENSOR(o) (Py_TYPE(o) == bpy_tensor_type)
#define BPY_T(o) (((bpy_tensor *)(o))->t)

/* ---- errors (module.c) ---------------------------------------------------- */
/* Raise the exception class of st with this thread's bp_last_error(); NULL. */
PyObject *bpy_raise(bp_status st);
/* Raise the class of st with a message of our own; NULL. */
PyObject *bpy_raise_msg(bp_status st, const char *fmt, ...);

/* ---- tensors (tensor.c) --------------------------------------------------- */
/* A Tensor owning t (the reference is stolen; released on failure). */
PyObject *bpy_wrap(bp_tensor *t);
/* A tuple of Tensors owning ts[0..n) (every reference stolen, ts[k] set to
 * NULL); on failure NULL, with every one of them released. */
PyObject *bpy_wrap_all(bp_tensor **ts, Py_ssize_t n);
/* Tensors alive in this process (the extension's own count). */
extern Py_ssize_t bpy_live_tensors;
int bpy_tensor_type_init(PyObject *module);

/* ---- contexts and backends (module.c) ------------------------------------- */
/* The module's default context (made on first use); borrowed. */
bpy_context *bpy_default_context(void);
/* A backend argument: None (the default backend), a Backend or a name. */
int bpy_backend_arg(PyObject *o, bp_backend **out);
/* A new Backend object for b (b belongs to the default context unless ctx). */
PyObject *bpy_backend_object(bp_backend *b, PyObject *ctx);
/* Whether b's buffers are host memory (cached per backend). */
int bpy_backend_is_host(bp_backend *b);

/* Run CALL (which sets st) with the GIL released when the work may be long:
 * a device backend, or inputs of at least BPY_GIL_ELEMENTS elements. Small
 * host ops keep the GIL: releasing it costs more than they do. */
#define BPY_GIL_ELEMENTS 8192
#define BPY_CALL(st, release, CALL)                                                     \
    do {                                                                                \
        if (release) {                                                                  \
            Py_BEGIN_ALLOW_THREADS (st) = (CALL);                                       \
            Py_END_ALLOW_THREADS                                                        \
        } else {                                                                        \
            (st) = (CALL);                                                              \
        }                                                                               \
    } while (0)
/* Whether an op on these inputs should release the GIL. */
int bpy_release_for(bp_tensor *const *ts, int n);

/* ---- conversions (convert.c) ---------------------------------------------- */
/* A dtype argument: "float32", a NumPy dtype or scalar type, float/int/bool.
 * 0 on success; -1 with DTypeError set. */
int bpy_dtype_arg(PyObject *o, bp_dtype *out);
const char *bpy_dtype_name(bp_dtype dt); /* NumPy's name: "float32" */

/* What a Python scalar or a list becomes when it meets a tensor: the
 * backend (NULL: the default) and, for scalars, the dtype (-1: inferred). */
typedef struct {
    bp_backend *backend;
    int dtype;
    /* NumPy arrays: 0 shares a dense one's memory (an op's argument), 1
     * copies (asarray's default: a later change to the array must not
     * change an immutable tensor), 2 shares or fails (asarray(copy=False)). */
    int array_copy;
} bpy_hint;

/* obj as a tensor (a new reference in *out): a Tensor (retained), a Python
 * scalar, a nested list, a NumPy array, or anything with __dlpack__. dtype
 * -1: keep / infer. Nothing that is already a Tensor ever moves backend. */
int bpy_tensor_arg(PyObject *obj, const bpy_hint *hint, int dtype, bp_tensor **out);

/* Convert n tensor-like arguments: the first Tensor among those with
 * group[i] set gives the dtype of Python scalars in that group; the first
 * Tensor of all gives the backend for everything that is not a Tensor yet.
 * objs[i] may be NULL or None where optional[i]: out[i] = NULL. On failure
 * every out[] is released and NULL. */
int bpy_tensor_args(PyObject *const *objs, const char *group, const char *optional, int n,
                    const char *const *names, bp_tensor **out);
void bpy_release_all(bp_tensor **ts, int n);

/* An axis list: None (n 0), an int, or a sequence of ints. axes holds
 * BP_MAX_RANK. */
int bpy_axes_arg(PyObject *o, const char *what, int32_t *axes, int32_t *n);
/* A sequence of ints (or one int when allow_int) into vals (max entries);
 * *n gets the length. */
int bpy_int64s_arg(PyObject *o, const char *what, int64_t *vals, int32_t max, int32_t *n);
int bpy_doubles_arg(PyObject *o, const char *what, double *vals, int32_t max, int32_t *n);
/* A shape: an int or a sequence of ints. */
int bpy_shape_arg(PyObject *o, int64_t *shape, int32_t *rank);
/* A sequence of tensor-likes (all converted with one hint). */
int bpy_tensor_list_arg(PyObject *o, const char *what, bp_tensor ***out, int32_t *n);
void bpy_tensor_list_free(bp_tensor **ts, int32_t n);
/* A string argument among choices (case-insensitive); *out its index. */
int bpy_choice_arg(PyObject *o, const char *what, const char *const *choices, int *out);
/* The window keywords of conv and the pools; NULL for one not given. */
int bpy_window_arg(bp_window *w, const bp_tensor *x, PyObject *kernel_shape, PyObject *strides,
                   PyObject *pads, PyObject *dilations, PyObject *auto_pad,
                   PyObject *output_padding, PyObject *output_shape);
/* The length a per-axis argument must have: x's rank. */
int bpy_check_len(const char *what, int32_t n, const bp_tensor *x);

/* Ones of x's dtype and backend with the shape of x's axes from axis on. */
int bpy_ones_trailing(const bp_tensor *x, int32_t axis, bp_tensor **out);
/* int64 when every object given is a Python int, else float64. */
int bpy_infer_dtype(PyObject *const *objs, int n, bp_dtype *out);
int bpy_double_arg(PyObject *o, const char *what, double *out);
/* A PyArg "O&" converter for uint64 arguments (seeds, offsets): an int in
 * [0, 2^64), refused with OverflowError outside it, never wrapped. */
int bpy_uint64_conv(PyObject *o, void *out);
/* A str as UTF-8 bytes (a new reference) for a C string argument: NULL with
 * ValueError when it holds a NUL, which C would silently cut it at (Python's
 * own file functions refuse it the same way). `what` names the argument. */
PyObject *bpy_utf8_cstr(PyObject *s, const char *what);
/* A path (str or os.PathLike of str) in the file system's encoding, the same
 * check applied. */
PyObject *bpy_path_cstr(PyObject *path);
/* Whether the exception set is one of backplane's own. */
int bpy_error_is_ours(void);

/* Python operators and functions share these (tensor.c). */
PyObject *bpy_binary_op(PyObject *a, PyObject *b, bp_status (*fn)(const bp_tensor *,
                                                                   const bp_tensor *,
                                                                   bp_tensor **));

/* ---- graphs (graph.c) ---------------------------------------------------- */
/* The device backend of b when b is the recording backend of a graph made
 * here (backplane.jit), else NULL. */
bp_backend *bpy_real_backend(bp_backend *b);
int bpy_graph_init(PyObject *module);
int bpy_optim_init(PyObject *module);

/* ---- generated (ops_generated.c) ------------------------------------------ */
extern PyMethodDef bpy_op_methods[];

#endif

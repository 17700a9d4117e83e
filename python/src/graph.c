/* backplane's Python extension: graphs, for backplane.jit (python/backplane/
 * _jit.py). Private: _Graph wraps a bp_graph, _Plan a bp_graph_exec; each
 * is released with its object. The module functions _graph_create,
 * _graph_input, _graph_output, _graph_compile, _graph_run and _graph_stats
 * are graph.h's calls, one each.
 *
 * A Python scalar or list mixed with a symbolic tensor becomes a tensor on
 * the symbolic tensor's backend, the graph's recording backend, which holds
 * no memory. bpy_real_backend maps that backend to the graph's device
 * backend, so such a value is made there instead and captured as a constant,
 * as a concrete tensor closed over is. */
#include "bpy.h"

/* The recording backends of the graphs alive here, and their device
 * backends. Read and written with the GIL held. */
#define MAX_GRAPHS 64
static struct {
    bp_backend *rec;
    bp_backend *real;
} graphs[MAX_GRAPHS];
static int n_graphs;

bp_backend *bpy_real_backend(bp_backend *b)
{
    for (int i = 0; i < n_graphs; i++)
        if (graphs[i].rec == b)
            return graphs[i].real;
    return NULL;
}

typedef struct {
    PyObject_HEAD
    bp_graph *g;
    bp_backend *real;
    bp_backend *rec;  /* learned from the first input; NULL before */
    int registered;
} bpy_graph;

typedef struct {
    PyObject_HEAD
    bp_graph_exec *exe;
    int32_t n_in, n_out;
} bpy_plan;

static PyTypeObject *graph_type, *plan_type;

static void graph_dealloc(PyObject *o)
{
    bpy_graph *self = (bpy_graph *)o;
    PyTypeObject *type = Py_TYPE(o);
    if (self->registered)
        for (int i = 0; i < n_graphs; i++)
            if (graphs[i].rec == self->rec) {
                graphs[i] = graphs[--n_graphs];
                break;
            }
    bp_graph_release(self->g);
    freefunc free_fn = (freefunc)PyType_GetSlot(type, Py_tp_free);
    free_fn(o);
    Py_DECREF(type);
}

static void plan_dealloc(PyObject *o)
{
    PyTypeObject *type = Py_TYPE(o);
    bp_graph_exec_release(((bpy_plan *)o)->exe);
    freefunc free_fn = (freefunc)PyType_GetSlot(type, Py_tp_free);
    free_fn(o);
    Py_DECREF(type);
}

static PyType_Slot graph_slots[] = {
    {Py_tp_dealloc, graph_dealloc},
    {Py_tp_doc, "A graph being recorded (private: backplane.jit makes them)."},
    {0, NULL}};
static PyType_Spec graph_spec = {"backplane._Graph", sizeof(bpy_graph), 0, Py_TPFLAGS_DEFAULT,
                                 graph_slots};
static PyType_Slot plan_slots[] = {
    {Py_tp_dealloc, plan_dealloc},
    {Py_tp_doc, "A compiled graph (private: backplane.jit makes them)."},
    {0, NULL}};
static PyType_Spec plan_spec = {"backplane._Plan", sizeof(bpy_plan), 0, Py_TPFLAGS_DEFAULT,
                                plan_slots};

static PyObject *mod_graph_create(PyObject *m, PyObject *args)
{
    PyObject *bo = Py_None;
    if (!PyArg_ParseTuple(args, "|O:_graph_create", &bo))
        return NULL;
    bp_backend *b = NULL;
    if (BPY_IS_TENSOR(bo))
        b = bp_tensor_backend(BPY_T(bo)); /* the backend of the tensor itself */
    else if (bpy_backend_arg(bo, &b) < 0)
        return NULL;
    bpy_graph *self = PyObject_New(bpy_graph, graph_type);
    if (!self)
        return NULL;
    self->g = NULL;
    self->real = b;
    self->rec = NULL;
    self->registered = 0;
    bp_status st = bp_graph_create(b, &self->g);
    if (st != BP_OK) {
        Py_DECREF(self);
        return bpy_raise(st);
    }
    return (PyObject *)self;
}

static PyObject *mod_graph_input(PyObject *m, PyObject *args)
{
    PyObject *go, *dto, *shape_o;
    if (!PyArg_ParseTuple(args, "O!OO:_graph_input", graph_type, &go, &dto, &shape_o))
        return NULL;
    bpy_graph *self = (bpy_graph *)go;
    bp_dtype dt;
    int64_t shape[BP_MAX_RANK];
    int32_t rank = 0;
    if (bpy_dtype_arg(dto, &dt) < 0 || bpy_shape_arg(shape_o, shape, &rank) < 0)
        return NULL;
    if (!self->registered && n_graphs == MAX_GRAPHS)
        return bpy_raise_msg(BP_ERR_INVALID_ARGUMENT, "_graph_input: more than %d graphs are "
                             "being recorded at once", MAX_GRAPHS);
    bp_tensor *x = NULL;
    bp_status st = bp_graph_input(self->g, dt, rank, shape, &x);
    if (st != BP_OK)
        return bpy_raise(st);
    if (!self->registered) {
        self->rec = bp_tensor_backend(x);
        graphs[n_graphs].rec = self->rec;
        graphs[n_graphs].real = self->real;
        n_graphs++;
        self->registered = 1;
    }
    return bpy_wrap(x);
}

static PyObject *mod_graph_output(PyObject *m, PyObject *args)
{
    PyObject *go, *to;
    if (!PyArg_ParseTuple(args, "O!O!:_graph_output", graph_type, &go, bpy_tensor_type, &to))
        return NULL;
    bp_status st = bp_graph_output(((bpy_graph *)go)->g, BPY_T(to));
    if (st != BP_OK)
        return bpy_raise(st);
    Py_RETURN_NONE;
}

/* Whether t is a symbolic tensor of a graph recorded from Python. */
static PyObject *mod_is_symbolic(PyObject *m, PyObject *o)
{
    if (BPY_IS_TENSOR(o) && bpy_real_backend(bp_tensor_backend(BPY_T(o))))
        Py_RETURN_TRUE;
    Py_RETURN_FALSE;
}

static PyObject *mod_graph_compile(PyObject *m, PyObject *args)
{
    PyObject *go;
    int n_in, n_out, no_merge = 0, fresh_draws = 0;
    if (!PyArg_ParseTuple(args, "O!ii|pp:_graph_compile", graph_type, &go, &n_in, &n_out,
                          &no_merge, &fresh_draws))
        return NULL;
    bp_graph_options opt = BP_GRAPH_OPTIONS_INIT;
    opt.no_merge = no_merge;
    opt.fresh_draws = fresh_draws;
    bp_graph_exec *exe = NULL;
    bp_status st;
    Py_BEGIN_ALLOW_THREADS st = bp_graph_compile(((bpy_graph *)go)->g, &opt, &exe);
    Py_END_ALLOW_THREADS
    if (st != BP_OK)
        return bpy_raise(st);
    bpy_plan *self = PyObject_New(bpy_plan, plan_type);
    if (!self) {
        bp_graph_exec_release(exe);
        return NULL;
    }
    self->exe = exe;
    self->n_in = n_in;
    self->n_out = n_out;
    return (PyObject *)self;
}

/* _graph_run(plan, inputs) -> tuple of the outputs (new tensors). */
static PyObject *mod_graph_run(PyObject *m, PyObject *args)
{
    PyObject *po, *seq, *donated = Py_None;
    if (!PyArg_ParseTuple(args, "O!O!|O:_graph_run", plan_type, &po, &PyTuple_Type, &seq,
                          &donated))
        return NULL;
    if (donated != Py_None && (!PyTuple_Check(donated) || PyTuple_Size(donated) != PyTuple_Size(seq)))
        return bpy_raise_msg(BP_ERR_INVALID_ARGUMENT, "_graph_run: donate must be None or a "
                             "tuple of one bool per input");
    bpy_plan *p = (bpy_plan *)po;
    if (PyTuple_Size(seq) != p->n_in)
        return bpy_raise_msg(BP_ERR_INVALID_ARGUMENT, "_graph_run: %zd inputs where the plan "
                             "takes %d", PyTuple_Size(seq), (int)p->n_in);
    bp_tensor *small_in[16], *small_out[16];
    bool small_donate[16];
    bp_tensor **in = p->n_in <= 16 ? small_in : PyMem_Calloc((size_t)p->n_in, sizeof *in);
    bp_tensor **out = p->n_out <= 16 ? small_out : PyMem_Calloc((size_t)p->n_out, sizeof *out);
    bool *donate = donated == Py_None ? NULL
                   : p->n_in <= 16    ? small_donate
                                      : PyMem_Calloc((size_t)p->n_in, sizeof *donate);
    PyObject *result = NULL;
    if (!in || !out || (donated != Py_None && !donate)) {
        PyErr_NoMemory();
        goto done;
    }
    for (int32_t k = 0; k < p->n_in; k++) {
        PyObject *o = PyTuple_GetItem(seq, k);
        if (!BPY_IS_TENSOR(o)) {
            PyErr_Format(PyExc_TypeError, "_graph_run: input %d is not a Tensor", (int)k);
            goto done;
        }
        in[k] = BPY_T(o);
        if (donate) {
            int d = PyObject_IsTrue(PyTuple_GetItem(donated, k));
            if (d < 0)
                goto done;
            donate[k] = d != 0;
        }
    }
    for (int32_t k = 0; k < p->n_out; k++)
        out[k] = NULL;
    bp_status st;
    /* A plan runs many ops: the GIL goes whatever the inputs' sizes, and the
     * caller's reference keeps the plan and the inputs alive meanwhile. */
    Py_BEGIN_ALLOW_THREADS st = bp_graph_run_donating(p->exe, p->n_in, in, donate, p->n_out, out);
    Py_END_ALLOW_THREADS
    if (st != BP_OK) {
        bpy_raise(st);
        goto done;
    }
    result = bpy_wrap_all(out, p->n_out);
done:
    if (in != small_in)
        PyMem_Free(in);
    if (out != small_out)
        PyMem_Free(out);
    if (donate && donate != small_donate)
        PyMem_Free(donate);
    return result;
}

static PyObject *mod_graph_stats(PyObject *m, PyObject *args)
{
    PyObject *po;
    if (!PyArg_ParseTuple(args, "O!:_graph_stats", plan_type, &po))
        return NULL;
    bp_graph_stats s = {.struct_size = sizeof s};
    bp_status st = bp_graph_exec_stats(((bpy_plan *)po)->exe, &s);
    if (st != BP_OK)
        return bpy_raise(st);
    return Py_BuildValue("{s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L}", "nodes_recorded",
                         (long long)s.nodes_recorded, "nodes_live", (long long)s.nodes_live,
                         "nodes_planned", (long long)s.nodes_planned, "buffers",
                         (long long)s.buffers, "peak_bytes", (long long)s.peak_bytes,
                         "sum_bytes", (long long)s.sum_bytes, "donatable_outputs",
                         (long long)s.donatable_outputs, "fused_groups",
                         (long long)s.fused_groups, "nodes_fused", (long long)s.nodes_fused,
                         "nodes_prepared", (long long)s.nodes_prepared, "epilogues_fused",
                         (long long)s.epilogues_fused);
}

/* _graph_seek_draws(plan, run): bp_graph_exec_seek_draws. */
static PyObject *mod_graph_seek_draws(PyObject *m, PyObject *args)
{
    PyObject *po;
    unsigned long long run;
    if (!PyArg_ParseTuple(args, "O!K:_graph_seek_draws", plan_type, &po, &run))
        return NULL;
    bp_status st = bp_graph_exec_seek_draws(((bpy_plan *)po)->exe, (uint64_t)run);
    if (st != BP_OK)
        return bpy_raise(st);
    Py_RETURN_NONE;
}

/* _graph_format(plan) -> str: bp_graph_exec_format's listing. */
static PyObject *mod_graph_format(PyObject *m, PyObject *args)
{
    PyObject *po;
    if (!PyArg_ParseTuple(args, "O!:_graph_format", plan_type, &po))
        return NULL;
    const bp_graph_exec *exe = ((bpy_plan *)po)->exe;
    size_t need = 0;
    bp_status st = bp_graph_exec_format(exe, NULL, 0, &need);
    if (st != BP_OK && need == 0)
        return bpy_raise(st);
    char *buf = PyMem_Malloc(need);
    if (!buf)
        return PyErr_NoMemory();
    st = bp_graph_exec_format(exe, buf, need, NULL);
    PyObject *r = st == BP_OK ? PyUnicode_FromString(buf) : bpy_raise(st);
    PyMem_Free(buf);
    return r;
}

/* _graph_profile(plan, on): bp_graph_exec_profile. */
static PyObject *mod_graph_profile(PyObject *m, PyObject *args)
{
    PyObject *po;
    int on;
    if (!PyArg_ParseTuple(args, "O!p:_graph_profile", plan_type, &po, &on))
        return NULL;
    bp_status st = bp_graph_exec_profile(((bpy_plan *)po)->exe, on);
    if (st != BP_OK)
        return bpy_raise(st);
    Py_RETURN_NONE;
}

/* _graph_profile_steps(plan) -> list of dict: the profile's timed steps
 * (bp_graph_exec_profile_step), in run order. */
static PyObject *mod_graph_profile_steps(PyObject *m, PyObject *args)
{
    PyObject *po;
    if (!PyArg_ParseTuple(args, "O!:_graph_profile_steps", plan_type, &po))
        return NULL;
    const bp_graph_exec *exe = ((bpy_plan *)po)->exe;
    int32_t n = bp_graph_exec_profile_count(exe);
    PyObject *list = PyList_New(n);
    for (int32_t i = 0; list && i < n; i++) {
        bp_graph_step_time s = {.struct_size = sizeof s};
        bp_status st = bp_graph_exec_profile_step(exe, i, &s);
        PyObject *d = st == BP_OK ? Py_BuildValue(
                                        "{s:i,s:i,s:s,s:i,s:i,s:L,s:d}", "node", (int)s.node,
                                        "nodes", (int)s.nodes, "op", bp_op_name(s.op), "value",
                                        (int)s.value, "fused_group", (int)s.fused_group,
                                        "runs", (long long)s.runs, "seconds", s.seconds)
                                  : bpy_raise(st);
        if (!d)
            Py_CLEAR(list);
        else
            PyList_SetItem(list, i, d); /* steals d */
    }
    return list;
}

/* _grad(loss, wrt: tuple of Tensor) -> tuple of Tensor: bp_graph_grad on
 * loss's graph (loss and wrt symbolic tensors of one graph). */
static PyObject *mod_grad(PyObject *m, PyObject *args)
{
    PyObject *lo, *seq;
    if (!PyArg_ParseTuple(args, "O!O!:_grad", bpy_tensor_type, &lo, &PyTuple_Type, &seq))
        return NULL;
    Py_ssize_t n = PyTuple_Size(seq);
    bp_tensor *small_in[16], *small_out[16];
    bp_tensor **in = n <= 16 ? small_in : PyMem_Calloc((size_t)n, sizeof *in);
    bp_tensor **out = n <= 16 ? small_out : PyMem_Calloc((size_t)n, sizeof *out);
    PyObject *result = NULL;
    if (!in || !out) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *o = PyTuple_GetItem(seq, k);
        if (!BPY_IS_TENSOR(o)) {
            PyErr_Format(PyExc_TypeError, "_grad: wrt %zd is not a Tensor", k);
            goto done;
        }
        in[k] = BPY_T(o);
        out[k] = NULL;
    }
    bp_graph *g = bp_tensor_graph(BPY_T(lo));
    bp_status st = bp_graph_grad(g, BPY_T(lo), (int32_t)n, (const bp_tensor *const *)in, out);
    if (st != BP_OK) {
        bpy_raise(st);
        goto done;
    }
    result = bpy_wrap_all(out, n);
done:
    if (in != small_in)
        PyMem_Free(in);
    if (out != small_out)
        PyMem_Free(out);
    return result;
}

static PyMethodDef graph_methods[] = {
    {"_graph_create", mod_graph_create, METH_VARARGS,
     "_graph_create(backend=None) -> _Graph whose plans run on backend (a Backend, a name, "
     "None for the default, or a Tensor: its backend)."},
    {"_graph_input", mod_graph_input, METH_VARARGS,
     "_graph_input(g, dtype, shape) -> Tensor: the graph's next input, symbolic."},
    {"_graph_output", mod_graph_output, METH_VARARGS,
     "_graph_output(g, t): mark t, a symbolic tensor of g, as the next output."},
    {"_is_symbolic", mod_is_symbolic, METH_O,
     "_is_symbolic(t) -> bool: t is a symbolic tensor of a graph being recorded here."},
    {"_graph_compile", mod_graph_compile, METH_VARARGS,
     "_graph_compile(g, n_inputs, n_outputs, no_merge=False, fresh_draws=False) -> _Plan."},
    {"_graph_seek_draws", mod_graph_seek_draws, METH_VARARGS,
     "_graph_seek_draws(plan, run): the number the plan's next run draws with "
     "(bp_graph_exec_seek_draws)."},
    {"_graph_run", mod_graph_run, METH_VARARGS,
     "_graph_run(plan, inputs: tuple of Tensor, donate=None: tuple of bool) -> tuple of new "
     "Tensors; the donated inputs are given up (bp_graph_run_donating)."},
    {"_graph_format", mod_graph_format, METH_VARARGS,
     "_graph_format(plan) -> str: the plan's nodes, fused groups and buffers."},
    {"_graph_stats", mod_graph_stats, METH_VARARGS,
     "_graph_stats(plan) -> dict: node counts and planned bytes (bp_graph_exec_stats)."},
    {"_graph_profile", mod_graph_profile, METH_VARARGS,
     "_graph_profile(plan, on): start (clearing the times) or stop timing each step of the "
     "plan's runs (bp_graph_exec_profile)."},
    {"_graph_profile_steps", mod_graph_profile_steps, METH_VARARGS,
     "_graph_profile_steps(plan) -> list of dict (node, nodes, op, value, fused_group, runs, "
     "seconds): the timed steps in run order."},
    {"_grad", mod_grad, METH_VARARGS,
     "_grad(loss, wrt: tuple of Tensor) -> tuple of Tensors: the gradient of loss (a symbolic "
     "scalar) with respect to each, appended to loss's graph (bp_graph_grad)."},
    {NULL, NULL, 0, NULL}};

int bpy_graph_init(PyObject *module)
{
    graph_type = (PyTypeObject *)PyType_FromSpec(&graph_spec);
    plan_type = graph_type ? (PyTypeObject *)PyType_FromSpec(&plan_spec) : NULL;
    if (!plan_type)
        return -1;
    return PyModule_AddFunctions(module, graph_methods);
}

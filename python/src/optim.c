/* backplane.optim's C side: bp_optim_init and bp_optim_step over tuples of
 * Tensors (python/backplane/optim.py gives them their pytree form). */
#include "bpy.h"

/* The optimizer from a tuple: (kind, lr, momentum, dampening, nesterov,
 * weight_decay, beta1, beta2, eps, max_grad_norm). */
static int opt_arg(PyObject *o, bp_optimizer *opt)
{
    bp_optimizer d = BP_OPTIMIZER_SGD_INIT;
    *opt = d;
    int kind, nesterov;
    if (!PyArg_ParseTuple(o, "idddpddddd:optimizer", &kind, &opt->lr, &opt->momentum,
                          &opt->dampening, &nesterov, &opt->weight_decay, &opt->beta1,
                          &opt->beta2, &opt->eps, &opt->max_grad_norm))
        return -1;
    opt->kind = (bp_optim_kind)kind;
    opt->nesterov = nesterov != 0;
    return 0;
}

/* The Tensors of a tuple into a fresh array (PyMem), or NULL with an error. */
static const bp_tensor **tensors_of(PyObject *seq, const char *what, Py_ssize_t *n)
{
    *n = PyTuple_Size(seq);
    const bp_tensor **ts = PyMem_Calloc((size_t)*n + 1, sizeof *ts);
    if (!ts) {
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t k = 0; k < *n; k++) {
        PyObject *o = PyTuple_GetItem(seq, k);
        if (!BPY_IS_TENSOR(o)) {
            PyErr_Format(PyExc_TypeError, "optimizer: %s[%zd] is not a Tensor", what, k);
            PyMem_Free(ts);
            return NULL;
        }
        ts[k] = BPY_T(o);
    }
    return ts;
}

static PyObject *mod_optim_init(PyObject *m, PyObject *args)
{
    PyObject *oo, *po;
    if (!PyArg_ParseTuple(args, "O!O!:_optim_init", &PyTuple_Type, &oo, &PyTuple_Type, &po))
        return NULL;
    bp_optimizer opt;
    Py_ssize_t n;
    if (opt_arg(oo, &opt) < 0)
        return NULL;
    const bp_tensor **params = tensors_of(po, "params", &n);
    if (!params)
        return NULL;
    int32_t count = bp_optim_state_count(&opt, (int32_t)n);
    bp_tensor **state = count > 0 ? PyMem_Calloc((size_t)count, sizeof *state) : NULL;
    PyObject *result = NULL;
    if (count > 0 && !state) {
        PyErr_NoMemory();
    } else {
        bp_status st = bp_optim_init(&opt, (int32_t)n, params, state ? state : &(bp_tensor *){0});
        result = st != BP_OK ? bpy_raise(st) : bpy_wrap_all(state, count);
    }
    PyMem_Free(state);
    PyMem_Free(params);
    return result;
}

static PyObject *mod_optim_step(PyObject *m, PyObject *args)
{
    PyObject *oo, *po, *go, *so;
    if (!PyArg_ParseTuple(args, "O!O!O!O!:_optim_step", &PyTuple_Type, &oo, &PyTuple_Type, &po,
                          &PyTuple_Type, &go, &PyTuple_Type, &so))
        return NULL;
    bp_optimizer opt;
    if (opt_arg(oo, &opt) < 0)
        return NULL;
    Py_ssize_t n, ng, ns;
    const bp_tensor **params = tensors_of(po, "params", &n);
    const bp_tensor **grads = params ? tensors_of(go, "grads", &ng) : NULL;
    const bp_tensor **state = grads ? tensors_of(so, "state", &ns) : NULL;
    PyObject *result = NULL;
    bp_tensor **np = NULL, **nst = NULL;
    if (!state)
        goto done;
    int32_t count = bp_optim_state_count(&opt, (int32_t)n);
    if (ng != n || (count > 0 && ns != count)) {
        bpy_raise_msg(BP_ERR_INVALID_ARGUMENT, "optimizer: %zd params, %zd grads and %zd state "
                      "tensors; the state of this optimizer for %zd params holds %d (make it "
                      "with init)", n, ng, ns, n, (int)count);
        goto done;
    }
    np = PyMem_Calloc((size_t)n + 1, sizeof *np);
    nst = PyMem_Calloc((size_t)(count > 0 ? count : 1), sizeof *nst);
    if (!np || !nst) {
        PyErr_NoMemory();
        goto done;
    }
    bp_status st;
    Py_BEGIN_ALLOW_THREADS st = bp_optim_step(&opt, (int32_t)n, params, grads, state, np, nst);
    Py_END_ALLOW_THREADS
    if (st != BP_OK) {
        bpy_raise(st);
        goto done;
    }
    PyObject *a = bpy_wrap_all(np, n);
    PyObject *b = a ? bpy_wrap_all(nst, count) : NULL;
    if (!a)
        for (int32_t k = 0; k < count; k++)
            bp_tensor_release(nst[k]);
    if (a && b)
        result = PyTuple_Pack(2, a, b);
    Py_XDECREF(a);
    Py_XDECREF(b);
done:
    PyMem_Free(np);
    PyMem_Free(nst);
    PyMem_Free(params);
    PyMem_Free(grads);
    PyMem_Free(state);
    return result;
}

static PyMethodDef optim_methods[] = {
    {"_optim_init", mod_optim_init, METH_VARARGS,
     "_optim_init(optimizer: tuple, params: tuple) -> tuple: the state (bp_optim_init)."},
    {"_optim_step", mod_optim_step, METH_VARARGS,
     "_optim_step(optimizer, params, grads, state) -> (new params, new state) "
     "(bp_optim_step)."},
    {NULL, NULL, 0, NULL}};

int bpy_optim_init(PyObject *module)
{
    return PyModule_AddFunctions(module, optim_methods);
}

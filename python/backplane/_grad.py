"""backplane.grad and backplane.value_and_grad: reverse-mode gradients of a
Python function of Tensors (docs/gradients.md, docs/python.md).

The function is traced once per signature into a graph (as backplane.jit
does), the C library appends the gradient's nodes to that graph
(bp_graph_grad: the op table's rules), and the whole is compiled and cached:
a later call with the same shapes and dtypes runs the plan. Inside a
function being jitted, the gradient's nodes join the outer trace, so
jit(value_and_grad(f)) compiles one plan for the value and the gradient.
"""
import functools
import threading

from . import _backplane
from ._backplane import Tensor
from ._jit import Jitted, tree_flatten, tree_size, tree_unflatten


def _leaves(tree, out, where):
    try:
        return tree_flatten(tree, out, where)
    except TypeError as e:
        raise TypeError(f"{e}: gradients are taken with respect to float Tensors; pass "
                        f"backplane.asarray(...) of it, or leave it out of argnums") from None


class _Differentiated:
    """f's gradient, with or without its value (backplane.grad,
    backplane.value_and_grad)."""

    def __init__(self, fun, argnums, has_aux, with_value):
        if not callable(fun):
            raise TypeError(f"grad: {fun!r} is not callable")
        self._fun = fun
        self._single = isinstance(argnums, int)
        self._argnums = (argnums,) if self._single else tuple(int(i) for i in argnums)
        if not self._argnums:
            raise ValueError("grad: argnums is empty; name at least one argument to "
                             "differentiate with respect to")
        self._has_aux = bool(has_aux)
        self._with_value = with_value
        self._name = getattr(fun, "__qualname__", None) or repr(fun)
        self._tls = threading.local()
        self._jit = Jitted(self._traced, on_trace=lambda: self._tls.meta)
        functools.update_wrapper(self, fun, updated=())  # not fun.__dict__: ours

    def _wrt(self, args):
        wrt = []
        for i in self._argnums:
            _leaves(args[i], wrt, f"grad({self._name}): argument {i}")
        return wrt

    def _traced(self, *args, **kwargs):
        out = self._fun(*args, **kwargs)
        if self._has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise TypeError(f"grad({self._name}, has_aux=True): the function returned "
                                f"a {type(out).__name__}; with has_aux it returns a pair "
                                f"(loss, aux)")
            loss, aux = out
        else:
            loss, aux = out, None
        if not isinstance(loss, Tensor):
            raise TypeError(f"grad({self._name}): the function returned a "
                            f"{type(loss).__name__}; it must return a scalar Tensor (the "
                            f"loss){', and aux' if self._has_aux else ''}")
        wrt = self._wrt(args)
        if _backplane._is_symbolic(loss):
            grads = _backplane._grad(loss, tuple(wrt))
        else:  # a constant: it depends on no argument
            if loss.size != 1:
                raise _backplane.ShapeError(
                    f"grad({self._name}): the loss has shape {loss.shape}; the gradient is "
                    f"taken of a scalar (reduce it first, e.g. .sum() or .mean())")
            grads = tuple(_backplane.zeros(w.shape, w.dtype, backend=w.backend) for w in wrt)
        aux_leaves = []
        self._tls.meta = _leaves(aux, aux_leaves, f"grad({self._name}): the aux output")
        return (loss, *aux_leaves, *grads)

    def __call__(self, *args, **kwargs):
        for i in self._argnums:
            if not -len(args) <= i < len(args):
                raise TypeError(f"grad({self._name}): argnums names argument {i} but the "
                                f"call passes {len(args)} positional arguments")
        flat, aux_def = self._jit._call_meta(args, kwargs)
        n_aux = tree_size(aux_def)
        loss = flat[0]
        aux = tree_unflatten(aux_def, iter(flat[1:1 + n_aux]))
        it = iter(flat[1 + n_aux:])
        grads = tuple(tree_unflatten(_leaves(args[i], [], ""), it) for i in self._argnums)
        if self._single:
            grads = grads[0]
        if self._with_value:
            return ((loss, aux) if self._has_aux else loss), grads
        return (grads, aux) if self._has_aux else grads

    def __repr__(self):
        what = "value_and_grad" if self._with_value else "grad"
        return f"<backplane.{what} of {self._name}, argnums={self._argnums}>"


def grad(fun, argnums=0, has_aux=False):
    """grad(f, argnums=0, has_aux=False) -> a function giving the gradient of
    f, a scalar Tensor function, with respect to argument argnums (an int: one
    gradient with that argument's structure; a tuple: a tuple of them). An
    argument may be a Tensor or a dict, list or tuple of Tensors (a pytree);
    every Tensor in it must be a float. With has_aux, f returns (loss, aux)
    and the result is (gradients, aux). The function is traced and compiled
    once per signature, as backplane.jit does; inside a jitted function the
    gradient joins the outer plan."""
    return _Differentiated(fun, argnums, has_aux, with_value=False)


def value_and_grad(fun, argnums=0, has_aux=False):
    """value_and_grad(f, argnums=0, has_aux=False) -> a function giving
    (f's value, its gradient) as backplane.grad describes; with has_aux,
    ((value, aux), gradient)."""
    return _Differentiated(fun, argnums, has_aux, with_value=True)

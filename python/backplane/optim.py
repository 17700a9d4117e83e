"""backplane.optim: PyTorch's SGD, Adam and AdamW over a pytree of
parameters (docs/gradients.md). The update is the C library's (bp_optim_step:
the public ops), so it runs eagerly, or inside backplane.jit it joins the
plan: a whole training step compiles into one graph.

    opt = backplane.optim.Adam(lr=1e-3)
    state = opt.init(params)                   # params: a dict (any pytree)
    @backplane.jit
    def step(params, state, x, y):
        loss, grads = backplane.value_and_grad(loss_fn)(params, x, y)
        params, state = opt.update(params, grads, state)
        return loss, params, state

The state is a dict of Tensors ({"step": ..., "0.m": ..., ...}): save it
with save_safetensors beside the parameters and a run resumes bit for bit.
"""
from . import _backplane
from ._jit import tree_flatten, tree_unflatten

_SGD, _ADAM, _ADAMW = 0, 1, 2


class Optimizer:
    """An optimizer: init(params) -> state; update(params, grads, state) ->
    (new params, new state). Parameters are immutable: update returns new
    ones."""

    def __init__(self, kind, lr, momentum=0.0, dampening=0.0, nesterov=False,
                 weight_decay=0.0, betas=(0.9, 0.999), eps=1e-8, max_grad_norm=0.0):
        self._opt = (kind, float(lr), float(momentum), float(dampening), bool(nesterov),
                     float(weight_decay), float(betas[0]), float(betas[1]), float(eps),
                     float(max_grad_norm or 0.0))

    def _names(self, n, count):
        per = (count - 1) // n if n else 0
        kinds = ["buf"] if per == 1 else ["m", "v"] if per == 2 else []
        return ["step"] + [f"{i}.{k}" for i in range(n) for k in kinds]

    def init(self, params):
        """The state before the first step: a dict of Tensors (the step counter
        0, and zeros like each parameter)."""
        leaves = []
        tree_flatten(params, leaves, "optimizer.init: params")
        state = _backplane._optim_init(self._opt, tuple(leaves))
        return dict(zip(self._names(len(leaves), len(state)), state))

    def update(self, params, grads, state):
        """One step: (new params with params' structure, new state)."""
        p, g = [], []
        tdef = tree_flatten(params, p, "optimizer.update: params")
        gdef = tree_flatten(grads, g, "optimizer.update: grads")
        if gdef != tdef:
            raise ValueError("optimizer.update: grads must have the structure of params (as "
                             "backplane.grad gives them)")
        if not isinstance(state, dict):
            raise TypeError("optimizer.update: state is the dict that init returned")
        names = list(state)
        new_p, new_s = _backplane._optim_step(self._opt, tuple(p), tuple(g),
                                              tuple(state[k] for k in names))
        return tree_unflatten(tdef, iter(new_p)), dict(zip(names, new_s))

    def __repr__(self):
        kind = {_SGD: "SGD", _ADAM: "Adam", _ADAMW: "AdamW"}[self._opt[0]]
        return f"<backplane.optim.{kind} lr={self._opt[1]}>"


class SGD(Optimizer):
    """PyTorch's SGD: momentum, dampening, nesterov, weight_decay (L2), and
    clipping by the global norm first when max_grad_norm > 0."""

    def __init__(self, lr=0.01, momentum=0.0, dampening=0.0, nesterov=False, weight_decay=0.0,
                 max_grad_norm=0.0):
        super().__init__(_SGD, lr, momentum=momentum, dampening=dampening, nesterov=nesterov,
                         weight_decay=weight_decay, max_grad_norm=max_grad_norm)


class Adam(Optimizer):
    """PyTorch's Adam (bias-corrected; weight_decay as L2)."""

    def __init__(self, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                 max_grad_norm=0.0):
        super().__init__(_ADAM, lr, betas=betas, eps=eps, weight_decay=weight_decay,
                         max_grad_norm=max_grad_norm)


class AdamW(Optimizer):
    """PyTorch's AdamW (decoupled weight decay, 0.01 by default)."""

    def __init__(self, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 max_grad_norm=0.0):
        super().__init__(_ADAMW, lr, betas=betas, eps=eps, weight_decay=weight_decay,
                         max_grad_norm=max_grad_norm)

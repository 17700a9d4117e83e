"""backplane.onnx's mappings of ONNX's optimizers (domain
ai.onnx.preview.training): Adagrad, Adam, Momentum."""

import numpy as np

from ._onnx_ops import TRAINING_HANDLERS, _fn, unsupported


# ---- ONNX's optimizers (domain ai.onnx.preview.training) --------------------------------
#
# Each takes R (the learning rate), T (the step count, int64), then n tensors
# to update and their gradients and states, and returns the n updated
# tensors followed by the n updated states of each kind. T stays a tensor:
# where a rule branches on T > 0 it is a `where`, so a training loop that
# feeds a new T each step reuses one compiled plan.

def _optimizer_groups(n, kinds):
    """R, T and the input tensors cut into `kinds` lists of equal length."""
    rest = n.tensors()[2:]
    if len(rest) % kinds:
        raise unsupported(f"{n.op_type} with {len(rest)} tensors after R and T: they come "
                          f"in {kinds} lists of one length")
    k = len(rest) // kinds
    return n.tensor(0), n.tensor(1), [rest[j * k:(j + 1) * k] for j in range(kinds)]


def _as(x, t):
    """Scalar tensor t (R, or T) in x's dtype."""
    return t if str(t.dtype) == str(x.dtype) else _fn("cast")(t, str(x.dtype))


def _training(op_type):
    def register(fn):
        assert op_type not in TRAINING_HANDLERS, op_type
        TRAINING_HANDLERS[op_type] = fn
        return fn
    return register


@_training("Adagrad")
def adagrad(n):
    """g' = norm_coefficient x + g; h' = h + g'^2;
    x' = x - R / (1 + T decay_factor) g' / (sqrt(h') + epsilon)."""
    r, t, (xs, gs, hs) = _optimizer_groups(n, 3)
    decay, eps = float(n.attr("decay_factor", 0.0)), float(n.attr("epsilon", 0.0))
    norm = float(n.attr("norm_coefficient", 0.0))
    new_x, new_h = [], []
    for x, g, h in zip(xs, gs, hs):
        rate = _as(x, r) / (1 + _as(x, t) * decay)
        g_reg = x * norm + g
        h2 = h + g_reg * g_reg
        new_x.append(x - rate * g_reg / (_fn("sqrt")(h2) + eps))
        new_h.append(h2)
    return new_x + new_h


@_training("Adam")
def adam(n):
    """g' = norm_coefficient x + g; v' = alpha v + (1 - alpha) g';
    h' = beta h + (1 - beta) g'^2; the rate R sqrt(1 - beta^T) / (1 - alpha^T)
    when T > 0, else R; x' = (1 - norm_coefficient_post)
    (x - rate v' / (sqrt(h') + epsilon))."""
    r, t, (xs, gs, vs, hs) = _optimizer_groups(n, 4)
    alpha, beta = float(n.attr("alpha", 0.9)), float(n.attr("beta", 0.999))
    eps, norm = float(n.attr("epsilon", 0.0)), float(n.attr("norm_coefficient", 0.0))
    post = float(n.attr("norm_coefficient_post", 0.0))
    outs = ([], [], [])
    for x, g, v, h in zip(xs, gs, vs, hs):
        g_reg = x * norm + g
        v2 = v * alpha + g_reg * (1 - alpha)
        h2 = h * beta + g_reg * g_reg * (1 - beta)
        rt, tt = _as(x, r), _as(x, t)
        corrected = rt * _fn("sqrt")(1 - beta ** tt) / (1 - alpha ** tt)
        rate = _fn("where")(t > 0, corrected, rt)
        outs[0].append((x - rate * (v2 / (_fn("sqrt")(h2) + eps))) * (1 - post))
        outs[1].append(v2)
        outs[2].append(h2)
    return outs[0] + outs[1] + outs[2]


@_training("Momentum")
def momentum(n):
    """g' = norm_coefficient x + g; v' = alpha v + b g', b = beta when T > 0
    and 1 at the first step; x' = x - R v' ("standard") or
    x - R (g' + alpha v') ("nesterov")."""
    r, t, (xs, gs, vs) = _optimizer_groups(n, 3)
    alpha, beta = float(n.attr("alpha")), float(n.attr("beta"))
    mode, norm = n.attr("mode"), float(n.attr("norm_coefficient"))
    if mode not in ("standard", "nesterov"):
        raise unsupported(f"Momentum mode '{mode}' (ONNX: standard, nesterov)")
    new_x, new_v = [], []
    for x, g, v in zip(xs, gs, vs):
        g_reg = x * norm + g
        b = _fn("where")(t > 0, n.constant(np.array(beta), str(x.dtype)),
                         n.constant(np.array(1.0), str(x.dtype)))
        v2 = v * alpha + b * g_reg
        step = v2 if mode == "standard" else g_reg + v2 * alpha
        new_x.append(x - _as(x, r) * step)
        new_v.append(v2)
    return new_x + new_v


# ---- ONNX's Gradient ----------------------------------------------------------------------

@_training("Gradient")
def gradient(n):
    """The derivatives of the value named y (of the sum of its elements,
    when it has several, as ONNX seeds it with ones) with respect to the
    values named xs, by the library's reverse mode (bp_graph_grad) on the
    graph being recorded: the gradient's nodes join the model's plan. The
    xs must be model inputs (symbolic while recording); the node's own
    inputs (xs, then zs) are those values."""
    from . import _backplane
    scope = n.scope()
    y_name, xs = n.attr("y"), list(n.attr("xs") or [])
    missing = [v for v in [y_name] + xs if v not in scope]
    if missing:
        raise unsupported(f"Gradient of values not computed before it: {', '.join(missing)}")
    y, wrt = scope[y_name], [scope[x] for x in xs]
    if not _backplane._is_symbolic(y):
        raise unsupported("Gradient outside a recorded graph (the model loaded with jit=False, "
                          "or y a constant): load it with jit=True, the default")
    for name, t in zip(xs, wrt):
        if not _backplane._is_symbolic(t):
            raise unsupported(f"Gradient with respect to '{name}', a constant of the plan (an "
                              f"initializer): make it a model input to differentiate by it")
    loss = y if y.size == 1 else _fn("sum")(y)
    if loss.shape != ():
        loss = _fn("reshape")(loss, ())
    return list(_backplane._grad(loss, tuple(wrt)))

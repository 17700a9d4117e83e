"""backplane.onnx's mappings of ONNX's recurrent ops: RNN, GRU, LSTM."""

import numpy as np

from ._onnx_ops import _fn, maps, unsupported


# ---- recurrent: RNN, GRU, LSTM, unrolled over the sequence -------------------------------
#
# Each is composed of backplane's ops, the sequence unrolled while recording
# (its length is part of the signature): the input's product with W for
# every step at once (one matmul), then per step the product of the hidden
# state with R and the gates' elementwise ops. sequence_lens masks the
# steps past each batch entry's length: its state stops changing and its
# outputs are zero there (in the reverse direction the state starts at its
# own last element, as ONNX says).

# activation name -> (function of x, alpha, beta; whether it takes alpha,
# beta; ONNX's defaults, those of the op of the same name)
RNN_ACTIVATIONS = {
    "relu": (lambda x, a, b: _fn("relu")(x), False, False, None, None),
    "tanh": (lambda x, a, b: _fn("tanh")(x), False, False, None, None),
    "sigmoid": (lambda x, a, b: _fn("sigmoid")(x), False, False, None, None),
    "affine": (lambda x, a, b: x * a + b, True, True, 1.0, 0.0),
    "leakyrelu": (lambda x, a, b: _fn("leaky_relu")(x, a), True, False, 0.01, None),
    "thresholdedrelu": (lambda x, a, b: _fn("thresholded_relu")(x, a), True, False, 1.0, None),
    "scaledtanh": (lambda x, a, b: _fn("tanh")(x * b) * a, True, True, 1.0, 1.0),
    "hardsigmoid": (lambda x, a, b: _fn("hard_sigmoid")(x, a, b), True, True, 0.2, 0.5),
    "elu": (lambda x, a, b: _fn("elu")(x, a), True, False, 1.0, None),
    "softsign": (lambda x, a, b: _fn("softsign")(x), False, False, None, None),
    "softplus": (lambda x, a, b: _fn("softplus")(x), False, False, None, None),
}
RNN_DEFAULT_ACTIVATIONS = {"RNN": ["Tanh"], "GRU": ["Sigmoid", "Tanh"],
                           "LSTM": ["Sigmoid", "Tanh", "Tanh"]}
RNN_GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def _rnn_activations(n, directions):
    """One list of activation functions per direction; activation_alpha and
    activation_beta are consumed in order by the activations that take them."""
    per = len(RNN_DEFAULT_ACTIVATIONS[n.op_type])
    # not the schema's default: RNN's lists two (for two directions)
    names = (n.attr("activations") if n.has_attr("activations") else None) or \
        RNN_DEFAULT_ACTIVATIONS[n.op_type] * directions
    if len(names) != per * directions:
        raise unsupported(f"{n.op_type} with {len(names)} activations for {directions} "
                          f"direction(s) (ONNX: {per} each)")
    alphas = list(n.attr("activation_alpha") or [])
    betas = list(n.attr("activation_beta") or [])
    fns = []
    for name in names:
        spec = RNN_ACTIVATIONS.get(name.lower())
        if spec is None:
            raise unsupported(f"{n.op_type} activation '{name}' (ONNX lists "
                              f"{', '.join(sorted(RNN_ACTIVATIONS))})")
        f, takes_a, takes_b, a, b = spec
        if takes_a and alphas:
            a = float(alphas.pop(0))
        if takes_b and betas:
            b = float(betas.pop(0))
        fns.append(lambda x, f=f, a=a, b=b: f(x, a, b))
    return [fns[d * per:(d + 1) * per] for d in range(directions)]


class _Step:
    """What one direction's steps share: its weights, biases and activations."""

    def __init__(self, n, d, acts, hidden, clip):
        g = RNN_GATES[n.op_type]
        self.n, self.h, self.acts, self.clip = n, hidden, acts, clip
        self.rt = _fn("transpose")(n.tensor(2)[d], [1, 0])     # (hidden, g hidden)
        b = n.tensor(3)
        self.wb = b[d][:g * hidden] if b is not None else None
        self.rb = b[d][g * hidden:] if b is not None else None
        p = n.tensor(7) if n.op_type == "LSTM" else None
        self.p = [p[d][k * hidden:(k + 1) * hidden] for k in range(3)] if p is not None else None

    def gate(self, v, k):
        return v[:, k * self.h:(k + 1) * self.h]

    def pre(self, v):
        return _fn("clip")(v, -self.clip, self.clip) if self.clip is not None else v

    def rnn(self, xt, h, c):
        return self.acts[0](self.pre(xt + _fn("matmul")(h, self.rt))), None

    def lstm(self, xt, h, c):
        f, g, hf = self.acts
        v = xt + _fn("matmul")(h, self.rt)
        pi, po, pf = self.p if self.p is not None else (None, None, None)
        i_pre = self.gate(v, 0) if pi is None else self.gate(v, 0) + pi * c
        i = f(self.pre(i_pre))
        if self.n.attr("input_forget", 0):
            fg = 1 - i
        else:
            f_pre = self.gate(v, 2) if pf is None else self.gate(v, 2) + pf * c
            fg = f(self.pre(f_pre))
        c_new = fg * c + i * g(self.pre(self.gate(v, 3)))
        o_pre = self.gate(v, 1) if po is None else self.gate(v, 1) + po * c_new
        return f(self.pre(o_pre)) * hf(c_new), c_new

    def gru(self, xt, h, c):
        f, g = self.acts
        hd = self.h
        zr = _fn("matmul")(h, self.rt[:, :2 * hd])
        if self.rb is not None:
            zr = zr + self.rb[:2 * hd]
        z = f(self.pre(self.gate(xt, 0) + self.gate(zr, 0)))
        r = f(self.pre(self.gate(xt, 1) + self.gate(zr, 1)))
        rh = self.rt[:, 2 * hd:]
        rbh = self.rb[2 * hd:] if self.rb is not None else None
        if self.n.attr("linear_before_reset", 0):
            hr = _fn("matmul")(h, rh)
            inner = r * (hr + rbh if rbh is not None else hr)
        else:
            inner = _fn("matmul")(r * h, rh)
            inner = inner + rbh if rbh is not None else inner
        hh = g(self.pre(self.gate(xt, 2) + inner))
        return (1 - z) * hh + z * h, None


def _zeros_like_state(n, x, batch, hidden):
    return _fn("zeros")([batch, hidden], dtype=str(x.dtype), backend=n.backend)


@maps("RNN", "GRU", "LSTM")
def recurrent(n):
    kind = n.op_type
    x = n.tensor(0)
    direction = n.attr("direction", "forward")
    if direction not in ("forward", "reverse", "bidirectional"):
        raise unsupported(f"{kind} direction '{direction}'")
    dirs = 2 if direction == "bidirectional" else 1
    layout = int(n.attr("layout", 0))
    hidden = int(n.attr("hidden_size") or n.tensor(2).shape[-1])
    clip = n.attr("clip")
    clip = float(clip) if clip is not None else None
    acts = _rnn_activations(n, dirs)
    if layout:  # (batch, seq, input) and states (batch, dirs, hidden)
        x = _fn("transpose")(x, [1, 0, 2])
    seq, batch = x.shape[0], x.shape[1]
    h0, c0 = n.tensor(5), n.tensor(6) if kind == "LSTM" else None
    if layout:
        h0 = _fn("transpose")(h0, [1, 0, 2]) if h0 is not None else None
        c0 = _fn("transpose")(c0, [1, 0, 2]) if c0 is not None else None
    lens = n.tensor(4)
    masks = None
    if lens is not None:
        masks = [_fn("reshape")(_fn("cast")(_fn("greater")(lens, n.constant(np.array(t, np.int32),
                                                                       str(lens.dtype))),
                                           str(x.dtype)), [batch, 1]) for t in range(seq)]
    ys, hs, cs = [], [], []
    for d in range(dirs):
        step = _Step(n, d, acts[d], hidden, clip)
        xw = _fn("matmul")(x, _fn("transpose")(n.tensor(1)[d], [1, 0]))  # (seq, batch, g hidden)
        if step.wb is not None:
            xw = xw + step.wb
            if kind != "GRU":  # GRU's recurrent bias of the third gate goes inside the reset
                xw = xw + step.rb
        h = h0[d] if h0 is not None else _zeros_like_state(n, x, batch, hidden)
        c = (c0[d] if c0 is not None else _zeros_like_state(n, x, batch, hidden)) \
            if kind == "LSTM" else None
        backwards = direction == "reverse" or d == 1
        out = [None] * seq
        run = getattr(step, kind.lower())
        for t in (reversed(range(seq)) if backwards else range(seq)):
            h_new, c_new = run(xw[t], h, c)
            if masks is None:
                h, c, out[t] = h_new, c_new, h_new
            else:
                m = masks[t]
                out[t] = h_new * m
                h = out[t] + h * (1 - m)
                if c is not None:
                    c = c_new * m + c * (1 - m)
        ys.append(_fn("stack")(out, axis=0))   # (seq, batch, hidden)
        hs.append(h)
        cs.append(c)
    y = _fn("stack")(ys, axis=1)               # (seq, dirs, batch, hidden)
    y_h = _fn("stack")(hs, axis=0)             # (dirs, batch, hidden)
    y_c = _fn("stack")(cs, axis=0) if kind == "LSTM" else None
    if layout:
        y = _fn("transpose")(y, [2, 0, 1, 3])
        y_h = _fn("transpose")(y_h, [1, 0, 2])
        y_c = _fn("transpose")(y_c, [1, 0, 2]) if y_c is not None else None
    return [y, y_h] + ([y_c] if kind == "LSTM" else [])

"""Training an MLP with backplane: the loss written once, its gradient from
backplane.value_and_grad, Adam from backplane.optim, the whole step compiled
by backplane.jit into one plan that writes the new parameters and state
into the old ones' memory (donated); a checkpoint (parameters and optimizer
state) at the end."""
import os
import tempfile

import backplane as bp

n, d, h, k = 256, 8, 32, 3
x = bp.random_normal((n, d), seed=1, dtype="float32")
labels = bp.argmax(x[:, :k] * 2 + x[:, k:2 * k], axis=1)   # a rule to learn
params = {"w1": bp.random_normal((d, h), seed=2, stddev=0.35, dtype="float32"),
          "b1": bp.zeros(h, dtype="float32"),
          "w2": bp.random_normal((h, k), seed=3, stddev=0.2, dtype="float32"),
          "b2": bp.zeros(k, dtype="float32")}


def loss_fn(p, x, labels):
    hidden = bp.relu(x @ p["w1"] + p["b1"])
    return bp.softmax_cross_entropy_loss(hidden @ p["w2"] + p["b2"], labels)


opt = bp.optim.Adam(lr=0.01)
state = opt.init(params)


@bp.jit(donate_argnums=(0, 1))
def step(p, state, x, labels):
    loss, grads = bp.value_and_grad(loss_fn)(p, x, labels)
    p, state = opt.update(p, grads, state)
    return loss, p, state


for i in range(501):
    loss, params, state = step(params, state, x, labels)
    if i % 100 == 0:
        print(f"step {i:3d}  loss {loss.item():.4f}")

assert loss.item() < 0.2, "the MLP did not learn"
path = os.path.join(tempfile.mkdtemp(), "mlp.safetensors")
bp.save_safetensors(path, {**params, **{f"adam.{name}": t for name, t in state.items()}})
print("checkpoint:", path, sorted(bp.load_safetensors(path)))

"""Training steps of a two-layer MLP with backplane's ops: forward, softmax
cross-entropy, gradients written by hand, an SGD update."""
import backplane as bp

n, d, h, k = 64, 8, 16, 3
x = bp.random_normal((n, d), seed=1, dtype="float32")
labels = bp.argmax(x[:, :k], axis=1)                      # a learnable rule
w1 = bp.random_normal((d, h), seed=2, stddev=0.3, dtype="float32")
b1 = bp.zeros(h, dtype="float32")
w2 = bp.random_normal((h, k), seed=3, stddev=0.3, dtype="float32")
b2 = bp.zeros(k, dtype="float32")
onehot = bp.one_hot(labels, k, bp.asarray([0.0, 1.0], dtype="float32"))
lr = 0.5

for step in range(30):
    z1 = x @ w1 + b1
    a1 = bp.relu(z1)
    logits = a1 @ w2 + b2
    loss = bp.softmax_cross_entropy_loss(logits, labels)
    # gradients of the mean loss
    g_logits = (bp.softmax(logits, axis=1) - onehot) / n
    g_w2 = a1.T @ g_logits
    g_b2 = bp.sum(g_logits, axis=0)
    g_a1 = g_logits @ w2.T
    g_z1 = bp.where(z1 > 0, g_a1, 0.0)
    g_w1 = x.T @ g_z1
    g_b1 = bp.sum(g_z1, axis=0)
    w1, b1, w2, b2 = w1 - lr * g_w1, b1 - lr * g_b1, w2 - lr * g_w2, b2 - lr * g_b2
    if step % 10 == 0 or step == 29:
        acc = bp.mean(bp.cast(bp.argmax(logits, axis=1) == labels, "float32")).item()
        print(f"step {step:2d}  loss {loss.item():.4f}  accuracy {acc:.2f}")

assert loss.item() < 0.7, "the MLP did not learn"
print("per-backend counters:", {k: v for k, v in bp.stats().items() if k in ("ops", "d2h_calls")})

"""NumPy in, ops on a backplane backend, NumPy out: by copy and through DLPack."""
import numpy as np

import backplane as bp

print("backends here:", bp.backends(), "default:", bp.backend().name)

a = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(3, 4)
t = bp.asarray(a)                    # a copy: changing `a` later leaves t alone
view = bp.asarray(a, copy=False)     # zero-copy on a host backend: keep `a` unchanged meanwhile
u = bp.tanh(t @ t.T) * 2 - 1         # ops, operators, Python scalars
print(u)

back = u.numpy()                     # a writable copy
assert np.allclose(back, np.tanh(a @ a.T) * 2 - 1, atol=1e-6)

shared = np.from_dlpack(u)           # the tensor's own memory, no copy
assert np.array_equal(shared, back)

assert np.array_equal(view.numpy(), a)
strided = bp.asarray(a[:, ::-2])     # non-contiguous arrays are copied into a dense tensor
assert np.array_equal(strided.numpy(), a[:, ::-2])
print("round trip ok:", u.shape, u.dtype, u.backend)

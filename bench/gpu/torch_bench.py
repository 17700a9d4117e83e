"""PyTorch's side of bench/gpu (run.sh): prints "name seconds" lines for
gpu_bench --torch. Each time: the best of three batches of back-to-back calls
(each batch at least 0.1 s) after a warm-up, each batch ending in
torch.cuda.synchronize(), the way gpu_bench times backplane."""
import time

import torch


def timeit(fn):
    fn()
    torch.cuda.synchronize()
    reps = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
        if time.perf_counter() - t0 >= 0.1 or reps >= 1 << 24:
            break
        reps *= 2
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - t0) / reps)
    return best


def main():
    torch.backends.cuda.matmul.allow_tf32 = False  # as backplane's default (tf32 = false)
    dev = torch.device("cuda:0")

    def u(*shape, dtype=torch.float32):
        return torch.rand(*shape, device=dev, dtype=dtype) * 2 - 1

    for name, dt in (("f32", torch.float32), ("f16", torch.float16), ("bf16", torch.bfloat16)):
        a, b = u(4096, 4096, dtype=dt), u(4096, 4096, dtype=dt)
        print(f"matmul_{name}_4096 {timeit(lambda: a @ b):.9g}")
        del a, b
    a, b = u(1 << 28), u(1 << 28)
    print(f"add_2p28 {timeit(lambda: a + b):.9g}")
    del a, b
    x = u(8192, 8192)
    print(f"sum_8192 {timeit(lambda: x.sum()):.9g}")
    print(f"softmax_8192 {timeit(lambda: torch.softmax(x, -1)):.9g}")
    print(f"transpose_8192 {timeit(lambda: x.t().contiguous()):.9g}")
    a, b = u(4), u(4)
    print(f"add_4 {timeit(lambda: a + b):.9g}")


if __name__ == "__main__":
    main()

"""No leaks: 10^5 mixed operations leave the live tensors, the backend's
bytes in use and the process's RSS where they started."""
import gc

import numpy as np

import backplane as bp


def rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def mixed(n, a, b, arr):
    for i in range(n):
        k = i % 10
        if k == 0:
            c = a + b
        elif k == 1:
            c = a * 2.0
        elif k == 2:
            c = bp.sum(a, axis=0)
        elif k == 3:
            c = a[1:, ::-1]
        elif k == 4:
            c = bp.asarray(arr)
        elif k == 5:
            c = bp.softmax(a)
        elif k == 6:
            c = np.from_dlpack(a)
        elif k == 7:
            try:
                a + bp.ones(7)
            except bp.ShapeError:
                pass
            c = None
        elif k == 8:
            c = bp.asarray([[1.0, 2.0], [3.0, 4.0]])
        else:
            c = bp.split(a, 2, axis=0)
        del c


def test_mixed_operations_leave_no_tensor_bytes_or_memory_behind():
    a = bp.asarray(np.arange(16.0).reshape(4, 4))
    b = bp.asarray(np.ones((4, 4)))
    arr = np.arange(8.0)
    mixed(20000, a, b, arr)  # warm up: allocator caches, interned objects
    gc.collect()
    live, used, rss = bp._backplane._live_tensors(), bp.stats()["bytes_in_use"], rss_kib()
    mixed(100000, a, b, arr)
    gc.collect()
    assert bp._backplane._live_tensors() == live
    assert bp.stats()["bytes_in_use"] == used
    assert rss_kib() - rss < 2048, f"RSS grew by {rss_kib() - rss} KiB"

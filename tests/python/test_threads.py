"""Four threads calling ops at once get the results one thread gets, and
each its own error messages."""
import threading

import numpy as np

import backplane as bp


def work(seed):
    r = np.random.default_rng(seed)
    a = bp.asarray(r.standard_normal((64, 64)).astype(np.float32))
    b = bp.asarray(r.standard_normal((64, 64)).astype(np.float32))
    big = bp.asarray(r.standard_normal((128, 128)))  # above the GIL threshold: released
    out = []
    for i in range(50):
        c = bp.softmax(a @ b + i, axis=-1)
        out.append(bp.sum(c * a, axis=0).numpy())
        out.append((big @ big.T).numpy()[0, :4])
    return out


def test_four_threads_give_the_results_of_one():
    want = {s: work(s) for s in range(4)}
    got, errors = {}, []

    def run(s):
        try:
            got[s] = work(s)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for s in range(4):
        for w, g in zip(want[s], got[s]):
            np.testing.assert_array_equal(w, g)


def test_each_thread_sees_its_own_error_messages():
    barrier = threading.Barrier(4)
    seen, failures = {}, []

    def run(k):
        a, b = bp.ones((k + 2, 3)), bp.ones((5, k + 7))
        barrier.wait()
        for _ in range(200):
            try:
                a + b
            except bp.ShapeError as e:
                msg = str(e)
                if f"({k + 2}, 3) and (5, {k + 7})" not in msg:
                    failures.append((k, msg))
                seen[k] = msg
            else:
                failures.append((k, "no error"))

    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures[:3]
    assert len(seen) == 4

"""Tests run in a worker process, so a crash or a hang in the library ends
one test (a FAIL saying so), not the run. The parent never imports
backplane: a GPU backend is only ever opened in a worker.
"""
import multiprocessing
import signal
import sys

from scope import FAIL


class BackendUnavailable(Exception):
    pass


def _serve(conn, package_dir, backend_name, root, models):
    # Imports here: the worker alone loads the library (and ONNX's protobufs).
    sys.path.insert(0, package_dir)
    import testdata
    from execute import Result, run_case

    try:
        import backplane
        import backplane.onnx  # noqa: F401
        backend = backplane.backend(backend_name).name
    except Exception as e:  # noqa: BLE001 (anything that keeps the backend from opening)
        conn.send(("unavailable", f"{type(e).__name__}: {e}"))
        return
    conn.send(("ready", backend, backplane.__version__))
    while True:
        try:
            name = conn.recv()
        except EOFError:
            break
        if name is None:
            break
        try:
            case = testdata.load_model(root, name) if models else testdata.load(root, name)
            result = run_case(case, backend)
        except Exception as e:  # unreadable test data: a FAIL that says so, never a pass
            result = Result(name, "?", FAIL, detail=f"runner error: {type(e).__name__}: {e}")
        conn.send(result)


class Worker:
    def __init__(self, package_dir, backend_name, root, timeout, models=False):
        """package_dir: the directory holding the backplane package; models:
        the names are model tests (testdata.list_models), not node tests."""
        self.args = (package_dir, backend_name, root, models)
        self.timeout = timeout
        self.proc = None
        self.backend = self.version = None
        self._ctx = multiprocessing.get_context("fork")

    def _start(self):
        self.conn, child = self._ctx.Pipe()
        self.proc = self._ctx.Process(target=_serve, args=(child, *self.args), daemon=True)
        self.proc.start()
        child.close()
        if not self.conn.poll(120):
            self._stop()
            raise BackendUnavailable("the worker did not start within 120 s")
        try:
            msg = self.conn.recv()
        except EOFError:
            self.proc.join()
            raise BackendUnavailable(f"the worker died while opening the backend "
                                     f"({_exit_text(self.proc.exitcode)})")
        if msg[0] == "unavailable":
            self._stop()
            raise BackendUnavailable(msg[1])
        _, self.backend, self.version = msg

    def _stop(self):
        if self.proc is not None:
            if self.proc.is_alive():
                self.proc.kill()
            self.proc.join()
            self.proc = None

    def run(self, name, op_of):
        """The Result of test `name`; op_of(name) labels a test that crashed."""
        if self.proc is None:
            self._start()
        from execute import Result
        self.conn.send(name)
        if not self.conn.poll(self.timeout):
            self._stop()
            return Result(name, op_of(name), FAIL, detail=f"timed out after {self.timeout} s")
        try:
            return self.conn.recv()
        except EOFError:
            self.proc.join()
            code = self.proc.exitcode
            self.proc = None
            return Result(name, op_of(name), FAIL, detail=f"crashed: {_exit_text(code)}")

    def close(self):
        if self.proc is not None:
            try:
                self.conn.send(None)
            except OSError:
                pass
            self.proc.join(10)
            self._stop()


def _exit_text(code):
    if code is not None and code < 0:
        return f"killed by {signal.Signals(-code).name}"
    return f"exit status {code}"

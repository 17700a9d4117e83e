#!/usr/bin/env python3
"""ONNX's backend node tests on a backplane backend.

  python3 tests/onnx/run.py --backend binary [--models] [-k PATTERN] [-v] [--json FILE]

Reads every node test of Debian's libonnx-testdata with python3-onnx, loads
each single-node test's model onto the backend with backplane's ONNX
importer (backplane.onnx: recorded on a graph, compiled, run), and compares
every output with onnxruntime's default tolerances. --models does the same
for the tests of several nodes (node tests that expand an ONNX function, and
the simple, pytorch-converted and pytorch-operator models beside them). Each
test ends in PASS, FAIL, OUT OF SCOPE (with a reason from a fixed
vocabulary) or KNOWN DIFFERENCE; see scope.py. Exit status: 0 when no test
failed, 1 when one did, 77 when this machine cannot run them (no test data,
no python3-onnx, no Python package built, a sanitizer build, or
--skip-unavailable and a backend that does not open), 2 for a usage error.
"""
import argparse
import fnmatch
import glob
import os
import sys

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def skip(why):
    print(f"SKIPPED: {why}")
    sys.exit(SKIP)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", default="binary", help="backend name: binary, blas_cpu, cuda, cuda:1")
    p.add_argument("--package", help="the directory holding the backplane package (default: "
                                     "$BP_PYTHON_PACKAGE, else the newest build*/python of this "
                                     "checkout)")
    p.add_argument("--testdata", help="ONNX's data/node directory (default: $BP_ONNX_TESTDATA, "
                                      "else Debian's /usr/share/libonnx-testdata/data/node)")
    p.add_argument("-k", dest="pattern", help="only tests whose name contains PATTERN (or matches "
                                              "it as a glob when it has * ? [)")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="full details, and the largest error of each passing test")
    p.add_argument("-q", "--quiet", action="store_true", help="only FAIL lines and the summary")
    p.add_argument("--models", action="store_true",
                   help="run the model tests (node tests of several nodes, and the simple, "
                        "pytorch-converted and pytorch-operator models beside them)")
    p.add_argument("--json", help="write the totals and every test's outcome to this file")
    p.add_argument("--timeout", type=float, default=120, help="seconds per test (default 120)")
    p.add_argument("--skip-unavailable", action="store_true",
                   help="exit 77, not 1, if the backend does not open here (a GPU backend)")
    p.add_argument("--sanitize", default="OFF",
                   help="ON: the library was built with sanitizers; Python cannot load it (exit 77)")
    return p.parse_args(argv)


def find_package(explicit):
    """The directory whose backplane/ is the package to test, or None."""
    if explicit:
        return explicit
    if os.environ.get("BP_PYTHON_PACKAGE"):
        return os.environ["BP_PYTHON_PACKAGE"]
    found = glob.glob(os.path.join(ROOT, "build*", "python", "backplane", "_backplane*.so"))
    return os.path.dirname(os.path.dirname(max(found, key=os.path.getmtime))) if found else None


def selected(name, pattern):
    if not pattern:
        return True
    if any(c in pattern for c in "*?["):
        return fnmatch.fnmatchcase(name, pattern)
    return pattern in name


def main(argv):
    args = parse_args(argv)
    if args.sanitize.upper() in ("ON", "1", "TRUE", "YES"):
        skip("a sanitizer build of libbackplane cannot be loaded into an uninstrumented Python")
    try:
        import numpy  # noqa: F401
        import onnx
    except ImportError as e:
        skip(f"{e.name} is not importable by {sys.executable} (Debian: apt-get install "
             f"python3-onnx python3-numpy, then run this with /usr/bin/python3; "
             f"tools/bootstrap.sh test installs them)")
    sys.path.insert(0, HERE)
    import compare
    import report
    import testdata
    from execute import op_label
    from worker import Worker

    root = testdata.find_root(args.testdata)
    if root is None:
        named = args.testdata or os.environ.get("BP_ONNX_TESTDATA")
        if named:
            print(f"error: no ONNX node tests in {named} (test_abs/model.onnx is not there)",
                  file=sys.stderr)
            return 2
        skip("ONNX's node test data is not installed (Debian: apt-get install libonnx-testdata; "
             "or set $BP_ONNX_TESTDATA)")
    pkg = find_package(args.package)
    if pkg is None or not glob.glob(os.path.join(pkg, "backplane", "_backplane*.so")):
        skip(f"the Python package is not built ({pkg or 'no build*/python here'}): the runner "
             f"loads models with backplane.onnx (tools/bootstrap.sh test builds it; or pass "
             f"--package)")

    if args.models:
        return run_models(args, root, pkg)
    names = [n for n in testdata.list_tests(root) if selected(n, args.pattern)]
    cases, not_single = {}, []
    for name in names:
        case = testdata.load(root, name)
        if case.single_node:
            cases[name] = case
        else:
            not_single.append((name, case.why_not_single))

    worker = Worker(pkg, args.backend, root, args.timeout)
    results = run_tests(worker, list(cases), lambda n: op_label(cases[n]), args)
    if results is None:
        return 1
    if args.verbose:
        for name, why in not_single:
            print(f"{'not single-node':<16} {name:<58} {why}")

    t = report.totals(results, len(names), not_single)
    title = (f"ONNX {onnx.__version__} node tests ({root}) on {worker.backend or args.backend}, "
             f"backplane {worker.version or '?'} ({pkg})"
             + (f", tests matching '{args.pattern}'" if args.pattern else ""))
    print()
    print(report.summary(t, title))
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        report.write_json(args.json, {
            "onnx_version": onnx.__version__, "testdata": root, "package": pkg,
            "backplane_version": worker.version, "backend": worker.backend or args.backend,
            "pattern": args.pattern or "", "rtol": compare.RTOL, "atol": compare.ATOL,
            "not_single_node": {name: why for name, why in not_single},
        }, t, results)
    return 1 if t["fail"] else 0


def run_tests(worker, names, label_of, args):
    """Each named test through the worker, printing its line (a failure's
    even with --quiet); the results, or None (after the error) when the
    backend cannot be opened. Closes the worker."""
    import report
    from worker import BackendUnavailable

    results = []
    try:
        for name in names:
            r = worker.run(name, label_of)
            results.append(r)
            if not args.quiet or r.outcome == "FAIL":
                print(report.line(r, args.verbose), flush=True)
    except BackendUnavailable as e:
        msg = f"backend {args.backend} is not available: {e}"
        if args.skip_unavailable:
            skip(msg)
        print(f"error: {msg}", file=sys.stderr)
        return None
    finally:
        worker.close()
    return results


def run_models(args, root, pkg):
    import compare
    import onnx
    import report
    import testdata
    from worker import Worker

    names = [n for n in testdata.list_models(root) if selected(n, args.pattern)]
    worker = Worker(pkg, args.backend, root, args.timeout, models=True)
    results = run_tests(worker, names, lambda n: "model", args)
    if results is None:
        return 1
    t = report.model_totals(results)
    data = os.path.dirname(root)
    title = (f"ONNX {onnx.__version__} model tests ({data}) on {worker.backend or args.backend}, "
             f"backplane {worker.version or '?'} ({pkg})"
             + (f", tests matching '{args.pattern}'" if args.pattern else ""))
    print()
    print(report.model_summary(t, title))
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        report.write_json(args.json, {
            "onnx_version": onnx.__version__, "testdata": data, "package": pkg,
            "backplane_version": worker.version, "backend": worker.backend or args.backend,
            "pattern": args.pattern or "", "rtol": compare.RTOL, "atol": compare.ATOL,
        }, t, results)
    return 1 if t["fail"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

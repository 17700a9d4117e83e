#!/usr/bin/env python3
"""The ONNX node tests' section of docs/conformance.md, from the JSON files
of run.py (one per backend).

  python3 tests/onnx/doc.py build/onnx/binary.json build/onnx/blas_cpu.json \\
      --update docs/conformance.md

The section runs from its marker line to the end of the file; `backplane
conform --matrix-from` keeps it when it regenerates the matrix above it.
Without --update the section is printed.
"""
import argparse
import json
import sys

MARK = "<!-- kept by backplane conform: the ONNX node tests, written by tests/onnx/doc.py -->"


def section(runs):
    first = runs[0]
    t0 = first["totals"]
    lines = [MARK, "", "## ONNX node tests", ""]
    lines += [
        f"ONNX {first['onnx_version']}'s backend node tests (Debian's `libonnx-testdata`, read with",
        "`python3-onnx`) run through the library by `tests/onnx/run.py`: each single-node test's",
        "model is loaded onto the backend with backplane's ONNX importer (`backplane.onnx`:",
        "recorded on a graph, compiled, run), and every",
        f"output compared with onnxruntime's default tolerances (rtol {first['rtol']:g}, atol "
        f"{first['atol']:g}; exact for",
        "integers and bool; NaN equals NaN). A single-node test is one whose graph has exactly one",
        "node and only tensors as inputs and outputs: "
        f"{t0['single_node']} of the {t0['node_tests']} node tests (the others are",
        "function expansions of several nodes, or take sequences or optionals). ctest runs it as",
        "`onnx.binary` and `onnx.blas_cpu` (`onnx.cuda` where a GPU is present). To reproduce (from a",
        "build directory, here `build/`):",
        "",
        "```sh",
    ]
    for r in runs:
        be = r["backend"].split(":")[0]
        lines.append(f"python3 tests/onnx/run.py --package build/python --backend {be:<8} "
                     f"--json build/onnx/{be}.json")
    lines += [
        "python3 tests/onnx/doc.py " + " ".join(
            f"build/onnx/{r['backend'].split(':')[0]}.json" for r in runs) +
        " --update docs/conformance.md",
        "```",
        "",
        "`-k PATTERN` selects tests, `-v` adds each passing test's largest error.",
        "",
        "| backend | single-node | in scope | pass | fail | of which unsupported | known difference "
        "| out of scope: op | dtype | mode |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        t = r["totals"]
        o = t["out_of_scope_by_reason"]
        lines.append(f"| {r['backend']} | {t['single_node']} | {t['in_scope']} | **{t['pass']}** | "
                     f"{t['fail']} | {t['fail_unsupported']} | {t['known_difference']} | "
                     f"{o['op']} | {o['dtype']} | {o['mode']} |")
    lines += [
        "",
        "Outcomes: PASS, every output matched; FAIL, an output did not, or the library refused the",
        "node (\"unsupported\": the op is mapped but the backend answers `BP_ERR_UNSUPPORTED_OP`);",
        "OUT OF SCOPE, not run, for one of the reasons below; KNOWN DIFFERENCE, run, and the",
        "output differs from ONNX's exactly as explained below (checked: any other difference fails).",
        "",
        "| reason | meaning |",
        "|---|---|",
    ]
    lines += [f"| {k} | {v} |" for k, v in first["out_of_scope_reasons"].items()]
    missing = {}
    for test in first["tests"]:
        if test["outcome"] == "OUT OF SCOPE" and test["reason"] == "op":
            missing[test["op"]] = missing.get(test["op"], 0) + 1
    if missing:
        ops = "op" if len(missing) == 1 else "ops"
        lines += ["", f"The {len(missing)} {ops} of the test suite the library does not have (tests): " +
                  ", ".join(f"{op} {n}" for op, n in sorted(missing.items())) + "."]
    others = [t for t in first["tests"]
              if t["outcome"] == "OUT OF SCOPE" and t["reason"] != "op"]
    if others:
        lines += ["", "Out of scope for a dtype or a mode: " + "; ".join(
            f"`{t['name']}` ({t['detail']})" for t in others) + "."]
    known = first["known_differences"]
    if known:
        whys = sorted(set(known.values()))
        for why in whys:
            names = ", ".join(f"`{n}`" for n, w in known.items() if w == why)
            lines += ["", f"Known differences ({names}): {why}."]
    waiting = t0.get("fail_unsupported_by_function", {})
    if waiting:
        lines += ["", f"Mapped and waiting for kernels on {first['backend']} "
                      "(tests failing with `BP_ERR_UNSUPPORTED_OP`, by library function): " +
                  ", ".join(f"`{fn}` {n}" for fn, n in waiting.items()) + "."]
    return "\n".join(lines) + "\n"


def update(path, text):
    with open(path) as f:
        doc = f.read()
    at = doc.find(MARK)
    head = doc if at < 0 else doc[:at]
    with open(path, "w") as f:
        f.write(head.rstrip("\n") + "\n\n" + text)


def main(argv):
    p = argparse.ArgumentParser(description="the ONNX node tests' section of docs/conformance.md")
    p.add_argument("json", nargs="+", help="run.py --json files, one per backend")
    p.add_argument("--update", metavar="MARKDOWN", help="replace (or append) the section there")
    args = p.parse_args(argv)
    runs = []
    for path in args.json:
        with open(path) as f:
            runs.append(json.load(f))
    if any(r.get("pattern") for r in runs):
        print("error: a run with -k covers a selection, not the whole suite", file=sys.stderr)
        return 2
    text = section(runs)
    if args.update:
        update(args.update, text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""What a run prints and writes: one line per test, the summary table with
every out-of-scope reason (zero counts included), and the machine-readable
totals (JSON)."""
import collections
import json

from scope import FAIL, KNOWN_DIFFERENCE, KNOWN_DIFFERENCES, OUT_OF_SCOPE, OUTCOMES, PASS, REASONS

UNSUPPORTED = "BP_ERR_UNSUPPORTED_OP"


def line(r, verbose):
    if r.outcome == OUT_OF_SCOPE:
        text = f"{r.reason}: {r.detail}"
    elif r.outcome == PASS:
        text = f"largest error {r.error:.3g}" if verbose and r.error is not None else ""
    else:
        text = r.detail
    if not verbose and len(text) > 150:
        text = text[:147] + "..."
    return f"{r.outcome:<16} {r.name:<58} {r.op:<26} {text}".rstrip()


def totals(results, n_node_tests, not_single):
    by = collections.Counter(r.outcome for r in results)
    oos = collections.Counter(r.reason for r in results if r.outcome == OUT_OF_SCOPE)
    unsupported = collections.Counter(r.refused_by for r in results
                                      if r.outcome == FAIL and r.status == UNSUPPORTED)
    return {
        "node_tests": n_node_tests,
        "not_single_node": len(not_single),
        "single_node": len(results),
        "in_scope": by[PASS] + by[FAIL],
        "pass": by[PASS],
        "fail": by[FAIL],
        "fail_unsupported": sum(unsupported.values()),
        "known_difference": by[KNOWN_DIFFERENCE],
        "out_of_scope": sum(oos.values()),
        "out_of_scope_by_reason": {k: oos[k] for k in REASONS},
        "fail_unsupported_by_function": dict(sorted(unsupported.items())),
    }


def _reasons_table(t):
    """The out-of-scope reasons, each with its meaning and count (a blank
    line first)."""
    out = ["", "  Out-of-scope reasons (the whole vocabulary):",
           "    {:<6} {:<84} {:>5}".format("reason", "meaning", "tests")]
    for k, meaning in REASONS.items():
        out.append("    {:<6} {:<84} {:>5}".format(k, meaning, t["out_of_scope_by_reason"][k]))
    return out


def summary(t, title):
    out = [title, ""]
    row = "  {:<64} {:>5}"
    out.append(row.format("node tests", t["node_tests"]))
    out.append(row.format("  not single-node (several nodes, or sequences/optionals)",
                          t["not_single_node"]))
    out.append(row.format("single-node tests", t["single_node"]))
    out.append(row.format("  in scope", t["in_scope"]))
    out.append(row.format("    PASS", t["pass"]))
    fail = row.format("    FAIL", t["fail"])
    if t["fail_unsupported"]:
        fail += (f"   ({t['fail_unsupported']} refused with {UNSUPPORTED}: mapped, but the backend "
                 f"has no kernel for that op and dtype)")
    out.append(fail)
    out.append(row.format("  KNOWN DIFFERENCE", t["known_difference"]))
    out.append(row.format("  OUT OF SCOPE", t["out_of_scope"]))
    out += _reasons_table(t)
    out.append("")
    out.append("  Known differences (run and checked; any other difference is a FAIL):")
    for why in sorted({w for w, _ in KNOWN_DIFFERENCES.values()}):
        names = ", ".join(n for n, (w, _) in KNOWN_DIFFERENCES.items() if w == why)
        out.append(f"    {names}:")
        out.append(f"      {why}")
    if t["fail_unsupported_by_function"]:
        out.append("")
        out.append(f"  FAIL with {UNSUPPORTED}, by library function:")
        for fn, n in t["fail_unsupported_by_function"].items():
            out.append(f"    {fn:<28} {n:>4}")
    return "\n".join(out)


def model_totals(results):
    """totals() for model tests, with the outcomes per directory and the ops
    that keep models out (each model counted once per op it lacks)."""
    t = totals(results, len(results), [])
    by_dir = collections.defaultdict(collections.Counter)
    for r in results:
        by_dir[r.name.split("/")[0]][r.outcome] += 1
    t["by_directory"] = {d: dict(c) for d, c in sorted(by_dir.items())}
    missing = collections.Counter(op for r in results
                                  if r.outcome == OUT_OF_SCOPE and r.missing
                                  for op in r.missing.split(", "))
    t["missing_ops"] = dict(missing.most_common())
    return t


def model_summary(t, title):
    out = [title, ""]
    row = "  {:<64} {:>5}"
    out.append(row.format("model tests", t["single_node"]))
    for d, c in t["by_directory"].items():
        out.append(row.format(f"  {d}: " + ", ".join(f"{k} {c.get(k, 0)}" for k in OUTCOMES
                                                      if c.get(k)), sum(c.values())))
    out.append(row.format("  in scope", t["in_scope"]))
    out.append(row.format("    PASS", t["pass"]))
    out.append(row.format("    FAIL", t["fail"]))
    out.append(row.format("  OUT OF SCOPE", t["out_of_scope"]))
    out += _reasons_table(t)
    if t["missing_ops"]:
        out.append("")
        out.append("  Ops with no mapping, by the models they keep out:")
        for op, n in t["missing_ops"].items():
            out.append(f"    {op:<28} {n:>4}")
    return "\n".join(out)


def write_json(path, meta, t, results):
    doc = dict(meta)
    doc["totals"] = t
    doc["outcomes"] = list(OUTCOMES)
    doc["out_of_scope_reasons"] = REASONS
    doc["known_differences"] = {n: w for n, (w, _) in KNOWN_DIFFERENCES.items()}
    doc["tests"] = [{k: v for k, v in vars(r).items() if v not in ("", None)} for r in results]
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")

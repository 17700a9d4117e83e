"""Running one test (a single-node test or a model) on one backend through
backplane's ONNX importer (backplane.onnx, the package users import), and
deciding its outcome.

The test's model is loaded onto the backend as a user loads one: its nodes
mapped by the importer's mapping (python/backplane/_onnx_ops.py), recorded
on a graph per input signature, compiled, and run for every data set. What
the importer refuses as unsupported (an op with no mapping, a dtype, a mode
or attribute value, a sequence value) is OUT OF SCOPE with that reason;
anything else refused or wrong is a FAIL, never a pass.
"""
import re
import traceback
from dataclasses import dataclass
from typing import Optional

from compare import Verdict, compare
from dtypes import NUMPY_NAME, SHORT_NAME, bp_dtype, decode, onnx_name
from hostvalues import bf16_bits_to_f32, f32_to_bf16_bits
from scope import (FAIL, KNOWN_DIFFERENCE, KNOWN_DIFFERENCES, OUT_OF_SCOPE, PASS, OutOfScope,
                   missing_dtype)

# The importer's reasons as the runner's vocabulary (scope.REASONS).
REASONS = {"op": "op", "dtype": "dtype", "mode": "mode", "value": "value", "opset": "mode"}


@dataclass
class Result:
    name: str
    op: str
    outcome: str
    reason: str = ""                 # OUT OF SCOPE: a key of scope.REASONS
    detail: str = ""
    error: Optional[float] = None    # the largest error over the outputs compared
    refused_by: str = ""             # FAIL from the library: the function that refused
    status: str = ""                 # ... and its status (BP_ERR_UNSUPPORTED_OP: not implemented)
    missing: str = ""                # OUT OF SCOPE "op": the ops without a mapping, ", "-joined


def op_label(case):
    """The node's op for a single-node test; the node count for a model."""
    if getattr(case, "single_node", False):
        node = case.node
        return f"{node.domain}.{node.op_type}" if node.domain not in ("", "ai.onnx") else node.op_type
    n = len(case.model.graph.node)
    return f"{n} node{'' if n == 1 else 's'}"


def _to_tensor(bp, backend, dtype, host):
    """A decoded host value (dtypes.decode's form) as a tensor on backend."""
    if dtype == "bf16":  # carried as its bits: widened exactly, then narrowed exactly
        return bp.asarray(bf16_bits_to_f32(host), backend=backend, dtype="bfloat16")
    return bp.asarray(host, backend=backend, dtype=NUMPY_NAME[dtype])


def _to_host(bp, t):
    """A tensor as (short dtype, host array), dtypes.decode's form."""
    dtype = SHORT_NAME[str(t.dtype)]
    if dtype == "bf16":
        return dtype, f32_to_bf16_bits(bp.cast(t, "float32").numpy())
    return dtype, t.numpy()


def _refusal(e):
    """(function, status) of a backplane.Error: the library function its
    message names ('backplane.onnx: node 0 (MatMul): backplane.matmul: ...')."""
    names = [n for n in re.findall(r"backplane\.(\w+):", str(e)) if n != "onnx"]
    return (names[-1] if names else ""), getattr(e, "status", "")


def run_case(case, backend):
    """The Result of a test (testdata.Case or testdata.ModelCase) on backend
    (a backplane backend name)."""
    import backplane as bp
    import backplane.onnx as bo
    op = op_label(case)
    try:
        if getattr(case, "other_values", None):
            raise OutOfScope("value", ", ".join(case.other_values))
        lacking = sorted({onnx_name(v.elem_type) for v in case.inputs + case.outputs
                          if bp_dtype(v.elem_type) is None})
        if lacking:
            raise missing_dtype(", ".join(lacking))
        model = bo.load(case.model, backend=backend)
    except OutOfScope as e:
        return Result(case.name, op, OUT_OF_SCOPE, e.reason, e.detail)
    except bo.UnsupportedModelError as e:
        return Result(case.name, op, OUT_OF_SCOPE, REASONS[e.reason], _detail(e),
                      missing=e.missing if e.reason == "op" else "")
    sets = case.data_sets()
    if not sets:
        return Result(case.name, op, FAIL, detail="no test_data_set_* in the test")
    worst, known = 0.0, None
    for inputs, outputs in sets:
        r = _run_set(bp, bo, case, op, model, backend, inputs, outputs)
        if isinstance(r, Result):
            return r
        err, why = r
        worst = max(worst, err)
        known = known or why
    if known:
        return Result(case.name, op, KNOWN_DIFFERENCE, detail=known, error=worst)
    return Result(case.name, op, PASS, error=worst)


def _compare_sequence(bp, produced, protos, elem_type):
    """compare() over a sequence's tensors, which must be as many; the first
    element that differs decides."""
    if len(produced) != len(protos):
        return Verdict(False, detail=f"a sequence of {len(produced)} tensors, expected "
                                     f"{len(protos)}")
    worst = 0.0
    for k, (t, proto) in enumerate(zip(produced, protos)):
        actual_dtype, actual = _to_host(bp, t)
        exp_dtype, expected = decode(proto, elem_type)
        verdict = compare(exp_dtype, expected, actual_dtype, actual)
        if not verdict.ok:
            return Verdict(False, detail=f"element {k}: {verdict.detail}", error=verdict.error)
        worst = max(worst, verdict.error or 0.0)
    return Verdict(True, error=worst)


def _detail(e):
    """An UnsupportedModelError's message without the importer's prefix."""
    return str(e).replace("backplane.onnx: ", "", 1)


def _run_set(bp, bo, case, op, model, backend, inputs, outputs):
    """(largest error, known-difference explanation or None), or a Result that
    ends the test."""
    try:
        plain = [(v, p) for v, p in zip(case.inputs, inputs)
                 if not getattr(v, "sequence", False) and not getattr(v, "optional", False)]
        values = {v.name: decode(p, v.elem_type) for v, p in plain}
        feeds = {name: _to_tensor(bp, backend, dt, host) for name, (dt, host) in values.items()}
        for v, p in zip(case.inputs, inputs):  # a sequence: a list; an empty optional: None
            if getattr(v, "sequence", False) or getattr(v, "optional", False):
                feeds[v.name] = (None if p is None else
                                 [_to_tensor(bp, backend, *decode(e, v.elem_type)) for e in p]
                                 if v.sequence else
                                 _to_tensor(bp, backend, *decode(p, v.elem_type)))
        produced = model.run(feeds)
        worst, known = 0.0, None
        for k, (v, proto) in enumerate(zip(case.outputs, outputs)):
            if (proto is None) != (produced[v.name] is None):
                verdict = Verdict(False, detail=f"{'empty' if produced[v.name] is None else 'a value'}"
                                                f", expected {'empty' if proto is None else 'a value'}")
            elif proto is None:
                verdict = Verdict(True, error=0.0)
            elif getattr(v, "sequence", False):
                verdict = _compare_sequence(bp, produced[v.name], proto, v.elem_type)
            else:
                actual_dtype, actual = _to_host(bp, produced[v.name])
                exp_dtype, expected = decode(proto, v.elem_type)
                verdict = compare(exp_dtype, expected, actual_dtype, actual)
            if verdict.ok:
                worst = max(worst, verdict.error or 0.0)
                continue
            why, check = KNOWN_DIFFERENCES.get(case.name, (None, None))
            if check and check([values[i.name][1] for i in case.inputs], expected, actual):
                worst, known = max(worst, verdict.error), why
                continue
            where = f"output {k} '{v.name}'" if len(case.outputs) > 1 else "output"
            return Result(case.name, op, FAIL, detail=f"{where}: {verdict.detail}",
                          error=verdict.error)
        return worst, known
    except bo.UnsupportedModelError as e:  # found at the first run (shapes known only then)
        return Result(case.name, op, OUT_OF_SCOPE, REASONS[e.reason], _detail(e))
    except bp.Error as e:
        fn, status = _refusal(e)
        label = " (unsupported)" if status == "BP_ERR_UNSUPPORTED_OP" else ""
        return Result(case.name, op, FAIL, detail=f"refused{label}: {e}", refused_by=fn,
                      status=status)
    except Exception as e:  # a mistake of the mapping or the runner: visible, never a pass
        tb = traceback.extract_tb(e.__traceback__)[-1]
        return Result(case.name, op, FAIL,
                      detail=f"runner error: {type(e).__name__}: {e} ({tb.filename.split('/')[-1]}:"
                             f"{tb.lineno})")

"""Running one single-node test on one backend and deciding its outcome.

The order of decisions: the op must have a handler (else OUT OF SCOPE "op"),
every graph input and output must have a library dtype (else "dtype"), the
handler may refuse a mode before calling the library ("mode"). Then the node
runs once per data set and every output is compared; anything the library
refuses, including BP_ERR_UNSUPPORTED_OP for a mapped op, is a FAIL.
"""
import traceback
from dataclasses import dataclass
from typing import Optional

import registry
from bplib import Arena, BpError
from compare import compare
from dtypes import bp_dtype, decode, onnx_name
from node import Node
from scope import (FAIL, KNOWN_DIFFERENCE, KNOWN_DIFFERENCES, OUT_OF_SCOPE, PASS, OutOfScope,
                   missing_dtype, missing_op)


@dataclass
class Result:
    name: str
    op: str
    outcome: str
    reason: str = ""                 # OUT OF SCOPE: a key of scope.REASONS
    detail: str = ""
    error: Optional[float] = None    # the largest error over the outputs compared
    planned: str = ""                # OUT OF SCOPE "op": where the op is planned, if it is
    refused_by: str = ""             # FAIL from the library: the function that refused
    status: str = ""                 # ... and its status (BP_ERR_UNSUPPORTED_OP: not implemented)


def op_label(case):
    node = case.node
    return f"{node.domain}.{node.op_type}" if node.domain not in ("", "ai.onnx") else node.op_type


def scope_check(case):
    """OutOfScope for the decisions that need no library, else the handler."""
    node = case.node
    handler = registry.handler("" if node.domain == "ai.onnx" else node.domain, node.op_type)
    if handler is None:
        plan = registry.planned(node.domain, node.op_type)
        e = missing_op(f"{op_label(case)}" + (f" (planned: {plan})" if plan else ""))
        e.planned = plan or ""
        raise e
    lacking = sorted({onnx_name(v.elem_type) for v in case.inputs + case.outputs
                      if bp_dtype(v.elem_type) is None})
    if lacking:
        raise missing_dtype(", ".join(lacking))
    return handler


def run_case(case, backend):
    op = op_label(case)
    try:
        handler = scope_check(case)
    except OutOfScope as e:
        return Result(case.name, op, OUT_OF_SCOPE, e.reason, e.detail,
                      planned=getattr(e, "planned", ""))
    worst, known = 0.0, None
    sets = case.data_sets()
    if not sets:
        return Result(case.name, op, FAIL, detail="no test_data_set_* in the test")
    for inputs, outputs in sets:
        arena = Arena(backend)
        try:
            r = _run_set(case, op, handler, arena, inputs, outputs)
        finally:
            arena.release()
        if isinstance(r, Result):
            return r
        err, why = r
        worst = max(worst, err)
        known = known or why
    if known:
        return Result(case.name, op, KNOWN_DIFFERENCE, detail=known, error=worst)
    return Result(case.name, op, PASS, error=worst)


def _run_set(case, op, handler, arena, inputs, outputs):
    """(largest error, known-difference explanation or None), or a Result that
    ends the test."""
    try:
        values = {v.name: decode(p, v.elem_type) for v, p in zip(case.inputs, inputs)}
        node = Node(case.node, case.opset, values, {v.name: v.elem_type for v in case.outputs},
                    arena)
        produced = handler(node)
        by_name = dict(zip(case.node.output, produced))
        worst, known = 0.0, None
        for k, (v, proto) in enumerate(zip(case.outputs, outputs)):
            t = by_name.get(v.name)
            if t is None:
                return Result(case.name, op, FAIL,
                              detail=f"output {k} '{v.name}' was not produced by the mapping")
            actual = t.to_host()
            exp_dtype, expected = decode(proto, v.elem_type)
            verdict = compare(exp_dtype, expected, t.dtype, actual)
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
    except OutOfScope as e:
        return Result(case.name, op, OUT_OF_SCOPE, e.reason, e.detail)
    except BpError as e:
        label = " (unsupported)" if e.status == "BP_ERR_UNSUPPORTED_OP" else ""
        return Result(case.name, op, FAIL, detail=f"refused{label}: {e}", refused_by=e.function,
                      status=e.status)
    except Exception as e:  # a mistake of the mapping: visible, never a pass
        tb = traceback.extract_tb(e.__traceback__)[-1]
        return Result(case.name, op, FAIL,
                      detail=f"runner error: {type(e).__name__}: {e} ({tb.filename.split('/')[-1]}:"
                             f"{tb.lineno})")

"""The op mapping's table: ONNX op type -> the handler that runs it on the
library. Handlers live in the ops_*.py modules, one per family, each
registered with @maps("OpType"). A handler takes a node.Node and returns one
entry per node output: a library tensor, or None for an output not asked for.
It raises scope.unsupported(...) for a mode or attribute the library lacks,
before it calls the library.

Adding an op is one entry: write its handler with @maps and, if it was in
PLANNED, take it out of there.
"""
import importlib

HANDLERS = {}

# Ops that do not exist in the library yet but are planned, with where. A test
# of one is out of scope ("op"), and the summary counts them per plan. (Issue
# 16's nn ops are mapped: ops_nn, ops_nn_norm, ops_resize.)
PLANNED = {}

MODULES = ("ops_elementwise", "ops_reduce", "ops_movement", "ops_index", "ops_linalg",
           "ops_creation", "ops_nn", "ops_nn_norm", "ops_resize")


def maps(*op_types, domain=""):
    def register(fn):
        for op in op_types:
            assert (domain, op) not in HANDLERS, op
            HANDLERS[(domain, op)] = fn
        return fn
    return register


def load():
    for m in MODULES:
        importlib.import_module(m)
    return HANDLERS


def handler(domain, op_type):
    return HANDLERS.get((domain, op_type))


def planned(domain, op_type):
    return PLANNED.get(op_type) if domain == "" else None

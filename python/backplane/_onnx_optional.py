"""backplane.onnx's mappings of ONNX's optional values: Optional,
OptionalHasElement, OptionalGetElement.

An optional value inside a model is an Optional holding a tensor, a
sequence (a list of tensors, _onnx_sequence.Sequence) or nothing, while the
graph is recorded. Whether it holds something is known then (it is part of
a model input's signature), so OptionalHasElement is a constant and an If
on it picks its branch while recording.
"""

import numpy as np

from ._onnx_ops import maps, unsupported


class Optional:
    """An optional value: `value` is a tensor, a Sequence, or None (empty)."""

    __slots__ = ("value",)

    def __init__(self, value=None):
        self.value = value

    def __repr__(self):
        return f"Optional({self.value!r})"


@maps("Optional")
def optional(n):
    if n.has_input(0):
        return [Optional(n.tensor(0))]
    if not n.has_attr("type"):
        raise unsupported("Optional with neither an input nor a type (ONNX: one of them)")
    return [Optional(None)]


@maps("OptionalHasElement")
def optional_has_element(n):
    """Opset 18 also takes a tensor or a sequence (which have an element)
    and a missing input (which has none)."""
    if not n.has_input(0):
        present = False
    else:
        v = n.tensor(0)
        present = v.value is not None if isinstance(v, Optional) else True
    return [n.constant(np.array(present))]


@maps("OptionalGetElement")
def optional_get_element(n):
    v = n.tensor(0)
    if not isinstance(v, Optional):
        return [v]  # opset 18: a tensor or a sequence is its own element
    if v.value is None:
        raise ValueError(f"backplane.onnx: OptionalGetElement of the empty optional "
                         f"'{n.proto.input[0]}' (ONNX: an error)")
    return [v.value]

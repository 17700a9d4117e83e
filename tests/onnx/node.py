"""One ONNX node as a mapping handler sees it: attributes with ONNX's defaults
for the model's opset, optional inputs, inputs as library tensors or as host
values (axes, shapes, pads: what a runtime needs as constants), and the
declared type of every output.
"""
import numpy as np
import onnx
from onnx import helper

from dtypes import bp_dtype


class Node:
    def __init__(self, proto, opset, values, output_types, arena, tensors=None):
        """proto: the NodeProto; opset: the model's version of the node's domain;
        values: input name -> (library dtype, host array); output_types: output
        name -> ONNX element type; arena: where tensors are made (bplib.Arena);
        tensors: input name -> library tensor, for inputs the library already
        holds (a model's values made by earlier nodes)."""
        self.proto, self.opset, self.arena = proto, opset, arena
        self.op_type = proto.op_type
        self._values, self._output_types = values, output_types
        self._tensors = tensors if tensors is not None else {}
        self._attrs = {a.name: a for a in proto.attribute}
        try:
            self._schema = onnx.defs.get_schema(proto.op_type, opset, proto.domain)
        except onnx.defs.SchemaError:
            self._schema = None

    # ---- attributes ---------------------------------------------------------
    def has_attr(self, name):
        return name in self._attrs

    def attr(self, name, default=None):
        """The attribute's value (strings decoded), else the schema's default for
        this opset, else `default`."""
        a = self._attrs.get(name)
        if a is None and self._schema is not None:
            spec = self._schema.attributes.get(name)
            if spec is not None and spec.default_value.type != onnx.AttributeProto.UNDEFINED:
                a = spec.default_value
        if a is None:
            return default
        v = helper.get_attribute_value(a)
        if isinstance(v, bytes):
            return v.decode()
        if isinstance(v, list) and v and isinstance(v[0], bytes):
            return [s.decode() for s in v]
        return v

    # ---- inputs -------------------------------------------------------------
    @property
    def n_inputs(self):
        return len(self.proto.input)

    def has_input(self, i):
        """False for an input left out (past the end, or an empty name)."""
        return i < len(self.proto.input) and self.proto.input[i] != ""

    def dtype(self, i):
        name = self.proto.input[i]
        t = self._tensors.get(name)
        return t.dtype if t is not None else self._values[name][0]

    def value(self, i):
        """Input i as a host array (None if left out): for the inputs a runtime
        takes as constants (axes, shapes, pads, k)."""
        if not self.has_input(i):
            return None
        return self._values[self.proto.input[i]][1]

    def ints(self, i):
        """Input i as a list of Python ints (None if left out)."""
        v = self.value(i)
        return None if v is None else [int(x) for x in np.asarray(v).ravel()]

    def tensor(self, i):
        """Input i as a library tensor on the test's backend (None if left out)."""
        if not self.has_input(i):
            return None
        name = self.proto.input[i]
        if name not in self._tensors:
            dtype, host = self._values[name]
            self._tensors[name] = self.arena.from_host(dtype, host)
        return self._tensors[name]

    def tensors(self):
        """Every input that is present, as tensors."""
        return [self.tensor(i) for i in range(self.n_inputs) if self.has_input(i)]

    # ---- outputs ------------------------------------------------------------
    @property
    def n_outputs(self):
        return len(self.proto.output)

    def wants(self, k):
        """Whether output k is asked for (present with a name)."""
        return k < len(self.proto.output) and self.proto.output[k] != ""

    def output_dtype(self, k):
        """The library dtype the graph declares for output k."""
        return bp_dtype(self._output_types[self.proto.output[k]])

    # ---- library calls ------------------------------------------------------
    def call(self, function, *args):
        return self.arena.call(function, *args)

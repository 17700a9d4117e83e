#!/usr/bin/env python3
"""Write the fuzz_graph seed corpus (tests/fuzz/corpus/fuzz_graph).

Each seed is a small graph in fuzz_graph's input encoding: a byte for the
backend, the inputs, then one byte per action (fg_actions in fuzz_graph.c)
followed by what the action reads (fuzz_graph.c, fg_record.c, fg_plan.c,
fz_data.c), then what fg_finish reads. Keep this file in step with them;
run it after changing the encoding:

    tests/fuzz/make_graph_seeds.py          # rewrites the corpus directory
"""
import os

from make_api_seeds import OPS

ACTIONS = ["op", "op", "op", "op", "op", "op", "view", "const", "const", "output", "output",
           "bad_shapes", "transfer", "misuse", "compile_early", "conv"]
BOOL, U8, I8, I32, I64, F16, BF16, F32, F64 = range(9)
FLOATS = [F32, F32, F64, F16, BF16]              # fg_float
RANKS = [1, 2, 2, 3, 0, 1, 2, 3, 4]              # fg_small_shape
EXTENTS = [1, 2, 3, 2, 3, 1, 4, 0]
IMAGE_ROWS = [3, 4, 6, 1]                        # fg_small_shape's rank 4
IMAGE_COLS = [3, 5, 9, 20]
CONST_DTYPES = [F32, F32, F64, F16, BF16, I64, I64, I32, BOOL, U8]
OP_CODE = {name: k for k, (name, _, _) in enumerate(OPS)}
OP_INPUTS = {name: ins for name, _, ins in OPS}
OP_KIND = {name: kind for name, kind, _ in OPS}
TWO_OUTPUTS = {"sort", "topk", "max_pool", "layer_norm", "softmax_cross_entropy_loss"}


def data(mode=3):
    """fz_fill: a mode, then 16 bytes of pattern."""
    return [mode] + [(i * 53 + 7) & 0xff for i in range(16)]


class Graph:
    """Emit a graph; track the number of values (value picks are by index)."""

    def __init__(self, backend="binary", guards=False):
        self.b = bytearray([3 if backend == "blas_cpu" else 0])
        if guards:
            self.b[0] |= 0xf0
        self.values = 0

    def emit(self, *args):
        for a in args:
            self.b.extend(a if isinstance(a, (list, bytes, bytearray)) else [a])
        return self

    def inputs(self, *specs):
        """specs: (dtype, dims) each; dims in 0..4, or an image batch (N 1..2, C 1..4,
        H in IMAGE_ROWS, W in IMAGE_COLS)."""
        self.emit(len(specs) - 1)
        for k, (dt, dims) in enumerate(specs):
            if k > 0:
                self.emit(200)                   # not input 0's dtype: fg_float's byte follows
            self.emit(FLOATS.index(dt), 200)     # dtype; how: a shape of its own
            if len(dims) == 4:
                n, c, h, w = dims
                self.emit(RANKS.index(4), n - 1, c - 1, IMAGE_ROWS.index(h), IMAGE_COLS.index(w),
                          data())
            else:
                self.emit(RANKS.index(len(dims)), [EXTENTS.index(d) for d in dims], data())
        self.values = len(specs)
        return self

    def pick(self, v):
        """fg_value_pick's byte for value v (>= 128: by index)."""
        if v is None:
            return 0xff
        n = self.values
        for b in range(128, 255):
            if b % n == v:
                return b
        raise ValueError(v)

    def act(self, name):
        return self.emit(ACTIONS.index(name))

    def op(self, name, *ins, mode=200, on_rec=True, made=None, keep_optional=False):
        """An op with default arguments (mode 200), its inputs by value index."""
        self.act("op").emit(OP_CODE[name])
        for (iname, optional), v in zip(OP_INPUTS[name], list(ins) + [None] * 5):
            self.emit(self.pick(v))
            if optional:
                self.emit(0 if keep_optional and v is not None else 1)
        self.emit(mode)
        if not OP_INPUTS[name]:
            self.emit(0 if on_rec else 255)
        self.values += made if made is not None else (2 if name in TWO_OUTPUTS else 1)
        return self

    def mild(self, name, x, axis=0, keepdims=0, n_axes=0, extra=()):
        """An op with mild arguments: axis (index into -1, 0, 1, -2, 0, 2), keepdims,
        n_axes, two axes, two flag toggles, then the op's own bytes."""
        self.act("op").emit(OP_CODE[name], self.pick(x))
        for (_, optional) in OP_INPUTS[name][1:]:
            self.emit(0xff)
            if optional:
                self.emit(1)
        self.emit(0, axis, keepdims, n_axes, 0, 1, 0, 0, list(extra))
        self.values += 2 if name in TWO_OUTPUTS else 1
        return self

    def view(self, kind, x, *args):
        """reshape (args: 0, flatten), squeeze (args: n, then axis + 3 each),
        unsqueeze (args: axis + 4)."""
        self.act("view").emit(["reshape", "squeeze", "unsqueeze"].index(kind), self.pick(x))
        self.emit([0] if kind != "reshape" else [], list(args))
        self.values += 1
        return self

    def const(self, like, dlpack=False, other=False, dtype=None, broadcast_axis=None, numel=6,
              index=1):
        """A constant shaped like value `like` (of rank > 0, numel elements), of its
        dtype unless given; index constants hold `index` (-3..3) everywhere."""
        self.act("const").emit(self.pick(like))
        if dtype is None:
            self.emit(0)
        else:
            self.emit(200, CONST_DTYPES.index(dtype))
        if broadcast_axis is None:
            self.emit(0, 255)
        else:
            self.emit(0, 0, broadcast_axis)
        self.emit(0 if dlpack else 255 if other else 100)
        one = [index, 0] if index >= 0 else [index + 3, 0xff]
        self.emit(data() if dtype not in (I32, I64) else one * numel)
        self.values += 1
        return self

    def conv(self, x, kind=0, filters=4, depthwise=False, bias=False, residual=None,
             relu=True):
        """fg_act_conv on value x: kind 0 3x3, 2 stride 2, 3 dilated, 4 1x1, 5 3x1;
        residual None, "like" (a value of the output's shape: one must exist) or
        "const" (a new constant of it), then its relu; else a relu or not."""
        how = (192 if depthwise else 0) + (32 if bias else 0)
        how += (kind - how % 6) % 6
        if residual:
            tail = {"like": 0, "const": 64}[residual]
        else:
            tail = 150 if relu else 230
        self.act("conv").emit(self.pick(x), how, tail)
        if not depthwise:
            self.emit(filters - 1)
        self.emit(data())
        self.values += 2                         # the weights, the convolution
        if bias:
            self.emit(data())
            self.values += 1
        if residual == "const":
            self.emit(data())
            self.values += 1
        self.values += (1 if residual else 0) + (1 if residual or relu else 0)
        return self

    def output(self, v):
        return self.act("output").emit(self.pick(v))

    def bad_shapes(self, x, axis=0, swap=0):
        self.act("bad_shapes").emit(self.pick(x), axis, data(), swap)
        self.values += 1
        return self

    def transfer(self, v, other=1):
        return self.act("transfer").emit(self.pick(v), other)

    def misuse(self, v, case, *args):
        """case 1 (two graphs) reads a release order at its end; case 3 (invalid
        inputs) a rank, a shape and a dtype."""
        return self.act("misuse").emit(self.pick(v), case, list(args))

    def compile_early(self, opts=0):
        return self.act("compile_early").emit(opts)

    def finish(self, outputs=0, order=1, opts=0, wrong=(), new_inputs=None):
        """outputs: fg_default_outputs' byte (0..2: that many + 1 if none marked);
        order: release orders (% 4 == 0 the symbolic tensors before compiling,
        % 3 == 0 the graph before running, else the plan before the graph);
        opts: compile's byte
        (% 3: merge, no_merge, NULL; >= 240 a struct_size to refuse); wrong: runs
        that must fail, each (input, case, bytes...); new_inputs: None, or the
        number of inputs and DLPack constants to rewrite."""
        self.emit(0xff)                          # no more actions
        self.emit(0xf0 if outputs is None else outputs, order, opts)
        if order % 3 == 0 and order % 4 != 0:
            self.emit(1)                         # the symbolic tensors go with the graph
        self.emit(len(wrong))
        for w in wrong:
            self.emit(*w)
        if new_inputs is None:
            self.emit(0)
        else:
            n_inputs, n_consts = new_inputs
            self.emit(1)
            for _ in range(n_inputs):
                self.emit(data(1))
            for _ in range(n_consts):
                self.emit(1, data(3))
        return self


def seeds():
    s = {}
    x23 = (F32, [2, 3])
    g = Graph().inputs(x23)
    g.op("exp", 0).op("tanh", 1).op("add", 2, 0).op("mul", 3, 3).op("relu", 4)
    g.op("sigmoid", 5).op("sub", 6, 1).op("neg", 7)
    s["elementwise_chain"] = g.finish(outputs=2)

    g = Graph().inputs((F32, [2, 3]), (F32, [3, 2]))
    g.op("matmul", 0, 1).op("relu", 2).op("transpose", 3).op("softmax", 2)
    g.mild("sum", 2, axis=1, keepdims=1).mild("max", 3, axis=2, n_axes=1)
    s["matmul_reduce"] = g.finish(outputs=2)

    g = Graph(backend="blas_cpu").inputs((F32, [2, 3]), (F32, [3, 3]))
    g.op("matmul", 0, 1).op("gelu", 2).op("matmul", 3, 1).op("add", 4, 0)
    s["blas_cpu_matmul"] = g.finish(outputs=1, opts=1)

    # convolutions blas_cpu prepares (captured weights, more than 8 positions):
    # direct 3x3 with a residual add and relu (a constant, then the input), a
    # depthwise one, a 1x1 on the GEMM with its relu, stride 2 and dilated
    # windows; two runs of a prepared plan must give the same bits
    g = Graph(backend="blas_cpu").inputs((F32, [1, 4, 6, 9]))
    g.conv(0, filters=16, bias=True, residual="const")
    g.conv(g.values - 1, filters=4, residual=None, relu=True)
    s["blas_cpu_conv_residual"] = g.finish(outputs=1, opts=1)

    g = Graph(backend="blas_cpu").inputs((F32, [2, 4, 4, 5]))
    g.conv(0, filters=4, residual="like")
    g.conv(g.values - 1, depthwise=True, bias=True)
    g.conv(g.values - 1, kind=4, filters=8)
    g.output(g.values - 1)
    g.conv(0, kind=2, filters=20, relu=False).output(g.values - 1)
    g.conv(0, kind=3, filters=3, bias=True).output(g.values - 1)
    g.conv(0, kind=5, filters=17).output(g.values - 1)
    s["blas_cpu_conv_kinds"] = g.finish(outputs=2, opts=1, new_inputs=(1, 0))

    # a 3x3 over one row of 20: the taps above and below miss it (the eager
    # GEMM path's unfold formed a pointer before x for them: clang's UBSan)
    g = Graph(backend="blas_cpu").inputs((F32, [1, 2, 1, 20]))
    g.conv(0, filters=5, bias=True, relu=False)
    s["blas_cpu_conv_one_row"] = g.finish(outputs=0, opts=1)

    g = Graph().inputs(x23).const(0).op("add", 0, 1).const(0, dlpack=True).op("mul", 2, 3)
    g.const(0, broadcast_axis=1).op("div", 4, 5).op("maximum", 6, 3)
    s["captured_constants"] = g.finish(outputs=2, new_inputs=(1, 1))

    g = Graph().inputs((F64, [2, 2]), (F64, [2])).const(0, dlpack=True).const(1, dlpack=True)
    g.op("add", 0, 1).op("mul", 4, 2).op("sub", 5, 3).op("where", None, 5, 6)
    g.const(0, dlpack=True, dtype=BOOL).op("where", 8, 5, 6)
    s["dlpack_rewritten"] = g.finish(outputs=2, new_inputs=(2, 3))

    # x and indices concrete (the indices over DLPack memory), updates symbolic:
    # the plan checks the index values the new inputs bring when it runs
    g = Graph().inputs(x23).const(0, dlpack=True, dtype=I64).const(0)
    g.op("scatter_elements", 2, 1, 0).op("scatter_nd", 2, 1, 0)
    s["captured_indices_rewritten"] = g.finish(outputs=0, new_inputs=(1, 1))

    # indices out of range: recorded, refused when the plan runs (BP_ERR_INDEX)
    g = Graph().inputs(x23, (F32, [2])).const(1, dtype=I64, numel=2, index=3)
    g.op("gather", 0, 2).op("exp", 3).op("argmax", 0).op("gather", 0, 5)
    s["index_out_of_range_when_the_plan_runs"] = g.finish(outputs=1, new_inputs=(2, 0))

    g = Graph().inputs(x23).view("reshape", 0, 0).view("unsqueeze", 0, 4).op("exp", 1)
    g.view("squeeze", 2, 1, 3).op("exp", 4).output(0).output(1).output(5)
    s["views_and_input_outputs"] = g.finish(order=2)

    g = Graph().inputs(x23).op("exp", 0).op("exp", 0).op("add", 1, 2).op("exp", 0)
    g.op("mul", 3, 4)
    s["merged_nodes"] = g.finish(outputs=1, opts=0)
    s["merged_nodes_kept_apart"] = Graph().inputs(x23).op("exp", 0).op("exp", 0) \
        .op("add", 1, 2).finish(outputs=0, opts=1)

    g = Graph().inputs(x23, (F32, [3])).op("add", 0, 1).output(2).compile_early()
    g.op("tanh", 2).op("mul", 3, 1).output(4)
    s["compiled_half_way"] = g.finish(order=6, new_inputs=(2, 0))

    g = Graph().inputs(x23).bad_shapes(0, 1).bad_shapes(0, 0, swap=1).op("add", 0, 1)
    g.op("matmul", 0, 0).op("exp", 0)
    s["bad_shapes"] = g.finish(outputs=0)

    g = Graph().inputs(x23)
    for case in range(6):
        g.misuse(0, case, *([0] if case == 1 else [240, 0, 0] if case == 3 else []))
    g.op("exp", 0).misuse(1, 0).misuse(1, 1, 1).misuse(1, 5).const(0).misuse(2, 1, 0)
    g.misuse(2, 5)
    s["misuse"] = g.finish(outputs=0)

    wrong = [(0, 0, 1, data()), (1, 1, 0, data()), (0, 2, data()), (1, 3), (0, 4), (0, 5, 1),
             (1, 6, 0), (0, 7, 1), (0, 7, 0)]
    for k in range(0, len(wrong), 2):
        s[f"wrong_inputs_{k // 2}"] = Graph().inputs(x23, (F16, [3])).op("exp", 0) \
            .op("exp", 1).finish(outputs=1, wrong=wrong[k:k + 2])

    g = Graph().inputs(x23).const(0).transfer(1).op("add", 0, 1).const(0).op("mul", 2, 3)
    g.transfer(3, 1).transfer(3, 0)
    s["transferred_constants"] = g.finish(outputs=0)

    g = Graph(guards=True).inputs(x23, (F32, [2, 3])).op("add", 0, 1).op("concat", 2)
    g.op("pad", 3).op("slice", 4)
    s["guard_bytes"] = g.finish(outputs=2)

    for order, name in ((4, "symbolic_tensors_released_before_compiling"),
                        (3, "graph_released_before_running"), (5, "plan_released_first"),
                        (0, "everything_released_early")):
        g = Graph().inputs(x23).op("exp", 0).op("add", 1, 0).const(0).op("mul", 2, 3)
        s[name] = g.finish(outputs=1, order=order, new_inputs=(1, 0))

    g = Graph().inputs(x23).op("fill").op("add", 0, 1).op("arange").op("random_uniform")
    g.op("random_normal", on_rec=False)
    s["creation_on_the_recording_backend"] = g.finish(outputs=2)

    s["no_outputs"] = Graph().inputs(x23).op("exp", 0).finish(outputs=None)
    s["options_refused"] = Graph().inputs(x23).op("exp", 0).finish(opts=240)

    # one seed per kind: every op of the kind on its operands (indices as
    # small i64 constants, conditions as bool ones)
    by_kind = {}
    for name, kind, ins in OPS:
        by_kind.setdefault(kind, []).append(name)
    for kind, names in by_kind.items():
        if kind in ("FILL", "ARANGE", "RANDOM"):
            continue
        spatial = kind in ("CONV", "POOL", "LRN", "NORM")
        g = Graph().inputs((F32, [1, 2, 3] if spatial else [2, 3]),
                           (F32, [2, 2, 1] if spatial else [3, 2]), (F32, [2]))
        g.const(0, dtype=I64, numel=6)  # value 3: indices shaped like x
        g.const(2, dtype=I64, numel=2)  # value 4: (2,) indices
        g.const(0, dtype=BOOL)          # value 5
        g.const(0)                      # value 6: a concrete x
        for name in names:
            ins = []
            for iname, _ in OP_INPUTS[name]:
                ins.append({"indices": 3 if kind in ("INDEX", "SCATTER") else 4,
                            "labels": 4, "target": 4, "cond": 5, "b": 1, "w": 1,
                            "slope": 0}.get(iname, 2 if iname in ("scale", "bias", "mean", "var",
                                                                  "weights", "values")
                                            else 0))
            if kind == "SCATTER":  # x and indices concrete, updates symbolic: recorded
                ins[0] = 6
            g.op(name, *ins, keep_optional=False)
        s["kind_" + kind.lower()] = g.finish(outputs=2)
    return s


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "fuzz_graph")
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        os.remove(os.path.join(out, f))
    all_seeds = seeds()
    for name, g in all_seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(bytes(g.b))
    print(f"{len(all_seeds)} seeds in {out}")


if __name__ == "__main__":
    main()

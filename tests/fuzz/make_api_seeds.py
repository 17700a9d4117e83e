#!/usr/bin/env python3
"""Write the fuzz_api seed corpus (tests/fuzz/corpus/fuzz_api).

Each seed is a small program in fuzz_api's input encoding: one byte picks
the action (the order of fa_actions in fuzz_api.c), then the action reads
its arguments as the fa_act_* functions do (fz_bytes.c, fa_input.c). Keep
this file in step with them; run it after changing the encoding:

    tests/fuzz/make_api_seeds.py            # rewrites the corpus directory
"""
import os
import struct

ACTIONS = ["from_host", "from_host", "fill", "arange_eye", "random", "unary", "binary",
           "binary", "where", "reduce", "softmax", "matmul", "cast", "transpose", "slice",
           "concat", "pad", "gather", "broadcast", "reshape", "squeeze", "unsqueeze", "copy",
           "copy", "read", "lifetime", "inspect", "guards", "backend", "context", "op", "op",
           "op", "op", "dlpack", "dlpack"]
BOOL, U8, I8, I32, I64, F16, BF16, F32, F64 = range(9)
BIN0, BLAS0, BIN1, BLAS1 = range(4)         # backend indices: ctx0 / ctx1
UNARY = ["neg", "abs", "sign", "exp", "log", "sqrt", "rsqrt", "reciprocal", "sin", "cos",
         "tan", "tanh", "sigmoid", "relu", "gelu", "erf", "floor", "ceil", "round", "isnan",
         "isinf", "logical_not"]
BINARY = ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "mod", "eq", "ne", "lt",
          "le", "gt", "ge", "logical_and", "logical_or", "logical_xor"]
REDUCE = ["sum", "prod", "mean", "max", "min", "argmax", "argmin", "logsumexp"]
EDGES = {0: 200, -1: 201, -2: 202, -2**63: 203, 2**63 - 1: 204, 2**31: 206, 2**31 - 1: 207,
         2**32: 208, 2**62: 209, 2**61: 211, 2**40: 212, 1000: 213, 65536: 214, 255: 215,
         256: 216, 1023: 217, 1025: 218}
DOUBLES = {0.0: 0, 1.0: 2, -1.0: 3, 0.5: 4, 2.5: 5, 1e308: 7, 3.0: 23}


def op_table():
    """The op table's rows (opcodes.h): name, kind, inputs (name, optional)."""
    import re
    here = os.path.dirname(os.path.abspath(__file__))
    text = open(os.path.join(here, "..", "..", "core", "include", "backplane", "opcodes.h")).read()
    body = text[text.index("#define BP_OP_TABLE(X)"):text.index("typedef enum bp_op_kind")]
    rows = []
    for m in re.finditer(r'X\(\s*(\w+),\s*(\w+),\s*(\w+),\s*\d+,\s*"([^"]*)"', body):
        ins = [(n.rstrip("?"), n.endswith("?")) for n in m.group(4).split()]
        rows.append((m.group(2), m.group(3), ins))
    return rows


OPS = op_table()


def extent(v):
    if 0 <= v <= 8:
        return [v]
    if 9 <= v <= 24:
        return [224 + v - 9]
    return [EDGES[v]]


def rank_byte(r):
    return [r] if 0 <= r <= 4 else [200 + r - 5] if r <= 8 else [241]  # 241: rank 9


def shape(dims):
    out = [0]  # not NULL
    for d in dims:
        out += extent(d)
    return out


def double(v):
    if v in DOUBLES:
        return [DOUBLES[v]]
    if v != v:
        return [24]
    return [200] + list(struct.pack("<d", v))


def axis(a):
    return [a + 9]


def numel(dims):
    n = 1
    for d in dims:
        n *= d
    return n


class Program:
    """Emit actions; track slot shapes where an action reads differently for them."""

    def __init__(self):
        self.b = bytearray()
        self.slots = {}

    def act(self, name, *args):
        self.b.append(ACTIONS.index(name))
        for a in args:
            self.b.extend(a if isinstance(a, (list, bytes, bytearray)) else [a])
        return self

    def from_host(self, dst, be, dtype, dims, mode=0):
        sizes = [1, 1, 1, 4, 8, 2, 2, 4, 8]
        n = numel(dims)
        ok = all(d >= 0 for d in dims) and n * sizes[dtype] <= 1 << 20 and len(dims) <= 8
        data = [mode] + ([(i * 37 + 11) & 0xff for i in range(16)] if ok else [])
        self.slots[dst] = dims
        return self.act("from_host", be, dtype, rank_byte(len(dims)), shape(dims), data, dst)

    def fill(self, dst, be, dtype, dims, value=1.0, kind=0):
        self.slots[dst] = dims
        return self.act("fill", kind, be, dtype, rank_byte(len(dims)), shape(dims), double(value), dst)

    def arange(self, dst, be, dtype, start, stop, step):
        return self.act("arange_eye", 0, be, dtype, dst, double(start), double(stop), double(step))

    def eye(self, dst, be, dtype, rows, cols):
        self.slots[dst] = [rows, cols]
        return self.act("arange_eye", 1, be, dtype, dst, extent(rows), extent(cols))

    def random(self, dst, be, dtype, dims, uniform=1, p0=0.0, p1=1.0):
        self.slots[dst] = dims
        return self.act("random", uniform, be, dtype, rank_byte(len(dims)), shape(dims),
                        list(struct.pack("<Q", 42)), 0, list(struct.pack("<Q", 7)), double(p0),
                        double(p1), dst)

    def unary(self, op, x, dst):
        self.slots[dst] = self.slots.get(x)
        return self.act("unary", UNARY.index(op), x, dst)

    def binary(self, op, a, b, dst):
        return self.act("binary", BINARY.index(op), a, b, dst)

    def where(self, c, a, b, dst):
        return self.act("where", c, a, b, dst)

    def reduce(self, op, x, dst, axes=(), keepdims=0):
        ax = [axis(a)[0] for a in axes] + [9] * (8 - len(axes))
        return self.act("reduce", REDUCE.index(op), x, dst, len(axes), ax, 0, keepdims)

    def softmax(self, x, dst, ax=-1, log=0):
        return self.act("softmax", log, x, dst, axis(ax))

    def matmul(self, a, b, dst):
        return self.act("matmul", a, b, dst)

    def cast(self, x, dst, dtype):
        return self.act("cast", x, dst, dtype)

    def transpose(self, x, dst, perm=None):
        if perm is None:
            return self.act("transpose", x, dst, 0, 1, [0] * 8)  # NULL perm reads nothing more
        return self.act("transpose", x, dst, 64, 0, [axis(p)[0] for p in perm])

    def per_axis(self, vals):
        if vals is None:
            return [0xff]
        out = [0]
        for v in list(vals) + [0] * (8 - len(vals)):
            direct = 0 <= v <= 24 or v in EDGES  # else: the negation of one
            out += extent(v if direct else -v) + [0 if direct else 1]
        return out

    def slice(self, x, dst, starts, stops=None, steps=None):
        tail = [0] if steps is not None else []
        return self.act("slice", x, dst, self.per_axis(starts), self.per_axis(stops),
                        self.per_axis(steps), tail)

    def concat(self, xs, ax, dst):
        slots = list(xs) + [0] * (5 - len(xs))
        return self.act("concat", len(xs), 0, slots, 0, axis(ax), dst)

    def pad(self, x, dst, before, after, value=0.0):
        return self.act("pad", x, dst, self.per_axis(before), self.per_axis(after), double(value))

    def gather(self, x, ind, ax, dst):
        return self.act("gather", x, ind, dst, axis(ax))

    def broadcast(self, x, dst, dims):
        return self.act("broadcast", x, dst, rank_byte(len(dims)), shape(dims), 0)

    def reshape(self, x, dst, dims):
        self.slots[dst] = dims
        return self.act("reshape", x, dst, 0, rank_byte(len(dims)), shape(dims), 0)

    def squeeze(self, x, dst, axes=()):
        ax = [axis(a)[0] for a in axes] + [9] * (8 - len(axes))
        return self.act("squeeze", x, dst, len(axes), ax, 0)

    def unsqueeze(self, x, dst, ax):
        return self.act("unsqueeze", x, dst, axis(ax))

    def copy(self, x, to, dst, transfer=0):
        return self.act("copy", transfer, x, to, dst)

    def read(self, x, how=0):
        return self.act("read", x, how, 0)

    def release(self, x):
        return self.act("lifetime", x, x, 0)

    def alias(self, a, b):
        return self.act("lifetime", a, b, 1)

    def inspect(self, be, x, kind, extra=()):
        return self.act("inspect", be, x, kind, list(extra))

    def guards(self, c, idx):
        return self.act("guards", c, idx)

    def backend(self, c, idx):
        return self.act("backend", c, idx, 0)

    def context(self, c):
        return self.act("context", c)

    def op(self, name, ins, dst, be=BIN0, leave_out=()):
        """A table op on slots ins (its row's inputs in order), default arguments."""
        idx = [r[0] for r in OPS].index(name)
        args = [idx]
        for (arg, optional), slot in zip(OPS[idx][2], list(ins) + [0] * 5):
            args.append(slot)
            if optional:
                args.append(1 if arg in leave_out else 0)
        return self.act("op", *args, be, 0, dst)

    def export(self, x):
        return self.act("dlpack", 0, x)

    def lend(self, n, share=0):
        return self.act("dlpack", 1, share, n - 1)

    def take(self, lend, be, dst):
        return self.act("dlpack", 2, lend, be, dst)


def seeds():
    s = {}
    p = Program().from_host(0, BIN0, F32, [2, 3]).from_host(1, BIN0, F32, [3])
    s["elementwise_chain"] = p.binary("add", 0, 1, 2).unary("exp", 2, 3).unary("neg", 3, 4) \
        .binary("mul", 4, 0, 5).binary("lt", 5, 0, 6).read(5).read(6, 5)
    p = Program().from_host(0, BLAS0, F64, [4, 3], 1).from_host(1, BLAS0, F64, [3, 5], 2)
    s["matmul_blas"] = p.matmul(0, 1, 2).transpose(2, 3).matmul(3, 3, 4).read(4)
    p = Program().from_host(0, BIN0, I32, [3]).from_host(1, BIN0, I32, [3, 3])
    s["matmul_vectors"] = p.matmul(0, 1, 2).matmul(1, 0, 3).matmul(0, 0, 4).read(4, 6)
    p = Program().random(0, BIN0, F32, [2, 3, 4])
    s["reductions"] = p.reduce("sum", 0, 1, (1,)).reduce("max", 0, 2, (0, -1), 1) \
        .reduce("argmax", 0, 3, (2,)).reduce("logsumexp", 0, 4).reduce("mean", 0, 5, (-2,), 1)
    p = Program().random(0, BLAS0, F32, [4, 8], 0, 0.0, 1.0)
    s["softmax"] = p.softmax(0, 1).softmax(0, 2, 0, 1).reduce("sum", 1, 3, (-1,))
    p = Program().from_host(0, BIN0, I64, [2, 3, 4])
    s["movement"] = p.transpose(0, 1, [2, 0, 1]).slice(0, 2, [0, 2, 3], [2, 0, 0], [1, -1, -2]) \
        .pad(0, 3, [1, 0, 2], [0, 1, 0], 7.0).concat([0, 0, 0], 1, 4).broadcast(0, 5, [2, 2, 3, 4])
    p = Program().from_host(0, BIN0, F16, [5, 2]).arange(1, BIN0, I64, 4.0, -1.0, -1.0)
    s["gather"] = p.gather(0, 1, 0, 2).arange(3, BIN0, I32, 0.0, 2.0, 1.0).gather(0, 3, -1, 4)
    p = Program().from_host(0, BIN0, F32, [2, 1, 3])
    s["views"] = p.reshape(0, 1, [3, 2]).reshape(0, 2, [-1, 1]).squeeze(0, 3).squeeze(0, 4, (1,)) \
        .unsqueeze(0, 5, 0).unsqueeze(0, 6, -1).read(1).read(5)
    p = Program().from_host(0, BIN0, F64, [3, 2], 1)
    for i, dt in enumerate([BOOL, U8, I8, I32, I64, F16, BF16, F32]):
        p.cast(0, 1 + i, dt)
    s["casts"] = p.cast(8, 9, F64)
    p = Program().from_host(0, BIN0, F64, [4], 1)
    s["casts_edge_values"] = p.cast(0, 1, I64).cast(1, 2, BF16).cast(0, 3, U8).cast(0, 4, F16) \
        .cast(0, 5, BOOL).cast(5, 6, I32)
    p = Program().from_host(0, BIN0, F32, [2, 2]).copy(0, BLAS0, 1)
    s["copy_between_backends"] = p.binary("add", 0, 1, 2).copy(1, BIN0, 3).binary("add", 0, 3, 4) \
        .read(4)
    p = Program().from_host(0, BIN0, F32, [2, 2]).reshape(0, 1, [4])
    s["use_after_transfer"] = p.copy(0, BLAS0, 2, 1).unary("neg", 0, 3).unary("neg", 1, 4) \
        .read(0).read(1, 5).copy(0, BIN0, 5).unary("neg", 2, 6)
    p = Program().context(1).backend(1, 0).backend(1, 1).from_host(0, BIN0, F32, [3])
    s["two_contexts"] = p.from_host(1, BIN1, F32, [3]).binary("add", 0, 1, 2).copy(0, BIN1, 3) \
        .copy(1, BLAS1, 4).binary("add", 1, 4, 5).context(1).unary("neg", 1, 6).unary("neg", 4, 7)
    p = Program().from_host(0, BLAS0, F32, [8]).alias(0, 1)
    s["destroy_with_live_tensors"] = p.context(0).unary("abs", 0, 2).read(2).release(0).read(1)
    p = Program().guards(0, 3).from_host(0, BIN0, F32, [3, 3]).fill(1, BLAS0, I8, [5])
    s["guard_bytes"] = p.matmul(0, 0, 2).unary("neg", 1, 3).guards(0, 0).unary("neg", 3, 4) \
        .guards(1, 7).guards(0, 9)
    p = Program().fill(0, BIN0, F32, [2, 3], 3.0).fill(1, BIN0, U8, [], 0.0, 1)
    s["creation"] = p.fill(2, BLAS0, BF16, [4], 1.0, 2).eye(3, BIN0, F64, 3, 4) \
        .arange(4, BLAS0, F32, 0.0, 1.0, 0.5).random(5, BIN0, F64, [3], 0, 0.0, 2.5)
    s["where"] = Program().from_host(0, BIN0, BOOL, [2, 1], 2).from_host(1, BIN0, I32, [3]) \
        .from_host(2, BIN0, I32, [2, 3]).where(0, 1, 2, 3).where(1, 1, 2, 4).read(3)
    s["absurd_shapes"] = Program().from_host(0, BIN0, F32, [2**62, 4]) \
        .from_host(1, BIN0, F32, [0, 2**62, 4]).fill(2, BLAS0, I8, [2**63 - 1, 2]) \
        .fill(3, BIN0, F64, [-1, 3]).from_host(4, BIN0, F32, [2**31, 2**31]).read(1) \
        .unary("neg", 1, 5).transpose(1, 6)
    s["absurd_views"] = Program().from_host(0, BIN0, F32, [0]) \
        .reshape(0, 1, [0, 2**62, 4]).reshape(0, 2, [-1, 0]).broadcast(0, 3, [2**62, 0]) \
        .unsqueeze(1, 4, 0)
    s["absurd_pads"] = Program().from_host(0, BIN0, F32, [2, 2]) \
        .pad(0, 1, [2**63 - 1, 0], [1, 0]).pad(0, 2, [-1, 0], [0, 0]).pad(0, 3, [2**40, 0], [0, 0])
    s["absurd_slices"] = Program().from_host(0, BIN0, I32, [5, 4]) \
        .slice(0, 1, [-2**63, 2**63 - 1], [2**63 - 1, -2**63], [-1, 2**62]) \
        .slice(0, 2, [2**62, 0], None, [0, 1])
    s["absurd_eye_arange"] = Program().eye(0, BIN0, F32, 2**62, 4).eye(1, BIN0, F32, 0, 2**62) \
        .arange(2, BIN0, F32, 0.0, 1e308, 0.5).arange(3, BIN0, BOOL, 0.0, 3.0, 1.0)
    s["bad_axes"] = Program().from_host(0, BIN0, F32, [2, 3]) \
        .reduce("sum", 0, 1, (0, 0)).reduce("sum", 0, 2, (5,)).softmax(0, 3, 9) \
        .transpose(0, 4, [0, 0]).squeeze(0, 5, (0,)).unsqueeze(0, 6, 9).concat([0], 7, 7)
    s["bad_dtypes"] = Program().from_host(0, BIN0, BOOL, [3]).from_host(1, BIN0, I32, [3]) \
        .unary("exp", 1, 2).unary("neg", 0, 3).binary("add", 0, 1, 4).matmul(0, 0, 5) \
        .reduce("mean", 1, 6).softmax(1, 7).binary("logical_and", 1, 1, 8)
    s["empty_tensors"] = Program().from_host(0, BIN0, F32, [0, 3]).from_host(1, BLAS0, F32, [3, 0]) \
        .matmul(0, 0, 2).reduce("sum", 0, 3).reduce("max", 0, 4, (0,)).copy(0, BLAS0, 5) \
        .matmul(5, 1, 6).softmax(0, 7).concat([0, 0], 0, 8)
    s["scalars"] = Program().from_host(0, BIN0, F64, [], 1).read(0, 5).read(0, 6).read(0, 7) \
        .unary("sqrt", 0, 1).reduce("sum", 0, 2).transpose(0, 3).reshape(0, 4, [1, 1])
    s["rank8"] = Program().from_host(0, BIN0, U8, [1, 2, 1, 2, 1, 2, 1, 2]) \
        .transpose(0, 1).reduce("sum", 0, 2, (1, 3, 5, 7)).unsqueeze(0, 3, 0).squeeze(0, 4) \
        .gather(0, 0, 0, 5)
    s["backends"] = Program().backend(0, 0).backend(0, 1).backend(0, 4).backend(0, 6) \
        .backend(0, 15).backend(1, 0).context(1).backend(1, 4).backend(1, 1).backend(0, 18) \
        .backend(1, 19)
    s["inspect"] = Program().from_host(0, BIN0, F32, [2]).inspect(BIN0, 0, 1, [0]) \
        .inspect(BLAS0, 0, 2).inspect(BIN0, 0, 3).inspect(BIN1, 3, 4).inspect(BIN0, 0, 4) \
        .inspect(BIN0, 0, 5, [0, 1]).inspect(BLAS0, 0, 0, [3, 0, 0, 0, 5])
    s["reads"] = Program().from_host(0, BIN0, F32, [4]).read(0, 0).read(0, 1).read(0, 2) \
        .read(0, 3).read(0, 4).read(0, 5).read(7, 0)
    table_seeds(s)
    p = Program().from_host(0, BIN0, F32, [2, 3]).export(0).export(0)
    s["dlpack_round_trips"] = p.take(0, BIN0, 1).take(1, BLAS0, 2).export(1).take(2, BIN0, 3) \
        .release(0).read(3).release(1).read(2)
    p = Program().lend(8).lend(8, 1).take(0, BIN0, 0).take(1, BIN0, 1)
    s["dlpack_lent_twice"] = p.release(0).read(1).export(1).take(2, BLAS0, 2).release(1).read(2)
    return s


# Shapes of each kind's operands (tests/support/op_calls.c's): x (2, 3), the
# spatial ones (1, 2, 3); per kind the dtypes its row accepts.
KIND_INPUTS = {
    "UNARY": [[2, 3]], "REDUCE": [[2, 3]], "MOVEMENT": [[2, 3]], "SOFTMAX": [[2, 3]],
    "HARDMAX": [[2, 3]], "SCAN": [[2, 3]], "SORT": [[2, 3]], "TRILU": [[2, 3]],
    "CLIP": [[2, 3]], "BINARY": [[2, 3], [2, 3]], "WHERE": [[2, 3], [2, 3], [2, 3]],
    "MATMUL": [[2, 3], [3, 2]], "GEMM": [[2, 3], [3, 2]], "GATHER": [[2, 3], [2]],
    "INDEX": [[2, 3], [2, 3]], "SCATTER": [[2, 3], [2, 3], [2, 3]], "ONE_HOT": [[2, 3], [2]],
    "CONV": [[1, 2, 3], [2, 2, 1]], "POOL": [[1, 2, 3]], "LRN": [[1, 2, 3]],
    "NORM": [[1, 2, 3], [2], [2], [2], [2]], "LOSS": [[2, 3], [2]], "RESIZE": [[2, 3]],
}
INT_INPUTS = {"GATHER": 1, "INDEX": 1, "SCATTER": 1, "LOSS": 1}


def table_seeds(s):
    """A seed per kind: every op of the kind on small valid operands."""
    by_kind = {}
    for name, kind, ins in OPS:
        by_kind.setdefault(kind, []).append((name, ins))
    for kind, ops in by_kind.items():
        shapes = KIND_INPUTS.get(kind, [])
        p = Program()
        for k, dims in enumerate(shapes):
            dt = I64 if INT_INPUTS.get(kind) == k else BOOL if kind == "WHERE" and k == 0 else F32
            if kind == "ONE_HOT" and k == 0:
                dt = I64
            p.fill(k, BIN0, dt, dims, 0.5 if dt == F32 else 1.0 if dt == BOOL else 0.0)
        for i, (name, ins) in enumerate(ops):
            p.op(name, range(len(ins)), 5 + i % 5)
        s["table_" + kind.lower()] = p


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "fuzz_api")
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        os.remove(os.path.join(out, f))
    for name, prog in seeds().items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(bytes(prog.b))
    print(f"{len(seeds())} seeds in {out}")


if __name__ == "__main__":
    main()

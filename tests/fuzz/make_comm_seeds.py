#!/usr/bin/env python3
"""Write the fuzz_comm seed corpus (tests/fuzz/corpus/fuzz_comm).

Each seed is a small program in fuzz_comm's input encoding: one byte picks
the call (fc_actions in fuzz_comm.c), then the call reads its arguments as
the fc_act_* functions do (fz_bytes.c, fz_data.c). Keep this file in step
with them; run it after changing the encoding:

    tests/fuzz/make_comm_seeds.py           # rewrites the corpus directory
"""
import os
import struct

ACTIONS = ["make", "make", "make", "create", "create", "collective", "collective",
           "collective", "collective", "collective", "destroy", "symbolic", "transfer",
           "query", "context"]
BOOL, U8, I8, I32, I64, F16, BF16, F32, F64 = range(9)
BIN, BLAS = 0, 1
RANKS = [0, 1, 1, 2, 2, 2, 3, 3, 4, 7, 8]
ENGINES = ["template", "template", "lying", "lying", None, "mpi", "nccl", "nosuch", "",
           "Template", "../template", "tem plate", "comm_template", "31 chars", "32 chars"]
LIES = [(0, 1), (0, 1), (0, 2), (1, 3), (2, 3), (0, 0), (0, -1), (5, 2), (2, 2), (-1, 2),
        (0, 2**31 - 1), (0, 2**24), (2**24 - 1, 2**24), (0, 2**24 + 1), (-2**31, 1), (1, 1)]
TIMEOUTS = ["0", "1", "300", "1e-300", "-1", "-0", "nan", "inf", "1e300"]
STRUCT_SIZES = ["sizeof", "sizeof+24", "0", "4", "offsetof timeout"]
COLLECTIVES = ["all_reduce", "broadcast", "all_gather", "reduce_scatter", "barrier"]
OPS = [0, 1, 2, 3, 4, 0, 4, -1, 5, 100, -2**31]       # sum prod max min avg ... invalid
AXES = [0, 1, -1, 2, -2, 3, 0, 7, -9, 8, -2**31, 2**31 - 1]
SUM, PROD, MAX, MIN, AVG = range(5)


class Program:
    def __init__(self):
        self.b = bytearray()

    def act(self, name, *args):
        self.b.append(ACTIONS.index(name))
        for a in args:
            self.b.extend(a if isinstance(a, (list, bytes, bytearray)) else [a])
        return self

    def make(self, dst, be, dtype, dims, mode=3):
        assert all(0 <= d <= 5 for d in dims)
        data = [mode] + [(i * 37 + 11) & 0xff for i in range(16)]
        return self.act("make", dst, be, dtype, RANKS.index(len(dims)), list(dims), data)

    def create(self, c, engine="template", lie=(0, 1), be=BIN, timeout="0", size="sizeof",
               null_options=False, null_out=False):
        which = {BIN: 0, BLAS: 3, "rec": 6, None: 7}[be]
        sz = [0] if size == "sizeof" else [224, STRUCT_SIZES.index(size)]
        flags = (1 if null_options else 0) | (0x70 if null_out else 0)
        return self.act("create", c, ENGINES.index(engine), LIES.index(lie), which,
                        TIMEOUTS.index(timeout), sz, flags)

    def coll(self, which, c, x, dst, op=SUM, axis=0, root=0, null_out=False):
        rootb = 0 if root == 0 else 160 + (root % 2)  # 160/161: size - 1, size
        return self.act("collective", COLLECTIVES.index(which), c, x, dst, OPS.index(op),
                        AXES.index(axis), rootb, 0xff if null_out else 0)

    def root(self, c, x, dst, rootb):
        return self.act("collective", 1, c, x, dst, 0, 0, rootb, 0)

    def destroy(self, c):
        return self.act("destroy", c)

    def symbolic(self, dst, dtype, dims):
        return self.act("symbolic", dst, RANKS.index(len(dims)), list(dims), dtype)

    def transfer(self, src, dst, to):
        return self.act("transfer", src, dst, to)

    def query(self, c, op):
        return self.act("query", c, list(struct.pack("<i", op)))

    def context(self):
        return self.act("context", 255)


def seeds():
    s = {}
    p = Program().create(0).make(0, BIN, F32, [2, 3])
    for op in (SUM, PROD, MAX, MIN, AVG):
        p.coll("all_reduce", 0, 0, 1, op=op)
    p.coll("broadcast", 0, 0, 2).coll("barrier", 0, 0, 0)
    for ax in (0, 1, -1):
        p.coll("all_gather", 0, 0, 3, axis=ax).coll("reduce_scatter", 0, 0, 4, axis=ax, op=AVG)
    s["every_collective"] = p

    p = Program().create(0)
    for dt in range(9):
        p.make(dt % 8, BIN, dt, [3], mode=1)
        p.coll("all_reduce", 0, dt % 8, 7, op=SUM).coll("all_reduce", 0, dt % 8, 7, op=AVG)
        p.coll("reduce_scatter", 0, dt % 8, 7, op=MAX).coll("all_gather", 0, dt % 8, 7)
    s["every_dtype"] = p

    p = Program()
    for lie in LIES:
        p.create(lie[0] & 1, "lying", lie)
    s["lying_engine"] = p

    p = Program().make(0, BIN, F32, [3, 4]).make(1, BIN, F32, [4, 3])
    for lie in ((0, 2), (1, 3), (2, 3)):
        p.create(1, "lying", lie).coll("all_gather", 1, 0, 2, axis=1)
        p.coll("reduce_scatter", 1, 0, 3, axis=1).coll("reduce_scatter", 1, 1, 3, axis=0)
        p.coll("broadcast", 1, 0, 4).coll("barrier", 1, 0, 0).query(1, 2)
    s["lying_job_of_three"] = p

    p = Program()
    for e in ENGINES:
        p.create(0, e)
    for t in TIMEOUTS:
        p.create(1, "template", timeout=t)
    for sz in STRUCT_SIZES:
        p.create(0, "template", size=sz)
    p.create(0, "template", null_options=True).create(1, "template", null_out=True)
    p.create(0, "template", be=None).create(1, "template", be="rec")
    s["create_options"] = p

    p = Program().symbolic(5, F32, [2]).create(0, "template", be="rec").create(1, "nccl", be="rec")
    p.create(0, "template", be=BLAS).make(0, BIN, F32, [4]).make(1, BLAS, F32, [4])
    p.coll("all_reduce", 0, 0, 2).coll("all_reduce", 0, 1, 2).coll("all_reduce", 0, 5, 2)
    p.transfer(1, 3, BIN).coll("all_reduce", 0, 1, 4).coll("broadcast", 0, 3, 4)
    p.coll("all_reduce", 1, 0, 4).coll("all_reduce", 0, 6, 4, null_out=True)
    s["wrong_tensors"] = p

    p = Program().create(0).make(0, BIN, I32, [4]).make(1, BIN, BOOL, [4])
    for op in OPS:
        p.coll("all_reduce", 0, 0, 2, op=op).coll("all_reduce", 0, 1, 3, op=op)
    for rootb in (0, 160, 161, 200, 201, 202, 203, 204, 205):
        p.root(0, 0, 4, rootb)
    for ax in AXES:
        p.coll("all_gather", 0, 0, 5, axis=ax).coll("reduce_scatter", 0, 0, 5, axis=ax)
    s["bad_arguments"] = p

    p = Program().create(0).make(0, BIN, F64, []).make(1, BIN, F32, [1] * 8)
    p.make(2, BIN, F32, [2, 0, 3]).make(3, BIN, F16, [0])
    for x in range(4):
        for ax in (0, 1, -1):
            p.coll("all_gather", 0, x, 4 + x, axis=ax).coll("reduce_scatter", 0, x, 4 + x,
                                                           axis=ax)
        p.coll("all_reduce", 0, x, 4 + x).coll("broadcast", 0, x, 4 + x)
    s["shapes"] = p

    p = Program().create(0).create(1, "template", be=BLAS).make(0, BIN, F32, [2, 2])
    p.make(1, BLAS, BF16, [2, 2]).context().coll("all_reduce", 0, 0, 2)
    p.coll("all_gather", 1, 1, 3, axis=1).destroy(0).coll("barrier", 0, 0, 0)
    p.create(0).query(1, 4).destroy(1)
    s["context_destroyed_first"] = p

    p = Program()
    for op in (0, 1, 2, 3, 4, 5, -1, 2**31 - 1, -2**31):
        p.query(0, op)
    p.create(0).query(0, 0).destroy(0).query(0, 0)
    s["queries"] = p
    return s


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "fuzz_comm")
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        os.remove(os.path.join(out, f))
    all_seeds = seeds()
    for name, prog in all_seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(bytes(prog.b))
    print(f"{len(all_seeds)} seeds in {out}")


if __name__ == "__main__":
    main()

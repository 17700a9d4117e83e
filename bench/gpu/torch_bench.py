"""PyTorch's side of bench/gpu (run.sh): prints "name seconds" lines for
bp_gpu_bench --torch. Each time: the best of three batches of back-to-back
calls after a warm-up, each batch ending in torch.cuda.synchronize(), the
way bp_gpu_bench times backplane (batches of at least 0.1 s for the classic
rows, 0.05 s for the wide table's).

    torch_bench.py [--table FILE] [--no-classic]   times (classic rows, then the table's)
    torch_bench.py --table FILE --list              the rows as bp_gpu_bench --list prints them
                                                    (no torch needed)
    torch_bench.py --table FILE --dry-run           each row once on the CPU, extents capped at 8
    torch_bench.py --startup                        import, first CUDA op, first conv (fresh process)
    torch_bench.py --table FILE --kernels KEY...    the CUDA kernels each named row runs, with
                                                    their mean time (torch.profiler)

The table (bench/gpu/ops.txt) is parsed here as bench/gpu/wide.c parses it;
OPS below and wide.c's wide_ops must name the same ops with the same inputs.
TF32 is off (matmul and cuDNN) except for the rows marked tf32=1. Errors
stop with a message naming the file and line (exit status 2) or the row."""
import argparse
import math
import sys
import time

# op: (input kinds, least inputs, most inputs, parameters it needs) as wide.c's
# wide_ops: kinds f data in [-1, 1), v data in [0.5, 1.5), b bool, i indices
# into input 0's axis, l labels in [0, input 0's extent 1); inputs past the
# kinds repeat the last kind. needs: a axis, t to, p perm, k window.
OPS = {
    "add": ("ff", 2, 2, ""), "mul": ("ff", 2, 2, ""), "where": ("bff", 3, 3, ""),
    "gelu": ("f", 1, 1, ""), "tanh": ("f", 1, 1, ""), "silu": ("f", 1, 1, ""),
    "relu": ("f", 1, 1, ""), "exp": ("f", 1, 1, ""), "sigmoid": ("f", 1, 1, ""),
    "cast": ("f", 1, 1, "t"), "sum": ("f", 1, 1, ""), "mean": ("f", 1, 1, "a"),
    "max": ("f", 1, 1, "a"), "argmax": ("f", 1, 1, "a"), "softmax": ("f", 1, 1, ""),
    "log_softmax": ("f", 1, 1, ""), "layer_norm": ("fff", 3, 3, ""),
    "rms_norm": ("ff", 2, 2, ""), "batch_norm": ("ffffv", 5, 5, ""),
    "cross_entropy": ("fl", 2, 2, ""), "matmul": ("ff", 2, 2, ""),
    "transpose": ("f", 1, 1, "p"), "concat": ("f", 2, 6, "a"), "gather": ("fi", 2, 2, "a"),
    "cumsum": ("f", 1, 1, "a"), "sort": ("f", 1, 1, "a"), "conv": ("fff", 2, 3, "k"),
    "conv_transpose": ("fff", 2, 3, "k"), "max_pool": ("f", 1, 1, "k"),
    "avg_pool": ("f", 1, 1, "k"),
}
FLOATS = ("f16", "bf16", "f32", "f64")
DTYPES = ("bool", "u8", "i8", "i32", "i64") + FLOATS
MAX_RANK = 8


class TableError(Exception):
    pass


def _dims(text):
    parts = text.split("x")
    if not 1 <= len(parts) <= MAX_RANK or not all(p.isdigit() and int(p) >= 1 for p in parts):
        raise ValueError(text)
    return tuple(int(p) for p in parts)


def _pair(text):
    d = _dims(text)
    if len(d) > 2:
        raise ValueError(text)
    return (d[0], d[1] if len(d) == 2 else d[0])


def parse_line(path, line, text):
    """One row as a dict, or TableError("path:line: what")."""
    def fail(msg):
        raise TableError(f"{path}:{line}: {msg}")

    tok = text.split()
    if len(tok) < 5:
        fail(f"a row needs KEY FAMILY OP DTYPE SHAPES (found {len(tok)} fields)")
    key, family, op, dt, shapes = tok[:5]
    if op not in OPS:
        fail(f"unknown op '{op}' (known: {' '.join(OPS)})")
    if dt not in FLOATS:
        fail(f"'{dt}' is not a float dtype (f16, bf16, f32, f64)")
    ins = []
    for s in shapes.split(","):
        try:
            ins.append(_dims(s))
        except ValueError:
            fail(f"'{s}' is not a shape (extents >= 1 joined by x, at most {MAX_RANK})")
    kinds, lo, hi, needs = OPS[op]
    if not lo <= len(ins) <= hi:
        fail(f"{op} takes {lo} to {hi} inputs, not {len(ins)}")
    row = {"line": line, "key": key, "family": family, "op": op, "dtype": dt, "shapes": ins,
           "axis": None, "to": None, "perm": None, "k": None, "s": None, "p": None,
           "bw": False, "tf32": False}
    for t in tok[5:]:
        if "=" not in t:
            fail(f"'{t}' is not NAME=VALUE")
        name, val = t.split("=", 1)
        try:
            if name == "axis":
                row["axis"] = int(val)
                if not -MAX_RANK <= row["axis"] < MAX_RANK:
                    raise ValueError
            elif name == "to":
                if val not in DTYPES:
                    raise ValueError
                row["to"] = val
            elif name == "perm":
                row["perm"] = tuple(int(v) for v in val.split("."))
            elif name in ("k", "s", "p"):
                row[name] = _pair(val)
            elif name in ("bw", "tf32"):
                if val not in ("0", "1"):
                    raise ValueError
                row[name] = val == "1"
            else:
                fail(f"unknown parameter '{name}' (axis, to, perm, k, s, p, bw, tf32)")
        except ValueError:
            fail(f"{name} '{val}' is not valid")
    if "a" in needs and row["axis"] is None:
        fail(f"{op} needs axis=")
    if "t" in needs and row["to"] is None:
        fail(f"{op} needs to=")
    if "p" in needs and (row["perm"] is None or len(row["perm"]) != len(ins[0])):
        fail(f"{op} needs perm= with {len(ins[0])} axes")
    if "k" in needs and row["k"] is None:
        fail(f"{op} needs k=")
    return row


def parse_table(path):
    rows, seen = [], {}
    with open(path) as f:
        for line, text in enumerate(f, 1):
            text = text.strip()
            if not text or text.startswith("#"):
                continue
            row = parse_line(path, line, text)
            if row["key"] in seen:
                raise TableError(f"{path}:{line}: key '{row['key']}' already used on line "
                                 f"{seen[row['key']]}")
            seen[row["key"]] = line
            rows.append(row)
    if not rows:
        raise TableError(f"{path}:{0}: no rows")
    return rows


def describe(row):
    """The row as bp_gpu_bench --list prints it (wide.c's wide_describe)."""
    out = f"{row['key']} {row['family']} {row['op']} {row['dtype']} "
    out += ",".join("x".join(str(e) for e in s) for s in row["shapes"])
    if row["axis"] is not None:
        out += f" axis={row['axis']}"
    if row["op"] == "cast":
        out += f" to={row['to']}"
    if row["perm"]:
        out += " perm=" + ".".join(str(a) for a in row["perm"])
    if row["k"]:
        out += f" k={row['k'][0]}x{row['k'][1]}"
    if row["s"]:
        out += f" s={row['s'][0]}x{row['s'][1]}"
    if row["p"] and (row["p"][0] or row["p"][1]):
        out += f" p={row['p'][0]}x{row['p'][1]}"
    if row["bw"]:
        out += " bw=1"
    if row["tf32"]:
        out += " tf32=1"
    return out


# ---- running rows (torch imported only here) -----------------------------------------------

def _torch_dtype(torch, name):
    return {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32,
            "f64": torch.float64, "i32": torch.int32, "i64": torch.int64, "u8": torch.uint8,
            "i8": torch.int8, "bool": torch.bool}[name]


def make_inputs(torch, row, dev, cap=0):
    kinds = OPS[row["op"]][0]
    dt = _torch_dtype(torch, row["dtype"])
    shapes = [tuple(min(e, cap) if cap else e for e in s) for s in row["shapes"]]
    gen = torch.Generator(device=dev).manual_seed(1000)
    ins = []
    for i, shape in enumerate(shapes):
        kind = kinds[min(i, len(kinds) - 1)]
        if kind == "b":
            ins.append(torch.randint(0, 2, shape, device=dev, generator=gen).bool())
        elif kind in ("i", "l"):
            axis = row["axis"] if kind == "i" else 1
            hi = shapes[0][axis]
            ins.append(torch.randint(0, hi, shape, device=dev, generator=gen, dtype=torch.int64))
        elif kind == "v":
            ins.append(torch.rand(shape, device=dev, generator=gen).to(dt) + 0.5)
        else:
            ins.append((torch.rand(shape, device=dev, generator=gen) * 2 - 1).to(dt))
    return ins


def make_call(torch, row, ins):
    """A function of no arguments computing the row's op as backplane does."""
    F = torch.nn.functional
    op, axis = row["op"], row["axis"]
    x = ins[0]
    stride = row["s"] or (1, 1)
    pad = row["p"] or (0, 0)
    simple = {"add": lambda: ins[0] + ins[1], "mul": lambda: ins[0] * ins[1],
              "where": lambda: torch.where(ins[0], ins[1], ins[2]), "gelu": lambda: F.gelu(x),
              "tanh": lambda: torch.tanh(x), "silu": lambda: F.silu(x),
              "relu": lambda: torch.relu(x), "exp": lambda: torch.exp(x),
              "sigmoid": lambda: torch.sigmoid(x)}
    if op in simple:
        return simple[op]
    if op == "cast":
        to = _torch_dtype(torch, row["to"])
        return lambda: x.to(to)
    if op == "sum":
        return (lambda: x.sum(dim=axis)) if axis is not None else (lambda: x.sum())
    if op == "mean":
        return lambda: x.mean(dim=axis)
    if op == "max":
        return lambda: x.amax(dim=axis)
    if op == "argmax":
        return lambda: x.argmax(dim=axis)
    if op in ("softmax", "log_softmax"):
        fn = torch.softmax if op == "softmax" else torch.log_softmax
        dim = -1 if axis is None else axis
        return lambda: fn(x, dim)
    if op == "layer_norm":
        return lambda: F.layer_norm(x, (x.shape[-1],), ins[1], ins[2], 1e-5)
    if op == "rms_norm":
        return lambda: F.rms_norm(x, (x.shape[-1],), ins[1], 1e-6)
    if op == "batch_norm":
        return lambda: F.batch_norm(x, ins[3], ins[4], ins[1], ins[2], False, 0.0, 1e-5)
    if op == "cross_entropy":
        return lambda: F.cross_entropy(x, ins[1])
    if op == "matmul":
        return lambda: ins[0] @ ins[1]
    if op == "transpose":
        return lambda: x.permute(*row["perm"]).contiguous()
    if op == "concat":
        return lambda: torch.cat(ins, dim=axis)
    if op == "gather":
        return lambda: torch.index_select(x, axis, ins[1])
    if op == "cumsum":
        return lambda: torch.cumsum(x, dim=axis)
    if op == "sort":
        return lambda: torch.sort(x, dim=axis)
    if op == "conv":
        bias = ins[2] if len(ins) > 2 else None
        return lambda: F.conv2d(x, ins[1], bias, stride, pad)
    if op == "conv_transpose":
        bias = ins[2] if len(ins) > 2 else None
        return lambda: F.conv_transpose2d(x, ins[1], bias, stride, pad)
    if op == "max_pool":
        return lambda: F.max_pool2d(x, row["k"], stride, pad)
    if op == "avg_pool":
        return lambda: F.avg_pool2d(x, row["k"], stride, pad, count_include_pad=False)
    raise TableError(f"line {row['line']}: no PyTorch call for op '{op}'")


def set_tf32(torch, on):
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on


def timeit(torch, fn, batch=0.1):
    fn()
    torch.cuda.synchronize()
    reps = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
        if time.perf_counter() - t0 >= batch or reps >= 1 << 24:
            break
        reps *= 2
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - t0) / reps)
    return best


def classic(torch, dev):
    def u(*shape, dtype=torch.float32):
        return torch.rand(*shape, device=dev, dtype=dtype) * 2 - 1

    for name, dt in (("f32", torch.float32), ("f16", torch.float16), ("bf16", torch.bfloat16)):
        a, b = u(4096, 4096, dtype=dt), u(4096, 4096, dtype=dt)
        print(f"matmul_{name}_4096 {timeit(torch, lambda: a @ b):.9g}", flush=True)
        del a, b
    a, b = u(1 << 28), u(1 << 28)
    print(f"add_2p28 {timeit(torch, lambda: a + b):.9g}", flush=True)
    del a, b
    x = u(8192, 8192)
    print(f"sum_8192 {timeit(torch, lambda: x.sum()):.9g}")
    print(f"softmax_8192 {timeit(torch, lambda: torch.softmax(x, -1)):.9g}")
    print(f"transpose_8192 {timeit(torch, lambda: x.t().contiguous()):.9g}", flush=True)
    a, b = u(4), u(4)
    print(f"add_4 {timeit(torch, lambda: a + b):.9g}", flush=True)


def wide(torch, rows, dev):
    failed = 0
    for row in rows:
        try:
            set_tf32(torch, row["tf32"])
            ins = make_inputs(torch, row, dev)
            fn = make_call(torch, row, ins)
            t = timeit(torch, fn, 0.05)
            print(f"w.{row['key']} {t:.9g}", flush=True)
            del ins, fn
        except Exception as e:  # the row is reported, the others still run
            print(f"torch_bench.py: row {row['key']} (line {row['line']}) FAILED: {e}",
                  file=sys.stderr)
            failed += 1
        finally:
            set_tf32(torch, False)
            torch.cuda.empty_cache()
    return failed


def kernels(torch, rows, keys, dev):
    """For each row named in keys: the CUDA kernels one call runs, each with
    its mean device time over 20 calls (after a warm-up), from torch.profiler.
    What the other side's time for the row is made of, to compare kernel by
    kernel (docs/gpu.md)."""
    from torch.profiler import ProfilerActivity, profile
    missing = [k for k in keys if k not in {r["key"] for r in rows}]
    if missing:
        print(f"torch_bench.py: --kernels: no row {' '.join(missing)}", file=sys.stderr)
        return 1
    for row in rows:
        if row["key"] not in keys:
            continue
        set_tf32(torch, row["tf32"])
        ins = make_inputs(torch, row, dev)
        fn = make_call(torch, row, ins)
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(20):
                fn()
            torch.cuda.synchronize()
        print(f"k.{row['key']}:")
        for ev in sorted(prof.key_averages(), key=lambda e: -e.device_time_total):
            if ev.device_time_total > 0:
                print(f"    {ev.device_time_total / 20:9.1f} us/call  {ev.count / 20:4.1f}x  "
                      f"{ev.key[:150]}")
        set_tf32(torch, False)
        del ins, fn
        torch.cuda.empty_cache()
    return 0


def dry_run(torch, rows):
    failed = 0
    for row in rows:
        try:
            if row["dtype"] != "f32":  # the CPU's half-precision kernels vary by version
                row = dict(row, dtype="f32")
            make_call(torch, row, make_inputs(torch, row, "cpu", cap=8))()
            print(f"ok {row['key']}")
        except Exception as e:
            print(f"FAILED {row['key']} (line {row['line']}): {e}")
            failed += 1
    print(f"{len(rows) - failed} of {len(rows)} rows ran")
    return failed


def startup():
    t0 = time.perf_counter()
    import resource
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    import torch
    t1 = time.perf_counter()
    torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    t2 = time.perf_counter()
    free_b, total_b = torch.cuda.mem_get_info()
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    set_tf32(torch, False)
    x = torch.rand(32, 64, 56, 56, device="cuda").half()
    w = torch.rand(64, 64, 3, 3, device="cuda").half()
    torch.cuda.synchronize()
    t3 = time.perf_counter()
    torch.nn.functional.conv2d(x, w, None, 1, 1)
    torch.cuda.synchronize()
    t4 = time.perf_counter()
    torch.nn.functional.conv2d(x, w, None, 1, 1)
    torch.cuda.synchronize()
    t5 = time.perf_counter()
    print(f"startup.import_s {t1 - t0:.6f}")
    print(f"startup.first_op_s {t2 - t1:.6f}")
    print(f"startup.device_used_bytes {total_b - free_b}")
    print(f"startup.rss_bytes {(rss1 - rss0) * 1024}")
    print(f"startup.first_conv_s {t4 - t3:.6f}")
    print(f"startup.second_conv_s {t5 - t4:.6f}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--table", help="the wide table (bench/gpu/ops.txt)")
    ap.add_argument("--list", action="store_true", help="print the rows, no torch needed")
    ap.add_argument("--dry-run", action="store_true", help="each row once on the CPU, small")
    ap.add_argument("--no-classic", action="store_true", help="only the table's rows")
    ap.add_argument("--startup", action="store_true", help="startup costs (a fresh process)")
    ap.add_argument("--kernels", nargs="+", metavar="KEY",
                    help="the CUDA kernels of these rows, with their times (torch.profiler)")
    args = ap.parse_args(argv)
    if (args.list or args.dry_run or args.kernels) and not args.table:
        ap.error("--list, --dry-run and --kernels need --table FILE")
    try:
        rows = parse_table(args.table) if args.table else []
    except (TableError, OSError) as e:
        print(f"torch_bench.py: {e}", file=sys.stderr)
        return 2
    if args.list:
        for row in rows:
            print(describe(row))
        return 0
    if args.startup:
        startup()
        return 0
    import torch
    if args.dry_run:
        return 1 if dry_run(torch, rows) else 0
    if not torch.cuda.is_available():
        print("torch_bench.py: this torch sees no CUDA device", file=sys.stderr)
        return 1
    set_tf32(torch, False)  # as backplane's default (tf32 = false); cuDNN's too
    dev = torch.device("cuda:0")
    if args.kernels:
        return kernels(torch, rows, args.kernels, dev)
    if not args.no_classic:
        classic(torch, dev)
    failed = wide(torch, rows, dev) if rows else 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

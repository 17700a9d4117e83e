"""backplane.jit: trace a function once per signature into a graph, compile
it, and run the plan on later calls (docs/python.md, docs/graphs.md).

A signature is each Tensor argument's shape and dtype, the backend, and the
values of the static arguments. The first call with a signature calls the
function on symbolic tensors: every op records instead of running (the C
core does that), Python control flow runs as written and only the path taken
is recorded. Tensors the function closes over are captured by reference: the
plan reads their memory each time it runs.
"""
import functools
import inspect
import threading
import warnings

from . import _backplane
from ._backplane import Tensor

# How many signatures one function compiles before the warning.
STORM = 8

# Plans compiled per backend name, for backplane.stats()["jit_compiles"].
_compiles = {}
_lock = threading.Lock()


class RecompilationWarning(RuntimeWarning):
    """A jitted function keeps being compiled for new signatures."""


class _Entry:
    __slots__ = ("plan", "outs", "kind", "backend", "direct", "meta")

    def __init__(self, plan, outs, kind, backend, meta=None):
        self.plan = plan      # a _Plan, or None when every output is a constant
        self.outs = outs      # per output: an int (the plan's output k) or a Tensor
        self.kind = kind      # "one", tuple or list: what the function returned
        self.backend = backend
        self.meta = meta      # what on_trace said when this signature was traced
        # Every output is the plan's, in order: the run's tuple is the result.
        self.direct = plan is not None and type(kind) is not tuple and all(
            type(o) is int and o == k for k, o in enumerate(outs))


class Lowered(dict):
    """jit(f).lower(...): the plan's counts (a dict) and its listing."""

    def __init__(self, stats, text, entry=None, inputs=()):
        super().__init__(stats)
        self._text = text
        self._entry = entry
        self._inputs = tuple(inputs)

    def as_text(self):
        """The plan, one line per node (bp_graph_exec_format)."""
        return self._text

    def __str__(self):
        return self._text

    def profile(self, runs=10, warmup=1):
        """Run the plan on the arguments it was lowered with, `warmup` times
        untimed and then `runs` times timing each step (a node, a prepared
        node with its epilogue, a fused group: bp_graph_exec_profile), and
        return the times as a Profile. Each step waits for the backend
        before the next starts, so a profiled run is a little slower than a
        plain one; the shares are what to read."""
        for name, v in (("runs", runs), ("warmup", warmup)):
            if isinstance(v, bool) or not isinstance(v, int) or v < (name == "runs"):
                raise ValueError(f"Lowered.profile: {name} must be an int >= "
                                 f"{int(name == 'runs')}; got {v!r}")
        entry = self._entry
        if entry is None or entry.plan is None:
            return Profile([], self._text, 0)
        for _ in range(warmup):
            Jitted._run(entry, self._inputs)
        _backplane._graph_profile(entry.plan, True)
        try:
            for _ in range(runs):
                Jitted._run(entry, self._inputs)
        finally:
            _backplane._graph_profile(entry.plan, False)
        return Profile(_backplane._graph_profile_steps(entry.plan),
                       _backplane._graph_format(entry.plan), runs)


class Profile:
    """Where a plan's runs spend their time, step by step (Lowered.profile).

    steps: one dict per step in run order: op (its first node's), nodes (how
    many it ran), node (its first node's place in run order), value (its
    first output, v<value> in the listing), fused_group (or -1), ms (mean
    per run), share (of the run's time in its steps), line (its listing
    line). total_ms: the sum of the steps' means. by_op(): the times per op.
    str(): the table per op, then the slowest steps."""

    def __init__(self, steps, text, runs):
        self.runs = runs
        self._text = text
        lines = [ln.strip() for ln in text.splitlines()
                 if " = " in ln and not ln.startswith("plan on")]

        def line(s):
            k, n = s["node"], s["nodes"]
            if s["fused_group"] < 0 or k + n > len(lines):
                return lines[k] if k < len(lines) else ""
            ops = [ln.split(" = ", 1)[1].split("(", 1)[0] for ln in lines[k:k + n]]
            return (f"fused group {s['fused_group']}: {', '.join(ops)} -> "
                    f"{lines[k + n - 1].split(' = ', 1)[0]}")

        self.total_ms = sum(s["seconds"] / s["runs"] for s in steps) * 1e3
        self.steps = []
        for s in steps:
            ms = s["seconds"] / s["runs"] * 1e3
            self.steps.append(dict(
                op="fused group" if s["fused_group"] >= 0 else s["op"], nodes=s["nodes"],
                node=s["node"], value=s["value"], fused_group=s["fused_group"], ms=ms,
                share=ms / self.total_ms if self.total_ms else 0.0,
                line=line(s)))

    def by_op(self):
        """[(op, ms per run, share, steps)], the largest first; a fused
        group counts as "fused group"."""
        acc = {}
        for s in self.steps:
            ms, n = acc.get(s["op"], (0.0, 0))
            acc[s["op"]] = (ms + s["ms"], n + 1)
        rows = [(op, ms, ms / self.total_ms if self.total_ms else 0.0, n)
                for op, (ms, n) in acc.items()]
        return sorted(rows, key=lambda r: -r[1])

    def as_text(self):
        """The plan's listing with each step's mean time and share."""
        return self._text

    def __str__(self):
        def ms(v):
            return f"{v:.3f} ms" if v >= 1 else f"{v * 1e3:.1f} us"

        out = [f"profile: {self.runs} run(s), {ms(self.total_ms)} per run in "
               f"{len(self.steps)} steps",
               f"  {'op':<20} {'per run':>10} {'share':>7} {'steps':>6}"]
        for op, t, share, n in self.by_op():
            out.append(f"  {op:<20} {ms(t):>10} {share:7.1%} {n:6d}")
        slow = sorted(self.steps, key=lambda s: -s["ms"])[:10]
        if slow:
            out.append("  slowest steps:")
            for s in slow:
                line = s["line"].split("  [")[0]  # the listing's notes left out
                out.append(f"    {ms(s['ms']):>10} {s['share']:6.1%}  {line}")
        return "\n".join(out)

    def __repr__(self):
        return (f"<backplane.Profile: {len(self.steps)} steps, {self.total_ms:.3f} ms per "
                f"run over {self.runs} run(s)>")


def _describe(sig):
    kind = sig[0]
    if kind == "tensor":
        return f"shape {sig[1]} {sig[2]}"
    if kind == "static":
        return f"value {sig[1]!r}"
    if kind == "none":
        return "None"
    if kind == "dict":
        return "{" + ", ".join(f"{k!r}: {_describe(v)}" for k, v in sig[1]) + "}"
    if kind == "kw":
        return _describe(sig[2])
    inner = ", ".join(_describe(v) for v in sig[1])
    return f"[{inner}]" if kind == "list" else f"({inner})"


def _rebuild(sig, a, it):
    """a with its traced tensors replaced, in flattening order, by it's."""
    kind = sig[0]
    if kind == "tensor":
        return next(it)
    if kind in ("static", "none"):
        return a
    if kind == "dict":
        return {k: _rebuild(v, a[k], it) for k, v in sig[1]}
    return type(a)(_rebuild(v, x, it) for v, x in zip(sig[1], a))


def tree_flatten(tree, out, where):
    """Append tree's Tensors (in dicts, lists and tuples of them; None kept
    as None) to out; its structure, for tree_unflatten."""
    if isinstance(tree, Tensor):
        out.append(tree)
        return "t"
    if tree is None:
        return None
    if type(tree) in (tuple, list):
        return (type(tree), tuple(tree_flatten(v, out, where) for v in tree))
    if type(tree) is dict:
        return (dict, tuple((k, tree_flatten(v, out, where)) for k, v in tree.items()))
    raise TypeError(f"{where} is or holds a {type(tree).__name__}; expected Tensors, and "
                    f"dicts, lists and tuples of them (pytrees)")


def tree_unflatten(tdef, it):
    """The structure tdef rebuilt with the Tensors of iterator it."""
    if tdef == "t":
        return next(it)
    if tdef is None:
        return None
    kind, items = tdef
    if kind is dict:
        return {k: tree_unflatten(v, it) for k, v in items}
    return kind(tree_unflatten(v, it) for v in items)


def tree_size(tdef):
    """How many Tensors a structure holds."""
    if tdef == "t":
        return 1
    if tdef is None:
        return 0
    return sum(tree_size(v[1] if tdef[0] is dict else v) for v in tdef[1])


def static_hint(i):
    return f"static_argnames=('{i}',)" if isinstance(i, str) else f"static_argnums=({i},)"


class Jitted:
    """A function traced and compiled once per signature (backplane.jit)."""

    def __init__(self, fun, static_argnums=(), static_argnames=(), on_trace=None,
                 donate_argnums=(), fresh_draws=False):
        if not callable(fun):
            raise TypeError(f"jit: {fun!r} is not callable")
        if isinstance(static_argnums, int):
            static_argnums = (static_argnums,)
        if isinstance(donate_argnums, int):
            donate_argnums = (donate_argnums,)
        self._donate = frozenset(int(i) for i in donate_argnums)
        self._fresh_draws = bool(fresh_draws)
        self._draws_from = 0  # where a plan compiled later starts its run count
        self._fun = fun
        self._on_trace = on_trace  # called after each trace: the entry's meta
        self._static = tuple(int(i) for i in static_argnums)
        if isinstance(static_argnames, str):
            static_argnames = (static_argnames,)
        self._static_names = frozenset(static_argnames)
        self._static_at = {}  # the call's argument count -> the static positions
        self._cache = {}
        self._warned = False
        self._lock = threading.Lock()
        functools.update_wrapper(self, fun, updated=())  # not fun.__dict__: ours
        self._name = getattr(fun, "__qualname__", None) or repr(fun)
        try:
            self._params = list(inspect.signature(fun).parameters)
        except (TypeError, ValueError):
            self._params = []

    def _arg_name(self, i):
        if isinstance(i, str):
            return f"argument '{i}'"
        name = self._params[i] if i < len(self._params) else None
        return f"argument {i} ('{name}')" if name else f"argument {i}"

    def _static_key(self, i, a):
        if isinstance(a, Tensor):
            raise TypeError(
                f"jit({self._name}): {self._arg_name(i)} is marked static but is a Tensor; "
                f"a Tensor's values are never part of a signature: leave it traced, or pass "
                f"a Python value (a.tolist(), a.item()) as the static argument")
        try:
            hash(a)
        except TypeError:
            raise TypeError(
                f"jit({self._name}): {self._arg_name(i)} is static but a {type(a).__name__} "
                f"is not hashable; pass a tuple instead of a list, or pass it as a "
                f"Tensor") from None
        return ("static", a)

    def _signature(self, args, kwargs):
        n = len(args)
        static = self._static_at.get(n)
        if static is None:
            static = frozenset(i + n if i < 0 else i for i in self._static)
            for i in static:
                if not 0 <= i < n:
                    raise TypeError(f"jit({self._name}): static_argnums names argument {i} "
                                    f"but the call passes {n} arguments")
            self._static_at[n] = static
        key, inputs, owners = [], [], []
        for i, a in enumerate(args):
            if i in static:
                key.append(self._static_key(i, a))
            elif type(a) is Tensor:  # the common case, inline
                b = a.backend
                inputs.append(a)
                owners.append((i, b))
                key.append(("tensor", a.shape, str(a.dtype), b))
            else:
                key.append(self._flatten(i, a, inputs, owners))
        for name in sorted(kwargs):  # keywords after the positions, by name
            a = kwargs[name]
            key.append(("kw", name, self._static_key(name, a) if name in self._static_names
                        else self._flatten(name, a, inputs, owners)))
        for i, b in owners[1:]:
            if b != owners[0][1]:
                raise _backplane.BackendMismatchError(
                    f"jit({self._name}): {self._arg_name(i)} holds a tensor on backend "
                    f"{b} but {self._arg_name(owners[0][0])} one on "
                    f"{owners[0][1]}; a plan runs on one backend and tensors never move "
                    f"implicitly: pass that tensor's .to('{owners[0][1]}')")
        return tuple(key), inputs, owners

    def _flatten(self, i, a, inputs, owners):
        """The signature of argument i's value a; its tensors appended to inputs."""
        if isinstance(a, Tensor):
            b = a.backend
            inputs.append(a)
            owners.append((i, b))
            return ("tensor", a.shape, str(a.dtype), b)
        if a is None:
            return ("none",)
        if type(a) in (tuple, list):
            return (type(a).__name__, tuple(self._flatten(i, v, inputs, owners) for v in a))
        if type(a) is dict:
            return ("dict", tuple((k, self._flatten(i, v, inputs, owners)) for k, v in a.items()))
        raise TypeError(
            f"jit({self._name}): {self._arg_name(i)} is or holds a {type(a).__name__}; a "
            f"jitted function takes Tensors (traced), None, lists, tuples and dicts of them, "
            f"and static arguments: pass backplane.asarray(...) of it, or mark the argument "
            f"static with {static_hint(i)} (each new value then compiles again)")

    def __call__(self, *args, **kwargs):
        key, inputs, owners = self._signature(args, kwargs)
        # Called while another jitted function traces: trace through it.
        if any(_backplane._is_symbolic(x) for x in inputs):
            return self._fun(*args, **kwargs)
        entry = self._cache.get(key)
        if entry is None:
            entry = self._trace(args, kwargs, key, inputs)
        return self._run(entry, inputs, self._donated(len(args), owners))

    def _donated(self, n, owners):
        """Per input, whether its argument is donated (None: none is)."""
        if not self._donate:
            return None
        pos = {d + n if d < 0 else d for d in self._donate}
        return tuple(i in pos for i, _ in owners)

    def _call_meta(self, args, kwargs):
        """(the call's result, its signature's meta: what on_trace gave)."""
        key, inputs, _ = self._signature(args, kwargs)
        if any(_backplane._is_symbolic(x) for x in inputs):
            out = self._fun(*args, **kwargs)
            return out, self._on_trace() if self._on_trace else None
        entry = self._cache.get(key)
        if entry is None:
            entry = self._trace(args, kwargs, key, inputs)
        return self._run(entry, inputs), entry.meta

    def _trace(self, args, kwargs, key, inputs):
        g = _backplane._graph_create(inputs[0] if inputs else None)
        try:
            it = iter([_backplane._graph_input(g, x.dtype, x.shape) for x in inputs])
            n = len(args)
            call = [_rebuild(k, a, it) for k, a in zip(key[:n], args)]
            callkw = {k[1]: _rebuild(k[2], kwargs[k[1]], it) for k in key[n:]}
            del it
            out = self._fun(*call, **callkw)
            meta = self._on_trace() if self._on_trace else None
            del call, callkw
            if isinstance(out, Tensor):
                kind, seq = "one", (out,)
            elif isinstance(out, (tuple, list)) and all(isinstance(o, Tensor) for o in out):
                kind, seq = type(out), tuple(out)
            else:
                leaves = []
                tdef = tree_flatten(out, leaves, f"jit({self._name}): the function's result")
                kind, seq = ("tree", tdef), tuple(leaves)
            outs, n_graph = [], 0
            for o in seq:
                if _backplane._is_symbolic(o):
                    _backplane._graph_output(g, o)
                    outs.append(n_graph)
                    n_graph += 1
                else:  # computed from no argument: a constant of the plan
                    outs.append(o)
            del out, seq
            plan = (_backplane._graph_compile(g, len(inputs), n_graph, False, self._fresh_draws)
                    if n_graph else None)
            if plan is not None and self._fresh_draws and self._draws_from:
                _backplane._graph_seek_draws(plan, self._draws_from)
        finally:
            del g  # the graph goes now; the plan holds what it needs
        backend = inputs[0].backend if inputs else _backplane.backend().name
        entry = _Entry(plan, outs, kind, backend, meta)
        with self._lock:
            self._cache[key] = entry
            n = len(self._cache)
            warn = n >= STORM and not self._warned
            if warn:
                self._warned = True
        with _lock:
            _compiles[backend] = _compiles.get(backend, 0) + 1
        if warn:
            self._warn_storm()
        return entry

    def _warn_storm(self):
        keys = list(self._cache)
        changing = []
        for i in range(len(keys[0])):
            seen = []
            for k in keys:
                if i < len(k) and k[i] not in seen:
                    seen.append(k[i])
            if len(seen) > 1:
                first = seen[0]
                name = first[1] if first[0] == "kw" else i
                inner = first[2] if first[0] == "kw" else first
                shown = ", ".join(_describe(s) for s in seen[:4])
                what = "value" if inner[0] == "static" else "shape or dtype"
                changing.append(f"{self._arg_name(name)} changed {what} ({shown}, ...)")
        lens = {len(k) for k in keys}
        if len(lens) > 1:
            changing.append(f"the number of arguments changed ({sorted(lens)})")
        message = (
            f"backplane.jit: {self._name} has been compiled for {len(keys)} different "
            f"signatures: {'; '.join(changing) or 'the arguments changed'}. Each new "
            f"signature traces and compiles again: pad such an argument to a few fixed "
            f"sizes, or mark an argument whose value selects the program static "
            f"(static_argnums, static_argnames), or call the function without jit.")
        _backplane._log(message)  # where the C library's own warnings go too
        warnings.warn(message, RecompilationWarning, stacklevel=4)

    @staticmethod
    def _run(entry, inputs, donate=None):
        if entry.direct:
            res = _backplane._graph_run(entry.plan, tuple(inputs), donate)
            return res[0] if entry.kind == "one" else res if entry.kind is tuple else list(res)
        res = (_backplane._graph_run(entry.plan, tuple(inputs), donate)
               if entry.plan is not None else ())
        outs = [res[o] if isinstance(o, int) else o for o in entry.outs]
        if entry.kind == "one":
            return outs[0]
        if type(entry.kind) is tuple:  # ("tree", structure)
            return tree_unflatten(entry.kind[1], iter(outs))
        return entry.kind(outs)

    def seek_draws(self, run):
        """For a function jitted with fresh_draws: its next call draws what
        call number `run` (counted from 0) draws, and later calls count on
        from there; each signature counts its own calls. Pass a saved step
        to repeat it, or to resume training from a checkpoint with the
        draws it would have had."""
        if not self._fresh_draws:
            raise ValueError(f"jit({self._name}): seek_draws needs a function jitted with "
                             f"fresh_draws=True; without it every call draws the same values")
        if isinstance(run, bool) or not isinstance(run, int) or not 0 <= run < 2**64:
            raise ValueError(f"jit({self._name}): seek_draws takes a call number, an int in "
                             f"[0, 2**64); got {run!r}")
        with self._lock:
            self._draws_from = run
            plans = [e.plan for e in self._cache.values() if e.plan is not None]
        for plan in plans:
            _backplane._graph_seek_draws(plan, run)

    def cache_size(self):
        """The number of signatures compiled so far."""
        return len(self._cache)

    def clear_cache(self):
        """Forget every plan: the next call traces again."""
        with self._lock:
            self._cache.clear()
            self._warned = False

    def lower(self, *args, **kwargs):
        """The plan for these arguments' signature (compiled if it is new) as a
        dict: nodes_recorded, nodes_live, nodes_planned, buffers, peak_bytes,
        sum_bytes, donatable_outputs, fused_groups, nodes_fused, nodes_prepared,
        epilogues_fused (bp_graph_exec_stats), inputs, outputs, backend. Its as_text() (and
        str()) lists the plan: each node in run order, the fused groups, and
        where each value lives (bp_graph_exec_format)."""
        key, inputs, _ = self._signature(args, kwargs)
        entry = self._cache.get(key) or self._trace(args, kwargs, key, inputs)
        stats = (_backplane._graph_stats(entry.plan) if entry.plan is not None else
                 dict(nodes_recorded=0, nodes_live=0, nodes_planned=0, buffers=0,
                      peak_bytes=0, sum_bytes=0, donatable_outputs=0, fused_groups=0,
                      nodes_fused=0, nodes_prepared=0, epilogues_fused=0))
        stats.update(inputs=len(inputs), outputs=len(entry.outs), backend=entry.backend)
        text = (_backplane._graph_format(entry.plan) if entry.plan is not None else
                f"no plan on {entry.backend}: the function returns constants only\n")
        return Lowered(stats, text, entry, inputs)

    def __repr__(self):
        lines = [f"<backplane.jit of {self._name}: {len(self._cache)} signature(s)"]
        for key, entry in list(self._cache.items()):
            sig = ", ".join(_describe(k) for k in key)
            if entry.plan is not None:
                s = _backplane._graph_stats(entry.plan)
                lines.append(f"  ({sig}) on {entry.backend}: {s['nodes_planned']} nodes "
                             f"planned of {s['nodes_recorded']} recorded, {s['buffers']} "
                             f"buffers, peak {s['peak_bytes']} bytes, "
                             f"{s['nodes_fused']} nodes in {s['fused_groups']} fused groups, "
                             f"{s['nodes_prepared']} prepared")
            else:
                lines.append(f"  ({sig}) on {entry.backend}: constants only")
        return "\n".join(lines) + ">"


def jit(fun=None, static_argnums=(), static_argnames=(), donate_argnums=(), fresh_draws=False):
    """jit(f, static_argnums=(), static_argnames=()) -> f traced and compiled
    once per signature.

    The first call with each signature (every Tensor argument's shape and
    dtype, the backend, the values of the static arguments, which must be
    hashable; static_argnames names keyword ones) calls f on symbolic
    tensors and records its ops into a graph, which is compiled; that call
    and later ones with the same signature run the plan without calling f.
    Python control flow is recorded as it ran.
    f returns a Tensor, or Tensors in tuples, lists and dicts (a pytree; None
    allowed). Tensors f closes over
    are captured by reference. Reading a traced value inside f (float(x),
    x.numpy(), print(x), if x:) is an error: mark that argument static, or
    compute the value outside the jitted function. Used as a decorator with
    arguments: @jit(static_argnums=(1,)).
    donate_argnums: the positional arguments whose Tensors (every one in a
    pytree) the caller gives up: a run may write the results into their
    memory (JAX's donation), and each is invalid after the call; pass the
    old parameters and optimizer state of a training step.
    fresh_draws: the random draws inside f (random_uniform, random_normal,
    dropout in training) take new values on each call, as the eager call
    would with its offset advanced past the previous call's draws (call 0
    draws the eager values): what a training step with dropout wants.
    Without it every call of a signature repeats the traced draws.
    f.seek_draws(n) makes the next call draw as call n did."""
    if fun is None:
        return lambda f: Jitted(f, static_argnums, static_argnames,
                                donate_argnums=donate_argnums, fresh_draws=fresh_draws)
    return Jitted(fun, static_argnums, static_argnames, donate_argnums=donate_argnums,
                  fresh_draws=fresh_draws)


def compiles(backend_name, reset=False):
    """The number of plans jit compiled for backend_name (for stats())."""
    with _lock:
        n = _compiles.get(backend_name, 0)
        if reset:
            _compiles.pop(backend_name, None)
    return n

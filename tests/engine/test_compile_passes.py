"""Each optimizing pass of minigrad.compile on its own, on small hand-made recordings.

A recording here is the few fields the passes read (``compile_passes.Recording``): the calls,
the owners each call writes, the kind of each owner, which call made it, which calls are
refills and guards. Each test builds one, runs one pass, and checks which calls it kept and
that replaying the kept calls gives the values of replaying all of them.
"""
from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from minigrad import compile_passes as P


@dataclass
class Rec:
    ops: list = field(default_factory=list)
    writes: list = field(default_factory=list)
    kinds: list = field(default_factory=list)
    index: dict = field(default_factory=dict)
    creator: dict = field(default_factory=dict)
    fills: set = field(default_factory=set)
    guards: list = field(default_factory=list)
    owners: list = field(default_factory=list)

    def owner(self, a: np.ndarray, kind: str) -> int:
        self.index[id(a)] = len(self.kinds)
        self.kinds.append(kind)
        self.owners.append(a)
        return len(self.kinds) - 1

    def call(self, fn: Any, args: tuple, kwargs: dict | None = None, writes: tuple = (),
             makes: tuple = (), fill: bool = False) -> int:
        k = len(self.ops)
        self.ops.append((fn, args, kwargs or {}))
        self.writes.append(set(writes))
        for m in makes:
            self.creator[m] = k
        if fill:
            self.fills.add(k)
        return k


def run(calls: list) -> None:
    for fn, args, kwargs in calls:
        fn(*args, **kwargs)


def scattered_gradient(fill_first: bool) -> tuple[Rec, np.ndarray, np.ndarray, np.ndarray]:
    """``r = -x``; ``d = zeros``; ``d[:, 0] = r``: the backward of ``x[:, 0]``, with the
    refill of ``d`` recorded before or after ``r`` is computed."""
    rec = Rec()
    x = np.arange(3.0)
    r = np.empty(3)
    d = np.zeros((3, 2))
    nx, nr, nd = rec.owner(x, "input"), rec.owner(r, "internal"), rec.owner(d, "external")
    compute = (np.negative, (x,), {"out": (r,)})
    refill = (np.copyto, (d, np.array(0.0)), {})
    order = [refill, compute] if fill_first else [compute, refill]
    for fn, args, kwargs in order:
        if fn is np.copyto:
            rec.call(fn, args, kwargs, writes=(nd,), makes=(nd,), fill=True)
        else:
            rec.call(fn, args, kwargs, makes=(nr,))
    rec.call(operator.setitem, (d, (slice(None), 0), r), writes=(nd,))
    return rec, x, r, d


def test_write_in_place_never_moves_a_write_before_the_refill_it_follows():
    rec, x, r, d = scattered_gradient(fill_first=False)
    plan = P.Plan(rec, None)
    P.write_results_in_place(plan)
    assert all(plan.alive), "the copy must stay: the refill of d lies between"
    d[...] = 7.0
    run([call for _, call in plan.kept()])
    assert np.array_equal(d, [[0.0, 0.0], [-1.0, 0.0], [-2.0, 0.0]])


def test_write_in_place_writes_into_the_slice_when_nothing_lies_between():
    rec, x, r, d = scattered_gradient(fill_first=True)
    plan = P.Plan(rec, None)
    P.write_results_in_place(plan)
    assert plan.alive == [True, True, False]  # the copy is gone: -x is written into d[:, 0]
    d[...] = 7.0
    run([call for _, call in plan.kept()])
    assert np.array_equal(d, [[0.0, 0.0], [-1.0, 0.0], [-2.0, 0.0]])


def test_write_in_place_keeps_a_copy_whose_source_is_read_again():
    rec, x, r, d = scattered_gradient(fill_first=True)
    y = np.empty(3)
    ny = rec.owner(y, "external")
    rec.call(np.add, (r, r), {"out": (y,)}, writes=(ny,))
    plan = P.Plan(rec, None)
    P.write_results_in_place(plan)
    assert all(plan.alive)


def test_drop_unchanged_refills():
    rec = Rec()
    a, b = np.ones(2), np.zeros(2)
    na, nb = rec.owner(a, "internal"), rec.owner(b, "internal")
    rec.call(np.copyto, (a, np.array(1.0)), writes=(na,), makes=(na,), fill=True)
    rec.call(np.copyto, (b, np.array(0.0)), writes=(nb,), makes=(nb,), fill=True)
    rec.call(operator.setitem, (b, 0, 5.0), writes=(nb,))  # b is written again: its refill stays
    plan = P.Plan(rec, None)
    P.drop_unchanged_refills(plan)
    assert plan.alive == [False, True, True]


def test_drop_self_assignments():
    rec = Rec()
    a = np.arange(4.0)
    na = rec.owner(a, "external")
    view = a[1:3]
    rec.call(operator.setitem, (a, slice(1, 3), view), writes=(na,))  # what a[1:3] += w leaves
    rec.call(operator.setitem, (a, slice(0, 2), a[2:4]), writes=(na,))  # a real copy
    plan = P.Plan(rec, None)
    P.drop_self_assignments(plan)
    assert plan.alive == [False, True]


def test_fold_constants_keeps_values_made_from_constants_only():
    rec = Rec()
    one, half, x, y = np.ones(()), np.empty(()), np.ones(()), np.empty(())
    n1, nh = rec.owner(one, "internal"), rec.owner(half, "internal")
    nx, ny = rec.owner(x, "input"), rec.owner(y, "internal")
    rec.call(np.copyto, (one, np.array(1.0)), writes=(n1,), makes=(n1,), fill=True)
    rec.call(np.divide, (one, 2.0), {"out": (half,)}, makes=(nh,))  # constant: folded
    rec.call(np.multiply, (x, half), {"out": (y,)}, makes=(ny,))  # reads an input: kept
    plan = P.Plan(rec, ("tensor", y))
    P.fold_constants(plan)
    assert plan.alive == [True, False, True]


def test_drop_dead_calls_keeps_what_reaches_the_output_or_lasting_state():
    rec = Rec()
    x, t, u, p = np.ones(2), np.empty(2), np.empty(2), np.zeros(2)
    nx, nt, nu, npar = (rec.owner(x, "input"), rec.owner(t, "internal"),
                        rec.owner(u, "internal"), rec.owner(p, "external"))
    rec.call(np.exp, (x,), {"out": (t,)}, makes=(nt,))        # read by nothing: dead
    rec.call(np.negative, (x,), {"out": (u,)}, makes=(nu,))   # read by the update: kept
    rec.call(np.subtract, (p, u), {"out": (p,)}, writes=(npar,))  # a parameter: kept
    plan = P.Plan(rec, ("none",))
    P.drop_dead_calls(plan)
    assert plan.alive == [False, True, True]


def test_fuse_value_checks():
    rec = Rec()
    x, s = np.array([1.0, 2.0]), np.empty(())
    nx, ns = rec.owner(x, "input"), rec.owner(s, "internal")
    rec.call(P.compute_into, (s, np.sum, (x,), {}), makes=(ns,))
    k = rec.call(P.check, (float, (s,), 3.0, "the sum"))
    rec.guards.append(k)
    plan = P.Plan(rec, ("none",))
    P.fuse_value_checks(plan)
    assert plan.alive == [False, True]
    run([call for _, call in plan.kept()])  # 1 + 2 == 3: passes
    x[0] = 5.0
    try:
        run([call for _, call in plan.kept()])
    except P.Unrecoverable as e:
        assert "the sum was 3.0 when recorded and is 7.0 now" in str(e)
    else:
        raise AssertionError("the fused check did not check")


def test_optimize_runs_every_pass_in_order():
    assert [p.__name__ for p in P.PASSES] == [
        "drop_unchanged_refills", "drop_self_assignments", "fold_constants", "drop_dead_calls",
        "sum_scattered_slices", "write_results_in_place", "fuse_value_checks",
        "write_elementwise_in_place", "reuse_buffers"]
    rec, x, r, d = scattered_gradient(fill_first=False)
    kept = P.optimize(rec, None)
    assert [k for k, _ in kept] == [0, 1, 2]


def aligned(n: int, count: int) -> list[np.ndarray]:
    """``count`` new arrays of ``n`` floats whose addresses agree modulo 64 (the pass moves an
    array only into memory of the same alignment)."""
    made: dict[int, list[np.ndarray]] = {}
    while True:
        a = np.empty(n)
        group = made.setdefault(a.__array_interface__["data"][0] % 64, [])
        group.append(a)
        if len(group) == count:
            return group


def chain(n: int = 20000) -> tuple[Rec, dict[str, np.ndarray]]:
    """``a = x * 2; b = a + 1; c = b * b; s = c.sum(); z = zeros; z[...] = c``: four large
    internal arrays whose lives end one after another, ``s`` the output."""
    rec = Rec()
    x = np.linspace(-1.0, 1.0, n)
    a, b, c = aligned(n, 3)
    s, z = np.empty(()), np.zeros(n)
    nx = rec.owner(x, "input")
    na, nb, nc, ns, nz = (rec.owner(v, "internal") for v in (a, b, c, s, z))
    rec.call(np.multiply, (x, 2.0), {"out": (a,)}, makes=(na,))
    rec.call(np.add, (a, 1.0), {"out": (b,)}, makes=(nb,))
    rec.call(np.multiply, (b, b), {"out": (c,)}, makes=(nc,))
    rec.call(np.add.reduce, (c,), {"axis": None, "out": s}, makes=(ns,))
    rec.call(np.add.at, (z, np.arange(3), c[:3]), writes=(nz,))  # reads z first: stays
    rec.call(np.add, (z, c), {"out": (z,)}, writes=(nz,))
    assert nx == 0
    return rec, {"x": x, "a": a, "b": b, "c": c, "s": s, "z": z}


def test_reuse_buffers_writes_a_new_array_into_the_memory_of_a_forgotten_one():
    rec, v = chain()
    plan = P.Plan(rec, ("tensor", v["s"]), keep=(v["z"],))
    P.reuse_buffers(plan)
    (_, (_, args0, kw0)), (_, (_, args1, kw1)), (_, (_, args2, kw2)) = plan.kept()[:3]
    assert kw0["out"][0] is v["a"] and args1[0] is v["a"]  # a keeps its memory
    assert kw1["out"][0] is v["b"]  # a is still read by the call that writes b
    assert np.shares_memory(kw2["out"][0], v["a"]) and args2[0] is v["b"]  # c lands in a's
    run([call for _, call in plan.kept()])
    expected = (np.linspace(-1.0, 1.0, 20000) * 2.0 + 1.0) ** 2
    assert v["s"][()] == np.add.reduce(expected, axis=None)  # bit for bit
    # z is kept (a gradient), s is the output, x an input: none of them moved
    assert all(not np.shares_memory(t, v[n]) for n in "xsz" for t in (v["a"], v["b"]))


def test_reuse_buffers_moves_no_small_array_kept_output_or_array_read_before_written():
    rec, v = chain(n=100)  # 800 bytes: below REUSE_BYTES
    plan = P.Plan(rec, ("tensor", v["s"]))
    before = [call for _, call in plan.kept()]
    P.reuse_buffers(plan)
    assert [call for _, call in plan.kept()] == before
    rec, v = chain()
    plan = P.Plan(rec, ("tensor", v["c"]))  # c is the output now: it keeps its memory
    P.reuse_buffers(plan)
    assert all(kw.get("out", (v["c"],))[0] is not v["a"] for _, (_, _, kw) in plan.kept()[2:3])
    assert plan.kept()[2][1][2]["out"][0] is v["c"]
    rec, v = chain()
    plan = P.Plan(rec, ("tensor", v["s"]))  # z, not kept, is read (add.at) before it is written
    P.reuse_buffers(plan)
    assert plan.kept()[4][1][1][0] is v["z"] and plan.kept()[5][1][2]["out"][0] is v["z"]

"""compile_passes.write_elementwise_in_place on small hand-made recordings (the ``Rec`` of
test_compile_passes): an elementwise call writes its new result over an input that no later
call reads, with the values of the full calls; and leaves alone an input read later, an array
a replay does not compute afresh (a dropped refill), and an output."""
from __future__ import annotations

import numpy as np

from minigrad import compile_passes as P
from tests.engine.test_compile_passes import Rec, run


def sigmoid_chain(read_a_again: bool = False) -> tuple[Rec, dict[str, np.ndarray]]:
    """``a = 0.5 * x; t = tanh(a); u = t + 1; y = 0.5 * u``, ``y`` the output (with
    ``read_a_again``, ``s = a + y`` is the output instead)."""
    rec = Rec()
    x = np.linspace(-3.0, 3.0, 12).reshape(3, 4)
    a, t, u, y, s = (np.empty((3, 4)) for _ in range(5))
    rec.owner(x, "input")
    na, nt, nu, ny, ns = (rec.owner(v, "internal") for v in (a, t, u, y, s))
    rec.call(np.multiply, (0.5, x), {"out": (a,)}, makes=(na,))
    rec.call(np.tanh, (a,), {"out": (t,)}, makes=(nt,))
    rec.call(np.add, (t, 1), {"out": (u,)}, makes=(nu,))
    rec.call(np.multiply, (0.5, u), {"out": (y,)}, makes=(ny,))
    if read_a_again:
        rec.call(np.add, (a, y), {"out": (s,)}, makes=(ns,))
    return rec, {"x": x, "a": a, "y": y, "s": s}


def test_a_chain_of_elementwise_calls_runs_in_one_buffer():
    rec, v = sigmoid_chain()
    run(rec.ops)
    expected = v["y"].copy()
    kept = P.optimize(rec, ("tensor", v["y"]), passes=(P.write_elementwise_in_place,))
    outs = [kwargs["out"][0] for _, (_, _, kwargs) in kept]
    a_memory = v["a"].__array_interface__["data"][0]
    assert [o.__array_interface__["data"][0] == a_memory for o in outs] == \
        [True, True, True, False]  # tanh and + 1 over a; the output stays where it is
    v["y"][...] = 0.0
    for _ in range(2):  # twice: a replay leaves nothing behind that the next one reads
        run([call for _, call in kept])
        np.testing.assert_array_equal(v["y"], expected)


def test_an_input_read_later_is_not_written_over():
    rec, v = sigmoid_chain(read_a_again=True)
    run(rec.ops)
    expected = v["s"].copy()
    kept = P.optimize(rec, ("tensor", v["s"]), passes=(P.write_elementwise_in_place,))
    a_memory = v["a"].__array_interface__["data"][0]
    tanh_out = kept[1][1][2]["out"][0]
    assert tanh_out.__array_interface__["data"][0] != a_memory  # a is read by the last call
    run([call for _, call in kept])
    np.testing.assert_array_equal(v["s"], expected)


def test_an_array_whose_refill_was_dropped_is_not_written_over():
    """``o = ones`` (its refill dropped by pass 1: it keeps its values between replays);
    ``y = o * x``; ``z = y + 1``: ``y`` may go over nothing but a fresh array."""
    rec = Rec()
    x = np.arange(4.0)
    o, y, z = np.ones(4), np.empty(4), np.empty(4)
    rec.owner(x, "input")
    no, ny, nz = (rec.owner(a, "internal") for a in (o, y, z))
    rec.call(np.copyto, (o, np.array(1.0)), writes=(no,), makes=(no,), fill=True)
    rec.call(np.multiply, (o, x), {"out": (y,)}, makes=(ny,))
    rec.call(np.add, (y, 1.0), {"out": (z,)}, makes=(nz,))
    kept = P.optimize(rec, ("tensor", z), passes=(P.drop_unchanged_refills,
                                                   P.write_elementwise_in_place))
    assert [k for k, _ in kept] == [1, 2]
    assert kept[0][1][2]["out"][0].__array_interface__["data"][0] == \
        y.__array_interface__["data"][0]  # not over o
    for _ in range(2):
        run([call for _, call in kept])
        np.testing.assert_array_equal(z, x + 1.0)
        np.testing.assert_array_equal(o, 1.0)

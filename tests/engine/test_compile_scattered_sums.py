"""compile_passes.sum_scattered_slices on small hand-made recordings (the ``Rec`` of
test_compile_passes): a sum of arrays of zeros that each hold one slice is computed slice by
slice, bit for bit the values of the full calls (``-0.0`` and NaN included), and left alone
where it would not be (overlapping slices, a slice's values changed before the sum, a piece
read elsewhere)."""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from minigrad import compile_passes as P

from tests.engine.test_compile_passes import Rec, run


def scattered_sum(values: list[np.ndarray], index: list[tuple], shape: tuple[int, ...],
                  change_first: bool = False) -> tuple[Rec, np.ndarray, list[np.ndarray]]:
    """``z_j = zeros(shape); z_j[index[j]] = v_j`` for each piece, summed left to right into
    new arrays; the last sum ``s`` is the output. ``v_j`` are copied from inputs first (new
    arrays of the recording). With ``change_first``, the first piece's values are overwritten
    after its write and before the sum."""
    rec = Rec()
    dtype = values[0].dtype
    made = []
    for v in values:
        x = v.copy()
        nx = rec.owner(x, "input")
        m = np.empty_like(v)
        nm = rec.owner(m, "internal")
        rec.call(np.positive, (x,), {"out": (m,)}, makes=(nm,))
        assert nx != nm
        made.append((m, nm))
    total, n_total = None, None
    for j, ((m, _), i) in enumerate(zip(made, index)):
        z = np.zeros(shape, dtype)
        nz = rec.owner(z, "internal")
        rec.call(np.copyto, (z, np.array(0.0, dtype)), writes=(nz,), makes=(nz,), fill=True)
        rec.call(operator.setitem, (z, i, m), writes=(nz,))
        if j == 0 and change_first:
            rec.call(np.negative, (m,), {"out": (m,)}, writes=(made[0][1],))
        if total is None:
            total, n_total = z, nz
            continue
        s = np.empty(shape, dtype)
        ns = rec.owner(s, "internal")
        rec.call(np.add, (total, z), {"out": (s,)}, makes=(ns,))
        total, n_total = s, ns
    assert n_total is not None
    return rec, total, [m for m, _ in made]


def replayed(rec: Rec, out: np.ndarray, passes: tuple) -> tuple[list[Any], np.ndarray]:
    """The functions of the calls kept by ``passes``, and the output after running them."""
    out[...] = 7.0  # a replay must write every value
    kept = P.optimize(rec, ("tensor", out), passes=passes)
    run([call for _, call in kept])
    return [fn for _, (fn, _, _) in kept], out.copy()


GATES = [(Ellipsis, slice(k * 3, (k + 1) * 3)) for k in range(4)]


def test_four_gate_slices_are_summed_slice_by_slice_bit_for_bit():
    rng = np.random.default_rng(0)
    values = [rng.normal(size=(2, 3)).astype(np.float32) for _ in range(4)]
    values[1][0, 0], values[2][1, 2], values[3][0, 1] = -0.0, np.nan, np.inf
    rec, s, _ = scattered_sum(values, GATES, (2, 12))
    full_calls, expected = replayed(rec, s, ())
    kept, got = replayed(rec, s, (P.sum_scattered_slices,))
    assert kept == [np.positive] * 4 + [P.add_pieces]  # no zeros, no writes of slices
    np.testing.assert_array_equal(got.view(np.uint32), expected.view(np.uint32))  # bit for bit
    assert not np.signbit(got[0, 3])  # -0.0 + 0.0 is 0.0, as the sum of the arrays made it
    assert len(full_calls) == len(rec.ops)


def test_steps_of_a_sequence_cover_it_and_a_partial_sum_keeps_its_zeros():
    rng = np.random.default_rng(1)
    values = [rng.normal(size=(2, 3)) for _ in range(5)]
    for index, shape in [([(t,) for t in range(5)], (5, 2, 3)),         # covers every value
                         ([(t,) for t in (0, 2, 3)], (6, 2, 3))]:      # rows 1, 4, 5 zero
        rec, s, _ = scattered_sum(values[:len(index)], index, shape)
        _, expected = replayed(rec, s, ())
        kept, got = replayed(rec, s, P.PASSES)
        assert kept == [np.positive] * len(index) + [P.add_pieces]
        np.testing.assert_array_equal(got.view(np.uint64), expected.view(np.uint64))


def test_overlapping_slices_are_left_alone():
    values = [np.ones((2, 3)), np.full((2, 3), 2.0)]
    rec, s, _ = scattered_sum(values, [(Ellipsis, slice(0, 3)), (Ellipsis, slice(2, 5))],
                              (2, 6))
    kept, got = replayed(rec, s, (P.sum_scattered_slices,))
    assert len(kept) == len(rec.ops)
    np.testing.assert_array_equal(got, [[1, 1, 3, 2, 2, 0]] * 2)


def test_a_piece_changed_before_the_sum_is_left_alone():
    values = [np.ones((2, 3)), np.full((2, 3), 2.0)]
    rec, s, _ = scattered_sum(values, GATES[:2], (2, 12), change_first=True)
    kept, got = replayed(rec, s, (P.sum_scattered_slices,))
    assert len(kept) == len(rec.ops)
    np.testing.assert_array_equal(got[:, :6], [[1, 1, 1, 2, 2, 2]] * 2)


def test_a_piece_read_by_another_call_is_left_alone():
    values = [np.ones((2, 3)), np.full((2, 3), 2.0)]
    rec, s, _ = scattered_sum(values, GATES[:2], (2, 12))
    first_zeros = rec.ops[2][1][0]
    elsewhere = np.empty(())
    n = rec.owner(elsewhere, "internal")
    rec.call(np.add.reduce, (first_zeros,), {"axis": None, "out": elsewhere}, makes=(n,))
    kept = P.optimize(rec, ["tensor", ("tensor", s), ("tensor", elsewhere)],
                      passes=(P.sum_scattered_slices,))
    assert len(kept) == len(rec.ops)

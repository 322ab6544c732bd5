"""The broadcast plan against NumPy's own broadcasting, and unbroadcast against the plan."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

from minigrad.broadcast import unbroadcast
from minigrad.course.widgets.plan import NUMPY_RULE, broadcast_pair, plan

OPS = ["+", "-", "*", "/"]

# Pairs of shapes that broadcast (sizes 0 and 1 included, up to 4 axes each) ...
pairs = mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, min_side=0,
                                      max_side=4)
# ... and pairs of arbitrary shapes, most of which do not.
any_shape = st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple)


def index_grid(shape):
    """An array of the given shape whose cells hold their own index tuples (as flat numbers)."""
    return np.arange(math.prod(shape)).reshape(shape)


@given(pairs, st.sampled_from(OPS))
def test_plan_matches_numpy_cell_by_cell(shapes, op):
    (sa, sb), expected = shapes.input_shapes, shapes.result_shape
    p = plan(sa, sb, op)
    assert p.shape == expected == np.broadcast_shapes(sa, sb)
    # NumPy's broadcast_to of an index grid says which input cell each result cell reads.
    from_a = np.broadcast_to(index_grid(sa), p.shape)
    from_b = np.broadcast_to(index_grid(sb), p.shape)
    assert list(p.source_a) == [tuple(int(i) for i in r) for r in np.ndindex(*p.shape)]
    for r in np.ndindex(*p.shape):
        assert p.source_a[r] == tuple(int(i) for i in np.unravel_index(from_a[r], sa))
        assert p.source_b[r] == tuple(int(i) for i in np.unravel_index(from_b[r], sb))


@given(pairs)
def test_stretched_axes_are_numpys_zero_strides(shapes):
    sa, sb = shapes.input_shapes
    p = plan(sa, sb)
    if 0 in p.shape:
        return  # empty arrays have no meaningful strides
    for operand, shape in (("a", sa), ("b", sb)):
        strides = np.broadcast_to(index_grid(shape), p.shape).strides
        copied_by_numpy = {ax for ax, s in enumerate(strides) if s == 0 and p.shape[ax] > 1}
        assert set(p.copied_axes(operand)) == copied_by_numpy
        lead = len(p.shape) - len(shape)
        assert p.input_shape(operand) == shape
        assert p.summed_axes(operand) == tuple(range(lead)) + tuple(
            lead + i for i, n in enumerate(shape) if n == 1 and p.shape[lead + i] != 1)


@given(pairs)
def test_readers_invert_sources_and_mark_one_original(shapes):
    sa, sb = shapes.input_shapes
    p = plan(sa, sb)
    for operand, shape in (("a", sa), ("b", sb)):
        readers = p.readers(operand)
        assert set(readers) == set(np.ndindex(*shape))
        assert sum(len(r) for r in readers.values()) == math.prod(p.shape)
        for cell, cells in readers.items():
            assert all(p.source(operand)[r] == cell for r in cells)
            if cells:  # exactly the first reader is the original, the rest are copies
                assert [p.is_copy(operand, r) for r in cells] == [False] + [True] * (len(cells) - 1)


@given(any_shape, any_shape)
def test_plan_raises_exactly_when_numpy_does(sa, sb):
    try:
        expected = np.broadcast_shapes(sa, sb)
    except ValueError:
        with pytest.raises(ValueError, match="do not broadcast") as info:
            plan(sa, sb, "*")
        message = str(info.value)
        assert NUMPY_RULE in message and str(sa) in message and str(sb) in message
        # every clashing axis is named, counted from the right as NumPy aligns them
        ndim = max(len(sa), len(sb))
        pa, pb = (1,) * (ndim - len(sa)) + sa, (1,) * (ndim - len(sb)) + sb
        for axis in range(ndim):
            clash = pa[axis] != pb[axis] and 1 not in (pa[axis], pb[axis])
            assert (f"axis {axis - ndim} " in message) == clash
    else:
        assert plan(sa, sb, "*").shape == expected == broadcast_pair(sa, sb)


@given(pairs, st.integers(0, 2**32 - 1))
def test_unbroadcast_sums_the_copies_the_plan_lists(shapes, seed):
    sa, sb = shapes.input_shapes
    p = plan(sa, sb)
    grad = np.random.default_rng(seed).integers(-9, 10, size=p.shape).astype(float)
    for operand, shape in (("a", sa), ("b", sb)):
        summed = unbroadcast(grad, shape)
        assert summed.shape == shape
        for cell, cells in p.readers(operand).items():
            assert summed[cell] == sum(grad[r] for r in cells)


def test_error_message_names_both_clashing_axes():
    with pytest.raises(ValueError) as info:
        plan((2, 3), (5, 4), "/")
    message = str(info.value)
    assert message.startswith("A / B: shapes (2, 3) and (5, 4) do not broadcast")
    assert "axis -2 (axis 0 of A, axis 0 of B) has size 2 in A and 5 in B" in message
    assert "axis -1 (axis 1 of A, axis 1 of B) has size 3 in A and 4 in B" in message
    assert "equal, or one of them must be 1" in message


def test_a_column_and_a_row():
    p = plan((3, 1), (1, 4), "add")
    assert p.op == "+" and p.shape == (3, 4)
    assert p.stretched_a == (1,) and p.stretched_b == (0,)
    assert p.added_a == p.added_b == ()
    assert p.readers("a")[(1, 0)] == [(1, 0), (1, 1), (1, 2), (1, 3)]
    assert p.readers("b")[(0, 2)] == [(0, 2), (1, 2), (2, 2)]
    assert p.describe("a") == ("A (3, 1) is stretched along axis 1 (1 → 4): each of its cells "
                               "is used 4 times.")


def test_scalar_and_added_axes():
    p = plan((), (2, 3), "*")
    assert p.shape == (2, 3) and p.added_a == (0, 1) and p.stretched_a == ()
    assert set(p.source_a.values()) == {()}
    p = plan((3,), (1, 3))
    assert p.added_a == (0,) and p.copied_axes("a") == ()
    assert "nothing is copied" in p.describe("a")


@pytest.mark.parametrize("bad, error", [
    ((3, -1), ValueError), ((3, 1.5), TypeError), ((True,), TypeError), (3, TypeError),
])
def test_bad_shapes_are_refused(bad, error):
    with pytest.raises(error, match="shape of A"):
        plan(bad, (3,))


def test_unknown_operator_is_refused():
    with pytest.raises(ValueError, match="op must be one of"):
        plan((3,), (3,), "%")


@given(pairs)
def test_a_plan_without_cells_has_the_same_axes(shapes):
    sa, sb = shapes.input_shapes
    full, light = plan(sa, sb), plan(sa, sb, cells=False)
    assert light.source_a == light.source_b == {}
    for operand in ("a", "b"):
        assert light.summed_axes(operand) == full.summed_axes(operand)
        assert light.copied_axes(operand) == full.copied_axes(operand)
        assert light.describe(operand) == full.describe(operand)


def test_a_plan_without_cells_is_cheap_at_any_size():
    p = plan((10**9, 1), (1, 10**6), cells=False)  # 10**15 cells: listing them would never end
    assert p.shape == (10**9, 10**6) and p.copied_axes("b") == (0,)

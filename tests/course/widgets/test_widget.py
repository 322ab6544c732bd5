"""The broadcast-and-backward widget, driven headlessly: traits in, the picture's data out.

The browser draws exactly what ``w.data`` holds (see minigrad.course.widgets.picture), so these
tests check that data: the numbers against the calculus and minigrad's backward pass, which cell
lights up which, the steps, the sentences, and the error states. tests/browser/test_browser_widget.py
checks that the browser shows it.
"""
import base64
import json
import re
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest

import minigrad
from minigrad.broadcast import unbroadcast
from minigrad.course.widgets import BroadcastBackward, ShapeError, parse_shape
from minigrad.course.widgets import picture as picture_module
from minigrad.course.widgets.picture import MAX_COMPUTE, format_number, parse_gradient, picture
from minigrad.course.widgets.shapes import MAX_CELLS, PRESETS, cap_shapes

NOTEBOOK = Path(__file__).resolve().parents[3] / "interactives" / "broadcast_and_backward.ipynb"
WIDGETS = Path(minigrad.__file__).parent / "course" / "widgets"
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def w():
    return BroadcastBackward(shape_a="3,1", shape_b="1,4", op="+")


def grids(data, view="forward"):
    """Grid id -> grid, for one view of a picture."""
    return {item["id"]: item for row in data["views"][view]["rows"] for item in row
            if item["kind"] == "grid"}


def values(grid):
    """A grid's drawn numbers as floats, in its shown shape ('−' read as '-')."""
    nums = [float(sum(map(float, [eval(c["v"].replace("−", "-"))]))) for c in grid["cells"]]
    return np.array(nums).reshape(grid["shape"])


def notes(data, view="forward"):
    return " ".join(data["views"][view]["notes"])


def index_of(grid, k):
    return np.unravel_index(k, grid["shape"]) if grid["shape"] else ()


# --- the widget's state ---------------------------------------------------------------------


def test_starts_with_both_views_computed(w):
    assert w.view == "forward" and w.error is None and w.result_shape == (3, 4)
    assert set(w.current["views"]) == {"forward", "backward"} and w.data["error"] == ""
    assert set(w.data["ops"]) == {"+", "-", "*", "/"}  # switching operators needs no kernel
    assert w.revision >= 1
    assert "A (3, 1) + B (1, 4) → result (3, 4)." in notes(w.current)
    assert "A (3, 1) is stretched along axis 1 (1 → 4)" in notes(w.current)
    json.dumps(w.data)  # plain data: it goes to the browser as JSON


def test_changing_a_trait_recomputes(w):
    revision = w.revision
    w.shape_a = "(2, 3, 1)"
    assert w.result_shape == (2, 3, 4) and w.revision == revision + 1
    assert "gets new leading axis 0" in notes(w.current)  # B (1, 4) gains an axis
    w.op = "*"
    assert grids(w.current)["C"]["title"] == "C = A × B (2, 3, 4)"


def test_operators_switch_without_recomputing_up_to_a_size(w):
    revision = w.revision
    w.op = "/"
    assert w.revision == revision and grids(w.current)["C"]["title"] == "C = A ÷ B (3, 4)"
    w.shape_a = "200000,1"  # past ALL_OPS_UP_TO: only the current operator is computed
    assert set(w.data["ops"]) == {"/"}
    revision = w.revision
    w.op = "*"
    assert w.revision == revision + 1 and set(w.data["ops"]) == {"*"}
    w.op = "@"  # the matrix product is computed on its own
    assert set(w.data["ops"]) == {"@"} and "takes two 2-D shapes" not in str(w.error)


def test_a_shape_change_sends_one_picture_and_the_browser_asks_for_the_others(w):
    w.shape_a = "2,1"
    assert set(w.data["ops"]) == {"+"}   # the redraw waits for one picture only
    w._on_message(w, {"type": "prefetch", "revision": w.revision - 1}, [])  # an old picture's
    assert set(w.data["ops"]) == {"+"}
    revision = w.revision
    w._on_message(w, {"type": "prefetch", "revision": w.revision}, [])
    assert set(w.data["ops"]) == {"+", "-", "*", "/"} and w.revision == revision
    assert grids(w.data["ops"]["/"])["C"]["title"] == "C = A ÷ B (2, 4)"
    w.op = "*"   # already there: no new revision, nothing recomputed
    assert w.revision == revision and grids(w.current)["C"]["title"] == "C = A × B (2, 4)"
    w.shape_a = "x"
    w.prefetch()   # a bad input: nothing to prefetch, the last good pictures stay
    assert w.error is not None and set(w.data["ops"]) == {"+", "-", "*", "/"}


def test_the_view_switches_without_recomputing(w):
    revision = w.revision
    w.send_back()
    assert w.view == "backward" and w.revision == revision
    w.show_forward()
    assert w.view == "forward"


@pytest.mark.parametrize("shape_a, shape_b", [("3,1", "1,4"), ("2,1,3", "4,1"), ("()", "2,3"),
                                              ("2,1,3,1", "2,1,2")])
@pytest.mark.parametrize("op", ["+", "-", "*", "/"])
def test_numbers_match_the_calculus(shape_a, shape_b, op):
    data = picture(parse_shape(shape_a), parse_shape(shape_b), op, "random", seed=1)
    f, b_ = grids(data), grids(data, "backward")
    a, b, g = values(f["A"]), values(f["B"]), values(b_["g"])
    out = values(f["C"])
    A, B = np.broadcast_to(a, out.shape), np.broadcast_to(b, out.shape)
    np.testing.assert_allclose(out, {"+": A + B, "-": A - B, "*": A * B, "/": A / B}[op])
    # what each cell sends back, from the rules (an oracle independent of the engine)
    da, db = {"+": (g, g), "-": (g, -g), "*": (g * B, g * A), "/": (g / B, -g * A / B**2)}[op]
    np.testing.assert_allclose(values(b_["to A"]), da, atol=1e-3)
    np.testing.assert_allclose(values(b_["to B"]), db, atol=1e-3)
    np.testing.assert_allclose(values(b_["A.grad"]), unbroadcast(da, a.shape), atol=1e-3)
    np.testing.assert_allclose(values(b_["B.grad"]), unbroadcast(db, b.shape), atol=1e-3)
    assert set(np.unique(g)) <= {-3, -2, -1, 1, 2, 3} and len(np.unique(g)) > 1


def test_the_numbers_come_from_the_engines_backward(monkeypatch):
    """Swap in a multiplication whose VJP is wrong on purpose: the picture shows it."""
    def doubled_mul(x, y):
        return minigrad.op(x.data * y.data, (x, y),
                           lambda g, xd, yd: (unbroadcast(2 * g * yd, xd.shape),
                                              unbroadcast(2 * g * xd, yd.shape)),
                           saved=(x.data, y.data), name="mul")
    honest = grids(picture((3, 1), (1, 4), "*"), "backward")
    monkeypatch.setitem(picture_module._OPS, "*", doubled_mul)
    doubled = grids(picture((3, 1), (1, 4), "*"), "backward")
    np.testing.assert_array_equal(values(doubled["A.grad"]), 2 * values(honest["A.grad"]))
    np.testing.assert_array_equal(values(doubled["to B"]), 2 * values(honest["to B"]))


# --- pointing at cells ----------------------------------------------------------------------


def lit(grid, k):
    return {(gid, n) for gid, n in grid["cells"][k]["lit"]}


def test_a_result_cell_lights_the_cells_it_read():
    g = grids(picture((3, 1), (1, 4), "+"))
    k = 6  # C[1, 2]
    assert lit(g["C"], k) == {("A", 1), ("B", 2), ("A→", 6), ("B→", 6)}
    a, b = int(values(g["A"])[1, 0]), int(values(g["B"])[0, 2])  # seeded: 4 and 5
    assert g["C"]["cells"][k]["info"] == f"C[1, 2] = A[1, 0] + B[0, 2] = {a} + {b} = {a + b}"
    assert g["A"]["cells"][1]["info"].startswith(f"A[1, 0] = {a} is read by 4 result cells")
    assert lit(g["A"], 1) == {(gid, n) for gid in ("A→", "C") for n in (4, 5, 6, 7)}
    assert [g["A→"]["cells"][n]["copy"] for n in (4, 5, 6, 7)] == [False, True, True, True]


def test_a_grad_cell_lights_what_it_sums_and_writes_the_sum():
    b = grids(picture((3, 1), (1, 4), "+"), "backward")
    assert b["A.grad"]["cells"][1]["info"] == "A.grad[1, 0] = 1 + 1 + 1 + 1 = 4"
    assert {n for gid, n in lit(b["A.grad"], 1) if gid == "to A"} == {4, 5, 6, 7}
    assert {n for gid, n in lit(b["B.grad"], 2) if gid == "to B"} == {2, 6, 10}


def test_times_and_divide_show_the_rule_with_numbers():
    b = grids(picture((3, 1), (1, 4), "/", "random", seed=2), "backward")
    a, bb, g = values(b["A"]), values(b["B"]), values(b["g"])
    cell = b["to B"]["cells"][5]  # C[1, 1] sends back to B[0, 1]
    want = (f"g × (−a/b²) = {_p(g[1, 1])} × (−{_p(a[1, 0])}/{_p(bb[0, 1])}²) = "
            f"{format_number(-g[1, 1] * a[1, 0] / bb[0, 1] ** 2)}")
    assert cell["info"] == ("C[1, 1] sends back to B[0, 1]: ∂(a ÷ b)/∂b = −a/b², so " + want)
    assert lit(b["to B"], 5) >= {("A", 1), ("B", 1), ("g", 5), ("B.grad", 1)}
    assert "values of A and B" in notes({"views": {"backward": {"notes": [
        n for n in picture((3, 1), (1, 4), "*")["views"]["backward"]["notes"]]}}}, "backward")


def _p(x):
    text = format_number(x)
    return f"({text})" if text.startswith("−") or "/" in text else text


@pytest.mark.parametrize("shape_a, shape_b, op", [("3,1", "1,4", "+"), ("2,3,1", "3,4", "*"),
                                                  ("2,3", "3,4", "@"), ("2,1,3,1", "2,1,2", "/")])
def test_every_cell_has_a_name_of_its_own(shape_a, shape_b, op):
    data = picture(parse_shape(shape_a), parse_shape(shape_b), op)
    for view in ("forward", "backward"):
        names = [c["name"] for g in grids(data, view).values() for c in g["cells"]]
        assert len(names) == len(set(names)), "two cells look alike"
        for g in grids(data, view).values():  # every link points at a real cell
            for c in g["cells"]:
                for gid, k in c["lit"]:
                    assert 0 <= k < len(grids(data, view)[gid]["cells"])


# --- stepping -------------------------------------------------------------------------------


def test_steps_add_one_copy_at_a_time_up_to_the_engines_sum():
    b = picture((2, 3, 1), (3, 4), "*", "random", seed=3)["views"]["backward"]
    g = grids({"views": {"backward": b}}, "backward")
    steps = b["steps"]
    # result (2, 3, 4): A's cells each receive 4 copies, B's 2; one frame more for the zeros
    assert len(steps) == 4 + 1
    first, last = steps[0], steps[-1]
    assert set(first["set"]["A.grad"].values()) == {"0"}
    assert [last["set"]["A.grad"][k] for k in range(6)] == [c["v"] for c in g["A.grad"]["cells"]]
    assert [last["set"]["B.grad"][k] for k in range(12)] == [c["v"] for c in g["B.grad"]["cells"]]
    assert steps[1]["text"].startswith("Step 1 of 4")
    assert steps[2]["set"]["B.grad"] == steps[4]["set"]["B.grad"]  # B's sums end at step 2
    assert " + −" not in steps[4]["text"]  # negative terms are bracketed
    # step 2 lights copy 2 of A.grad[0, 0, 0]: result cell [0, 0, 1]
    assert ["to A", 1] in steps[2]["lit"] and ["A.grad", 0] in steps[2]["lit"]


def test_forward_steps_walk_the_result_cells():
    steps = picture((3, 1), (1, 4), "-")["views"]["forward"]["steps"]
    assert len(steps) == 12 and steps[0]["text"].startswith("Cell 1 of 12: C[0, 0] = A[0, 0] − B")
    assert ["C", 11] in steps[11]["lit"] and ["A", 2] in steps[11]["lit"]


# --- the gradient sent back -------------------------------------------------------------------


def test_typed_gradient_is_used(w):
    w.upstream, w.typed = "typed", "1, 2, 3, 4, 0, 0, 0, 0, -1, 1/2, 0, 0"
    b = grids(w.current, "backward")
    assert w.error is None
    np.testing.assert_allclose(values(b["A.grad"]).ravel(), [10, 0, -0.5])
    assert b["A.grad"]["cells"][0]["info"] == "A.grad[0, 0] = 1 + 2 + 3 + 4 = 10"
    assert b["A.grad"]["cells"][2]["info"] == "A.grad[2, 0] = (−1) + 1/2 + 0 + 0 = −1/2"
    w.typed = "2"  # one number for every cell
    np.testing.assert_allclose(values(grids(w.current, "backward")["B.grad"]), [[6, 6, 6, 6]])


@pytest.mark.parametrize("typed, expected", [
    ("1, 2", "needs 12 numbers (or one for every cell); 2 were typed"),
    ("1, x", "'x' is not a number"),
    ("١", "a digit that is not 0-9"),
    ("", "Type the gradient"),
])
def test_a_bad_typed_gradient_is_an_error_state(w, typed, expected):
    w.upstream, w.typed = "typed", typed
    assert expected in w.error and w.data["error"] == w.error and w.data["ops"]


def test_typing_is_refused_for_results_too_big_to_draw(w):
    w.shape_a = "100,1"
    w.upstream, w.typed = "typed", "1"
    assert "works for results of up to" in w.error and "(100, 4)" in w.error


def test_parse_gradient():
    assert parse_gradient("[1 2; 3]".replace(";", ","), 3, (3,)).tolist() == [1, 2, 3]
    with pytest.raises(ShapeError, match="needs 4 numbers"):
        parse_gradient("1 2 3", 4, (2, 2))


# --- honest at every size ---------------------------------------------------------------------


def test_big_shapes_keep_their_real_shapes_and_counts(w):
    w.shape_a = "100000,1"
    assert w.result_shape == (100000, 4) and w.current["computed_at"] == "real"
    f, b = grids(w.current), grids(w.current, "backward")
    assert f["C"]["shape"] == [8, 4] and f["C"]["real"] == [100000, 4]
    assert f["A"]["cut"] == "showing 8 of 100000 rows" and f["B"]["cut"] == ""
    text = notes(w.current, "backward")
    assert "A.grad has A's shape (100000, 1)" in text
    assert "each cell adds up what the 100000 result cells that read it sent back" in text
    assert "the picture draws 8 of them" in text
    assert "run at the real shapes (400000 elements)" in text
    # B.grad is the engine's sum over all 100000 rows, not over the 8 drawn
    assert [c["v"] for c in b["B.grad"]["cells"]] == ["100000"] * 4
    assert b["B.grad"]["cells"][0]["info"].endswith("+ … (100000 terms, 8 drawn) = 100000")
    assert "(100000, 1)" in w.current["views"]["forward"]["alt"]


def test_past_the_limit_the_engine_runs_on_the_drawn_cells_and_says_so():
    data = picture((10**6, 1), (1, 1000), "+")
    assert 10**9 > MAX_COMPUTE and data["computed_at"] == "shown"
    text = notes(data, "backward")
    assert "more than the 1000000 this widget computes" in text
    assert "each cell adds up what the 1000000 result cells" in text
    assert "showing 8 of 1000000 rows, 8 of 1000 columns" in notes(data)
    assert {c["v"] for c in grids(data, "backward")["B.grad"]["cells"]} == {"8"}


def test_shapes_too_big_to_draw_are_cut_in_the_picture_only():
    a, b, r = cap_shapes((1000, 1), (1, 3), (1000, 3))
    assert (a, b, r) == ((8, 1), (1, 3), (8, 3)) and np.broadcast_shapes(a, b) == r
    assert cap_shapes((3, 1), (1, 4), (3, 4)) == ((3, 1), (1, 4), (3, 4))
    data = picture((9, 9, 9, 9), (9,), "+")
    assert len(grids(data)["C"]["cells"]) <= MAX_CELLS


# --- the matrix-product mode ------------------------------------------------------------------


def test_matmul_reads_rows_and_columns_and_the_engines_gradients():
    data = picture((2, 3), (3, 4), "@", "random", seed=5)
    f, b = grids(data), grids(data, "backward")
    a, bb, g = values(f["A"]), values(f["B"]), values(b["dC"])
    np.testing.assert_allclose(values(f["C"]), a @ bb)
    np.testing.assert_allclose(values(b["A.grad"]), g @ bb.T)
    np.testing.assert_allclose(values(b["B.grad"]), a.T @ g)
    assert lit(f["C"], 6) == {("A", 3), ("A", 4), ("A", 5), ("B", 2), ("B", 6), ("B", 10)}
    assert f["C"]["cells"][6]["info"].startswith("C[1, 2] = row 1 of A · column 2 of B = ")
    assert lit(b["A.grad"], 4) == {("dC", 4), ("dC", 5), ("dC", 6), ("dC", 7),
                                   ("B.T", 1), ("B.T", 4), ("B.T", 7), ("B.T", 10)}
    assert "dC @ B.T is (2, 4) @ (4, 3) → (2, 3)" in notes(data, "backward")
    assert "A.T @ dC is (3, 2) @ (2, 4) → (3, 4)" in notes(data, "backward")
    last = data["views"]["backward"]["steps"][-1]
    assert [last["set"]["A.grad"][k] for k in range(6)] == [c["v"] for c in b["A.grad"]["cells"]]


@pytest.mark.parametrize("shape_a, shape_b, expected", [
    ("2,3", "4,2", "A has 3 columns but B has 4 rows"),
    ("3", "3,2", "takes two 2-D shapes"),
])
def test_matmul_errors(w, shape_a, shape_b, expected):
    w.op = "@"
    w.shape_a, w.shape_b = shape_a, shape_b
    assert expected in w.error


# --- errors -------------------------------------------------------------------------------


BAD = [  # what the student types in the two boxes, and what the message must say
    pytest.param("3,x", "1,4", "'x' is not a whole number", id="letter"),
    pytest.param("0,2", "1,4", "size 0 on axis 0", id="zero"),
    pytest.param("3,-1", "1,4", "negative size -1", id="negative"),
    pytest.param("1,2,3,4,5", "1", "at most 4", id="five axes"),
    pytest.param("", "1,4", "Type a shape for A", id="empty"),
    pytest.param("3,1", "3,,1", "empty size", id="two commas"),
    pytest.param("3.5", "1", "'3.5' is not a whole number", id="fraction"),
    pytest.param("(3,1", "1,4", "opens a bracket '(' but does not close it: type (3,1)",
                 id="bracket not closed"),
    pytest.param("3,1]", "1,4", "closes a bracket ']' that was never opened",
                 id="bracket not opened"),
    pytest.param("٣,1", "1,4", "contains '٣' (arabic-indic digit three)", id="arabic digit"),
    pytest.param("3,１", "1,4", "fullwidth digit one", id="fullwidth digit"),
    pytest.param("2,3", "2", "do not broadcast", id="no broadcast"),
    pytest.param("2,3,5", "4,1,3",
                 "axis -3 (axis 0 of A, axis 0 of B) has size 2 in A and 4 in B",
                 id="no broadcast, 3-D"),
]


@pytest.mark.parametrize("shape_a, shape_b, expected", BAD)
def test_bad_input_keeps_the_last_picture_marked_stale(w, shape_a, shape_b, expected):
    good = w.data["ops"]
    w.shape_a, w.shape_b = shape_a, shape_b  # must not raise
    assert expected in w.error and w.data["error"] == w.error
    assert "Something went wrong" not in w.error
    assert w.result_shape is None
    assert w.data["ops"] == good  # the browser greys this out and disables the button


def test_bad_shapes_at_construction_give_a_message_and_no_picture():
    w = BroadcastBackward(shape_a="3,x", shape_b="4")
    assert "'x' is not a whole number" in w.error and w.data["ops"] == {}
    assert w.png() == b""
    w.shape_a = "3,1"
    assert w.result_shape == (3, 4) and w.error is None


def test_incompatible_shapes_are_lined_up(w):
    w.shape_a, w.shape_b = "2,3", "4"
    assert "NumPy's rule" in w.error and "equal, or one of them must be 1" in w.error
    assert re.search(r"A:\s+2\s+3\s+B:\s+4\s+✓\s+✗", w.data["error_detail"])


def test_recovers_after_bad_input(w):
    w.shape_a = "3,x"
    w.shape_a = "5,1"
    assert w.error is None and w.result_shape == (5, 4) and w.data["error"] == ""


def test_every_preset_draws_or_explains(w):
    for label, shape_a, shape_b, op in w.presets:
        w.op, w.shape_a, w.shape_b = op, shape_a, shape_b
        assert w.error is None or "Something went wrong" not in w.error
        if "do not broadcast" in label:
            assert "do not broadcast" in w.error
        else:
            assert w.error is None, (label, w.error)
    assert len(w.presets) == len(PRESETS) + 3


def test_an_internal_error_is_a_message_too(w, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("boom")
    monkeypatch.setattr("minigrad.course.widgets.widget.picture", broken)
    w.shape_a = "2,1"  # must not raise
    assert "Something went wrong" in w.error and "RuntimeError: boom" in w.error


def test_unknown_operator_is_refused():
    with pytest.raises(ValueError, match="op must be one of"):
        BroadcastBackward(op="%")
    with pytest.raises(ValueError, match="upstream must be one of"):
        BroadcastBackward(upstream="twos")


# --- places with no JavaScript, and readability ---------------------------------------------


def test_static_viewers_get_a_png_and_a_text_description(w):
    data = w._repr_mimebundle_()
    bundle = data[0] if isinstance(data, tuple) else data
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["text/plain"].startswith(
        "BroadcastBackward(shape_a='3,1', shape_b='1,4', op='+')\nA (3, 1) + B (1, 4) → (3, 4).")
    assert base64.b64decode(bundle["image/png"]).startswith(PNG)
    w.op, w.shape_b = "@", "1,4"
    assert w.png().startswith(PNG)


def test_the_png_never_repeats_a_colour_within_an_input():
    from minigrad.course.widgets.draw import _colour
    shape = (2, 1, 3, 4)  # 24 cells: more than any fixed palette of ten
    colours = {tuple(np.round(_colour(i, shape), 6)) for i in np.ndindex(*shape)}
    assert len(colours) == 24


def test_no_pyplot_figures_are_left_open(w):
    before = plt.get_fignums()
    for view in ("forward", "backward"):
        w.view = view
        w.png()
    assert plt.get_fignums() == before


def test_stylesheet_text_is_at_least_12px():
    css = (WIDGETS / "broadcast_backward.css").read_text()
    sizes = [int(n) for n in re.findall(r"font-size:\s*(\d+)px", css)]
    assert sizes and min(sizes) >= 12
    js = (WIDGETS / "broadcast_backward.js").read_text()
    assert "export default" in js and "import " not in js  # one module, nothing to build


@pytest.mark.parametrize("typed, shape", [("3,1", (3, 1)), ("(2, 3, 1)", (2, 3, 1)), ("4", (4,)),
                                          ("(4,)", (4,)), ("[2, 3]", (2, 3)), ("()", ()),
                                          (" 2 3 ", (2, 3))])
def test_parse_shape_accepts_the_usual_spellings(typed, shape):
    assert parse_shape(typed) == shape


@pytest.mark.parametrize("typed", ["3,x", ",", "(,)", "0", "-2", "1,1,1,1,1", "(3", "1e3", "",
                                   "((3))", "[3)", "٣"])
def test_parse_shape_refuses_with_a_shape_error(typed):
    with pytest.raises(ShapeError):
        parse_shape(typed)


@pytest.mark.parametrize("x, shown", [(4.0, "4"), (-0.0, "0"), (-0.25, "−1/4"), (16 / 15, "16/15"),
                                      (np.pi, "3.14")])
def test_numbers_are_shown_readably(x, shown):
    assert format_number(x) == shown


# --- the notebook that shows the widget on its own ---------------------------------------------


def test_interactive_notebook_is_clean():
    nb = json.loads(NOTEBOOK.read_text())
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    raw = NOTEBOOK.read_text()
    assert not re.search(r"/(work|home|root|Users|tmp)/", raw), "machine paths in the notebook"
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    widget_cells = [c for c in code if "BroadcastBackward(" in "".join(c["source"])]
    assert widget_cells and all("".join(c["source"]).startswith("# NBVAL_IGNORE_OUTPUT")
                                for c in widget_cells)
    executed = {bool(c.get("outputs")) or c.get("execution_count") is not None for c in code}
    assert len(executed) == 1, "executed and unexecuted cells are mixed"


@pytest.mark.slow  # starts a kernel: a few seconds
def test_interactive_notebook_runs():
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("nbclient")
    from minigrad.course.build import execute  # needs nbformat and nbclient

    nb = execute(nbformat.read(NOTEBOOK, as_version=4), NOTEBOOK.parent, timeout=60)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs)

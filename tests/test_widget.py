"""The broadcast-and-backward widget, driven headlessly: controls in, message and picture out."""
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
from minigrad.course.widgets import scene as scene_module
from minigrad.course.widgets.draw import format_number
from minigrad.course.widgets.shapes import MAX_CELLS, PRESETS, cap_shapes

NOTEBOOK = Path(__file__).resolve().parent.parent / "interactives" / "broadcast_and_backward.ipynb"
PNG = b"\x89PNG\r\n\x1a\n"


def text(widget):
    """The message as plain text (tags dropped, entities kept simple)."""
    plain = re.sub(r"<[^>]+>", " ", widget.message.value).replace("&#x27;", "'")
    return re.sub(r"[ \t]+", " ", plain)


@pytest.fixture
def w():
    return BroadcastBackward(shape_a="3,1", shape_b="1,4", op="+")


def test_starts_with_a_forward_picture(w):
    assert w.view == "forward" and w.error is None
    assert w.result_shape == (3, 4)
    assert bytes(w.image.value).startswith(PNG)
    assert w.image.width == str(int.from_bytes(bytes(w.image.value)[16:20], "big"))
    assert "result (3, 4)" in text(w)
    assert "A (3, 1) is stretched along axis 1 (1 → 4)" in text(w)
    assert "B (1, 4) is stretched along axis 0 (1 → 3)" in text(w)


def test_typing_a_shape_redraws(w):
    before_image, before_message = w.image.value, w.message.value
    w.shape_a_box.value = "(2, 3, 1)"
    assert w.result_shape == (2, 3, 4)
    assert w.image.value != before_image and bytes(w.image.value).startswith(PNG)
    assert w.message.value != before_message and "result (2, 3, 4)" in text(w)
    assert "gets new leading axis 0" in text(w)  # B (1, 4) gains an axis


def test_operator_changes_the_picture_and_the_values(w):
    images = {w.image.value}
    for op in ["-", "*", "/"]:
        w.op_buttons.value = op
        images.add(w.image.value)
        s = w.scene
        expected = {"-": s.a - s.b, "*": s.a * s.b, "/": s.a / s.b}[op]
        np.testing.assert_allclose(s.out, expected)
    assert len(images) == 4


def test_values_are_small_seeded_nonzero_integers():
    one, two = BroadcastBackward("4,5", "5", seed=3), BroadcastBackward("4,5", "5", seed=3)
    a = one.scene.a
    assert np.array_equal(a, two.scene.a) and np.array_equal(one.image.value, two.image.value)
    assert np.all(a == np.round(a)) and a.min() >= 1 and a.max() <= 5
    assert not np.array_equal(a, BroadcastBackward("4,5", "5", seed=4).scene.a)
    # A's values do not change when only B's shape does
    other = BroadcastBackward("4,5", "4,1", seed=3)
    assert np.array_equal(other.scene.a, a)


def test_send_back_ones_toggles_the_backward_picture(w):
    forward = w.image.value
    w.backward_button.click()
    assert w.view == "backward" and w.image.value != forward
    assert w.backward_button.description == "Show forward pass"
    assert "A.grad has A's shape (3, 1)" in text(w)
    assert "the 4 result cells that read it" in text(w)
    assert "sums over axis 1" in text(w) and "sums over axis 0" in text(w)
    # a gradient of ones on a sum: A.grad counts the copies of each A cell
    np.testing.assert_array_equal(w.scene.grad_a, np.full((3, 1), 4.0))
    np.testing.assert_array_equal(w.scene.grad_b, np.full((1, 4), 3.0))
    w.shape_b_box.value = "3,4"  # stays in the backward view while shapes change
    assert w.view == "backward" and "nothing to add up" in text(w)
    w.backward_button.click()
    assert w.view == "forward" and w.backward_button.description == "Send back ones"


@pytest.mark.parametrize("shape_a, shape_b", [("3,1", "1,4"), ("2,1,3", "4,1"), ("()", "2,3"),
                                              ("2,1,3,1", "2,1,2")])
@pytest.mark.parametrize("op", ["*", "/"])
def test_backward_numbers_for_mul_and_div(shape_a, shape_b, op):
    w = BroadcastBackward(shape_a, shape_b, op)
    w.send_back()
    s = w.scene
    a, b = np.broadcast_to(s.a, s.out.shape), np.broadcast_to(s.b, s.out.shape)
    # what each result cell sends back, from the calculus (an oracle independent of the engine)
    da, db = (b, a) if op == "*" else (1 / b, -a / b**2)
    np.testing.assert_allclose(s.sent_a, da)
    np.testing.assert_allclose(s.sent_b, db)
    np.testing.assert_allclose(s.grad_a, unbroadcast(da, s.a.shape))
    np.testing.assert_allclose(s.grad_b, unbroadcast(db, s.b.shape))
    assert s.grad_a.shape == s.a.shape and s.grad_b.shape == s.b.shape


def test_the_numbers_come_from_the_engines_backward(monkeypatch):
    """Swap in a multiplication whose VJP is wrong on purpose: the picture shows it."""
    def doubled_mul(x, y):
        return minigrad.op(x.data * y.data, (x, y),
                           lambda g, xd, yd: (unbroadcast(2 * g * yd, xd.shape),
                                              unbroadcast(2 * g * xd, yd.shape)),
                           saved=(x.data, y.data), name="mul")
    honest = BroadcastBackward("3,1", "1,4", "*").scene
    monkeypatch.setitem(scene_module._OPS, "*", doubled_mul)
    doubled = BroadcastBackward("3,1", "1,4", "*").scene
    np.testing.assert_array_equal(doubled.grad_a, 2 * honest.grad_a)
    np.testing.assert_array_equal(doubled.sent_b, 2 * honest.sent_b)


BAD = [
    ("3,x", "1,4", "'x' is not a whole number"),
    ("0,2", "1,4", "size 0 on axis 0"),
    ("3,-1", "1,4", "negative size -1"),
    ("1,2,3,4,5", "1", "at most 4"),
    ("", "1,4", "Type a shape for A"),
    ("3,1", "3,,1", "empty size"),
    ("3.5", "1", "'3.5' is not a whole number"),
    ("2,3", "2", "do not broadcast"),
    ("2,3,5", "4,1,3", "axis -3 (axis 0 of A, axis 0 of B) has size 2 in A and 4 in B"),
]


@pytest.mark.parametrize("shape_a, shape_b, expected", BAD)
def test_bad_input_gives_a_message_not_a_traceback(w, shape_a, shape_b, expected):
    old_image = w.image.value
    w.shape_a_box.value, w.shape_b_box.value = shape_a, shape_b  # must not raise
    assert expected in text(w)
    assert "No new picture" in text(w) and "last one that worked" in text(w)
    assert "Traceback" not in w.message.value and "Something went wrong" not in text(w)
    assert w.result_shape is None and w.scene is None and w.error
    assert w.image.value == old_image
    w.send_back()  # the button does not raise either
    assert w.result_shape is None and expected in text(w)


def test_bad_shapes_at_construction_give_a_message_and_no_picture():
    w = BroadcastBackward(shape_a="3,x", shape_b="4")
    assert "'x' is not a whole number" in text(w) and "last one that worked" not in text(w)
    assert w.result_shape is None and bytes(w.image.value) == b""
    w.shape_a_box.value = "3,1"
    assert w.result_shape == (3, 4) and bytes(w.image.value).startswith(PNG)


def test_incompatible_shapes_explain_numpys_rule(w):
    w.shape_a_box.value, w.shape_b_box.value = "2,3", "4"
    message = text(w)
    assert "NumPy's rule" in message and "equal, or one of them must be 1" in message
    assert re.search(r"A:\s+2\s+3\s+B:\s+4\s+✓\s+✗", message)  # aligned at the right end


def test_recovers_after_bad_input(w):
    w.shape_a_box.value = "3,x"
    w.shape_a_box.value = "5,1"
    assert w.error is None and w.result_shape == (5, 4) and "No new picture" not in text(w)


def test_large_shapes_are_capped_with_a_message(w):
    w.shape_a_box.value, w.shape_b_box.value = "1000", "1000,1"
    assert w.result_shape == (1000, 1000)
    assert w.scene.plan.shape == (8, 8) and w.scene.plan.shape_b == (8, 1)
    assert "too big to draw in full" in text(w)
    w.shape_a_box.value, w.shape_b_box.value = "9,9,9,9", "9"
    assert w.scene.out.size <= MAX_CELLS and "too big" in text(w)


def test_every_preset_draws_or_explains(w):
    for label, shape_a, shape_b in PRESETS:
        w.presets.value = (shape_a, shape_b)
        assert (w.shape_a_box.value, w.shape_b_box.value) == (shape_a, shape_b)
        assert "Something went wrong" not in text(w)
        if "do not broadcast" in label:
            assert "do not broadcast" in text(w)
        else:
            assert w.error is None and w.result_shape == np.broadcast_shapes(
                parse_shape(shape_a), parse_shape(shape_b))
    w.shape_a_box.value = "7"  # typing by hand leaves the preset
    assert w.presets.value == ""


def test_an_internal_error_is_a_message_too(w, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("boom")
    monkeypatch.setattr("minigrad.course.widgets.widget.make_scene", broken)
    w.shape_a_box.value = "2,1"  # must not raise
    assert "Something went wrong" in text(w) and "RuntimeError: boom" in text(w)


def test_no_pyplot_figures_are_left_open(w):
    before = plt.get_fignums()
    for shape in ["2,1", "2,3,1"]:
        w.shape_a_box.value = shape
        w.send_back()
        w.show_forward()
    assert plt.get_fignums() == before


def test_static_viewers_get_the_picture_and_a_short_line(w):
    data = w._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    assert data["text/plain"] == "BroadcastBackward(shape_a='3,1', shape_b='1,4', op='+')"
    assert base64.b64decode(data["image/png"]) == bytes(w.image.value)


def test_unknown_operator_is_refused():
    with pytest.raises(ValueError, match="op must be one of"):
        BroadcastBackward(op="%")


@pytest.mark.parametrize("typed, shape", [("3,1", (3, 1)), ("(2, 3, 1)", (2, 3, 1)), ("4", (4,)),
                                          ("(4,)", (4,)), ("[2, 3]", (2, 3)), ("()", ()),
                                          (" 2 3 ", (2, 3))])
def test_parse_shape_accepts_the_usual_spellings(typed, shape):
    assert parse_shape(typed) == shape


@pytest.mark.parametrize("typed", ["3,x", ",", "(,)", "0", "-2", "1,1,1,1,1", "(3", "1e3", ""])
def test_parse_shape_refuses_with_a_shape_error(typed):
    with pytest.raises(ShapeError):
        parse_shape(typed)


def test_cap_keeps_broadcasting_the_same():
    a, b, r = cap_shapes((1000, 1), (1, 3), (1000, 3))
    assert (a, b, r) == ((8, 1), (1, 3), (8, 3)) and np.broadcast_shapes(a, b) == r
    assert cap_shapes((3, 1), (1, 4), (3, 4)) == ((3, 1), (1, 4), (3, 4))


@pytest.mark.parametrize("x, shown", [(4.0, "4"), (-0.0, "0"), (-0.25, "-1/4"), (16 / 15, "16/15"),
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
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(nb, timeout=60, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs)

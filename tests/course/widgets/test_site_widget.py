"""The widget's two modes say and compute the same: Jupyter (Python and minigrad) and static.

The static mode (``minigrad/course/widgets/static_mode.js``) computes the picture in the browser
for the website. For a table of shapes, operators and gradients, and a table of bad inputs,
node runs it and the test compares everything it makes (numbers, sentences, links, steps, text
descriptions, error messages) with what the Python side sends to the browser. The one sentence
that differs on purpose is the note saying where the numbers come from (minigrad's pass, or the
browser), written from its own pair of templates. Also: the JavaScript PCG64 draws NumPy's
numbers, and ``format_number`` and ``parse_shape`` agree on tricky input.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from minigrad.course.site import widget_data
from minigrad.course.widgets import BroadcastBackward
from minigrad.course.widgets.picture import format_number, picture
from minigrad.course.widgets.shapes import ShapeError, parse_shape
from minigrad.course.widgets.text import TEXT

STATIC = Path(__file__).resolve().parents[3] / "minigrad/course/widgets/static_mode.js"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed: "
                                "`apt-get install -y nodejs` to compare the widget's two modes")

# (shape of A, shape of B, operator, upstream gradient, typed gradient)
PICTURES = [
    ("3,1", "1,4", "+", "ones", ""),
    ("2,3", "3", "-", "random", ""),
    ("2,3", "2,1", "*", "random", ""),
    ("()", "2,3", "/", "ones", ""),
    ("4,3", "1,3", "/", "random", ""),
    ("2,3,1", "1,4", "*", "ones", ""),
    ("2,1,3,1", "2,1,2", "+", "random", ""),
    ("9,9", "9", "-", "ones", ""),                    # cut to 64 drawn cells
    ("100000,1", "1,4", "*", "random", ""),           # real shapes, drawn in part
    ("2000,1000", "1", "+", "ones", ""),              # past MAX_COMPUTE: the drawn cells only
    ("3,1", "1,4", "/", "typed", "1, 2, -1/2, 0, 3, 1, 1, 1, 2, 2, 0.25, 1e-1"),
    ("2,2", "2", "*", "typed", "[1/3]"),
    ("2,3", "3,4", "@", "ones", ""),
    ("2,3", "3,4", "@", "random", ""),
    ("20,30", "30,10", "@", "random", ""),            # drawn in part
    ("1,1", "1,1", "@", "ones", ""),
]

# Bad input, typed into the widget after it starts at (3, 1) + (1, 4): the trait changed, then
# its value. Each ends in the widget's error message and, for a clash, the shapes lined up.
BAD = [
    ("shape_a", ""), ("shape_a", "3,,1"), ("shape_a", "3,x"), ("shape_a", "(3,1"),
    ("shape_a", "3,1)"), ("shape_a", "((3,1))"), ("shape_a", "3,-1"), ("shape_b", "3,0"),
    ("shape_a", "1,2,3,4,5"), ("shape_a", "٣,1"), ("shape_b", "3²"), ("shape_a", "(,)"),
    ("shape_a", "2,3"), ("shape_b", "2,4,1"), ("shape_a", "5,3,2"),
    ("op", "@"),                                       # (3, 1) @ (1, 4) works; then ...
]
# ... and sequences of changes, each applied in order to a fresh widget.
FLOWS = [
    [("op", "@"), ("shape_a", "2,3"), ("shape_b", "4,5")],
    [("op", "@"), ("shape_a", "3")],
    [("upstream", "typed"), ("typed", "1, x")],
    [("upstream", "typed"), ("typed", "1, 2")],
    [("upstream", "typed"), ("typed", "١")],
    [("shape_a", "100,1"), ("upstream", "typed"), ("typed", "1")],
    [("shape_a", "2,3"), ("shape_a", "2,1")],        # a bad shape, then a good one again
    [("shape_a", "(4,)"), ("shape_b", "[2, 1]"), ("op", "/")],
    [("shape_a", " 2 3 "), ("shape_b", "3"), ("upstream", "random")],
]

NODE_SCRIPT = r"""
const api = require(process.argv[1]);
let input = "";
process.stdin.on("data", (d) => { input += d; });
process.stdin.on("end", () => {
  const job = JSON.parse(input);
  api.configure({text: job.data.text, digitNames: job.data.digits, limits: job.data.limits,
                 presets: job.data.presets});
  const out = {pictures: [], flows: [], formats: [], shapes: [], draws: []};
  for (const [a, b, op, up, typed] of job.pictures) {
    out.pictures.push(api.picture(api.parseShape(a, "A"), api.parseShape(b, "B"), op, up, typed, 0));
  }
  for (const flow of job.flows) {
    const model = api.createModel({});
    for (const [name, value] of flow) { model.set(name, value); model.save_changes();
                                        model.send({type: "prefetch", revision: model.get("revision")}); }
    out.flows.push(model.get("data"));
  }
  for (const x of job.formats) out.formats.push(api.formatNumber(x));
  for (const t of job.shapes) {
    try { out.shapes.push(api.parseShape(t, "A")); } catch (e) { out.shapes.push("error: " + e.message); }
  }
  for (const [seed, stream, low, high, n] of job.draws) {
    out.draws.push(Array.from(new api.Generator(seed, stream).integers(low, high, n)));
  }
  process.stdout.write(JSON.stringify(out));
});
"""


def _segments(template: str) -> list[str]:
    return re.split(r"\{\w+\}", template)


def _as_static(text: str) -> str:
    """The Python side's JSON with its "where the numbers come from" notes in static words."""
    for key in ("where_real", "where_shown"):
        ours, theirs = _segments(TEXT[key]), _segments(TEXT[key + "_static"])
        assert len(ours) == len(theirs), key
        for a, b in zip(ours, theirs):
            if a != b:
                text = text.replace(json.dumps(a, ensure_ascii=False)[1:-1],
                                    json.dumps(b, ensure_ascii=False)[1:-1])
    return text


def _python_flow(flow: list[tuple[str, str]]) -> dict:
    w = BroadcastBackward()
    for name, value in flow:
        setattr(w, name, value)
        w.prefetch()
    return w.data


FORMATS = [0.0, -0.0, 4.0, -0.25, 1.0666666666666667, 1 / 3, -8 / 25, 2 / 7, 1e-5, 123456.5,
           1234567.25, 0.1 + 0.2, 3.14159, -2.5e-7, 1e20, 0.001234, 999.5, 0.0005, 12.5 / 7]
SHAPES = ["3,1", "(2, 3, 1)", "[2,3]", "4", "4,", "()", "[]", " 2 3 ", "+3", "-0", "007",
          "3;1", "3.0", "1e3", "(2, 3", "[2, 3)", "2,,3", "①", "３", "𝟘,1"]
DRAWS = [(0, 0, 1, 6, 50), (0, 1, 1, 6, 50), (0, 2, -3, 4, 50), (7, 0, 1, 6, 20),
         (2**40 + 5, 1, 1, 6, 20), (0, 0, 0, 2**31, 10)]


@pytest.fixture(scope="module")
def static_mode() -> dict:
    job = {"data": widget_data(), "pictures": PICTURES,
           "flows": [[("shape_a", "3,1")] + [bad] for bad in BAD] + FLOWS,
           "formats": FORMATS, "shapes": SHAPES, "draws": DRAWS}
    result = subprocess.run([NODE, "-e", NODE_SCRIPT, str(STATIC)], input=json.dumps(job),
                            capture_output=True, text=True, timeout=240, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)


def _first_difference(a, b, path="") -> str:
    if type(a) is not type(b):
        return f"{path}: {a!r} != {b!r}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{path}.{k}: only in {'static' if k in b else 'Python'}"
            d = _first_difference(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return ""
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} items != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = _first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return ""
    return "" if a == b else f"{path}: {a!r} != {b!r}"


@pytest.mark.parametrize("case", range(len(PICTURES)), ids=lambda i: " ".join(PICTURES[i][:4]))
def test_static_mode_draws_the_same_picture_as_python(static_mode, case):
    a, b, op, upstream, typed = PICTURES[case]
    ours = picture(parse_shape(a, "A"), parse_shape(b, "B"), op, upstream, typed, 0)
    expected = json.loads(_as_static(json.dumps(ours, ensure_ascii=False)))
    got = static_mode["pictures"][case]
    assert got == expected, _first_difference(expected, got)


FLOW_CASES = [[("shape_a", "3,1")] + [bad] for bad in BAD] + FLOWS


@pytest.mark.parametrize("case", range(len(FLOW_CASES)),
                         ids=lambda i: " ".join(f"{k}={v!r}" for k, v in FLOW_CASES[i][1:]))
def test_static_mode_answers_changes_and_bad_input_as_the_widget(static_mode, case):
    ours = _python_flow(FLOW_CASES[case])
    expected = json.loads(_as_static(json.dumps(ours, ensure_ascii=False)))
    got = static_mode["flows"][case]
    assert got == expected, _first_difference(expected, got)


def test_the_tables_reach_every_error_message(static_mode):
    """The bad inputs above reach every message a student can cause (not a vacuous table)."""
    shown = " ".join(d["error"] for d in static_mode["flows"])
    for key in ("shape_empty", "shape_empty_size", "shape_not_whole", "shape_negative",
                "shape_zero", "shape_too_many_axes", "shape_bad_digit", "bracket_unclosed",
                "bracket_unopened", "bracket_unpaired", "shape_no_sizes", "clash",
                "matmul_not_2d", "matmul_no_align", "gradient_not_number", "gradient_count",
                "gradient_bad_digit", "gradient_too_big"):
        words = max(_segments(TEXT[key]), key=len)  # the template's longest fixed words
        assert len(words) > 10 and words in shown, f"no bad input reaches {key}"


def test_number_formats_and_shapes_agree(static_mode):
    assert static_mode["formats"] == [format_number(x) for x in FORMATS]
    expected = []
    for text in SHAPES:
        try:
            expected.append(list(parse_shape(text, "A")))
        except ShapeError as error:
            expected.append(f"error: {error}")
    assert static_mode["shapes"] == expected


def test_the_javascript_generator_draws_numpys_numbers(static_mode):
    for (seed, stream, low, high, n), got in zip(DRAWS, static_mode["draws"]):
        want = np.random.default_rng([seed, stream]).integers(low, high, size=n)
        assert got == want.tolist(), (seed, stream, low, high)

"""``minigrad-grade --feedback full|cases|score`` (issue 28): what the students' pages show.

The messages are real check failures (lesson 1's divide rule with the wrong sign, whose usual
cause states the rule); the pages come from one graded class of the toy lesson (two notebooks,
graded once through the command line with ``--feedback score``).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.support.checking import fails
from minigrad.course.checks import lesson1 as L1, mismatch
from minigrad.course.grading import read_gradebook
from minigrad.course.grading.cli import main
from minigrad.course.grading.feedback import policy_feedback, shown_message, write_feedback_pages
from minigrad.course.grading.report import feedback

FIXTURES = Path(__file__).resolve().parent / "grading_fixtures"
if str(FIXTURES) not in sys.path:
    sys.path.insert(0, str(FIXTURES))
import toy  # noqa: E402

from minigrad.course.grading import sandbox  # noqa: E402

NO_SANDBOX = [] if sandbox.available() is None else ["--no-sandbox"]

WRONG_DIV = ("def div(a, b):\n    return Tensor(a.data / b.data, (a, b),\n"
             "                  lambda g: (g / b.data, g * a.data / b.data**2))\n")


def _div_message() -> str:
    ns: dict = {"np": __import__("numpy"), "__name__": "__main__"}
    exec(WRONG_DIV, ns)
    return fails(L1.div, ns["div"], match=r"gradient for b.*mind the sign")


MESSAGES = [  # (name, message, what cases keeps, what it drops)
    ("lesson 1 div, wrong sign", _div_message(), ["expected", "got"], ["b.data**2"]),
    ("mismatch()", str(mismatch("mul", "broadcast (3, 1) x (1, 4)", "(3, 1)", "(3, 4)",
                                "sum the gradient over the broadcast axes")),
     ["expected: (3, 1)", "got:      (3, 4)", "broadcast (3, 1) x (1, 4)"],
     ["sum the gradient"]),
    ("a cause with indented continuation lines",
     "case 'x':\n  expected: 1\n  got:      2\n  usual cause: first line\n    second line\n"
     "The error came from here:\n  File \"<cell>\", line 1",
     ["expected: 1", "The error came from here:", 'File "<cell>"'], ["first line", "second"]),
]


@pytest.mark.parametrize("message,kept,dropped", [m[1:] for m in MESSAGES],
                         ids=[m[0] for m in MESSAGES])
def test_each_policy_shows_what_it_says(message, kept, dropped):
    assert "usual cause:" in message
    assert shown_message(message, "full") == message
    cases = shown_message(message, "cases")
    assert "usual cause" not in cases
    for text in kept:
        assert text in cases
    for text in dropped:
        assert text in message and text not in cases
    assert shown_message(message, "score") == ""
    with pytest.raises(ValueError, match="feedback policy must be one of full, cases, score; "
                                         "got 'hints'"):
        shown_message(message, "hints")


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """A class of two graded with --feedback score: (report folder, gradebook)."""
    root = tmp_path_factory.mktemp("feedback")
    released = toy.released_dir(root / "released")
    sol = toy.solution()
    toy.write(sol, root / "subs" / "ann" / f"{toy.KEY}.ipynb")
    toy.write(toy.with_exercise(sol, "9.2", "g * y, x.shape", "-g * y, x.shape"),
              root / "subs" / "bob" / f"{toy.KEY}.ipynb")
    env = {"MINIGRAD_RELEASED_DIR": str(released), "MINIGRAD_CHECKS_PACKAGE": toy.CHECKS_PACKAGE,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(FIXTURES),
                                                       os.environ.get("PYTHONPATH")]))}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        assert main([str(root / "subs"), "--out", str(root / "out"), "--no-progress", "--quiet",
                     "--no-preflight", "--timeout", "10", "--feedback", "score",
                     *NO_SANDBOX]) == 0
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return root / "out", read_gradebook(root / "out")


def test_score_pages_hold_the_points_only(graded):
    out, book = graded
    bob = (out / "feedback" / "bob.md").read_text(encoding="utf-8")
    message = next(e.message for n in book.notebooks if n.student == "bob"
                   for e in n.exercises if e.exercise == "9.2")
    assert message and "gradient for a is wrong" in message       # the instructor's copy
    assert "| 9.2 | 0 / 2 | failed |" in bob and "Total: **2 / 4** points." in bob
    assert "gradient" not in bob and "failed\n\n```" not in bob
    assert "| 9.1 | 1 / 1 | passed |" in (out / "feedback" / "ann.md").read_text()
    exercises = (out / "exercises.csv").read_text(encoding="utf-8")
    assert "gradient for a is wrong" in exercises


def test_full_and_cases_pages(graded, tmp_path):
    _, book = graded
    assert write_feedback_pages(book, tmp_path, "full")
    assert (tmp_path / "feedback" / "bob.md").read_text() == feedback(book, "bob")
    assert write_feedback_pages(book, tmp_path, "full") == []      # unchanged: not rewritten
    # cases on a message with a usual cause: the page keeps the case, drops the cause
    import dataclasses
    message = _div_message()
    notebooks = [dataclasses.replace(n, exercises=[dataclasses.replace(e, message=message)
                                                   for e in n.exercises])
                 for n in book.notebooks if n.student == "bob"]
    page = policy_feedback(book, "bob", "cases", notebooks)
    assert "mind the sign" not in page and "expected" in page and "usual cause" not in page
    assert "mind the sign" in policy_feedback(book, "bob", "full", notebooks)

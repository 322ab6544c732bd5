"""The checks' two modes: in a notebook a failing check prints a ✗ line and records the result
(Run All goes on); with MINIGRAD_CHECKS_RAISE=1 it raises CheckFailed. Either way the verdict
is recorded per exercise, and checks.done(id) says whether that exercise's check passed."""
from __future__ import annotations

import numpy as np
import pytest

from minigrad.course import checks
from minigrad.course.checks import CheckFailed
from minigrad.course.checks import lesson1 as L1


class Tensor:  # a correct lesson-1 Tensor, written here as a student would
    def __init__(self, data, parents=(), vjp=None):
        self.data = np.asarray(data, dtype=np.float64)
        self.grad = None
        self.parents = tuple(parents)
        self.vjp = vjp


def add(a, b):
    return Tensor(a.data + b.data, (a, b), lambda g: (g, g))


def wrong_mul(a, b):  # the forward is right, the gradients are swapped wrong
    return Tensor(a.data * b.data, (a, b), lambda g: (g * a.data, g * b.data))


def unfinished_exp(a):
    raise NotImplementedError


def crashing_tanh(a):
    return Tensor(np.tanh(a.data), (a,), lambda g: (g * undefined_name,))  # noqa: F821


@pytest.fixture
def printing(monkeypatch):
    monkeypatch.setenv(checks.RAISE_VARIABLE, "0")
    checks._RESULTS.clear()
    yield
    checks._RESULTS.clear()


def test_every_check_is_marked_with_its_exercise():
    for number in (1, 2, 3, 4):
        module = getattr(checks, f"lesson{number}")
        ids = [f.exercise_id for f in vars(module).values() if hasattr(f, "exercise_id")]
        assert list(dict.fromkeys(ids)) == list(module.EXERCISES)  # lesson 1: per op too


def test_a_failing_check_prints_a_cross_and_records_instead_of_raising(printing, capsys):
    L1.mul(wrong_mul)      # does not raise
    out = capsys.readouterr().out
    assert out.startswith("\u2717 exercise 1.4: mul")
    assert "gradient" in out and "expected" in out
    assert checks.done("1.4") is False
    assert checks.results() == {"1.4": False}


def test_a_passing_check_prints_a_tick_and_is_done(printing, capsys):
    assert not checks.done("1.4")
    L1.add(add)
    assert capsys.readouterr().out.startswith("\u2713 add")
    assert checks.done("1.4") and checks.results() == {"1.4": True}


def test_a_later_failure_undoes_done(printing, capsys):
    L1.tensor_class(Tensor)
    assert checks.done("1.1")
    L1.tensor_class(None)
    assert not checks.done("1.1")
    assert "\u2717 exercise 1.1: Tensor is None" in capsys.readouterr().out


def test_unfinished_work_says_so(printing, capsys):
    L1.exp(unfinished_exp)
    out = capsys.readouterr().out
    assert "\u2717 exercise 1.5" in out and "NotImplementedError" in out
    assert "The error came from here" not in out   # nothing to show for a placeholder


def test_an_error_in_student_code_shows_the_students_lines(printing, capsys):
    L1.tanh(crashing_tanh)
    out = capsys.readouterr().out
    assert "\u2717 exercise 1.5" in out and "NameError" in out
    assert "The error came from here:" in out and "undefined_name" in out
    assert "checks/lesson1.py" not in out   # the check's own frames are left out


def test_raise_mode_raises_and_records(monkeypatch):
    monkeypatch.setenv(checks.RAISE_VARIABLE, "1")
    checks._RESULTS.clear()
    with pytest.raises(CheckFailed, match="mul"):
        L1.mul(wrong_mul)
    assert checks.results() == {"1.4": False}
    checks._RESULTS.clear()


def test_the_tests_run_in_raise_mode():
    assert checks.raising()   # tests/conftest.py sets MINIGRAD_CHECKS_RAISE=1

"""Run each student notebook in lessons/ as a student would before writing any code.

Every cell before the first exercise runs cleanly; every check cell fails with the check's own
failure (``CheckFailed``, or the exercise's ``NotImplementedError``), never with an unrelated
error such as a ``NameError`` or a ``TypeError``; and no other cell fails in any other way.
"""
from __future__ import annotations

import re

import nbformat
from pathlib import Path

import pytest

from minigrad.course import (
    check_id,
    exercise_id,
    read_notebook,
    release_source,
    solution_paths,
)
from minigrad.course.build import checks_raising, execute

ROOT = Path(__file__).resolve().parents[3]
ALLOWED = {"CheckFailed", "NotImplementedError"}


def _lesson(number: str) -> Path | None:
    found = sorted((ROOT / "lessons").glob(f"{number}_*.ipynb"))
    return found[0] if found else None


def _errors(cell) -> list:
    return [o for o in cell.get("outputs", []) if o.output_type == "error"]


_executed: dict[str, object] = {}


def _run(number: str):
    """The lesson executed once per test session (None when it does not exist yet)."""
    if number not in _executed:
        path = _lesson(number)
        _executed[number] = None if path is None else (
            path, execute(read_notebook(path), cwd=path.parent, timeout=120, allow_errors=True))
    if _executed[number] is None:
        pytest.skip(f"lessons/{number}_*.ipynb does not exist yet")
    return _executed[number]


def _show(err) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(err.traceback[-3:]))


@pytest.mark.slow  # one kernel per lesson, a few seconds each
@pytest.mark.parametrize("number", ["01", "02", "03", "04"])
def test_unsolved_lesson_runs_to_the_exercises_and_every_check_fails_on_its_own(number):
    path, nb = _run(number)
    first_exercise = next((i for i, c in enumerate(nb.cells) if exercise_id(c)), None)
    assert first_exercise is not None, f"{path.name} has no exercise cell"
    checks = [c for c in nb.cells if check_id(c)]
    assert checks, f"{path.name} has no check cell"

    for i, cell in enumerate(nb.cells):
        where = f"{path.name}, cell {i} ({cell.get('id')})"
        errors = _errors(cell)
        if i < first_exercise:
            assert not errors, f"{where} fails before any exercise: {errors[0].ename}: " \
                               f"{errors[0].evalue}"
        if check_id(cell):
            assert errors, f"{where}: check {check_id(cell)} passes on the unsolved lesson"
            err = errors[0]
            assert err.ename in ALLOWED, (f"{where}: check {check_id(cell)} fails with an "
                                          f"unrelated error {err.ename}: {err.evalue}\n"
                                          + _show(err))
            assert err.evalue.strip(), f"{where}: the failure has no message"


@pytest.mark.slow
@pytest.mark.parametrize("number", ["01", "02", "03", "04"])
def test_unsolved_lesson_has_no_confusing_errors_in_other_cells(number):
    """A cell the student did not write fails, if at all, only because an exercise is not
    done yet (NotImplementedError, CheckFailed), never with a NameError or an IndexError
    left behind by an earlier failing cell."""
    path, nb = _run(number)
    for i, cell in enumerate(nb.cells):
        for err in _errors(cell):
            assert err.ename in ALLOWED, (
                f"{path.name}, cell {i} ({cell.get('id')}) fails with an unrelated error "
                f"{err.ename}: {err.evalue}\n" + _show(err))


# --- Run All, as a student meets it (checks print ✗ instead of raising) ----------------------


CROSS = "\u2717"


def _stream_text(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", [])
                   if o.output_type == "stream")


@pytest.mark.slow
@pytest.mark.parametrize("number", ["01", "02", "03", "04"])
def test_run_all_on_an_untouched_lesson_runs_every_cell(number):
    """Executed with stop-on-first-error, as JupyterLab's Run All does, the released lesson
    reaches its last cell (lesson 2's widget included): every check prints its ✗, every demo
    runs on the reference."""
    path = _lesson(number)
    if path is None:
        pytest.skip(f"lessons/{number}_*.ipynb does not exist yet")
    with checks_raising(False):
        nb = execute(read_notebook(path), cwd=path.parent, timeout=180, allow_errors=False)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code), "some cells never ran"
    for cell in code:
        if check_id(cell):
            assert _stream_text(cell).startswith(f"{CROSS} exercise {check_id(cell)}"), \
                f"{path.name}: check {check_id(cell)} should print its ✗ line"
    if number == "02":
        widget = next(c for c in code if "BroadcastBackward(" in c.source)
        assert widget.outputs, "the widget cell ran but showed nothing"


def _all_solved_but(solution_path: Path, exercise: str):
    """The solution notebook with one exercise put back as released, outputs cleared."""
    nb = read_notebook(solution_path)
    for cell in nb.cells:
        if cell.cell_type == "code":
            if exercise_id(cell) == exercise:
                cell.source = release_source(cell.source)
            cell.outputs, cell.execution_count = [], None
    return nb


def _one_unsolved_cases() -> list:
    cases = []
    for path in solution_paths(ROOT):
        for cell in read_notebook(path).cells:
            if exercise_id(cell):
                cases.append(pytest.param(path, exercise_id(cell),
                                          id=f"{path.name[:2]}-{exercise_id(cell)}"))
    return cases


@pytest.mark.slow  # one kernel per exercise: a few minutes in all
@pytest.mark.parametrize("path, exercise", _one_unsolved_cases())
def test_one_unsolved_exercise_costs_only_its_own_check(path, exercise):
    nb = _all_solved_but(path, exercise)
    with checks_raising(False):
        execute(nb, cwd=path.parent, timeout=180, allow_errors=True)
    fallbacks = 0
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        where = f"{path.name} with {exercise} unsolved, cell {i} ({cell.get('id')})"
        errors = _errors(cell)
        assert not errors, f"{where} raised {errors[0].ename}: {errors[0].evalue}"
        text = _stream_text(cell)
        if check_id(cell) == exercise:
            assert text.startswith(f"{CROSS} exercise {exercise}"), f"{where}: no ✗ line"
            assert "not done yet" in text
        else:
            assert CROSS not in text, f"{where} shows a ✗:\n{text[:500]}"
        fallbacks += f"exercise {exercise} is not passing yet" in text
    later_demos = any(c.cell_type == "code" and "yours_or_reference(" in c.source
                      and f'"{exercise}"' in c.source for c in nb.cells)
    assert fallbacks or not later_demos, f"no demo says it uses the reference for {exercise}"


# --- a kernel that forgives: cells run again, out of order, or never ---------------------------


@pytest.mark.slow  # one kernel on lesson 1
def test_lesson_1_forgives_cells_run_again_out_of_order_and_a_cell_never_run():
    """Exercise 1.2's cell never run: its check says so. Then 1.2, 1.1, 1.5 and 1.3 run again
    after everything below them (1.1 last of the classes): the final demo still works on the
    student's own Tensor."""
    path = solution_paths(ROOT)[0]
    nb = read_notebook(path)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    by_id = {exercise_id(c): c for c in nb.cells if exercise_id(c)}
    final_demo = next(c for c in nb.cells if "every value and gradient matches" in c.source)
    check_12 = next(c for c in nb.cells if check_id(c) == "1.2")
    never_run = by_id["1.2"]
    nb.cells = [c for c in nb.cells if c is not never_run]
    again = [never_run, check_12, by_id["1.1"], by_id["1.5"], by_id["1.3"], final_demo]
    nb.cells += [nbformat.from_dict(c) for c in again]
    with checks_raising(False):
        execute(nb, cwd=path.parent, timeout=180, allow_errors=True)
    first_check = next(c for c in nb.cells if check_id(c) == "1.2")
    shown = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(
        line for o in _errors(first_check) for line in o.traceback))
    assert ("exercise 1.2: run the exercise cell above first; it has not defined "
            "`topological_order` yet") in shown, shown
    last = nb.cells[-1]
    assert not _errors(last), _show(_errors(last)[0])
    text = _stream_text(last)
    assert "every value and gradient matches the scalar engine" in text
    assert "reference" not in text, text         # the student's own classes, not the fallback

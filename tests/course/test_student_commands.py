"""The student's commands: ``python -m minigrad.course start DIR | progress DIR | reset NB ID``."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from minigrad.course import (
    exercise_cells,
    read_notebook,
    released_notebook,
    released_paths,
    solution_paths,
    write_notebook,
)
from minigrad.course.__main__ import main as course_main
from minigrad.course.student import format_progress, progress

ROOT = Path(__file__).resolve().parents[2]


def test_start_copies_the_lessons_and_never_overwrites_work(tmp_path, capsys):
    work = tmp_path / "work"
    assert course_main(["start", str(work)]) == 0
    names = sorted(p.name for p in work.iterdir())
    assert names == [p.name for p in released_paths()] and len(names) == 4
    first = work / names[0]
    assert first.read_bytes() == released_paths()[0].read_bytes()
    first.write_text("my work")
    assert course_main(["start", str(work)]) == 0
    assert first.read_text() == "my work"
    assert "0 lesson(s) copied" in capsys.readouterr().out


def test_reset_puts_one_exercise_back_and_keeps_everything_else(tmp_path, capsys):
    course_main(["start", str(tmp_path)])
    path = min(tmp_path.glob("01_*.ipynb"))
    nb = read_notebook(path)
    cells = exercise_cells(nb)
    first, second = list(cells)[:2]
    cells[first].source = "my answer to the first"
    cells[second].source = "my answer to the second"
    cells[first].outputs = []
    nb.cells[0].source += "\nmy note"
    write_notebook(nb, path)

    assert course_main(["reset", str(path), first]) == 0
    after = read_notebook(path)
    released = exercise_cells(released_notebook(1))
    assert exercise_cells(after)[first].source == released[first].source
    assert exercise_cells(after)[second].source == "my answer to the second"
    assert after.cells[0].source.endswith("my note")

    assert course_main(["reset", str(path), "1.99"]) == 1
    err = capsys.readouterr().err
    assert "no exercise '1.99'" in err and first in err


@pytest.mark.slow  # runs lesson 1 in a kernel
def test_progress_marks_a_solved_exercise_done_and_the_others_not(tmp_path, capfd):
    lesson = released_paths()[0]
    shutil.copyfile(lesson, tmp_path / lesson.name)
    solution = exercise_cells(read_notebook(solution_paths(ROOT)[0]))
    nb = read_notebook(tmp_path / lesson.name)
    first, second = list(exercise_cells(nb))[:2]
    exercise_cells(nb)[first].source = solution[first].source
    exercise_cells(nb)[second].source = "def topological_order(root):\n    return [root]\n"
    write_notebook(nb, tmp_path / lesson.name)

    capfd.readouterr()
    rows = progress(tmp_path / lesson.name, timeout=120)     # one notebook (a folder works too)
    assert "TCP" not in capfd.readouterr().err             # no kernel warnings for the student
    assert [r.exercise_id for r in rows] == list(exercise_cells(nb))
    wrong = next(r for r in rows if r.exercise_id == second)
    assert "\n  usual cause:" in wrong.why, wrong.why        # the failure whole, with its cause
    assert wrong.why in format_progress(rows).replace("\n" + " " * 13, "\n")
    assert {r.exercise_id: r.done for r in rows} == {r.exercise_id: r.exercise_id == first
                                                     for r in rows}
    assert all(r.why for r in rows if not r.done)
    text = format_progress(rows)
    assert f"1/{len(rows)} done" in text and "\u2713" in text and "\u2717" in text
    assert read_notebook(tmp_path / lesson.name) == nb           # the notebook is not changed


def test_progress_on_a_missing_folder_says_how_to_start(tmp_path, capsys):
    assert course_main(["progress", str(tmp_path / "nowhere")]) == 1
    assert "minigrad.course start" in capsys.readouterr().err


def test_progress_on_a_missing_notebook_names_it_and_the_lessons_there(tmp_path, capsys):
    course_main(["start", str(tmp_path)])
    missing = tmp_path / "01_from_scalars_to_tensor.ipynb"        # a typo
    assert course_main(["progress", str(missing)]) == 1
    err = capsys.readouterr().err
    assert str(missing) in err and "01_from_scalars_to_tensors.ipynb" in err
    assert "start" not in err


@pytest.mark.parametrize("target", ["missing.ipynb", "01_from_scalars_to_tensor.ipynb",
                                    "nowhere/01_x.ipynb"])
def test_reset_of_a_missing_notebook_names_it(tmp_path, capsys, target):
    assert course_main(["reset", str(tmp_path / target), "1.3"]) == 1
    err = capsys.readouterr().err
    assert f"reset: {tmp_path / target} does not exist" in err and err.strip() != "2"


def test_reset_keeps_a_copy_of_the_replaced_code_and_shows_the_change(tmp_path, capsys):
    course_main(["start", str(tmp_path)])
    path = min(tmp_path.glob("01_*.ipynb"))
    released = exercise_cells(released_notebook(1))["1.3"].source
    for attempt in ("def backward(self):\n    pass  # try 1\n",
                    "def backward(self):\n    pass  # try 2\n"):
        nb = read_notebook(path)
        exercise_cells(nb)["1.3"].source = attempt
        write_notebook(nb, path)
        capsys.readouterr()
        assert course_main(["reset", str(path), "1.3"]) == 0
        out = capsys.readouterr().out
        kept = Path(re.search(r"kept in (\S+)", out).group(1))
        assert kept.parent == tmp_path and kept.read_text() == attempt
        assert "-    pass  # " in out and "+    raise NotImplementedError" in out
        assert exercise_cells(read_notebook(path))["1.3"].source == released
    assert len(list(tmp_path.glob(f"{path.stem}.exercise-1.3*.py"))) == 2   # none overwritten
    assert course_main(["reset", str(path), "1.3"]) == 0
    assert "already as released" in capsys.readouterr().out

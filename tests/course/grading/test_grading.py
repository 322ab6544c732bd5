"""The grader on a toy lesson (tests/course/grading/grading_fixtures): what it runs, how it scores, bad notebooks.

The toy lesson ``09_toy`` has three exercises (1, 2 and 1 points), a check cell for each, a
``demo`` cell that raises if it ever runs, and an ordinary cell that uses the student's code.
One module-scoped run grades a class of submissions written here (solutions, planted mistakes,
cheats and broken files) with two jobs; the tests read that one gradebook. Kernels cost about
a second each, so nothing else starts one unless it must.
"""
from __future__ import annotations

import csv
import hashlib
import json
import os
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

FIXTURES = Path(__file__).resolve().parent / "grading_fixtures"
if str(FIXTURES) not in sys.path:
    sys.path.insert(0, str(FIXTURES))

import toy  # noqa: E402  (tests/course/grading/grading_fixtures/toy.py)

from minigrad.course.grading import (GraderError, Gradebook, GradingOptions, LessonError,  # noqa: E402
                              NotebookGrade, find_submissions, grade, load_lessons,
                              read_gradebook, summary, write_report)
from minigrad.course.grading.cli import main  # noqa: E402
from minigrad.course.grading.submissions import (UnreadableNotebook, assemble, identify,  # noqa: E402
                                          read_notebook)

from minigrad.course.grading import sandbox  # noqa: E402

#: Where bubblewrap cannot create namespaces these tests grade without it (they test the
#: grading, not the isolation: tests/course/grading/test_grading_tamper.py does that, and skips there).
SANDBOX = sandbox.available() is None
NO_SANDBOX = [] if SANDBOX else ["--no-sandbox"]
OPTIONS = GradingOptions(cell_timeout=5, interrupt_grace=2, notebook_timeout=60,
                         max_output=1_000_000, python_path=[FIXTURES], sandbox=SANDBOX)
SPAWN_MARKER = "minigrad-grader-test-orphan-4b1d"
#: These tests start kernels (a second or two each); the class is graded once, in ~20-40 s.
slow = pytest.mark.slow
ALL_PASS = {"9.1": "passed", "9.2": "passed", "9.3": "passed"}


def _fail(*failed: str, base: dict | None = None) -> dict:
    return {**(base or ALL_PASS), **{exercise: "failed" for exercise in failed}}


def _with_check(notebook, exercise_id, source=None):
    """A copy whose check cell for ``exercise_id`` is replaced (or deleted when source is None)."""
    changed = nbformat.from_dict(notebook)
    cells = []
    for cell in changed.cells:
        if f"check:{exercise_id}" in cell.metadata.get("tags", []):
            if source is None:
                continue
            cell.source = source
        cells.append(cell)
    changed.cells = cells
    return changed


def _split_exercise(notebook, exercise_id):
    """A copy in which the exercise cell is split in two cells that both carry its tag."""
    changed = nbformat.from_dict(notebook)
    for index, cell in enumerate(changed.cells):
        if f"exercise:{exercise_id}" in cell.metadata.get("tags", []):
            first, second = new_code_cell("import math"), new_code_cell(cell.source)
            for part in (first, second):
                part.metadata["tags"] = [f"exercise:{exercise_id}"]
            changed.cells[index:index + 1] = [first, second]
            return changed
    raise KeyError(exercise_id)


def _other_lesson():
    notebook = new_notebook(cells=[new_code_cell("def f(x):\n    return x")])
    notebook.cells[0].metadata["tags"] = ["exercise:8.1"]
    return notebook


def _catalogue():
    """student -> (what to write, expected exercise statuses, issue kinds that must appear)."""
    sol = toy.solution()
    change = toy.with_exercise
    wrong_mul = change(sol, "9.2", "g * y, x.shape", "-g * y, x.shape")
    wrong_double = change(sol, "9.1", "return 2 * x", "return 2 * x + 1")
    unattempted = {exercise: "not attempted" for exercise in ALL_PASS}
    not_graded = {exercise: "not graded" for exercise in ALL_PASS}
    return {
        # the lesson as written, and as handed out
        "solution": (sol, ALL_PASS, set()),
        "released": (toy.release(sol), unattempted, set()),
        # planted mistakes, one per common error: each loses exactly its exercise
        "wrong_sign": (wrong_mul, _fail("9.2"), set()),
        "no_unbroadcast": (change(sol, "9.2", "mg.unbroadcast(g * y, x.shape)", "g * y"),
                           _fail("9.2"), set()),
        "off_by_one": (wrong_double, _fail("9.1"), set()),
        "mean_grad": (change(sol, "9.3", "g / d.size", "g"), _fail("9.3"), set()),
        "half_done": (change(sol, "9.3", source=toy.release(sol).cells[11].source),
                      {**ALL_PASS, "9.3": "not attempted"}, set()),
        # notebooks that misbehave
        "raises": (change(sol, "9.2", source="import no_such_module_here\n" + toy.MUL),
                   _fail("9.2"), {"cell error"}),
        "loops": (change(sol, "9.3", source="while True:\n    pass\n" + toy.MEAN),
                  _fail("9.3"), {"timeout"}),
        "slow": (change(sol, "9.3", source="def mean(x):\n    while True:\n        pass"),
                 _fail("9.3"), {"timeout"}),
        "stubborn": (change(sol, "9.3", source=(
            "import time\n\ndef mean(x):\n    while True:  # and deaf to interrupts\n"
            "        try:\n            time.sleep(0.05)\n        except KeyboardInterrupt:\n"
            "            pass")), _fail("9.3"), {"kernel died"}),
        "floods": (change(sol, "9.1", source="print('x' * 3_000_000)\n" + toy.DOUBLE),
                   ALL_PASS, {"output"}),
        "exits": (change(sol, "9.2", source="import os\nos._exit(3)"), _fail("9.2", "9.3"),
                  {"kernel died"}),
        "spawns": (change(sol, "9.1", source=(
            "import subprocess, sys\nchild = subprocess.Popen([sys.executable, '-c', "
            f"'import time; time.sleep(600)', '{SPAWN_MARKER}'])\n" + toy.DOUBLE)),
            ALL_PASS, set()),
        "split": (_split_exercise(sol, "9.2"), ALL_PASS, {"split exercise"}),
        # cheats: edited, deleted or patched checks gain nothing
        "edits_check": (_with_check(wrong_mul, "9.2", "print('all good')"), _fail("9.2"),
                        {"tampered check"}),
        "deletes_check": (_with_check(wrong_double, "9.1"), _fail("9.1"), {"deleted check"}),
        "patches_checks": (change(wrong_mul, "9.2", source=(
            "checks.lesson9.mul = lambda fn: print('mul: all good')\n"
            "checks.CheckFailed = type('CheckFailed', (Exception,), {})\n"
            "import sys\nsys.modules['gradingtoy.lesson9'].mean = lambda fn: None\n"
            + wrong_mul.cells[7].source)),
            _fail("9.2"), {"patched checks"}),
        "replaces_module": (change(wrong_double, "9.1", source=(
            "import sys, types\nfake = types.ModuleType('gradingtoy.lesson9')\n"
            "fake.double = fake.mul = fake.mean = lambda fn: None\n"
            "sys.modules['gradingtoy.lesson9'] = checks.lesson9 = fake\n"
            + wrong_double.cells[3].source)), _fail("9.1"), {"patched checks"}),
        # outside the threat model: patching numpy is reported, not undone
        "patches_numpy": (change(wrong_mul, "9.2", source=(
            "np.allclose = lambda *args, **kwargs: True\n" + wrong_mul.cells[7].source)),
            ALL_PASS, {"patched engine"}),
        # not notebooks, or not this lesson
        "invalid_json": (b'{"cells": [{"cell_type": "code", "source": "x = 1"', not_graded,
                         {"unreadable"}),
        "empty_file": (b"", not_graded, {"unreadable"}),
        "not_a_notebook": (b"[1, 2, 3]\n", not_graded, {"unreadable"}),
        "empty_notebook": (new_notebook(), unattempted, {"unreadable"}),
        "wrong_lesson": (_other_lesson(), unattempted, {"wrong lesson"}),
    }


CATALOGUE = _catalogue()


def _write_class(folder: Path) -> Path:
    for student, (content, _, _) in CATALOGUE.items():
        path = folder / student / f"{toy.KEY}.ipynb"
        if isinstance(content, bytes):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
        else:
            toy.write(content, path)
    return folder


def _fingerprint(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*"))
            if p.is_file()} | {str(d.relative_to(folder)) + "/": "dir"
                               for d in folder.rglob("*") if d.is_dir()}


def _children() -> list[int]:
    """Pids of this process's living descendants (zombies excluded), from /proc."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                parents[int(entry.name)] = int(fields[1])
    found, frontier = [], [os.getpid()]
    while frontier:
        pid = frontier.pop()
        kids = [child for child, parent in parents.items() if parent == pid]
        found += kids
        frontier += kids
    return found


def _running_with(marker: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> Path:
    return toy.released_dir(tmp_path_factory.mktemp("released"))


@pytest.fixture(scope="module")
def classroom(tmp_path_factory, released):
    """The class graded once with two jobs: (folder, gradebook, fingerprints, children before)."""
    folder = _write_class(tmp_path_factory.mktemp("submissions"))
    before = _fingerprint(folder)
    children_before = set(_children())
    book = grade([folder], jobs=2, released=released, checks_package=toy.CHECKS_PACKAGE,
                 options=OPTIONS)
    return folder, book, before, children_before


def _csv(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def _graded(book: Gradebook, student: str) -> NotebookGrade:
    (notebook,) = [n for n in book.notebooks if n.student == student]
    return notebook


@slow
@pytest.mark.parametrize("student", list(CATALOGUE))
def test_each_submission_gets_the_expected_grade(classroom, student):
    _, book, _, _ = classroom
    _, expected, issues = CATALOGUE[student]
    notebook = _graded(book, student)
    got = {exercise.exercise: exercise.status for exercise in notebook.exercises}
    assert got == expected, (notebook.issues, [e.message for e in notebook.exercises])
    points = {"9.1": 1, "9.2": 2, "9.3": 1}
    assert notebook.score == sum(points[e] for e, status in expected.items() if status == "passed")
    assert notebook.max_score == 4
    assert issues <= set(notebook.issue_kinds()), notebook.issues


@slow
def test_solution_runs_cleanly_and_demo_cells_are_skipped(classroom):
    _, book, _, _ = classroom
    notebook = _graded(book, "solution")
    assert notebook.status == "graded" and notebook.issues == []
    assert [e.message for e in notebook.exercises] == [
        "double: 3 cases agree", "mul: forward and both gradients agree on shapes (3, 1) x (1, 4)",
        "mean: value and gradient agree"]


@slow
def test_failures_say_what_went_wrong(classroom):
    _, book, _, _ = classroom

    def message(student, exercise):
        return next(e.message for e in _graded(book, student).exercises if e.exercise == exercise)

    assert "gradient for a is wrong" in message("wrong_sign", "9.2")
    assert "unbroadcast" in message("no_unbroadcast", "9.2")
    assert "double(0.0): expected 0.0, got 1.0" in message("off_by_one", "9.1")
    assert "NameError" in message("raises", "9.2")
    assert "ModuleNotFoundError" in _graded(book, "raises").issues[0].text
    assert "timed out after 5 s and was interrupted" in message("slow", "9.3")
    assert "of your code, in mean" in message("slow", "9.3")
    assert "its sandbox was ended" in message("stubborn", "9.3")
    assert "notebook had stopped" in message("exits", "9.3")
    assert "(exit status 3;" in _graded(book, "exits").issues[0].text
    assert "not attempted" in message("half_done", "9.3")
    assert "not valid JSON (line 1" in message("invalid_json", "9.1")
    assert "empty" in message("empty_file", "9.1")


@slow
def test_released_lesson_is_not_run_and_scores_zero(classroom):
    _, book, _, _ = classroom
    notebook = _graded(book, "released")
    assert notebook.status == "not run" and notebook.score == 0 and notebook.issues == []


@slow
def test_cheats_are_reported(classroom):
    _, book, _, _ = classroom
    patched = " ".join(i.text for i in _graded(book, "patches_checks").issues)
    assert "gradingtoy.lesson9.mul" in patched and "gradingtoy.lesson9.mean" in patched
    assert "gradingtoy.CheckFailed" in patched
    replaced = " ".join(i.text for i in _graded(book, "replaces_module").issues)
    assert "gradingtoy.lesson9 (the whole module)" in replaced
    engine = " ".join(i.text for i in _graded(book, "patches_numpy").issues)
    assert "numpy.allclose" in engine and "did not undo" in engine


@slow
def test_wrong_lesson_and_unreadable_rows_say_what_happened(classroom):
    _, book, _, _ = classroom
    wrong = _graded(book, "wrong_lesson")
    assert wrong.lesson == toy.KEY and wrong.status == "not run"
    assert "lesson 8" in wrong.issues[0].text
    for student in ("invalid_json", "empty_file", "not_a_notebook"):
        notebook = _graded(book, student)
        assert notebook.status == "unreadable" and notebook.lesson == toy.KEY


@slow
def test_grading_never_writes_to_submissions(classroom):
    folder, _, before, _ = classroom
    assert _fingerprint(folder) == before


@slow
def test_no_kernel_or_process_is_left_behind(classroom):
    _, _, _, children_before = classroom
    assert set(_children()) <= children_before
    assert _running_with(SPAWN_MARKER) == []


@slow
def test_parallel_and_serial_runs_agree(classroom, released, tmp_path):
    _, book, _, _ = classroom
    some = ["solution", "wrong_sign", "raises", "edits_check", "invalid_json", "released"]
    serial = grade([classroom[0] / s for s in some], jobs=1, released=released,
                   checks_package=toy.CHECKS_PACKAGE, options=OPTIONS)

    def key(n: NotebookGrade):
        return (n.student, n.lesson, n.status, n.score, n.issue_kinds(),
                [(e.exercise, e.status, e.points, e.message) for e in n.exercises])

    assert [key(n) for n in serial.notebooks] == [key(_graded(book, s)) for s in sorted(some)]


@slow
def test_the_notebook_time_limit_stops_what_comes_after(released, tmp_path):
    sleepy = toy.with_exercise(toy.solution(), "9.2", source="import time\ntime.sleep(60)")
    toy.write(sleepy, tmp_path / "zoe" / "09_toy.ipynb")
    options = GradingOptions(cell_timeout=30, notebook_timeout=6, python_path=[FIXTURES],
                             sandbox=SANDBOX)
    [notebook] = grade([tmp_path], released=released, checks_package=toy.CHECKS_PACKAGE,
                       options=options).notebooks
    assert [e.status for e in notebook.exercises] == ["passed", "failed", "failed"]
    assert "time limit had passed" in notebook.exercises[2].message
    assert any("ran past its 6 s limit" in i.text for i in notebook.issues), notebook.issues


@slow
def test_report_files(classroom, tmp_path):
    _, book, _, _ = classroom
    written = write_report(book, tmp_path)
    assert {p.name for p in written} >= {"grades.csv", "exercises.csv", "grades.json"}
    rows = _csv(tmp_path / "grades.csv")
    assert [r["student"] for r in rows] == sorted(CATALOGUE)
    assert list(rows[0]) == ["student", toy.KEY, "total", "late", "issues"]
    by_student = {r["student"]: r for r in rows}
    assert by_student["solution"][toy.KEY] == "4" and by_student["wrong_sign"]["total"] == "2"
    assert "tampered check" in by_student["edits_check"]["issues"]
    long = _csv(tmp_path / "exercises.csv")
    assert len(long) == 3 * len(CATALOGUE)
    row = next(r for r in long if r["student"] == "wrong_sign" and r["exercise"] == "9.2")
    assert (row["points"], row["max"], row["passed"], row["status"]) == ("0", "2", "false",
                                                                        "failed")
    assert "gradient for a is wrong" in row["message"]
    again = read_gradebook(tmp_path)
    assert again.to_dict() == book.to_dict()
    data = json.loads((tmp_path / "grades.json").read_text())
    assert data["students"]["off_by_one"] == {"scores": {toy.KEY: 3.0}, "total": 3.0}
    page = (tmp_path / "feedback" / "wrong_sign.md").read_text()
    assert "# Feedback for wrong_sign" in page and "2 / 4" in page
    assert "### 9.2 mul and its VJP: failed" in page and "gradient for a is wrong" in page
    assert len(list((tmp_path / "feedback").glob("*.md"))) == len(CATALOGUE)
    text = summary(book, tmp_path)
    assert text.startswith(f"## minigrad grades: {len(CATALOGUE)} notebooks")
    assert "| solution | 4 | 4 |  |" in text and "- tampered check ×1 (edits_check)" in text


@slow
def test_regrading_one_student_updates_the_report(classroom, released, tmp_path, monkeypatch):
    _, book, _, _ = classroom
    write_report(book, tmp_path / "out")
    fixed = tmp_path / "submissions"
    toy.write(toy.solution(), fixed / "wrong_sign" / f"{toy.KEY}.ipynb")
    toy.write(toy.release(toy.solution()), fixed / "someone_else" / f"{toy.KEY}.ipynb")
    monkeypatch.setenv("MINIGRAD_RELEASED_DIR", str(released))
    monkeypatch.setenv("MINIGRAD_CHECKS_PACKAGE", toy.CHECKS_PACKAGE)
    monkeypatch.chdir(FIXTURES.parent)  # a relative PYTHONPATH must reach the kernel as meant
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        filter(None, [FIXTURES.name, os.environ.get("PYTHONPATH")])))
    assert main([str(fixed), "--student", "wrong_sign", "--out", str(tmp_path / "out"),
                 "--no-progress", "--quiet", "--timeout", "10", *NO_SANDBOX]) == 0
    merged = read_gradebook(tmp_path / "out")
    assert merged.students() == book.students()        # nobody added, nobody lost
    assert _graded(merged, "wrong_sign").score == 4
    assert _graded(merged, "off_by_one").score == 3


# ---------------------------------------------------------------------------------------------
# Without kernels: finding, naming, identifying, assembling, the command line


def test_students_are_named_by_folder_or_file_name(tmp_path):
    sol = toy.solution()
    for path in ["class/alice/09_toy.ipynb", "class/bob/week9/09_toy.ipynb",
                 "class/carol_smith_09_toy.ipynb",
                 "class/.ipynb_checkpoints/09_toy-checkpoint.ipynb",
                 "class/dave/.ipynb_checkpoints/09_toy-checkpoint.ipynb", "eve/09_toy.ipynb"]:
        toy.write(sol, tmp_path / path)
    found = find_submissions([tmp_path / "class", tmp_path / "eve" / "09_toy.ipynb"])
    assert [(s.student, s.path.relative_to(tmp_path).as_posix()) for s in found] == [
        ("alice", "class/alice/09_toy.ipynb"), ("bob", "class/bob/week9/09_toy.ipynb"),
        ("carol_smith", "class/carol_smith_09_toy.ipynb"), ("eve", "eve/09_toy.ipynb")]
    assert [s.student for s in find_submissions([tmp_path / "class"], students=["bob"])] == ["bob"]
    assert find_submissions([tmp_path / "class" / "alice"])[0].student == "alice"
    with pytest.raises(FileNotFoundError, match="no such notebook or folder"):
        find_submissions([tmp_path / "nowhere"])


def test_lesson_is_found_by_name_then_by_tags(tmp_path, released):
    lessons = load_lessons(released, toy.CHECKS_PACKAGE)
    sol = toy.solution()
    [by_name] = find_submissions([toy.write(new_notebook(), tmp_path / "a" / "09_anything.ipynb")])
    [by_tags] = find_submissions([toy.write(sol, tmp_path / "b" / "homework.ipynb")])
    [nothing] = find_submissions([toy.write(new_notebook(), tmp_path / "c" / "homework.ipynb")])
    assert identify(new_notebook(), by_name, lessons)[0].key == toy.KEY
    assert identify(sol, by_tags, lessons) == (lessons[9], [])
    lesson, issues = identify(new_notebook(), nothing, lessons)
    assert lesson is None and issues[0].kind == "unidentified"


def test_assembly_runs_the_released_lesson_with_the_exercises_in_place(released):
    lesson = load_lessons(released, toy.CHECKS_PACKAGE)[9]
    student = toy.with_exercise(toy.solution(), "9.1", "return 2 * x", "return x + x")
    student.cells[1].source = "import os; os.remove('everything')"   # not an exercise cell
    student.cells.insert(0, new_code_cell("print('a cell of my own')"))
    steps = assemble(student, lesson).steps
    assert [s.label for s in steps] == ["cell 2", "exercise 9.1", "check 9.1", "exercise 9.2",
                                        "check 9.2", "cell 10", "exercise 9.3", "check 9.3"]
    assert steps[0].source == toy.SETUP                   # the released setup cell, not theirs
    assert "return x + x" in steps[1].source
    assert steps[2].source == "checks.lesson9.double(double)"
    assert all("demo" not in s.source and "a cell of my own" not in s.source for s in steps)
    assert assemble(student, lesson).attempted == {"9.1", "9.2", "9.3"}
    assert assemble(toy.release(toy.solution()), lesson).attempted == set()


def test_another_version_of_the_lesson_is_flagged(released):
    lesson = load_lessons(released, toy.CHECKS_PACKAGE)[9]
    newer = toy.solution()
    extra = new_code_cell("def halve(x):\n    return x / 2")
    extra.metadata["tags"] = ["exercise:9.4"]
    newer.cells.append(extra)
    [issue] = assemble(newer, lesson).issues
    assert issue.kind == "other version" and "(9.4)" in issue.text
    lesson.notebook.metadata["minigrad"] = {"version": "2"}
    older = toy.solution()
    older.metadata["minigrad"] = {"version": "1"}
    assert [i.kind for i in assemble(older, lesson).issues] == ["other version"]
    older.metadata["minigrad"] = {"version": "2"}
    assert assemble(older, lesson).issues == []


def test_unreadable_files_are_explained():
    for data, words in [(b"", "empty"), (b"\xff\xfe\x00", "not UTF-8"),
                        (b'{"cells": [', "not valid JSON (line 1, column 12"),
                        (b'{"a": 1}', "not a notebook"), (b"[]", "not a notebook")]:
        with pytest.raises(UnreadableNotebook, match=words.replace("(", r"\(")):
            read_notebook(data)


def test_released_lessons_must_match_their_weights(tmp_path):
    package = tmp_path / "mismatched"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "lesson9.py").write_text('EXERCISES = {"9.1": {"title": "double", "points": 1},'
                                        ' "9.4": {"title": "gone", "points": 1}}\n')
    toy.released_dir(tmp_path / "released")
    sys.path.insert(0, str(tmp_path))
    try:
        with pytest.raises(LessonError, match=r"EXERCISES has 9.4 but no cell is tagged "
                                              r"exercise:9.4.*check:9.2 but .*has no such"):
            load_lessons(tmp_path / "released", "mismatched")
    finally:
        sys.path.remove(str(tmp_path))
    with pytest.raises(LessonError, match="no released lessons"):
        load_lessons(tmp_path / "empty", "mismatched")


def test_command_line_fails_only_when_the_grader_cannot_run(tmp_path, released, capsys):
    toy.write(toy.release(toy.solution()), tmp_path / "subs" / "ann" / "09_toy.ipynb")
    common = ["--released", str(released), "--checks-package", toy.CHECKS_PACKAGE,
              "--no-progress", "--out", str(tmp_path / "out"), *NO_SANDBOX]
    assert main([str(tmp_path / "nowhere"), *common]) == 2
    assert "no such notebook or folder" in capsys.readouterr().err
    assert main([str(tmp_path / "subs"), *common, "--student", "nobody"]) == 2
    assert "no notebooks from nobody" in capsys.readouterr().err
    assert main([str(tmp_path / "subs"), *common[2:], "--released", str(tmp_path)]) == 2
    assert "no released lessons" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        main(["--jobs", "0", str(tmp_path / "subs")])
    assert exit_info.value.code == 2
    # a released (unattempted) lesson needs no kernel: grading finishes with exit status 0
    assert main([str(tmp_path / "subs"), *common]) == 0
    out = capsys.readouterr().out
    assert "| ann | 0 | 0 |  |" in out and (tmp_path / "out" / "feedback" / "ann.md").is_file()
    grade([tmp_path / "subs"], released=released, checks_package=toy.CHECKS_PACKAGE,
          progress=True, options=OPTIONS)
    bar = capsys.readouterr().err
    assert "grading:" in bar and "notebook/s" in bar          # tqdm drew its bar
    assert main(["--list-lessons", *common[:4]]) == 0
    listed = capsys.readouterr().out
    assert "09_toy (4 points, release " in listed and "mul and its VJP" in listed


def test_grade_needs_notebooks(tmp_path, released):
    (tmp_path / "empty").mkdir()
    with pytest.raises(GraderError, match="no notebooks under"):
        grade([tmp_path / "empty"], released=released, checks_package=toy.CHECKS_PACKAGE)

"""The grader on the real, released lessons, through the ``minigrad-grade`` command.

One module-scoped run grades a folder of 20-odd generated submissions with ``--jobs 2``:
every solution (full marks), every released lesson (zero), planted mistakes written here (one
per common error: each must lose exactly the exercise it breaks), half-done lessons, and broken
files. The tests read the CSV and JSON it wrote. About 15 kernels, a couple of seconds each.
"""
from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from minigrad.course.grading import GradingOptions, grade, load_lessons, sandbox

#: Without namespaces for bubblewrap, grade without it (the grading is tested here, the
#: isolation in tests/course/grading/test_grading_tamper.py, which skips there).
SANDBOX = sandbox.available() is None
NO_SANDBOX = [] if SANDBOX else ["--no-sandbox"]

ROOT = Path(__file__).resolve().parents[3]
RELEASED = sorted((ROOT / "minigrad" / "course" / "released").glob("[0-9][0-9]_*.ipynb"))

pytestmark = [pytest.mark.skipif(not RELEASED, reason="no released lessons yet "
                                 "(python -m minigrad.course release)"),
              pytest.mark.slow]  # ~20 kernels, a couple of seconds each: ~30-50 s in all

#: One planted mistake per common error: lesson -> [(name, exercise, old text, new text)].
#: Each replaces ``old`` by ``new`` in the solution's exercise cell and must cost exactly
#: that exercise.
PLANTED = {
    1: [("mul_vjp_sign", "1.4", '"mul": lambda g, a, b: (g * b, g * a)',
         '"mul": lambda g, a, b: (g * b, -g * a)'),
        ("backward_overwrites", "1.3", "parent.grad = parent.grad + pg", "parent.grad = pg"),
        ("tanh_forgets_square", "1.5", "g * (1 - y**2)", "g * (1 - y)"),
        ("topo_children_first", "1.2", "order.append(node)", "order.insert(0, node)")],
    2: [("matmul_vjp_sign", "2.1", "(g @ w.T, x.T @ g)", "(g @ w.T, -(x.T @ g))"),
        ("sum_forgets_the_axis", "2.2", "g = np.expand_dims(g, axis)", "g = g"),
        ("transpose_same_axes", "2.3", "inverse = tuple(np.argsort(axes))", "inverse = axes"),
        ("unbroadcast_keeps_leading_axes", "2.4", "extra = grad.ndim - len(shape)", "extra = 0"),
        ("cross_entropy_overflows", "2.5", "shifted = z - z.max(axis=1, keepdims=True)",
         "shifted = z")],
    3: [("misses_nested_modules", "3.2", "for p in value.parameters():", "for p in []:"),
        ("linear_without_bias", "3.3", "return x @ self.weight.T + self.bias",
         "return x @ self.weight.T"),
        ("sgd_climbs", "3.5", "p.data - self.lr * p.grad", "p.data + self.lr * p.grad"),
        ("relu_passes_everything", "3.4", "return x.relu()", "return x")],
    4: [("relu_for_sigmoid", "4.1", "nn.Sigmoid()", "nn.ReLU()"),
        ("sigmoid_derivative_forgotten", "4.2", "delta1 = dh * h * (1 - h)", "delta1 = dh * h"),
        ("never_zeroes_grads", "4.3", "opt.zero_grad()", "pass")],
}
SUBMISSIONS = 20


def _solution(lesson) -> nbformat.NotebookNode:
    return nbformat.read(ROOT / "solutions" / f"{lesson.key}.ipynb", as_version=4)


def _exercise_cell(notebook, exercise_id):
    return next(c for c in notebook.cells if f"exercise:{exercise_id}" in
                c.metadata.get("tags", []))


def _plant(lesson, exercise_id, old, new) -> nbformat.NotebookNode:
    notebook = _solution(lesson)
    cell = _exercise_cell(notebook, exercise_id)
    assert old in cell.source, (f"the planted mistake {old!r} -> {new!r} no longer applies to "
                                f"exercise {exercise_id} of {lesson.key}: update PLANTED")
    cell.source = cell.source.replace(old, new)
    return notebook


def _unattempt(lesson, exercise_id) -> nbformat.NotebookNode:
    notebook = _solution(lesson)
    _exercise_cell(notebook, exercise_id).source = \
        _exercise_cell(lesson.notebook, exercise_id).source
    return notebook


def _plan(lessons):
    """student -> list of (file name, notebook or bytes, {lesson key: broken exercises})."""
    first, last = lessons[min(lessons)], lessons[max(lessons)]
    plan = {"ada": [(f"{lesson.key}.ipynb", _solution(lesson), {lesson.key: set()})
                    for lesson in lessons.values()],
            "bo": [(f"{lesson.key}.ipynb", lesson.path.read_bytes(),
                    {lesson.key: set(lesson.exercises)}) for lesson in lessons.values()]}
    for lesson in lessons.values():
        for name, exercise_id, old, new in PLANTED.get(lesson.number, []):
            plan[f"p{lesson.number}_{name}"] = [(f"{lesson.key}.ipynb",
                                                 _plant(lesson, exercise_id, old, new),
                                                 {lesson.key: {exercise_id}})]
    text = nbformat.writes(_solution(first))
    raises = _solution(first)
    some = next(iter(first.exercises))
    cell = _exercise_cell(raises, some)
    cell.source = "raise RuntimeError('I give up')\n" + cell.source
    plan.update({
        "cy_truncated": [(f"{first.key}.ipynb", text[: len(text) // 2].encode(),
                          {first.key: set(first.exercises)})],
        "di_empty": [(f"{first.key}.ipynb", b"", {first.key: set(first.exercises)})],
        "fa_raises": [(f"{first.key}.ipynb", raises, {first.key: {some}})],
    })
    if last is not first:
        plan["ed_wrong_lesson"] = [(f"{first.key}.ipynb", _solution(last),
                                    {first.key: set(first.exercises)})]
    pairs = [(lesson, exercise_id) for lesson in lessons.values()
             for exercise_id in lesson.exercises]
    k = 0
    while sum(len(files) for files in plan.values()) < SUBMISSIONS:
        lesson, exercise_id = pairs[(7 * k) % len(pairs)]
        plan[f"half_{k:02d}"] = [(f"{lesson.key}.ipynb", _unattempt(lesson, exercise_id),
                                  {lesson.key: {exercise_id}})]
        k += 1
    return plan


def _expected(lessons, plan):
    """student -> {lesson key: score} for the table."""
    points = {lesson.key: {e: info["points"] for e, info in lesson.exercises.items()}
              for lesson in lessons.values()}
    table = {}
    for student, files in plan.items():
        scores = {}
        for _, _, broken in files:
            for key, exercises in broken.items():
                scores[key] = sum(p for e, p in points[key].items() if e not in exercises)
        table[student] = scores
    return table


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The generated class graded by ``minigrad-grade --jobs 2``: (lessons, plan, folder, out)."""
    lessons = load_lessons()
    plan = _plan(lessons)
    folder = tmp_path_factory.mktemp("submissions")
    for student, files in plan.items():
        for name, content, _ in files:
            path = folder / student / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                nbformat.write(content, str(path))
    out = tmp_path_factory.mktemp("report")
    script = shutil.which("minigrad-grade", path=str(Path(sys.executable).parent))
    command = [script] if script else [sys.executable, "-m", "minigrad.course.grading"]
    done = subprocess.run([*command, str(folder), "--jobs", "2", "--out", str(out),
                           "--no-progress", *NO_SANDBOX], capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    return lessons, plan, folder, out, done.stdout


def _rows(out: Path, name: str) -> list[dict[str, str]]:
    with open(out / name, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def test_the_class_has_twenty_submissions(graded):
    _, _, folder, _, _ = graded
    assert len(list(folder.rglob("*.ipynb"))) >= SUBMISSIONS


def test_grades_csv_is_the_expected_table(graded):
    lessons, plan, _, out, _ = graded
    expected = _expected(lessons, plan)
    keys = [lesson.key for lesson in sorted(lessons.values(), key=lambda lesson: lesson.number)]
    rows = _rows(out, "grades.csv")
    assert list(rows[0]) == ["student", *keys, "total", "late", "issues"]
    got = {r["student"]: {k: float(r[k]) for k in keys if r[k] != ""} for r in rows}
    assert got == {s: {k: float(v) for k, v in scores.items()} for s, scores in expected.items()}
    for row in rows:
        assert float(row["total"]) == sum(expected[row["student"]].values())


def test_each_planted_mistake_loses_exactly_its_exercise(graded):
    lessons, plan, _, out, _ = graded
    long = _rows(out, "exercises.csv")
    for student, files in plan.items():
        for _, _, broken in files:
            for key, exercises in broken.items():
                mine = {r["exercise"]: r for r in long if r["student"] == student
                        and r["lesson"] == key}
                assert set(mine) == set(lessons[int(key[:2])].exercises), (student, key)
                lost = {e for e, r in mine.items() if r["passed"] != "true"}
                assert lost == exercises, (student, {e: mine[e]["message"] for e in lost})


def test_planted_mistakes_get_the_checks_own_message(graded):
    _, plan, _, out, _ = graded
    long = _rows(out, "exercises.csv")
    for student in (s for s in plan if s.startswith("p")):
        [(_, _, broken)] = plan[student]
        [(exercise_id,)] = [tuple(v) for v in broken.values()]
        [row] = [r for r in long if r["student"] == student and r["exercise"] == exercise_id]
        assert row["status"] == "failed" and row["message"], (student, row)
        assert "NameError" not in row["message"] and "not run" not in row["message"], row


def test_solutions_run_cleanly_and_released_lessons_score_zero(graded):
    _, _, _, out, _ = graded
    notebooks = json.loads((out / "grades.json").read_text())["notebooks"]
    for notebook in notebooks:
        if notebook["student"] == "ada":
            assert notebook["status"] == "graded" and notebook["score"] == notebook["max_score"]
            assert notebook["issues"] == [], notebook["issues"]  # demo cells are skipped
        if notebook["student"] == "bo":
            assert notebook["status"] == "not run" and notebook["score"] == 0
            assert {e["status"] for e in notebook["exercises"]} == {"not attempted"}


def test_bad_submissions_get_a_row_that_says_what_happened(graded):
    _, _, _, out, stdout = graded
    rows = {r["student"]: r for r in _rows(out, "grades.csv")}
    assert "unreadable" in rows["cy_truncated"]["issues"]
    assert "unreadable" in rows["di_empty"]["issues"]
    if "ed_wrong_lesson" in rows:
        assert "wrong lesson" in rows["ed_wrong_lesson"]["issues"]
    assert "cell error" in rows["fa_raises"]["issues"]
    assert "| ada |" in stdout and "Report:" in stdout
    assert (out / "feedback" / "fa_raises.md").read_text().count("RuntimeError: I give up") >= 1


def test_serial_grading_agrees_with_the_parallel_command(graded):
    lessons, plan, folder, out, _ = graded
    first = min(lessons.values(), key=lambda lesson: lesson.number)
    some = [folder / "ada" / f"{first.key}.ipynb", folder / "fa_raises"] + \
        [folder / s for s in plan if s.startswith("p")][-1:]
    serial = grade(some, jobs=1, options=GradingOptions(sandbox=SANDBOX))
    parallel = {(n["student"], n["lesson"]): n
                for n in json.loads((out / "grades.json").read_text())["notebooks"]}
    assert len(serial.notebooks) >= 3
    for notebook in serial.notebooks:
        other = parallel[(notebook.student, notebook.lesson)]
        assert notebook.score == other["score"] and notebook.status == other["status"]
        # a failing check's message shows values of its probes, drawn from each run's own
        # secret seed: only the messages of passed exercises are the same in both runs
        assert [(e.exercise, e.status, e.message if e.passed else "") for e in
                notebook.exercises] == [(e["exercise"], e["status"], e["message"] if
                                         e["status"] == "passed" else "") for e in other["exercises"]]
        assert notebook.issue_kinds() == list(dict.fromkeys(i["kind"] for i in other["issues"]))


def test_every_released_lesson_has_planted_mistakes():
    lessons = load_lessons()
    missing = [lesson.key for lesson in lessons.values()
               if len(PLANTED.get(lesson.number, [])) < 2]
    assert not missing, f"add planted mistakes for {missing} to PLANTED in this file"

"""Integrity without a sandbox: the probe/run/judge split of the checks, the plain-data protocol,
the report's hardening, LMS names, the refusal to grade without a sandbox, and the preflight.

None of these needs bubblewrap; they run on every CI machine.
"""
from __future__ import annotations

import csv
import inspect
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from minigrad.course import exercise_cells, read_notebook
from minigrad.course.checks import CheckFailed, Split
from minigrad.course.checks import lesson1 as L1
from minigrad.course.grading import runner, sandbox
from minigrad.course.grading.protocol import MAX_BYTES, ProtocolError, dumps, loads
from minigrad.course.grading.report import csv_cell, feedback_names, write_report
from minigrad.course.grading.results import (CheckOutcome, ExerciseGrade, Gradebook,
                                             LessonSummary, NotebookGrade)
from minigrad.course.grading.submissions import find_submissions

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = Path(__file__).resolve().parent / "grading_fixtures"
if str(FIXTURES) not in sys.path:
    sys.path.insert(0, str(FIXTURES))

import toy  # noqa: E402

@pytest.fixture(scope="module")
def sol() -> dict:
    """Lesson 1's reference solution, run from its notebook's exercise cells."""
    ns: dict = {"np": np, "__name__": "__main__"}
    for cell in exercise_cells(read_notebook(ROOT / "solutions" /
                                             "01_from_scalars_to_tensors.ipynb")).values():
        exec(compile(cell.source, "<exercise>", "exec"), ns)
    return ns


def _check(exercise: str):
    return next(f for f in vars(L1).values() if getattr(f, "exercise_id", None) == exercise)


def _split(exercise: str) -> Split:
    return _check(exercise).split


def _objects(sol: dict, exercise: str) -> list:
    """The student's objects a check takes: its parameters are named after them."""
    return [sol[name] for name in inspect.signature(_check(exercise)).parameters]


# --- the split: probe, run, judge ------------------------------------------------------------


def test_every_lesson1_check_is_split():
    assert all(isinstance(_split(e), Split) for e in L1.EXERCISES)


@pytest.mark.parametrize("exercise", list(L1.EXERCISES))
def test_the_reference_passes_the_judge_on_secret_probes(sol, exercise):
    split = _split(exercise)
    args = _objects(sol, exercise)
    secret = split.probe(np.random.default_rng(12345))
    assert dumps(secret) != dumps(split.probe(None))         # not the notebook's cases
    outputs = loads(dumps(split.run(secret, *args)))          # what crosses the sandbox edge
    assert isinstance(split.judge(secret, outputs), str)


@pytest.mark.parametrize("exercise", list(L1.EXERCISES))
def test_run_never_computes_an_expected_value(sol, exercise, monkeypatch):
    def forbidden(*args, **kwargs):
        raise AssertionError("an expected value was computed in the student's process")

    for name in ("Var", "_var_elementwise", "_ref_backward"):
        monkeypatch.setattr(L1, name, forbidden)
    split = _split(exercise)
    probes = split.probe(np.random.default_rng(7))
    split.run(probes, *_objects(sol, exercise))


def test_wrong_values_from_the_sandbox_fail_with_the_checks_message(sol):
    split = _split("1.3")
    probes = split.probe(np.random.default_rng(3))
    outputs = loads(dumps(split.run(probes, *_objects(sol, "1.3"))))
    outputs["cases"][1]["leaves"][0] = outputs["cases"][1]["leaves"][0] + 1.0
    with pytest.raises(CheckFailed, match=r"(?s)backward, case 'z = x \* x'.*x\.grad.*usual cause"):
        split.judge(probes, outputs)


@pytest.mark.parametrize("outputs", [None, {}, {"groups": "x"}, {"groups": [[{"forward": 1}]]},
                                     {"orders": [[0]]}, [1, 2, 3]])
def test_malformed_data_is_a_zero_with_a_reason_never_a_crash(outputs):
    options = runner.GradingOptions()
    for exercise in L1.EXERCISES:
        split = _split(exercise)
        probes = split.probe(np.random.default_rng(1))
        outcome = runner._judge(split, probes, {"kind": "outputs", "outputs": outputs}, options)
        assert outcome["passed"] is False and outcome["message"]


def test_a_verdict_claimed_by_the_sandbox_does_not_count():
    split = _split("1.3")
    probes = split.probe(np.random.default_rng(1))
    for claim in ({"kind": "self-reported", "passed": True}, {"kind": "passed", "passed": True}):
        outcome = runner._judge(split, probes, claim, runner.GradingOptions())
        assert outcome["passed"] is False and "no values" in outcome["message"]


# --- the protocol ----------------------------------------------------------------------------


def test_protocol_carries_plain_data_and_arrays():
    data = {"a": [1, 2.5, None, "x", True], "b": np.arange(6.0).reshape(2, 3),
            "c": np.int64(3)}
    back = loads(dumps(data))
    assert back["a"] == data["a"] and np.array_equal(back["b"], data["b"])
    assert back["b"].dtype == np.float64


@pytest.mark.parametrize("value", [object(), np.array([object()]), {1: 2}, lambda: 1])
def test_protocol_refuses_anything_but_data(value):
    with pytest.raises(ProtocolError):
        dumps(value)


def test_protocol_never_unpickles():
    import base64
    import io
    import pickle
    buffer = io.BytesIO()
    np.save(buffer, np.array([{"x": 1}], dtype=object), allow_pickle=True)
    line = '{"a": {"__npy__": "%s"}}' % base64.b64encode(buffer.getvalue()).decode()
    with pytest.raises(ProtocolError):
        loads(line)
    with pytest.raises(ProtocolError):
        loads(pickle.dumps({"a": 1}))
    with pytest.raises(ProtocolError):
        loads("[" * 100 + "]" * 100)
    with pytest.raises(ProtocolError):
        loads(" " * (MAX_BYTES + 1))


# --- no sandbox, no grading ------------------------------------------------------------------


def test_grading_is_refused_without_a_sandbox(monkeypatch, tmp_path):
    monkeypatch.setattr(sandbox, "available", lambda: "bubblewrap is not installed")
    with pytest.raises(runner.GraderError, match=r"no sandbox.*--no-sandbox"):
        runner.grade([tmp_path], released=toy.released_dir(tmp_path / "released"),
                     checks_package=toy.CHECKS_PACKAGE)


def test_the_sandbox_environment_is_an_allow_list(monkeypatch, tmp_path):
    monkeypatch.setenv("MINIGRAD_GRADER_TOKEN", "s3cret")
    argv, env = sandbox.command(sandbox.SandboxSpec(workdir=tmp_path))
    inside = sandbox.environment(sandbox.SandboxSpec(workdir=tmp_path))
    assert "s3cret" not in " ".join(argv) and "s3cret" not in env.values()
    assert set(inside) <= {"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "MPLBACKEND",
                           "MPLCONFIGDIR", "IPYTHONDIR", "MINIGRAD_CHECKS_RAISE",
                           "PYTHONDONTWRITEBYTECODE", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                           "MKL_NUM_THREADS", "PYTHONPATH"}
    assert "--clearenv" in argv and "--unshare-net" in argv and "--die-with-parent" in argv
    shown = [argv[i + 1] for i, a in enumerate(argv) if a == "--ro-bind"]
    assert str(ROOT / "minigrad") in shown and str(ROOT) not in shown   # not the solutions


# --- the report ------------------------------------------------------------------------------


def _book(students: list[str], message: str = "") -> Gradebook:
    lesson = LessonSummary("09_toy", 9, 1.0, "abc", {"9.1": {"title": "t", "points": 1}})
    notebooks = [NotebookGrade(student=s, path=f"{ROOT}/subs/{s}/09_toy.ipynb", sha256="",
                               lesson="09_toy", status="graded", score=0.0, max_score=1.0,
                               exercises=[ExerciseGrade("9.1", "=HYPERLINK(\"x\")", 0, 1,
                                                        "failed", message or "-1 is wrong",
                                                        [CheckOutcome("9.1", False, "check",
                                                                      self_reported="x")])])
                 for s in students]
    return Gradebook(lessons=[lesson], notebooks=notebooks)


def test_report_never_writes_through_a_symlink(tmp_path):
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    out = tmp_path / "report"
    out.mkdir()
    (out / "grades.csv").symlink_to(target)
    (out / "feedback").symlink_to(tmp_path)
    write_report(_book(["alice"]), out)
    assert target.read_text() == "keep me"
    assert not (out / "grades.csv").is_symlink() and not (out / "feedback").is_symlink()
    assert "alice" in (out / "grades.csv").read_text()


def test_csv_cells_are_escaped_and_carry_no_paths(tmp_path):
    write_report(_book(["@alice", "bob"], message=f"see {ROOT}/minigrad/x.py"), tmp_path)
    text = (tmp_path / "exercises.csv").read_text() + (tmp_path / "grades.csv").read_text()
    rows = list(csv.reader((tmp_path / "exercises.csv").open()))
    assert rows[1][0] == "'@alice" and rows[1][3].startswith("'=")
    assert str(ROOT) not in text
    assert all(str(ROOT) not in p.read_text() for p in (tmp_path / "feedback").glob("*.md"))
    assert csv_cell("+1") == "'+1" and csv_cell("-x") == "'-x" and csv_cell("ok") == "ok"


def test_distinct_students_never_share_a_feedback_file():
    names = feedback_names(["a b", "a_b", "a/b", "Bob", "bob", "alice"])
    assert len(set(names.values())) == 6 and len({n.lower() for n in names.values()}) == 6
    assert names["alice"] == "alice.md"


def test_lms_export_names_map_to_one_student(tmp_path):
    for name in ("smithjohn_12345_67890_01_from_scalars_to_tensors.ipynb",
                 "smithjohn_LATE_12345_67999_02_matmul_reductions_broadcasting.ipynb",
                 "doejane_23456_67891_01_from_scalars_to_tensors.ipynb"):
        (tmp_path / name).write_text("{}")
    found = find_submissions([tmp_path])
    assert sorted({s.student for s in found}) == ["doejane_23456", "smithjohn_12345"]


# --- preflight -------------------------------------------------------------------------------


@pytest.mark.slow
def test_preflight_passes_fails_and_skips(tmp_path, monkeypatch):
    from minigrad.course.grading.lessons import load_lessons
    from minigrad.course.grading.preflight import preflight

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    lessons = load_lessons(toy.released_dir(tmp_path / "released"), toy.CHECKS_PACKAGE)
    options = runner.GradingOptions(python_path=[FIXTURES], sandbox=sandbox.available() is None,
                                    cell_timeout=30)
    good, bad = tmp_path / "good", tmp_path / "bad"
    toy.write(toy.solution(), good / "09_toy.ipynb")
    broken = toy.with_exercise(toy.solution(), "9.1", old="return 2 * x", new="return 3 * x")
    toy.write(broken, bad / "09_toy.ipynb")
    assert preflight(lessons, good, options).status == "passed"
    assert preflight(lessons, good, options).status == "cached"
    failed = preflight(lessons, bad, options, use_cache=False)
    assert failed.status == "failed" and not failed.ok
    assert "09_toy: 3/4" in failed.message and "9.1" in failed.message
    released_only = preflight(lessons, tmp_path / "none", options)   # no solutions at hand
    assert released_only.status == "passed" and "released cells" in released_only.message


def test_a_checkout_under_tmp_stays_visible_in_the_sandbox(tmp_path):
    """The private folder becomes /tmp before the read-only folders are mounted, so a checkout
    or virtual environment under /tmp (a CI clone) is mounted on top of it, not hidden by it."""
    from minigrad.course.grading import sandbox

    extra = tmp_path / "checkout" / "pkg"   # pytest's tmp_path lives under /tmp here
    extra.mkdir(parents=True)
    argv, _ = sandbox.command(sandbox.SandboxSpec(workdir=tmp_path / "job",
                                                  python_path=[str(extra)]))
    tmp_bind = next(i for i in range(len(argv) - 2)
                    if argv[i] == "--bind" and argv[i + 2] == "/tmp")
    ro = next(i for i in range(len(argv) - 2)
              if argv[i] == "--ro-bind" and argv[i + 1] == os.path.realpath(extra))
    assert tmp_bind < ro, "the job's /tmp would hide a read-only folder under /tmp"


def test_the_command_line_does_without_rfc3987_syntax():
    """jsonschema (under nbformat) imports rfc3987_syntax when installed, which builds some
    forty grammars on import (3 s of CPU): the grader's command line does without it."""
    code = ("import sys\nfrom minigrad.course.grading.cli import main\n"
            "assert main(['--list-lessons']) == 0\n"
            "assert 'nbformat' in sys.modules and sys.modules['rfc3987_syntax'] is None\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]

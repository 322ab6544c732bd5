"""Grading a real class (issue 24): who handed what in, a report that never loses a row, a
preflight that protects, release ids, shards, and a retry of a notebook whose kernel died.

Most tests need no kernel: a notebook still as released is "not run", so a class of them
exercises finding, naming, the journal and the report in milliseconds. One module-scoped run
grades an LMS-named class with a roster through the command line (five notebooks run); the
shard test grades it again as four separate processes and compares their merge with it.
"""
from __future__ import annotations

import csv
import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell

FIXTURES = Path(__file__).resolve().parent / "grading_fixtures"
if str(FIXTURES) not in sys.path:
    sys.path.insert(0, str(FIXTURES))

import toy  # noqa: E402  (tests/course/grading/grading_fixtures/toy.py)

from minigrad.course.grading import runner, sandbox  # noqa: E402
from minigrad.course.grading.batch import (Journal, grade_class, merge_reports,  # noqa: E402
                                           parse_shard)
from minigrad.course.grading.cli import main, parse_due  # noqa: E402
from minigrad.course.grading.lessons import load_lessons, release_changes  # noqa: E402
from minigrad.course.grading.preflight import _fingerprint, preflight  # noqa: E402
from minigrad.course.grading.report import read_gradebook  # noqa: E402
from minigrad.course.grading.results import Issue  # noqa: E402
from minigrad.course.grading.roster import Roster, read_roster  # noqa: E402
from minigrad.course.grading.runner import GraderError, GradingOptions, Interrupted  # noqa: E402
from minigrad.course.grading.secret import fingerprint, load_secret, seed_for  # noqa: E402
from minigrad.course.grading.submissions import (Submission, identify, parse_name,  # noqa: E402
                                                 scan, shard_of)
from minigrad.course.notebooks import release_info  # noqa: E402

SANDBOX = sandbox.available() is None
NO_SANDBOX = [] if SANDBOX else ["--no-sandbox"]
OPTIONS = GradingOptions(cell_timeout=10, interrupt_grace=2, notebook_timeout=60,
                         python_path=[FIXTURES], sandbox=SANDBOX)
slow = pytest.mark.slow


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> Path:
    return toy.released_dir(tmp_path_factory.mktemp("released"))


def _csv(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


# ---------------------------------------------------------------------------------------------
# Identity: LMS names, folders, unattributed files, the roster (no kernels)

NAMES = [
    # file name, student, format, late, lesson number in the name
    ("doejane_12345_67890_lesson1.ipynb", "doejane_12345", "canvas", False, None),
    ("doejane_LATE_12345_67999_02_y-1.ipynb", "doejane_12345", "canvas", True, 2),
    ("smithjohn_late_12345_67890_01_x.ipynb", "smithjohn_12345", "canvas", True, 1),
    ("Lesson 1_jdoe_attempt_2026-09-01-12-30-00_01_x.ipynb", "jdoe", "blackboard", False, 1),
    ("Lesson_1_jdoe_attempt_2026-09-01-12-30-00_hw.ipynb", "jdoe", "blackboard", False, None),
    ("Jane Doe_4242_assignsubmission_file_01_x.ipynb", "Jane Doe", "moodle", False, 1),
    ("Jane  Doe_77_assignsubmission_file_homework.ipynb", "Jane Doe", "moodle", False, None),
    ("carol_smith_09_toy.ipynb", "carol_smith", "name", False, 9),
    ("09_toy.ipynb", None, "", False, 9),
    ("homework.ipynb", None, "", False, None),
]


@pytest.mark.parametrize("name, student, source, late, number", NAMES)
def test_lms_file_names_give_the_student_whatever_follows(name, student, source, late, number):
    parts = parse_name(name)
    assert (parts.student, parts.source, parts.late) == (student, source, late)
    submission = Submission(Path(name), student or "", rest=parts.rest)
    assert submission.number_in_name == number


def _class_folder(root: Path) -> Path:
    """A flat LMS export mixed with student folders, and files that name nobody."""
    sol, released = toy.solution(), toy.release(toy.solution())
    for name in ["doejane_12345_67890_lesson1.ipynb", "roesmith_LATE_23456_78901_09_toy.ipynb",
                 "Lesson 9_bjones_attempt_2026-09-01-12-30-00_09_toy.ipynb",
                 "Ann Lee_4242_assignsubmission_file_09_toy.ipynb",
                 "carl/09_toy.ipynb", "Dee Park_5151_assignsubmission_file_/09_toy.ipynb",
                 "09_toy.ipynb", "homework (1).ipynb"]:
        toy.write(released if "carl" in name else sol, root / name)
    return root


def test_a_mixed_export_names_every_student_and_lists_the_rest(tmp_path):
    found = scan([_class_folder(tmp_path / "subs")])
    assert [(s.student, s.source, s.late) for s in found.submissions] == [
        ("Ann Lee", "moodle", False), ("Dee Park", "folder", False), ("bjones", "blackboard", False),
        ("carl", "folder", False), ("doejane_12345", "canvas", False),
        ("roesmith_23456", "canvas", True)]
    assert sorted(u.path.name for u in found.unattributed) == ["09_toy.ipynb", "homework (1).ipynb"]
    assert all("no student part" in u.why for u in found.unattributed)
    # nobody is named after the folder the export sits in
    assert "subs" not in {s.student for s in found.submissions}
    # an LMS export kept in a folder per lesson: the names still tell the students apart
    for name in ["doejane_12345_67891_x.ipynb", "roesmith_23456_78902_x.ipynb"]:
        toy.write(toy.solution(), tmp_path / "by_lesson" / "lesson9" / name)
    assert [s.student for s in scan([tmp_path / "by_lesson"]).submissions] == [
        "doejane_12345", "roesmith_23456"]
    # a folder whose notebooks all lack a student part is that student's
    toy.write(toy.solution(), tmp_path / "alice" / "09_toy.ipynb")
    assert [s.student for s in scan([tmp_path / "alice"]).submissions] == ["alice"]


ROSTER = """login,name,SIS ID,section,ID
jdoe,"Doe, Jane",S001,A,12345
rsmith,Rose Smith,S002,A,23456
bjones,Bo Jones,S003,B,
alee,Ann Lee,S004,B,
carl,Carl Diaz,S005,A,
mia,Mia Wong,S006,B,
"""
CANVAS_GRADEBOOK = """Student,ID,SIS User ID,SIS Login ID,Section,Lesson 9 (123)
    Points Possible,,,,,4
"Doe, Jane",12345,S001,jdoe,A,
"Smith, Rose",23456,S002,rsmith,A,
"Student, Test",99999,,,A,
"Jones, Bo",34567,S003,bjones,B,
"""


@pytest.mark.parametrize("text", [ROSTER, CANVAS_GRADEBOOK], ids=["csv", "canvas-gradebook"])
def test_a_roster_names_students_by_id_login_or_name(tmp_path, text):
    path = tmp_path / "roster.csv"
    path.write_text(text)
    roster = read_roster(path)
    assert "Student, Test" not in {s.name for s in roster.students}
    assert not any("Points" in s.name for s in roster.students)
    cases = [  # identity (student, user id, login) -> the roster's student
        (("doejane_12345", "12345", "doejane"), "jdoe"),       # Canvas: the user id
        (("smithrose_23456", "23456", "smithrose"), "rsmith"),
        (("bjones", "", "bjones"), "bjones"),                   # Blackboard: the login
        (("zed_55555", "55555", "zed"), None),                 # not on the roster
    ]
    if text is ROSTER:
        cases += [(("Ann Lee", "", ""), "alee"), (("Lee  Ann", "", ""), "alee"),   # Moodle
                  (("doejane_1", "1", "doejane"), "jdoe"),       # Canvas lastfirst, no id
                  (("carl", "", ""), "carl")]                    # a folder per student
    for (student, user_id, login), expected in cases:
        match = roster.match(student, user_id=user_id, login=login)
        assert (match.key if match else None) == expected, student
    twins = Roster([*roster.students, type(roster.students[0])(login="jd2", name="Jane Doe")])
    assert twins.match("Jane Doe") is None                      # two Jane Does: neither


@pytest.mark.parametrize("text, words", [
    ("", "the file is empty"), ("colour,size\nred,3\n", "expected a column login"),
])
def test_a_roster_that_cannot_be_read_says_why(tmp_path, text, words):
    path = tmp_path / "roster.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=words):
        read_roster(path)


def test_the_lesson_comes_from_the_cells_when_the_name_lacks_it(released):
    lessons = load_lessons(released, toy.CHECKS_PACKAGE)
    sol = toy.solution()
    for name, kinds in [("doejane_12345_67890_lesson1.ipynb", []),
                        ("doejane_12345_67890_08_x.ipynb", ["wrong lesson"]),  # 08: not released
                        ("doejane_12345_67890_09_x.ipynb", [])]:
        parts = parse_name(name)
        lesson, issues = identify(sol, Submission(Path(name), parts.student, rest=parts.rest),
                                  lessons)
        assert lesson.key == toy.KEY and [i.kind for i in issues] == kinds, name


# ---------------------------------------------------------------------------------------------
# Release ids (no kernels)


def _stamped(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    notebook.metadata["minigrad"] = {"lesson": 9, **release_info(notebook)}
    return notebook


def test_an_old_release_is_named_by_what_changed(released):
    lesson = load_lessons(released, toy.CHECKS_PACKAGE)[9]
    current = _stamped(toy.release(toy.solution()))
    assert current.metadata["minigrad"]["release"] == lesson.release
    assert release_changes(current, lesson) == []
    assert release_changes(toy.release(toy.solution()), lesson) == []   # no stamp: no claim

    def old(change) -> nbformat.NotebookNode:
        notebook = toy.release(toy.solution())
        change(notebook)
        return _stamped(notebook)

    def drop(notebook, tag):
        notebook.cells = [c for c in notebook.cells if tag not in c.metadata.get("tags", [])]

    def edit(notebook, tag):
        next(c for c in notebook.cells if tag in c.metadata.get("tags", [])).source += "\n# v1"

    def add(notebook):
        cell = new_code_cell("def halve(x):\n    raise NotImplementedError")
        cell.metadata["tags"] = ["exercise:9.4"]
        notebook.cells.append(cell)

    for change, words in [
        (lambda nb: (drop(nb, "exercise:9.3"), drop(nb, "check:9.3")),
         "exercise 9.3 was added after your copy was handed out"),
        (lambda nb: edit(nb, "check:9.2"), "exercise 9.2's check changed"),
        (lambda nb: edit(nb, "exercise:9.1"), "exercise 9.1's starting cell changed"),
        (add, "exercise 9.4 was removed after your copy was handed out"),
    ]:
        assert release_changes(old(change), lesson) == [words]


# ---------------------------------------------------------------------------------------------
# The report never loses a row (no kernels: notebooks as released are not run)


def _unattempted_class(folder: Path, students: list[str]) -> Path:
    for student in students:
        toy.write(toy.release(toy.solution()), folder / student / f"{toy.KEY}.ipynb")
    return folder


def _run(folder, out, released, **kwargs):
    return grade_class([folder], out, released=released, checks_package=toy.CHECKS_PACKAGE,
                       options=OPTIONS, **kwargs)


def _snapshot(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file()}


def test_a_subset_run_merges_or_refuses_never_replaces(tmp_path, released):
    out = tmp_path / "report"
    everyone = _unattempted_class(tmp_path / "all", ["ann", "bob", "cy"])
    book = _run(everyone, out, released)
    assert book.students() == ["ann", "bob", "cy"]
    before = _snapshot(out)
    some = _unattempted_class(tmp_path / "some", ["bob"])
    with pytest.raises(GraderError, match=r"has 2 student\(s\) that this run does not grade "
                                          r"\(ann, cy\).*--merge"):
        _run(some, out, released)
    assert _snapshot(out) == before                         # nothing touched
    merged = _run(some, out, released, merge=True)
    assert merged.students() == ["ann", "bob", "cy"]
    assert {n.student: n.path for n in merged.notebooks}["bob"].startswith(str(some))
    assert _run(some, out, released, students=["bob"]).students() == ["ann", "bob", "cy"]
    again = _run(everyone, out, released)                   # the whole class: replaces, fine
    assert again.students() == ["ann", "bob", "cy"]


def test_an_interrupted_run_is_resumed_without_grading_again(tmp_path, released, monkeypatch):
    folder = _unattempted_class(tmp_path / "subs", ["ann", "bob", "cy", "dee"])
    out = tmp_path / "report"
    real = runner.grade_submission
    calls: list[str] = []

    def crashing(submission, lessons, options=None):
        calls.append(submission.student)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(submission, lessons, options)

    monkeypatch.setattr(runner, "grade_submission", crashing)
    with pytest.raises(Interrupted):
        _run(folder, out, released)
    state, _, done = Journal(out).read()
    assert state == "interrupted" and [n.student for n in done] == ["ann", "bob"]
    assert Journal(out).state()[::2] == ("interrupted", 2)    # (without reading the grades)
    assert read_gradebook(out).students() == ["ann", "bob"]   # what finished is in the report
    with pytest.raises(GraderError, match="interrupted run .*--resume"):
        _run(folder, out, released)
    calls.clear()
    book = _run(folder, out, released, resume=True)
    assert calls == ["cy", "dee"]                            # the first two were not regraded
    assert book.students() == ["ann", "bob", "cy", "dee"]
    assert [n.graded_at for n in book.notebooks[:2]] == [n.graded_at for n in done]
    assert Journal(out).read()[0] == "complete"
    # a cut-off last line (a crash mid-write) costs that notebook only
    journal = Journal(out).path
    lines = journal.read_text().splitlines()
    journal.write_text("\n".join(lines[:3]) + "\n" + lines[3][:40])
    assert [n.student for n in Journal(out).read()[2]] == ["ann", "bob"]
    with pytest.raises(GraderError, match="no journal"):
        _run(folder, tmp_path / "elsewhere", released, resume=True)


def test_shards_split_the_class_by_student_and_merge_back(tmp_path, released):
    students = [f"s{i:02d}" for i in range(12)]
    folder = _unattempted_class(tmp_path / "subs", students)
    key = tmp_path / "course.key"
    parts = [_run(folder, tmp_path / f"part{i}", released, shard=(i, 4), secret=key)
             for i in range(4)]
    assert sorted(s for p in parts for s in p.students()) == students
    assert all(shard_of(s, 4) == i for i, p in enumerate(parts) for s in p.students())
    merged = merge_reports([tmp_path / f"part{i}" for i in range(4)], tmp_path / "merged")
    assert merged.students() == students
    with pytest.raises(GraderError, match=r"shard\(s\) 3/4 missing"):
        merge_reports([tmp_path / f"part{i}" for i in range(3)], tmp_path / "m2")
    _run(folder, tmp_path / "other", released, shard=(3, 4))    # its own secret
    with pytest.raises(GraderError, match="different probe secrets"):
        merge_reports([*(tmp_path / f"part{i}" for i in range(3)), tmp_path / "other"],
                      tmp_path / "m3")
    for text in ["4/4", "1", "a/b", "-1/2"]:
        with pytest.raises(ValueError, match="expected I/N"):
            parse_shard(text)


def test_probe_seeds_come_from_the_secret_and_the_pair(tmp_path):
    key = load_secret(tmp_path / "k")
    assert load_secret(tmp_path / "k") == key and (tmp_path / "k").stat().st_mode & 0o077 == 0
    assert seed_for(key, "ann", "09_toy") == seed_for(key, "ann", "09_toy")
    assert len({seed_for(key, "ann", "09_toy"), seed_for(key, "bob", "09_toy"),
                seed_for(key, "ann", "01_x"), seed_for(b"another secret!!", "ann", "09_toy")}) == 4
    assert fingerprint(key) != fingerprint(b"another secret!!") and key.hex() not in \
        fingerprint(key)
    (tmp_path / "short").write_text("abc")
    with pytest.raises(ValueError, match="at least 16 bytes"):
        load_secret(tmp_path / "short")


# ---------------------------------------------------------------------------------------------
# The preflight (cache key and a skipped preflight: no kernels)


def test_the_preflight_cache_is_keyed_by_what_can_change_the_answer(tmp_path, released,
                                                                      monkeypatch):
    from minigrad.course.grading import preflight as module
    lessons = load_lessons(released, toy.CHECKS_PACKAGE)
    solution = toy.write(toy.solution(), tmp_path / "solutions" / f"{toy.KEY}.ipynb")
    key = _fingerprint(lessons, {9: solution}, OPTIONS)
    assert key == _fingerprint(lessons, {9: solution}, OPTIONS)
    assert key != _fingerprint(lessons, {}, OPTIONS)                       # no solution
    real = module.environment()
    assert real[0].startswith("python ") and any(e.startswith("numpy==") for e in real)
    monkeypatch.setattr(module, "environment", lambda: [*real, "scikit-learn==0.0"])
    assert key != _fingerprint(lessons, {9: solution}, OPTIONS)            # a package changed
    monkeypatch.setattr(module, "environment", lambda: real)
    other = toy.write(_stamped(toy.release(toy.solution())), tmp_path / "rel" / f"{toy.KEY}.ipynb")
    assert key != _fingerprint(load_lessons(other.parent, toy.CHECKS_PACKAGE), {9: solution},
                               OPTIONS)                                    # another release


def test_a_skipped_preflight_stops_the_grader_unless_told(tmp_path, capsys):
    bare = toy.release(toy.solution())
    for cell in bare.cells:
        cell.metadata.pop("tags", None)
    toy.write(bare, tmp_path / "released" / f"{toy.KEY}.ipynb")       # no exercises to check
    toy.write(bare, tmp_path / "subs" / "ann" / f"{toy.KEY}.ipynb")
    common = [str(tmp_path / "subs"), "--released", str(tmp_path / "released"),
              "--checks-package", toy.CHECKS_PACKAGE, "--no-progress", "--quiet",
              "--out", str(tmp_path / "out"), *NO_SANDBOX]
    assert main(common) == 2
    assert "preflight skipped" in capsys.readouterr().err
    assert main([*common, "--no-preflight"]) == 0


# ---------------------------------------------------------------------------------------------
# With kernels: an LMS-named class graded through the command line, once


def _lms_class(root: Path) -> Path:
    sol = toy.solution()
    off_by_one = toy.with_exercise(sol, "9.1", "return 2 * x", "return 2 * x + 1")
    wrong_sign = toy.with_exercise(sol, "9.2", "g * y, x.shape", "-g * y, x.shape")
    old = toy.solution()           # handed out before exercise 9.3 existed
    old_release = toy.release(old)
    old_release.cells = [c for c in old_release.cells if not any(
        t.endswith(":9.3") for t in c.metadata.get("tags", []))]
    old.metadata["minigrad"] = {"lesson": 9, **release_info(old_release)}
    for name, notebook in [
        ("doejane_12345_67890_lesson1.ipynb", sol),                  # no lesson in the name
        ("roesmith_LATE_23456_78901_09_toy.ipynb", off_by_one),
        ("Lesson 9_bjones_attempt_2026-09-01-12-30-00_09_toy.ipynb", wrong_sign),
        ("Ann Lee_4242_assignsubmission_file_09_toy.ipynb", old),
        ("carl/09_toy.ipynb", toy.release(sol)),                     # not attempted: no kernel
        ("zed_34567_89012_09_toy.ipynb", sol),                       # not on the roster
        ("09_toy.ipynb", sol),                                       # nobody's
    ]:
        toy.write(notebook, root / name)
    return root


def _cli_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(FIXTURES), env.get("PYTHONPATH")]))
    return env


@pytest.fixture(scope="module")
def lms_class(tmp_path_factory, released):
    """The LMS class graded once through ``minigrad-grade`` with a roster and a secret."""
    root = tmp_path_factory.mktemp("lms")
    folder = _lms_class(root / "subs")
    (root / "roster.csv").write_text(ROSTER)
    common = ["--released", str(released), "--checks-package", toy.CHECKS_PACKAGE,
              "--roster", str(root / "roster.csv"), "--secret", str(root / "course.key"),
              "--no-preflight", "--no-progress", "--quiet", "--timeout", "10", *NO_SANDBOX]
    sys.path.insert(0, str(FIXTURES))
    assert main([str(folder), "--out", str(root / "whole"), "--jobs", "2", *common]) == 0
    return root, folder, common, read_gradebook(root / "whole")


@slow
def test_an_lms_class_is_graded_as_its_students(lms_class):
    root, _, _, book = lms_class
    rows = {r["student"]: r for r in _csv(root / "whole" / "grades.csv")}
    assert list(next(iter(rows.values()))) == ["student", "name", "section", toy.KEY, "total",
                                                "late", "issues"]
    got = {s: (r["name"], r[toy.KEY], r["late"]) for s, r in rows.items()}
    assert got == {"jdoe": ("Doe, Jane", "4", ""), "rsmith": ("Rose Smith", "3", "09"),
                   "bjones": ("Bo Jones", "2", ""), "alee": ("Ann Lee", "4", ""),
                   "carl": ("Carl Diaz", "0", ""), "zed_34567": ("", "4", ""),
                   "mia": ("Mia Wong", "", "")}
    assert rows["mia"]["issues"] == "no submission"
    assert "not on roster" in rows["zed_34567"]["issues"]
    assert "old release" in rows["alee"]["issues"]
    [old] = [i for n in book.notebooks if n.student == "alee" for i in n.issues
             if i.kind == "old release"]
    assert "exercise 9.3 was added after your copy was handed out" in old.text
    assert [u["path"].rsplit("/", 1)[1] for u in book.unattributed] == ["09_toy.ipynb"]
    assert _csv(root / "whole" / "unattributed.csv")[0]["notebook"].endswith("09_toy.ipynb")
    long = _csv(root / "whole" / "exercises.csv")
    assert {r["release"] for r in long} == {book.lessons[0].release}
    assert all(r["graded at"].endswith("+00:00") for r in long)
    assert {r["late"] for r in long if r["student"] == "rsmith"} == {"true"}
    assert "(late)" in (root / "whole" / "feedback" / "rsmith.md").read_text()


def _comparable(report: Path) -> dict:
    data = json.loads((report / "grades.json").read_text())
    for key in ("seconds", "jobs", "shard"):
        data.pop(key)
    for notebook in data["notebooks"]:
        notebook.pop("graded_at"), notebook.pop("seconds")
        for exercise in notebook["exercises"]:
            for check in exercise["checks"]:
                check.pop("seconds")
    return data


@slow
def test_four_shards_in_separate_processes_merge_into_the_whole_run(lms_class, tmp_path):
    root, folder, common, _ = lms_class
    processes = [subprocess.Popen([sys.executable, "-m", "minigrad.course.grading", str(folder),
                                   "--shard", f"{i}/4", "--out", str(tmp_path / f"part{i}"),
                                   *common], env=_cli_env(), stderr=subprocess.PIPE)
                 for i in range(4)]
    for process in processes:
        _, err = process.communicate(timeout=300)
        assert process.returncode == 0, err.decode()
    assert main(["merge", *(str(tmp_path / f"part{i}") for i in range(4)), "--out",
                 str(tmp_path / "merged"), "--quiet"]) == 0
    whole, merged = root / "whole", tmp_path / "merged"
    assert _comparable(merged) == _comparable(whole)
    assert (merged / "grades.csv").read_bytes() == (whole / "grades.csv").read_bytes()
    pages = sorted(p.name for p in (whole / "feedback").iterdir())
    assert pages == sorted(p.name for p in (merged / "feedback").iterdir())
    for page in pages:
        assert (merged / "feedback" / page).read_text() == (whole / "feedback" / page).read_text()


@slow
def test_a_notebook_whose_kernel_died_is_run_again(released, tmp_path, monkeypatch):
    lessons = load_lessons(released, toy.CHECKS_PACKAGE)
    path = toy.write(toy.solution(), tmp_path / "ann" / f"{toy.KEY}.ipynb")
    running, crashes = [], []
    real_collect, real_take = runner._collect, runner._take

    def collect(process, *args):
        running.append(process)
        return real_collect(process, *args)

    def take(record, *args):
        real_take(record, *args)
        if not crashes:          # the first run's process dies after its first step
            crashes.append(running[-1])
            runner._kill(running[-1])

    monkeypatch.setattr(runner, "_collect", collect)
    monkeypatch.setattr(runner, "_take", take)
    grade = runner.grade_submission(Submission(path, "ann"), lessons, OPTIONS)
    assert len(crashes) == 1 and len(running) == 2 and grade.score == 4, grade.issues
    assert grade.issue_kinds() == ["retried"]
    assert "process stopped while" in grade.issues[0].text


@slow
def test_the_preflight_stops_on_any_issue_and_names_a_missing_package(released, tmp_path):
    lessons = load_lessons(released, toy.CHECKS_PACKAGE)
    # full marks, but a cell raised: the preflight fails all the same
    noisy = toy.with_exercise(toy.solution(), "9.2", source=toy.MUL + "\nimport no_such_thing")
    toy.write(noisy, tmp_path / "solutions" / f"{toy.KEY}.ipynb")
    checked = preflight(lessons, tmp_path / "solutions", OPTIONS, use_cache=False)
    assert checked.status == "failed" and "4/4" in checked.message
    assert "No module named 'no_such_thing'" in checked.message
    # no solutions: the released cells run; a lesson that needs scikit-learn (minigrad.data
    # imports it lazily) fails the preflight when the install lacks it
    needs = toy.release(toy.solution())
    needs.cells.insert(2, new_code_cell("from minigrad.data import moons\nX, y = moons(8, seed=0)"))
    toy.write(needs, tmp_path / "released" / f"{toy.KEY}.ipynb")
    shadow = tmp_path / "without-sklearn" / "sklearn"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'sklearn'\", name='sklearn')\n")
    lessons = load_lessons(tmp_path / "released", toy.CHECKS_PACKAGE)
    assert preflight(lessons, tmp_path / "none", OPTIONS, use_cache=False).ok
    broken = GradingOptions(**{**OPTIONS.__dict__,
                               "python_path": [shadow.parent, *OPTIONS.python_path]})
    checked = preflight(lessons, tmp_path / "none", broken, use_cache=False)
    assert checked.status == "failed", checked.message
    assert "released cells" in checked.message and "No module named 'sklearn'" in checked.message
    assert "cell 3" in checked.message


# ---------------------------------------------------------------------------------------------
# The grade extra installs what the released lessons import


PROBE = r"""
import json, os, sys
os.environ["MINIGRAD_CHECKS_RAISE"] = "1"
os.environ["MPLBACKEND"] = "Agg"
import nbformat
from IPython.core.interactiveshell import InteractiveShell
notebooks = [nbformat.read(p, as_version=4) for p in sys.argv[2:]]
shell = InteractiveShell.instance()
before = set(sys.modules)
for notebook in notebooks:          # what the grader runs: every cell but the demos
    for cell in notebook.cells:
        if cell.cell_type == "code" and "demo" not in cell.metadata.get("tags", []):
            result = shell.run_cell(cell.source, silent=True)
            if not result.success:
                sys.exit(f"a cell failed: {cell.source[:60]!r}")
with open(sys.argv[1], "w") as f:
    json.dump(sorted({m.partition(".")[0] for m in set(sys.modules) - before}), f)
"""


def _closure(requirements: list[str], extra: str) -> set[str]:
    """The distributions ``requirements`` (with ``extra``) install, dependencies included."""
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
    seen: set[str] = set()
    todo = [(r, extra) for r in requirements]
    while todo:
        text, wanted = todo.pop()
        requirement = Requirement(text)
        if requirement.marker and not requirement.marker.evaluate({"extra": wanted}):
            continue
        name = canonicalize_name(requirement.name)
        if name in seen:
            continue
        seen.add(name)
        try:
            todo += [(r, "") for r in metadata.requires(requirement.name) or []]
        except metadata.PackageNotFoundError:
            pass
    return seen


@slow
def test_the_grade_extra_installs_everything_the_lessons_import(tmp_path):
    from importlib import metadata

    tomllib = pytest.importorskip("tomllib")   # Python 3.11+
    from packaging.utils import canonicalize_name
    repo = FIXTURES.parents[3]
    solutions = sorted((repo / "solutions").glob("[0-9][0-9]_*.ipynb"))
    if not solutions:
        pytest.skip("no solutions/ here (an installed package)")
    listing = tmp_path / "modules.json"
    subprocess.run([sys.executable, "-c", PROBE, str(listing), *map(str, solutions)],
                   cwd=repo / "solutions", check=True, capture_output=True, timeout=600)
    project = tomllib.loads((repo / "pyproject.toml").read_text())["project"]
    installed = _closure(project["dependencies"] + project["optional-dependencies"]["grade"],
                         "grade")
    owners = metadata.packages_distributions()
    imported = {canonicalize_name(d) for m in json.loads(listing.read_text())
                if m not in sys.stdlib_module_names for d in owners.get(m, [])}
    assert "scikit-learn" in imported       # minigrad.data imports it on first use
    imported.discard("minigrad-course")
    # imported only when present (numpy.f2py: try: import charset_normalizer except ImportError)
    optional = {"charset-normalizer"}
    assert imported - optional <= installed, \
        f"the grade extra lacks {sorted(imported - optional - installed)}"


def test_a_regrade_writes_what_a_whole_write_would(tmp_path):
    """The regrade path reuses the old report's rows and JSON text of everyone else: the files
    must be exactly what writing the merged gradebook afresh gives."""
    sys.path.insert(0, str(FIXTURES.parents[3]))
    from bench.grading_report import gradebook

    from minigrad.course.grading.report import write_report
    book = gradebook(12)
    write_report(book, tmp_path / "report")
    regraded = gradebook(12)
    mine = [n for n in regraded.notebooks if n.student == "student00007"]
    for notebook in mine:
        notebook.graded_at = "2026-12-02T09:00:00+00:00"
        notebook.exercises[0].status, notebook.exercises[0].points = "passed", 1.0
        notebook.score = sum(e.points for e in notebook.exercises)
    again = read_gradebook(tmp_path / "report")
    again.notebooks[0].issues.append(Issue("duplicate", "changed after it was read"))
    merged = again.merged(type(book)(lessons=book.lessons, notebooks=mine), ["student00007"])
    write_report(merged, tmp_path / "report", changed=["student00007", merged.notebooks[0].student])
    write_report(merged, tmp_path / "fresh")
    assert _snapshot(tmp_path / "report") == _snapshot(tmp_path / "fresh")
    assert "2026-12-02T09:00:00" in (tmp_path / "report" / "exercises.csv").read_text()


# ---------------------------------------------------------------------------------------------
# The report read back and written again (no kernels; cheap: well under a second each)


def test_a_blackboard_attempt_after_the_due_date_is_late(tmp_path, released):
    """Blackboard names a download ``Assignment_user_attempt_YYYY-MM-DD-HH-MM-SS_file`` (the
    attempt's date; no late mark of its own): with ``due``, a later attempt is marked late."""
    parts = parse_name("Lesson 9_jdoe_attempt_2026-09-02-08-15-00_09_toy.ipynb")
    assert (parts.student, parts.submitted) == ("jdoe", "2026-09-02-08-15-00")
    folder = tmp_path / "subs"
    for name in ["Lesson 9_jdoe_attempt_2026-09-02-08-15-00_09_toy.ipynb",
                 "Lesson 9_asmith_attempt_2026-09-01-23-59-00_09_toy.ipynb"]:
        toy.write(toy.release(toy.solution()), folder / name)
    options = dataclasses.replace(OPTIONS, due={9: "2026-09-01T23:59:30"})
    book = grade_class([folder], tmp_path / "out", released=released,
                       checks_package=toy.CHECKS_PACKAGE, options=options)
    assert {n.student: n.late for n in book.notebooks} == {"asmith": False, "jdoe": True}
    rows = {r["student"]: r for r in _csv(tmp_path / "out" / "grades.csv")}
    assert (rows["jdoe"]["late"], rows["asmith"]["late"]) == ("09", "")
    assert {r["student"]: r["late"] for r in _csv(tmp_path / "out" / "exercises.csv")} == {
        "asmith": "false", "jdoe": "true"}
    assert parse_due(["2026-10-01T09:30", "9=2026-09-01T23:59"]) == {
        None: "2026-10-01T09:30", 9: "2026-09-01T23:59"}
    with pytest.raises(ValueError, match=r"--due expects .*got 'x=tomorrow'"):
        parse_due(["x=tomorrow"])


def test_a_run_with_fewer_lessons_refuses_before_grading(tmp_path, released, monkeypatch):
    """A report with rows of a lesson this run has no notebook of: refused before anything is
    graded (the lesson told from the file names, else the cells), or merged with --merge."""
    from minigrad.course.grading.report import write_report
    from minigrad.course.grading.results import LessonSummary, NotebookGrade
    out = tmp_path / "report"
    folder = _unattempted_class(tmp_path / "subs", ["ann", "bob"])
    book = _run(folder, out, released)
    extra = LessonSummary(key="08_extra", number=8, max_points=1.0, digest="", exercises={})
    book.lessons.append(extra)
    book.notebooks += [NotebookGrade(student=s, path=f"/old/{s}/08_extra.ipynb", sha256="0",
                                     lesson="08_extra", status="graded", score=1.0,
                                     max_score=1.0) for s in ("ann", "bob")]
    book.notebooks.sort(key=lambda n: (n.student, n.lesson or "~", n.path))
    write_report(book, out)
    before = _snapshot(out)
    graded: list[str] = []
    real = runner.grade_submission
    monkeypatch.setattr(runner, "grade_submission",
                        lambda s, lessons, options=None: graded.append(s.student)
                        or real(s, lessons, options))
    with pytest.raises(GraderError, match=r"has 2 row\(s\) that this run does not grade "
                                          r"\(ann 08_extra, bob 08_extra\).*--merge.*nothing "
                                          r"was graded"):
        _run(folder, out, released)
    assert graded == [] and _snapshot(out) == before
    # a notebook without the lesson in its name is told by its cells, before grading too
    (folder / "bob" / f"{toy.KEY}.ipynb").rename(folder / "bob" / "homework.ipynb")
    with pytest.raises(GraderError, match=r"has 2 row\(s\)"):
        _run(folder, out, released)
    assert graded == []
    merged = _run(folder, out, released, merge=True)
    assert sorted(n.key for n in merged.notebooks) == [
        ("ann", "08_extra"), ("ann", toy.KEY), ("bob", "08_extra"), ("bob", toy.KEY)]
    assert graded == ["ann", "bob"]


def test_merge_writes_the_gradebook_files_and_pages_a_run_would(tmp_path, released, capsys):
    folder = _unattempted_class(tmp_path / "subs", ["ann", "bob", "cy", "dee"])
    key = tmp_path / "course.key"
    parts = [str(tmp_path / f"part{i}") for i in range(2)]
    for i, part in enumerate(parts):
        _run(folder, part, released, shard=(i, 2), secret=key)
    out = tmp_path / "merged"
    assert main(["merge", *parts, "--out", str(out), "--format", "nbgrader",
                 "--feedback", "score", "--quiet"]) == 0
    rows = _csv(out / "nbgrader.csv")
    assert [(r["assignment"], r["student_id"]) for r in rows] == [
        (toy.KEY, s) for s in ["ann", "bob", "cy", "dee"]]
    pages = sorted((out / "feedback").glob("*.md"))
    assert [p.name for p in pages] == ["ann.md", "bob.md", "cy.md", "dee.md"]
    assert all(p.read_text().startswith("# Scores for ") for p in pages)
    assert json.loads((out / "grades.json").read_text().split("\n")[0].split(
        ', "notebooks": [')[0] + "}")["feedback"] == "score"
    with pytest.raises(SystemExit) as exit_:
        main(["merge", *parts, "--out", str(tmp_path / "m2"), "--format", "canvas"])
    assert exit_.value.code == 2 and "--format canvas needs --roster" in capsys.readouterr().err
    assert not (tmp_path / "m2").exists()      # refused before anything was written


def test_rows_are_read_lazily_and_written_back_byte_for_byte(tmp_path):
    """Each notebook's line of grades.json is read without its exercises (parsed when used),
    and written back as the same line; exercises.csv rows of students not regraded are
    copied as text, even with messages that hold line breaks, quotes and lines that look like
    another student's row."""
    sys.path.insert(0, str(FIXTURES.parents[3]))
    from bench.grading_report import gradebook

    from minigrad.course.grading.report import write_report
    book = gradebook(4)
    tricky = 'line one\nstudent00002,01_from_scalars_to_tensors,1.1,"forged",1\n"quoted", end'
    for n in book.notebooks:
        n.exercises[1].message = tricky
    write_report(book, tmp_path / "report")
    again = read_gradebook(tmp_path / "report")
    assert all("exercises" not in vars(n) for n in again.notebooks)       # not parsed yet
    assert again.notebooks[5].exercises[1].message == tricky              # parsed when used
    assert again.to_dict() == book.to_dict()
    mine = [n for n in gradebook(4).notebooks if n.student == "student00001"]
    for n in mine:
        n.graded_at = "2026-12-02T09:00:00+00:00"
    merged = again.merged(type(book)(lessons=book.lessons, notebooks=mine), ["student00001"])
    before = (tmp_path / "report" / "grades.json").read_text().split("\n")
    write_report(merged, tmp_path / "report", changed=["student00001"])
    write_report(merged, tmp_path / "fresh")
    assert _snapshot(tmp_path / "report") == _snapshot(tmp_path / "fresh")
    after = (tmp_path / "report" / "grades.json").read_text().split("\n")
    changed = [i for i, (a, b) in enumerate(zip(before, after)) if a != b]
    assert len(before) == len(after) and all(
        '"student": "student00001"' in after[i] for i in changed[1:]), changed  # [0]: the head
    # a report of the layout before (exercises amid the fields) is read whole, as it was
    path = tmp_path / "fresh" / "grades.json"
    lines = path.read_text().split("\n")
    for i in range(1, len(lines) - 2):
        data = json.loads(lines[i].strip().removesuffix(","))
        moved = {**{k: data[k] for k in list(data)[:7]}, "exercises": data.pop("exercises"),
                 **data}
        lines[i] = "  " + json.dumps(moved, ensure_ascii=False) + ("," if i < len(lines) - 3
                                                                    else "")
    path.write_text("\n".join(lines))
    assert read_gradebook(tmp_path / "fresh").to_dict() == merged.to_dict()
    state, _, count = Journal(tmp_path / "report").state()
    assert (state, count) == ("none", 0)


def test_pages_follow_the_runs_feedback_level(tmp_path, released):
    """Pages are written once, at the run's --feedback level; a regrade at another level
    rebuilds every page, not only the regraded student's."""
    folder = _unattempted_class(tmp_path / "subs", ["ann", "bob"])
    out = tmp_path / "report"
    _run(folder, out, released, feedback="score")
    pages = {p.name: p.read_text() for p in (out / "feedback").glob("*.md")}
    assert sorted(pages) == ["ann.md", "bob.md"]
    assert all(text.startswith("# Scores for ") for text in pages.values())
    _run(folder, out, released, students=["ann"], feedback="score")
    assert (out / "feedback" / "bob.md").read_text() == pages["bob.md"]
    _run(folder, out, released, students=["ann"], feedback="full")
    assert all(p.read_text().startswith("# Feedback for ") for p in (out / "feedback").glob("*.md"))
    with pytest.raises(GraderError, match="feedback must be one of full, cases, score"):
        _run(folder, out, released, feedback="none")

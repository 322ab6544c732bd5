"""``minigrad-grade --format canvas|moodle`` (issue 28): the files each system imports.

The layouts are written out here as the systems document them:

* Canvas, "How do I import grades in the Gradebook?": the CSV of *Grades > Export*, whose
  first columns are ``Student, ID, SIS User ID, SIS Login ID, Section``, then one column per
  assignment headed ``Name (assignment id)``; the export's second row is ``Points Possible``.
  Canvas matches students by ID (or SIS ids) and assignments by the id in parentheses; a
  column that is not an assignment of the course becomes a new one.
* Moodle, "Offline grading worksheet" (assignfeedback_offline): *Download grading worksheet*
  gives ``Identifier, Full name, Email address, Status, Grade, Maximum Grade, Grade can be
  changed, Last modified (submission), Online text, Last modified (grade), Feedback comments``;
  *Upload grading worksheet* reads ``Identifier`` (``Participant N``), ``Grade``, ``Last
  modified (grade)`` and the feedback columns by their headers.
  Checked against Canvas's own importer (instructure/canvas-lms, app/models/
  gradebook_importer.rb, GradebookImporter): the header must start ``Student``, ``ID``, then
  ``SIS User ID``, ``SIS Login ID`` with ``Section`` the last student column; a row whose first
  cell matches ``/Points Possible/`` gives the points; the student is matched by the second
  column (ID), then the SIS ids, then the name; a blank cell over an existing grade counts as
  a change. Column list also in OSU's "Import a CSV file into Carmen grades"
  (teaching.resources.osu.edu) and nemogb's "Detailed Canvas Export Info"
  (nemogb-dev.github.io), which show the ``Quiz 1 (87568490)`` headings.
* Moodle's importer (moodle/moodle, mod/assign/feedback/offline/importgradeslib.php,
  ``init()``) refuses a worksheet unless it finds ``Identifier``, ``Grade`` and ``Last modified
  (grade)``; ``next()`` strips the ``Participant `` prefix off the identifier; feedback
  columns are found by the plugin's name (``Feedback comments``). Its headers are the site
  language's strings (lang/en: ``Last modified (grade)``), so a worksheet of another language
  is refused here with the missing names.
* nbgrader, ``nbgrader export`` (its CsvExportPlugin): ``assignment, duedate, timestamp,
  student_id, last_name, first_name, email, raw_score, late_submission_penalty, score,
  max_score``, one row per assignment and student.
"""
from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest

from minigrad.course.grading.cli import main
from minigrad.course.grading.formats import (FormatError, canvas_rows, moodle_rows,
                                             nbgrader_rows, write_formats)
from minigrad.course.grading.results import ExerciseGrade, Gradebook, LessonSummary, NotebookGrade

FIXTURES = Path(__file__).resolve().parent / "grading_fixtures"
if str(FIXTURES) not in sys.path:
    sys.path.insert(0, str(FIXTURES))
import toy  # noqa: E402

CANVAS_STUDENT_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
MOODLE_HEADER = ["Identifier", "Full name", "Email address", "Status", "Grade", "Maximum Grade",
                 "Grade can be changed", "Last modified (submission)", "Online text",
                 "Last modified (grade)", "Feedback comments"]
CANVAS_EXPORT = [
    CANVAS_STUDENT_COLUMNS + ["Lesson 1 (1234)", "Lesson 2: tensors (1240)", "Quiz 3 (1300)",
                              "Current Score", "Final Score"],
    ["    Points Possible", "", "", "", "", "10", "12", "5", "(read only)", "(read only)"],
    ["Doe, Jane", "101", "S0001", "jdoe", "Section A", "", "", "4", "", ""],
    ["Roe, Rick", "102", "S0002", "rroe", "Section B", "3", "", "", "", ""],
    ["Student, Test", "999", "", "", "Section A", "", "", "", "", ""],
]
DIV_MESSAGE = ("div, case 'a / b':\n  expected: [-0.5]\n  got:      [0.5]\n"
               "  usual cause: d(a/b)/db = -a/b**2, so b gets -g * a.data / b.data**2")


def _lesson(number: int, points: list[float]) -> LessonSummary:
    return LessonSummary(key=f"{number:02d}_lesson", number=number, max_points=sum(points),
                         digest="", exercises={f"{number}.{i + 1}": {"points": p, "title": "t"}
                                               for i, p in enumerate(points)})


def _notebook(student: str, lesson: LessonSummary, scores: list[float], path: str = "",
              message: str = DIV_MESSAGE) -> NotebookGrade:
    exercises = [ExerciseGrade(exercise=e, title=info["title"], points=s,
                               max_points=info["points"],
                               status="passed" if s == info["points"] else "failed",
                               message="" if s == info["points"] else message)
                 for (e, info), s in zip(lesson.exercises.items(), scores)]
    return NotebookGrade(student=student, path=path or f"/subs/{student}/{lesson.key}.ipynb",
                         sha256="", lesson=lesson.key, status="graded", score=sum(scores),
                         max_score=lesson.max_points, exercises=exercises)


L1, L2 = _lesson(1, [4, 6]), _lesson(2, [12])


def _write(path: Path, rows: list[list[str]]) -> Path:
    with open(path, "w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows(rows)
    return path


def _read(path: Path) -> list[list[str]]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.reader(f))


def test_canvas_import_has_canvas_columns_and_a_points_row(tmp_path):
    book = Gradebook(lessons=[L1, L2], notebooks=[
        _notebook("jdoe", L1, [4, 6]), _notebook("jdoe", L2, [5]), _notebook("rroe", L1, [4, 0])])
    rows = canvas_rows(book, _write(tmp_path / "export.csv", CANVAS_EXPORT))
    assert rows[0] == CANVAS_STUDENT_COLUMNS + ["Lesson 1 (1234)", "Lesson 2: tensors (1240)"]
    assert rows[1] == ["Points Possible", "", "", "", "", "10", "12"]
    assert rows[2:] == [["Doe, Jane", "101", "S0001", "jdoe", "Section A", "10", "5"],
                        ["Roe, Rick", "102", "S0002", "rroe", "Section B", "4", ""]]
    # given ids win over the export's names; a lesson's id not among its columns still imports
    rows = canvas_rows(book, tmp_path / "export.csv", {1: "1300", 2: "5555"})
    assert rows[0][5:] == ["Quiz 3 (1300)", "Lesson 2 (5555)"]
    assert rows[2][5:] == ["10", "5"] and rows[3][5:] == ["4", ""]


def test_canvas_keeps_the_exports_grade_where_nothing_was_handed_in(tmp_path):
    """Canvas's importer (GradebookImporter) takes a blank cell over an existing grade as a
    change, so a lesson a student handed nothing in for keeps the export's cell."""
    export = [row[:] for row in CANVAS_EXPORT]
    export[3][6] = "7"                       # Rick has 7 in Lesson 2 already
    book = Gradebook(lessons=[L1, L2], notebooks=[
        _notebook("jdoe", L1, [4, 6]), _notebook("jdoe", L2, [5]), _notebook("rroe", L1, [4, 0])])
    rows = canvas_rows(book, _write(tmp_path / "export.csv", export))
    assert rows[3] == ["Roe, Rick", "102", "S0002", "rroe", "Section B", "4", "7"]


CANVAS_ERRORS = [  # (the export's header, ids given, the error)
    (["Name", "Login"], {}, r"needs --roster to be Canvas's gradebook export .* lacks the "
                            r"column\(s\) \['Student', 'ID'\]"),
    (CANVAS_STUDENT_COLUMNS + ["Quiz 3 (1300)"], {},
     r"lesson 1 \(01_lesson\) needs one assignment column .* found none; give it as "
     r"--canvas-assignment 1=ASSIGNMENT_ID"),
    (CANVAS_STUDENT_COLUMNS + ["1a (11)", "1b (12)"], {},
     r"lesson 1 .* found 1a \(11\), 1b \(12\)"),
]


@pytest.mark.parametrize("header,ids,error", CANVAS_ERRORS)
def test_canvas_refuses_what_it_cannot_match(tmp_path, header, ids, error):
    book = Gradebook(lessons=[L1], notebooks=[_notebook("jdoe", L1, [4, 6])])
    export = _write(tmp_path / "export.csv", [header, ["Doe, Jane", "101"] + [""] * 3])
    with pytest.raises(FormatError, match=error):
        canvas_rows(book, export, ids)


def test_moodle_worksheet_is_filled_in_and_the_rest_left_as_downloaded(tmp_path):
    sheet = [MOODLE_HEADER,
             ["Participant 4242", "Jane Doe", "jane@example.org", "Submitted for grading", "",
              "10.00", "Yes", "Monday, 1 September 2026, 10:00 AM", "", "-", ""],
             ["Participant 4243", "Rick Roe", "rick@example.org", "Submitted for grading", "",
              "10.00", "Yes", "Monday, 1 September 2026, 11:00 AM", "", "-", ""],
             ["Participant 4250", "Ann Other", "ann@example.org", "No submission", "",
              "10.00", "Yes", "-", "", "-", ""]]
    worksheet = _write(tmp_path / "worksheet.csv", sheet)
    book = Gradebook(lessons=[L1, L2], notebooks=[
        _notebook("Jane Doe", L1, [4, 0], path="/subs/Jane Doe_4242_assignsubmission_file_/01.ipynb"),
        _notebook("Jane Doe", L2, [12], path="/subs2/Jane Doe_77_assignsubmission_file_02.ipynb"),
        _notebook("Rick Roe", L1, [4, 6], path="/subs/rick/01_lesson.ipynb")])   # by name
    filled = moodle_rows(book, worksheet, lesson=1, policy="cases")
    assert filled.rows[0] == MOODLE_HEADER
    grade, comments = MOODLE_HEADER.index("Grade"), MOODLE_HEADER.index("Feedback comments")
    jane, rick, ann = filled.rows[1:]
    assert (jane[grade], rick[grade], ann[grade]) == ("4", "10", "")
    assert "1.2 t: 0 / 6, failed" in jane[comments] and "expected: [-0.5]" in jane[comments]
    assert "usual cause" not in jane[comments] and "b.data**2" not in jane[comments]
    for old, new in zip(sheet[1:], filled.rows[1:]):   # everything else as downloaded
        assert [c for i, c in enumerate(old) if i not in (grade, comments)] == \
               [c for i, c in enumerate(new) if i not in (grade, comments)]
    assert ann == sheet[3] and (filled.filled, filled.unmatched) == (2, ["Participant 4250"])
    assert "b.data**2" in moodle_rows(book, worksheet, 1, "full").rows[1][comments]
    assert moodle_rows(book, worksheet, 1, "score").rows[1][comments].count("<pre>") == 0
    with pytest.raises(FormatError, match=r"2 lessons were graded; say which this assignment "
                                          r"is, as LESSON=FILE"):
        moodle_rows(book, worksheet)
    with pytest.raises(FormatError,
                       match=r"it lacks \['Identifier', 'Last modified \(grade\)'\]"):
        moodle_rows(book, _write(tmp_path / "bad.csv", [["Full name", "Grade"]]), 1)
    # Moodle's upload refuses a worksheet without "Last modified (grade)" (importgradeslib.php
    # init(): idindex, gradeindex and modifiedindex must all be found), so do we
    at = sheet[0].index("Last modified (grade)")
    without = [row[:at] + row[at + 1:] for row in sheet]
    with pytest.raises(FormatError, match=r"it lacks \['Last modified \(grade\)'\]"):
        moodle_rows(book, _write(tmp_path / "old.csv", without), 1)


def test_command_line_writes_the_formats(tmp_path, capsys):
    released = toy.released_dir(tmp_path / "released")
    handed_out = toy.release(toy.solution())       # unattempted: graded without a kernel
    toy.write(handed_out, tmp_path / "canvas" / "doejane_101_5001_09_toy.ipynb")
    toy.write(handed_out, tmp_path / "moodle" / "Jane Doe_4242_assignsubmission_file_09_toy.ipynb")
    export = _write(tmp_path / "export.csv", [CANVAS_STUDENT_COLUMNS + ["Toy 9 (777)"],
                                              ["Doe, Jane", "101", "S1", "jdoe", "A", ""]])
    worksheet = _write(tmp_path / "ws.csv", [MOODLE_HEADER, ["Participant 4242", "Jane Doe", "",
                                                             "", "", "4", "Yes", "", "", "-", ""]])
    common = ["--released", str(released), "--checks-package", toy.CHECKS_PACKAGE, "--no-progress",
              "--no-preflight", "--no-sandbox", "--quiet"]
    assert main([str(tmp_path / "canvas"), *common, "--out", str(tmp_path / "c"), "--roster",
                 str(export), "--format", "csv,canvas"]) == 0
    assert _read(tmp_path / "c" / "canvas.csv") == [
        CANVAS_STUDENT_COLUMNS + ["Toy 9 (777)"], ["Points Possible", "", "", "", "", "4"],
        ["Doe, Jane", "101", "S1", "jdoe", "A", "0"]]
    assert main([str(tmp_path / "moodle"), *common, "--out", str(tmp_path / "m"), "--format",
                 "moodle", "--moodle-worksheet", f"9={worksheet}"]) == 0
    rows = _read(tmp_path / "m" / "moodle-09.csv")
    assert rows[1][MOODLE_HEADER.index("Grade")] == "0" and rows[1][9] == "-"
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main([str(tmp_path / "moodle"), *common, "--format", "moodle"])
    assert "--format moodle needs --moodle-worksheet" in capsys.readouterr().err
    not_canvas = _write(tmp_path / "class.csv", [["login", "name"], ["jdoe", "Jane Doe"]])
    with pytest.raises(SystemExit):      # refused before anything is graded
        main([str(tmp_path / "canvas"), *common, "--out", str(tmp_path / "x"), "--roster",
              str(not_canvas), "--format", "canvas"])
    assert "lacks the column(s) ['Student', 'ID']" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
    # the files of a written report, without grading again
    assert main(["export", str(tmp_path / "c"), "--format", "nbgrader,canvas", "--roster",
                 str(export)]) == 0
    assert _read(tmp_path / "c" / "nbgrader.csv")[1][:4] == ["09_toy", "", "", "jdoe"]
    assert main(["export", str(tmp_path / "nowhere"), "--format", "nbgrader"]) == 2
    assert "no grades.json" in capsys.readouterr().err


def test_write_formats_needs_what_each_format_reads(tmp_path):
    book = Gradebook(lessons=[L1], notebooks=[_notebook("jdoe", L1, [4, 6])])
    for formats, error in ((["canvas"], "--format canvas needs --roster"),
                           (["moodle"], "--format moodle needs --moodle-worksheet"),
                           (["xlsx"], "--format must be among csv, canvas, moodle, nbgrader")):
        with pytest.raises(FormatError, match=error):
            write_formats(book, tmp_path, formats)


NBGRADER_HEADER = ["assignment", "duedate", "timestamp", "student_id", "last_name", "first_name",
                   "email", "raw_score", "late_submission_penalty", "score", "max_score"]


def test_nbgrader_export_has_nbgraders_columns(tmp_path):
    book = Gradebook(lessons=[L1, L2], notebooks=[
        _notebook("jdoe", L1, [4, 6]), _notebook("jdoe", L1, [4, 0]), _notebook("rroe", L2, [5])],
        people={"jdoe": {"name": "Doe, Jane"}, "rroe": {"name": "Rick Roe"},
                "zed": {"name": "Zed, Zoe"}})
    rows = nbgrader_rows(book)
    assert rows[0] == NBGRADER_HEADER
    assert rows[1:] == [   # every student of every assignment; the best notebook counts
        ["01_lesson", "", "", "jdoe", "Doe", "Jane", "", "10", "0", "10", "10"],
        ["01_lesson", "", "", "rroe", "", "", "", "0", "0", "0", "10"],
        ["01_lesson", "", "", "zed", "Zed", "Zoe", "", "0", "0", "0", "10"],
        ["02_lesson", "", "", "jdoe", "Doe", "Jane", "", "0", "0", "0", "12"],
        ["02_lesson", "", "", "rroe", "", "", "", "5", "0", "5", "12"],
        ["02_lesson", "", "", "zed", "Zed", "Zoe", "", "0", "0", "0", "12"]]
    assert write_formats(book, tmp_path, ["csv", "nbgrader"])
    assert _read(tmp_path / "nbgrader.csv") == rows

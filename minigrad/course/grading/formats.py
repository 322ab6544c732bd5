"""Gradebook files in the shapes learning-management systems import: ``--format canvas|moodle``.

``grades.csv`` (``--format csv``, always written) is one row per student with a score per
lesson, a total and the issues, which no gradebook imports as it is. From the same
:class:`~.results.Gradebook`:

* **Canvas** (``canvas.csv``): Canvas's gradebook import CSV, joined with the gradebook export
  given as ``--roster``: the columns ``Student, ID, SIS User ID, SIS Login ID, Section``, then
  one column per lesson headed ``<assignment name> (<assignment id>)`` as Canvas names it, a
  ``Points Possible`` row, and a row per student of the export (no total or issues columns,
  which Canvas would make new assignments of). The assignment of each lesson is the export's
  one column whose name starts with the lesson's number (``Lesson 1 (1234)``,
  ``01 scalars (1234)``) or is given as ``--canvas-assignment 1=1234``. A blank cell leaves
  Canvas's grade as it is (the student handed nothing in for that lesson).
* **Moodle** (``moodle-NN.csv``): the grading worksheet of one assignment (a lesson) as
  downloaded from it (*Download grading worksheet*), with ``Grade`` and ``Feedback comments``
  filled in for each participant who handed in; every other cell, ``Last modified (grade)``
  included, stays as downloaded, so *Upload grading worksheet* takes it back. Participants are
  matched by the id in Moodle's submission file names (``Jane Doe_4242_assignsubmission_file_``
  is ``Participant 4242``), else by full name when exactly one notebook's student has it.
* **nbgrader** (``nbgrader.csv``): the columns of ``nbgrader export`` (one row per assignment
  and student), for a course that collects with nbgrader and grades with ``minigrad-grade``.
"""
from __future__ import annotations

import csv
import html
import io
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from .feedback import shown_message
from .results import Gradebook, NotebookGrade

__all__ = ["FORMATS", "FormatError", "CANVAS_COLUMNS", "MOODLE_REQUIRED", "NBGRADER_COLUMNS",
           "canvas_rows", "moodle_rows", "nbgrader_rows", "parse_lesson_ids", "write_formats"]

#: What ``--format`` accepts.
FORMATS = ("csv", "canvas", "moodle", "nbgrader")
#: The columns of nbgrader's grade export (``nbgrader export``, its CSV plugin).
NBGRADER_COLUMNS = ["assignment", "duedate", "timestamp", "student_id", "last_name",
                    "first_name", "email", "raw_score", "late_submission_penalty", "score",
                    "max_score"]
#: The student columns of Canvas's gradebook import, in Canvas's order.
CANVAS_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
#: The worksheet columns Moodle's *Upload grading worksheet* needs: without any of them it
#: refuses the file (assignfeedback_offline's importgradeslib.php, ``init()``); the others are
#: kept as they are.
MOODLE_REQUIRED = ("Identifier", "Grade", "Last modified (grade)")

_ASSIGNMENT = re.compile(r"^(?P<name>.*\S)\s*\((?P<id>\d+)\)\s*$")
_PARTICIPANT = re.compile(r"_(?P<pid>\d+)_assignsubmission_")


class FormatError(ValueError):
    """A gradebook file cannot be made; the message names the option and what was expected."""


def _num(value: float) -> str:
    return f"{value:g}"


def _read_csv(path: str | os.PathLike[str], option: str) -> list[list[str]]:
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise FormatError(f"{option} {path}: cannot read it ({exc})") from None
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        raise FormatError(f"{option} {path}: the file is empty")
    return rows


def parse_lesson_ids(given: Sequence[str], option: str) -> dict[int, str]:
    """``["1=1234", "2=1240"]`` as ``{1: "1234", 2: "1240"}``; a bad item raises naming it."""
    ids: dict[int, str] = {}
    for item in given:
        lesson, sep, value = item.partition("=")
        if not sep or not lesson.strip().isdigit() or not value.strip():
            raise FormatError(f"{option} expects LESSON=VALUE (such as 1=1234); got {item!r}")
        ids[int(lesson)] = value.strip()
    return ids


def _first_number(name: str) -> int | None:
    match = re.search(r"\d+", name)
    return int(match.group()) if match else None


def canvas_rows(book: Gradebook, export: str | os.PathLike[str],
                assignment_ids: dict[int, str] | None = None) -> list[list[str]]:
    """The rows of Canvas's gradebook import for ``book``, joined with the Canvas ``export``.

    A student of the export with nothing handed in for a lesson keeps the export's own cell
    for it (Canvas's importer counts a blank cell over an existing grade as a change).

    Raises
    ------
    FormatError
        When the export lacks Canvas's columns, or a lesson's assignment is not found (none or
        several of its columns start with the lesson's number) and not given.
    """
    rows = _read_csv(export, "--roster")
    header = [h.strip() for h in rows[0]]
    missing = [c for c in ("Student", "ID") if c not in header]
    if missing:
        raise FormatError(f"--format canvas needs --roster to be Canvas's gradebook export "
                          f"(Grades > Export); {export} lacks the column(s) {missing}; got the "
                          f"columns {header[:8]}")
    columns = {c: header.index(c) for c in CANVAS_COLUMNS if c in header}
    headings = _canvas_headings(book, header, Path(export).name, assignment_ids or {})
    from .roster import read_roster   # the same students, named as the grader named them
    enrolled = {s.canvas_id: s for s in read_roster(export).students if s.canvas_id}
    mine = book.by_student()
    out = [CANVAS_COLUMNS + [heading for heading, _ in headings],
           ["Points Possible", "", "", "", ""]
           + [_num(book.lesson(key).max_points) for key in book.lesson_keys()]]
    for row in rows[1:]:
        cells = {c: (row[i].strip() if i < len(row) else "") for c, i in columns.items()}
        if not cells.get("ID") or cells["ID"] not in enrolled:
            continue      # the Points Possible row, Canvas's test student, blank lines
        student = enrolled[cells["ID"]].key
        scores = []
        for key, (_, at) in zip(book.lesson_keys(), headings):
            best = book.best(student, key, mine.get(student, []))
            kept = row[at].strip() if at is not None and at < len(row) else ""
            scores.append(_num(best.score) if best is not None else kept)
        out.append([cells.get(c, "") for c in CANVAS_COLUMNS] + scores)
    return out


def _canvas_headings(book: Gradebook, header: list[str], name: str, given: dict[int, str]
                     ) -> list[tuple[str, int | None]]:
    """Each lesson's assignment column, ``(heading, its index in the export or None)``."""
    assignments = [(m["name"], m["id"], i) for i, h in enumerate(header)
                   if (m := _ASSIGNMENT.match(h))]
    headings: list[tuple[str, int | None]] = []
    for key in book.lesson_keys():
        lesson = book.lesson(key)
        if lesson.number in given:
            wanted = given[lesson.number]
            named = [(f"{n} ({i})", at) for n, i, at in assignments if i == wanted]
            headings.append(named[0] if named else (f"Lesson {lesson.number} ({wanted})", None))
            continue
        fits = [(f"{n} ({i})", at) for n, i, at in assignments
                if _first_number(n) == lesson.number]
        if len(fits) != 1:
            found = "none" if not fits else ", ".join(f for f, _ in fits)
            raise FormatError(
                f"--format canvas: lesson {lesson.number} ({key}) needs one assignment column "
                f"of {name} whose name starts with {lesson.number}; found {found}; "
                f"give it as --canvas-assignment {lesson.number}=ASSIGNMENT_ID")
        headings.append(fits[0])
    return headings


def nbgrader_rows(book: Gradebook) -> list[list[str]]:
    """The rows of nbgrader's grade export for ``book``: one per lesson (an nbgrader
    assignment, named as :mod:`minigrad.course.nbgrader` names it) and student, a student
    with nothing handed in for it scoring 0 as in nbgrader's; names from the roster
    (``Last, First``), when there is one. Submission times are unknown here and left blank."""
    students = sorted({*book.students(), *book.people})
    mine = book.by_student()
    rows = [list(NBGRADER_COLUMNS)]
    for key in book.lesson_keys():
        maximum = book.lesson(key).max_points
        for student in students:
            name = book.people.get(student, {}).get("name", "")
            last, _, first = name.partition(",") if "," in name else ("", "", "")
            best = book.best(student, key, mine.get(student, []))
            score = best.score if best is not None else 0.0
            rows.append([key, "", "", student, last.strip(), first.strip(), "", _num(score),
                         "0", _num(score), _num(maximum)])
    return rows


@dataclass
class MoodleSheet:
    """A filled-in worksheet: its rows, and the participants left as downloaded."""

    rows: list[list[str]]
    filled: int
    unmatched: list[str]


def _participant(path: str) -> str:
    for part in reversed(Path(path).parts):
        match = _PARTICIPANT.search(part)
        if match:
            return match["pid"]
    return ""


def _fold(text: str) -> str:
    return " ".join(text.casefold().split())


def moodle_rows(book: Gradebook, worksheet: str | os.PathLike[str], lesson: int | None = None,
                policy: str = "full") -> MoodleSheet:
    """Moodle's grading ``worksheet`` of one lesson with each participant's grade and feedback.

    ``lesson``: the lesson number the Moodle assignment is (needed when ``book`` has several);
    ``policy``: what the feedback comments show (:mod:`.feedback`).

    Raises
    ------
    FormatError
        When the worksheet lacks a column Moodle's upload needs (``Identifier``, ``Grade``,
        ``Last modified (grade)``), or the lesson is unknown or not given where several were
        graded.
    """
    rows = _read_csv(worksheet, "--moodle-worksheet")
    header = rows[0]
    missing = [c for c in MOODLE_REQUIRED if c not in header]
    if missing:
        raise FormatError(f"--moodle-worksheet {worksheet}: expected Moodle's grading worksheet "
                          f"(Assignment > View all submissions > Download grading worksheet) "
                          f"with the columns {list(MOODLE_REQUIRED)}; it lacks {missing}")
    key = _moodle_lesson(book, worksheet, lesson)
    by_pid, by_name = _moodle_index(book, key)
    ident, grade = header.index("Identifier"), header.index("Grade")
    name_col = header.index("Full name") if "Full name" in header else None
    comments = header.index("Feedback comments") if "Feedback comments" in header else None
    out, filled, unmatched = [list(header)], 0, []
    for row in rows[1:]:
        row = row + [""] * (len(header) - len(row))
        pid = row[ident].strip().removeprefix("Participant").strip()
        found = by_pid.get(pid, [])
        if not found and name_col is not None:
            named = by_name.get(_fold(row[name_col]), [])
            if len({n.student for n in named}) == 1:
                found = named
        best = book.best(found[0].student, key, found) if found else None
        if best is not None:
            row[grade] = _num(best.score)
            if comments is not None:
                row[comments] = _comment(best, policy)
            filled += 1
        elif row[ident].strip():
            unmatched.append(row[ident].strip())
        out.append(row)
    return MoodleSheet(out, filled, unmatched)


def _moodle_lesson(book: Gradebook, worksheet: str | os.PathLike[str], lesson: int | None
                   ) -> str:
    """The key of the lesson a worksheet is for: ``lesson``, or the one lesson graded."""
    keys = book.lesson_keys()
    numbers = {book.lesson(k).number: k for k in keys}
    if lesson is None:
        if len(keys) != 1:
            raise FormatError(f"--moodle-worksheet {worksheet}: {len(keys)} lessons were graded; "
                              f"say which this assignment is, as LESSON=FILE (lessons "
                              f"{sorted(numbers)})")
        return keys[0]
    if lesson not in numbers:
        raise FormatError(f"--moodle-worksheet {lesson}=...: no notebook was graded as lesson "
                          f"{lesson}; graded: {sorted(numbers)}")
    return numbers[lesson]


def _moodle_index(book: Gradebook, key: str
                  ) -> tuple[dict[str, list[NotebookGrade]], dict[str, list[NotebookGrade]]]:
    """The lesson's notebooks by Moodle participant id (from their file names) and by full
    name (the student's, and the roster's name for them)."""
    by_pid: dict[str, list[NotebookGrade]] = {}
    by_name: dict[str, list[NotebookGrade]] = {}
    for n in (n for n in book.notebooks if n.lesson == key):
        if (pid := _participant(n.path)):
            by_pid.setdefault(pid, []).append(n)
        by_name.setdefault(_fold(n.student), []).append(n)
        name = book.people.get(n.student, {}).get("name")
        if name and _fold(name) != _fold(n.student):
            by_name.setdefault(_fold(name), []).append(n)
    return by_pid, by_name


def _comment(notebook: NotebookGrade, policy: str) -> str:
    """The feedback comment of one notebook, as HTML (Moodle's comments are HTML)."""
    lines = [f"{_num(notebook.score)} / {_num(notebook.max_score)} points"]
    for e in notebook.exercises:
        line = f"{e.exercise} {e.title}: {_num(e.points)} / {_num(e.max_points)}, {e.status}"
        message = shown_message(e.message, policy) if e.status == "failed" else ""
        lines.append(html.escape(line) + (f"<pre>{html.escape(message)}</pre>" if message else ""))
    return "<br>".join(lines[:1]) + "<ul>" + "".join(f"<li>{x}</li>" for x in lines[1:]) + "</ul>"


def _csv_text(rows: list[list[str]]) -> str:
    """The rows as CSV, cells as they are: they are the system's own (names, dates, Moodle's
    ``-`` for never) going back to it, and a leading apostrophe would change them there."""
    buffer = io.StringIO()
    csv.writer(buffer).writerows(rows)
    return buffer.getvalue()


def write_formats(book: Gradebook, out: str | os.PathLike[str], formats: Sequence[str], *,
                  roster: str | os.PathLike[str] | None = None,
                  canvas_assignments: dict[int, str] | None = None,
                  moodle_worksheets: Sequence[tuple[int | None, str]] = (),
                  policy: str = "full") -> list[str]:
    """Write the files of ``formats`` into ``out``; returns one line per file written.

    ``csv`` is the report's own ``grades.csv`` (written by :func:`.report.write_report`);
    ``canvas`` needs ``roster`` (the Canvas export), ``moodle`` one worksheet per lesson.
    """
    from .report import _atomic_write

    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise FormatError(f"--format must be among {', '.join(FORMATS)}; got {unknown}")
    out = Path(out)
    lines = []
    if "canvas" in formats:
        if roster is None:
            raise FormatError("--format canvas needs --roster: the gradebook export of the "
                              "Canvas course (Grades > Export > Export Entire Gradebook)")
        rows = canvas_rows(book, roster, canvas_assignments)
        _atomic_write(out / "canvas.csv", _csv_text(rows))
        lines.append(f"canvas: {out / 'canvas.csv'} ({len(rows) - 2} students; Grades > "
                     "Import in Canvas)")
    if "nbgrader" in formats:
        rows = nbgrader_rows(book)
        _atomic_write(out / "nbgrader.csv", _csv_text(rows))
        lines.append(f"nbgrader: {out / 'nbgrader.csv'} ({len(rows) - 1} rows, the columns of "
                     "nbgrader export)")
    if "moodle" in formats:
        if not moodle_worksheets:
            raise FormatError("--format moodle needs --moodle-worksheet [LESSON=]FILE: the "
                              "worksheet downloaded from the Moodle assignment")
        for lesson, path in moodle_worksheets:
            sheet = moodle_rows(book, path, lesson, policy)
            number = lesson if lesson is not None else book.lesson(book.lesson_keys()[0]).number
            target = out / f"moodle-{number:02d}.csv"
            _atomic_write(target, _csv_text(sheet.rows))
            lines.append(f"moodle: {target} ({sheet.filled} graded"
                         + (f"; left as downloaded, no notebook: {len(sheet.unmatched)}"
                            if sheet.unmatched else "") + "; Upload grading worksheet in Moodle)")
    return lines

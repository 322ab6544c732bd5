"""Writing a :class:`~minigrad.course.grading.results.Gradebook` out: CSV, JSON and Markdown.

``write_report(book, out)`` writes into the folder ``out``:

* ``grades.csv`` -- one row per student: the score of each lesson, the total, and a short
  list of issues (ready for a learning-management system's grade import);
* ``exercises.csv`` -- one row per student, lesson and exercise: points, maximum, passed, status
  and the check's message;
* ``grades.json`` -- everything, per notebook (the source the other files are made from);
* ``feedback/<student>.md`` -- a page per student: scores, each failed check's message, and
  what the grader noticed about the notebook.

:func:`summary` is the short Markdown table printed on the terminal.
"""
from __future__ import annotations

import csv
import functools
import hashlib
import io
import json
import os
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Sequence

from .results import ISSUES, Gradebook, NotebookGrade, no_gc

__all__ = ["write_report", "summary", "feedback", "read_gradebook", "safe_name",
           "feedback_names", "scrub", "csv_cell"]


def _num(value: float) -> str:
    return f"{value:g}"


def safe_name(student: str) -> str:
    """A student's name as a file name: letters, digits, ``.``, ``-`` and ``_`` only."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", student).strip("._") or "student"
    return name[:100]


def feedback_names(students: list[str]) -> dict[str, str]:
    """Each student's feedback file name; distinct students never share one.

    The name is :func:`safe_name` of the student's, with a short hash of the real name added
    whenever that changed it, or two names differ only in case (one file on macOS/Windows).
    """
    lower: Counter[str] = Counter(safe_name(s).lower() for s in students)
    names = {}
    for student in students:
        name = safe_name(student)
        if name != student or lower[name.lower()] > 1:
            name = f"{name[:80]}-{hashlib.sha256(student.encode('utf-8')).hexdigest()[:10]}"
        names[student] = f"{name}.md"
    return names


def _machine_paths() -> list[str]:
    """Folders of this machine that must not show in a report (longest first)."""
    return list(_paths_of(os.getcwd(), os.path.expanduser("~"), tempfile.gettempdir()))


@functools.lru_cache(maxsize=8)
def _paths_of(cwd: str, home: str, tmp: str) -> tuple[str, ...]:
    here = Path(__file__).resolve().parents[3]
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, str(here), tmp, home, cwd}
    return tuple(sorted((p for p in paths if p and p not in ("/", ".")), key=len, reverse=True))


def scrub(text: str, also: tuple[str, ...] = (), paths: Sequence[str] | None = None) -> str:
    """``text`` without this machine's folders (the installation, home, temp, working folder).

    ``/home/me/venv/lib/python3.11/site-packages/numpy/linalg.py`` becomes
    ``…/site-packages/numpy/linalg.py``: enough to see which file, nothing about the machine.
    """
    paths = _machine_paths() if paths is None else paths
    if also:
        paths = sorted({*paths, *also}, key=len, reverse=True)
    for path in paths:
        if len(path) > 1 and path in text:
            text = text.replace(path.rstrip("/"), "…")
    return text


def csv_cell(value: object) -> str:
    """A CSV cell that a spreadsheet shows as text: one starting with ``= + - @`` (or a tab or
    carriage return) would be read as a formula, so it gets a leading apostrophe."""
    text = value if type(value) is str else str(value)
    return "'" + text if text and text[0] in _FORMULA else text


_FORMULA = frozenset("=+-@\t\r")


def _atomic_write(path: Path, text: str) -> None:
    """Write ``path`` whole or not at all, never through a symlink planted there.

    The text goes to a new file beside it (created exclusively), which then replaces ``path``:
    ``os.replace`` replaces a symlink itself, never the file it points to.
    """
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _real_dir(path: Path) -> None:
    """Make ``path`` a real folder: a symlink (or file) in its place is removed first."""
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        path.unlink()
    path.mkdir(parents=True, exist_ok=True)


def _csv_text(rows: list[list[object]], escaped: bool = False) -> str:
    """CSV text of ``rows``; ``escaped``: their cells went through :func:`csv_cell` already."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerows(rows if escaped else ([csv_cell(cell) for cell in row] for row in rows))
    return buffer.getvalue()


_EXERCISE_COLUMNS = ["student", "lesson", "exercise", "title", "points", "max", "passed",
                     "status", "message", "self-reported", "notebook", "late", "release",
                     "submitted release", "graded at"]


def _old_rows(path: Path, header: list[str]) -> dict[str, list[list[str]]]:
    """The rows of a CSV this module wrote, by their (escaped) first cell; {} when it is not
    there or has other columns."""
    try:
        with open(path, encoding="utf-8", newline="") as f:
            reader = csv.reader(f)
            if next(reader, None) != header:
                return {}
            table: dict[str, list[list[str]]] = {}
            for row in reader:
                table.setdefault(row[0], []).append(row)
            return table
    except (OSError, UnicodeDecodeError, csv.Error):
        return {}


def _counted(book: Gradebook, mine: dict[str, list[NotebookGrade]] | None = None
             ) -> dict[str, list[NotebookGrade]]:
    """Per student, the notebook that counts for each lesson, then any unidentified ones.

    One pass over each student's own notebooks: linear in the class."""
    keys = book.lesson_keys()
    mine = book.by_student() if mine is None else mine
    counted: dict[str, list[NotebookGrade]] = {}
    for student, notebooks in mine.items():
        counted[student] = [best for key in keys if (best := book.best(student, key, notebooks))]
        counted[student] += [n for n in notebooks if n.lesson is None]
    return counted


def _issue_summary(notebooks: list[NotebookGrade], book: Gradebook) -> str:
    parts = []
    numbers = {lesson.key: lesson.number for lesson in book.lessons}
    for notebook in notebooks:
        kinds = notebook.issue_kinds()
        if kinds:
            where = f"{numbers[notebook.lesson]:02d}" if notebook.lesson else \
                Path(notebook.path).name
            parts.append(f"{where}: {', '.join(kinds)}")
    return "; ".join(parts)


def _late(notebooks: list[NotebookGrade], book: Gradebook) -> str:
    numbers = {lesson.key: lesson.number for lesson in book.lessons}
    return " ".join(f"{numbers[n.lesson]:02d}" if n.lesson else Path(n.path).name
                    for n in notebooks if n.late)


def _json_text(data: dict) -> str:
    """``data`` as JSON with one notebook a line (``data["notebooks"]``: their JSON texts):
    readable and diffable, and written by the json module's C encoder (an indented dump of
    40,000 notebooks takes it ten times longer)."""
    notebooks = data.pop("notebooks")
    head = json.dumps(data, ensure_ascii=False)
    rows = ",\n  ".join(notebooks)
    return head[:-1] + (", " if data else "") + f'{_NOTEBOOKS}\n  {rows}\n]}}\n'


_NOTEBOOKS = '"notebooks": ['


def _stamp(notebook: NotebookGrade) -> tuple:
    """What must be unchanged for a notebook's JSON text, as read, to be written again."""
    return (notebook.student, notebook.path, notebook.lesson, notebook.status, notebook.score,
            notebook.graded_at, notebook.release, notebook.late,
            tuple(i.text for i in notebook.issues),
            tuple((e.status, e.points, e.message) for e in notebook.exercises))


def _raw_json(notebook: NotebookGrade) -> str:
    """The notebook's JSON: the text it was read from when it has not changed since."""
    raw = getattr(notebook, "_raw", None)
    if raw is not None and raw[0] == _stamp(notebook):
        return raw[1]
    return json.dumps(notebook.to_dict(), ensure_ascii=False)


def _write_if_changed(path: Path, text: str) -> bool:
    """:func:`_atomic_write` unless ``path`` already holds exactly ``text``; True if written."""
    try:
        if not path.is_symlink() and path.read_text(encoding="utf-8") == text:
            return False
    except (OSError, UnicodeDecodeError):
        pass
    _atomic_write(path, text)
    return True


def write_report(book: Gradebook, out: str | os.PathLike[str],
                 changed: Sequence[str] | None = None) -> list[Path]:
    """Write grades.csv, exercises.csv, grades.json and ``feedback/*.md`` into ``out``.

    Every file is written atomically and never through a symlink; a feedback page whose text
    is unchanged is left alone; feedback pages of students no longer in the gradebook are
    removed; ``unattributed.csv`` lists the notebooks credited to nobody (and is removed when
    there are none); nothing else in ``out`` is touched. CSV cells are escaped for
    spreadsheets, and no file holds a path of this machine. The work is linear in the number
    of notebooks. ``changed``: the only students whose feedback pages can differ from those
    in ``out`` (a regrade merged into the report there); the others' pages are not rebuilt.
    Returns the paths written.
    """
    with no_gc():
        return _write_report(book, Path(out), None if changed is None else set(changed))


def _write_report(book: Gradebook, out: Path, changed: set[str] | None) -> list[Path]:
    paths = _machine_paths()

    def clean(text: str) -> str:
        return scrub(text, paths=paths)

    out.mkdir(parents=True, exist_ok=True)
    feedback_dir = out / "feedback"
    _real_dir(feedback_dir)
    keys = book.lesson_keys()
    mine = book.by_student()
    counted = _counted(book, mine)
    changed_set = changed if changed is not None else set(mine)
    missing = book.missing()
    people = book.people
    roster = bool(people)
    written = []

    rows: list[list[object]] = [["student", *(["name", "section"] if roster else []), *keys,
                                 "total", "late", "issues"]]
    for student in sorted([*counted, *missing]):
        who = [people.get(student, {}).get("name", ""),
               people.get(student, {}).get("section", "")] if roster else []
        if student not in counted:
            rows.append([student, *who, *([""] * len(keys)), "", "", "no submission"])
            continue
        notebooks = counted[student]
        scores = {n.lesson: _num(n.score) for n in notebooks if n.lesson}
        rows.append([student, *who, *(scores.get(key, "") for key in keys),
                     _num(book.total(student, mine[student])), _late(notebooks, book),
                     clean(_issue_summary(notebooks, book))])
    path = out / "grades.csv"
    _atomic_write(path, _csv_text(rows))
    written.append(path)

    path = out / "exercises.csv"
    old = _old_rows(path, _EXERCISE_COLUMNS) if changed is not None else {}
    rows = [_EXERCISE_COLUMNS]
    for student, notebooks in counted.items():
        kept = old.get(csv_cell(student)) if student not in changed_set else None
        if kept is not None:     # a regrade: the rows of everyone else are as they were
            rows += kept
            continue
        for notebook in notebooks:
            for exercise in notebook.exercises:
                reported = "; ".join(dict.fromkeys(c.self_reported for c in exercise.checks
                                                   if c.self_reported))
                rows.append([csv_cell(cell) for cell in [
                    notebook.student, notebook.lesson, exercise.exercise, exercise.title,
                    _num(exercise.points), _num(exercise.max_points),
                    str(exercise.passed).lower(), exercise.status, clean(exercise.message),
                    reported, os.path.basename(notebook.path), str(notebook.late).lower(),
                    notebook.release, notebook.submitted_release, notebook.graded_at]])
    _atomic_write(path, _csv_text(rows, escaped=True))
    written.append(path)

    path = out / "unattributed.csv"
    if book.unattributed:
        _atomic_write(path, _csv_text([["notebook", "why"]] + [
            [clean(u["path"]), u["why"]] for u in book.unattributed]))
        written.append(path)
    elif path.is_file() and not path.is_symlink():
        path.unlink()

    path = out / "grades.json"
    data = book.to_dict(notebooks=False)
    data["notebooks"] = [_raw_json(n) for n in book.notebooks]
    data["students"] = {}
    for student, notebooks in mine.items():
        scores = {key: b.score for key in keys if (b := book.best(student, key, notebooks))}
        data["students"][student] = {"scores": scores, "total": sum(scores.values())}
    data["missing"] = missing
    _atomic_write(path, _json_text(data))
    written.append(path)

    pages = {name: student for student, name in feedback_names(list(mine)).items()}
    for stale in feedback_dir.glob("*.md"):
        if stale.name not in pages:
            stale.unlink()
    for name, student in pages.items():
        path = feedback_dir / name
        if changed is not None and student not in changed and path.is_file():
            continue
        if _write_if_changed(path, feedback(book, student, mine[student], paths)):
            written.append(path)
    return written


def read_gradebook(out: str | os.PathLike[str]) -> Gradebook | None:
    """The gradebook a previous run wrote into ``out`` (None when there is none)."""
    path = Path(out) / "grades.json"
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8")
    with no_gc():
        start = text.find(_NOTEBOOKS + "\n")
        if start < 0:                      # a report written before one notebook a line
            return Gradebook.from_dict(json.loads(text))
        lines = text[start + len(_NOTEBOOKS) + 1:].rstrip().removesuffix("]}").split("\n")
        raws = [line.strip().removesuffix(",") for line in lines if line.strip()]
        data = json.loads(text[:start] + _NOTEBOOKS + "]}")
        book = Gradebook.from_dict(data)
        book.notebooks = [NotebookGrade.from_json(json.loads(raw)) for raw in raws]
        for notebook, raw in zip(book.notebooks, raws):
            notebook._raw = (_stamp(notebook), raw)   # type: ignore[attr-defined]
        return book


def _fence(text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}text\n{text.strip()}\n{fence}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def feedback(book: Gradebook, student: str, notebooks: list[NotebookGrade] | None = None,
             paths: Sequence[str] | None = None) -> str:
    """The Markdown feedback page of one student (``notebooks``: theirs, when known;
    ``paths``: the machine's folders to scrub, when known)."""
    lines = [f"# Feedback for {student}", ""]
    if notebooks is None:
        notebooks = [n for n in book.notebooks if n.student == student]
    total = book.total(student, notebooks)
    maximum = sum(book.lesson(key).max_points
                  for key in dict.fromkeys(n.lesson for n in notebooks if n.lesson))
    lines += [f"Total: **{_num(total)} / {_num(maximum)}** points.", ""]
    for notebook in notebooks:
        title = notebook.lesson or f"`{os.path.basename(notebook.path)}`"
        score = f": {_num(notebook.score)} / {_num(notebook.max_score)}" if notebook.lesson else ""
        counted = notebook.lesson and book.best(student, notebook.lesson, notebooks) \
            is not notebook
        late = " (late)" if notebook.late else ""
        lines += [f"## {title}{score}" + (" (not counted)" if counted else "") + late, "",
                  f"Notebook: `{os.path.basename(notebook.path)}`", ""]
        if notebook.exercises:
            lines += ["| exercise | points | result |", "|---|---:|---|"]
            lines += [f"| {e.exercise} {_cell(e.title)} | {_num(e.points)} / "
                      f"{_num(e.max_points)} | {e.status} |" for e in notebook.exercises]
            lines.append("")
        whole = [e for e in notebook.exercises if e.passed and any(
            c.self_reported.startswith("the whole check") for c in e.checks)]
        if whole:   # (conditions of split checks are listed in exercises.csv)
            lines += ["Self-reported (the check's verdict came from the notebook's own process, "
                      "not the grader's judge): " + ", ".join(
                          f"{e.exercise} ({_num(e.points)} points)" for e in whole) + ".", ""]
        for exercise in notebook.exercises:
            if exercise.status == "failed":
                lines += [f"### {exercise.exercise} {exercise.title}: failed", "",
                          _fence(exercise.message or "(no message)"), ""]
        if notebook.issues:
            lines += ["### What the grader noticed", ""]
            for issue in notebook.issues:
                first, _, rest = issue.text.partition("\n")
                lines.append(f"- **{issue.kind}**: {first}")
                if rest.strip():
                    lines += ["", "  " + _fence(rest).replace("\n", "\n  ")]
            lines.append("")
    return scrub("\n".join(lines).rstrip() + "\n", paths=paths)


def summary(book: Gradebook, out: str | os.PathLike[str] | None = None,
            max_rows: int = 40) -> str:
    """A short Markdown summary: a table of students and lessons, issues, where the files are."""
    keys = book.lesson_keys()
    students = book.students()
    n = len(book.notebooks)
    lines = [f"## minigrad grades: {n} notebook{'s' * (n != 1)}, {len(students)} "
             f"student{'s' * (len(students) != 1)} ({book.seconds:g} s, {book.jobs} "
             f"job{'s' * (book.jobs != 1)})", ""]
    maximum = sum(book.lesson(key).max_points for key in keys)
    header = [f"{key[:2]} /{_num(book.lesson(key).max_points)}" for key in keys]
    lines += ["| student | " + " | ".join(header + [f"total /{_num(maximum)}"]) + " | issues |",
              "|---|" + "---:|" * (len(keys) + 1) + "---|"]
    by_student = book.by_student()
    counted = _counted(book, by_student)
    for student in students[:max_rows]:
        mine = counted[student]
        graded = {n.lesson: _num(n.score) for n in mine if n.lesson}
        scores = [graded.get(key, "–") for key in keys]
        total = _num(book.total(student, by_student[student]))
        lines.append(f"| {_cell(student)} | " + " | ".join(scores + [total])
                     + f" | {_cell(_issue_summary(mine, book))} |")
    if len(students) > max_rows:
        lines.append(f"| … {len(students) - max_rows} more in grades.csv | |")
    lines.append("")
    if keys:
        means = []
        for key in keys:
            scores = [n.score for mine in counted.values() for n in mine if n.lesson == key]
            means.append(f"{key[:2]} {sum(scores) / len(scores):.3g}/"
                         f"{_num(book.lesson(key).max_points)}")
        lines += ["Mean scores: " + ", ".join(means) + ".", ""]
    kinds: Counter[str] = Counter()
    who: dict[str, list[str]] = {}
    for notebook in (n for mine in counted.values() for n in mine):
        for kind in notebook.issue_kinds():
            kinds[kind] += 1
            who.setdefault(kind, []).append(notebook.student)
    if kinds:
        lines.append("Issues:")
        for kind, count in kinds.most_common():
            names = sorted(set(who[kind]))
            shown = ", ".join(names[:8]) + (f", … ({len(names) - 8} more)" if len(names) > 8
                                             else "")
            lines.append(f"- {kind} ×{count} ({shown}): {ISSUES.get(kind, '')}")
        lines.append("")
    missing = book.missing()
    if missing:
        shown = ", ".join(missing[:8]) + (f", … ({len(missing) - 8} more)" if len(missing) > 8
                                          else "")
        lines += [f"On the roster with nothing handed in: {len(missing)} ({shown}).", ""]
    if book.unattributed:
        names = [Path(u["path"]).name for u in book.unattributed]
        lines += [f"**Not attributed to any student: {len(names)} notebook(s)** ("
                  + ", ".join(names[:8]) + (", …" if len(names) > 8 else "")
                  + "): not graded; see unattributed.csv.", ""]
    if out is not None:
        lines.append(f"Report: {Path(out) / 'grades.csv'}, exercises.csv, grades.json, "
                     f"feedback/ ({len(students)} pages).")
    return "\n".join(lines).rstrip() + "\n"

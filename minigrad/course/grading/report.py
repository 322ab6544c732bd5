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
from typing import Any, Iterable, Iterator, Sequence

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


def _atomic_write(path: Path, text: str | Iterable[str]) -> None:
    """Write ``path`` whole or not at all, never through a symlink planted there.

    The text (or its pieces, in order) goes to a new file beside it (created exclusively),
    which then replaces ``path``: ``os.replace`` replaces a symlink itself, never the file it
    points to.
    """
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            if isinstance(text, str):
                f.write(text)
            else:
                f.writelines(text)
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


def _csv_text(rows: Sequence[Sequence[object]], escaped: bool = False) -> str:
    """CSV text of ``rows``; ``escaped``: their cells went through :func:`csv_cell` already."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerows(rows if escaped else ([csv_cell(cell) for cell in row] for row in rows))
    return buffer.getvalue()


_EXERCISE_COLUMNS = ["student", "lesson", "exercise", "title", "points", "max", "passed",
                     "status", "message", "self-reported", "notebook", "late", "release",
                     "submitted release", "graded at"]


def _old_blocks(path: Path, header: list[str]) -> dict[str, str]:
    """The rows of a CSV this module wrote, as their text, by their (escaped) first cell: each
    student's rows are one run of lines there. {} when it is not there, has other columns, or
    one student's rows are not together.

    A row ends with the first line at which the ``"`` seen so far are even (csv quotes every
    cell that holds a ``"`` or a line break, doubling its quotes), so only first cells are
    parsed."""
    try:
        with open(path, encoding="utf-8", newline="") as f:
            lines = f.readlines()
    except (OSError, UnicodeDecodeError):
        return {}
    if not lines or next(csv.reader(lines[:1]), None) != header:
        return {}
    blocks: dict[str, str] = {}
    first, start, quotes = None, 1, 0
    for end in range(1, len(lines)):
        line = lines[end]
        if not quotes:   # a row starts here
            cell = line.partition(",")[0] if line[:1] != '"' else _first_cell(lines, end)
            if cell != first:
                if first is not None:
                    if first in blocks:
                        return {}
                    blocks[first] = "".join(lines[start:end])
                first, start = cell, end
        quotes = (quotes + line.count('"')) % 2
    if quotes:
        return {}       # (cut short inside a quoted cell)
    if first is not None:
        if first in blocks:
            return {}
        blocks[first] = "".join(lines[start:])
    return blocks


def _first_cell(lines: list[str], at: int) -> str:
    """The first cell of the CSV row that starts at ``lines[at]`` (a quoted one)."""
    try:
        return next(csv.reader(lines[i] for i in range(at, len(lines))))[0]
    except (StopIteration, IndexError, csv.Error):
        return ""


def _counted(book: Gradebook, mine: dict[str, list[NotebookGrade]] | None = None,
             bests: dict[str, dict[str, NotebookGrade]] | None = None
             ) -> dict[str, list[NotebookGrade]]:
    """Per student, the notebook that counts for each lesson, then any unidentified ones.

    One pass over each student's own notebooks: linear in the class."""
    keys = book.lesson_keys()
    mine = book.by_student() if mine is None else mine
    bests = _bests(mine) if bests is None else bests
    counted: dict[str, list[NotebookGrade]] = {}
    for student, notebooks in mine.items():
        best = bests[student]
        counted[student] = [best[key] for key in keys if key in best]
        counted[student] += [n for n in notebooks if n.lesson is None]
    return counted


def _bests(mine: dict[str, list[NotebookGrade]]) -> dict[str, dict[str, NotebookGrade]]:
    """Per student, the notebook that counts for each of their lessons (as
    :meth:`.results.Gradebook.best` chooses it: the highest score, then the path), the lessons
    in the order the student's notebooks first name them."""
    bests: dict[str, dict[str, NotebookGrade]] = {}
    for student, notebooks in mine.items():
        best: dict[str, NotebookGrade] = {}
        for n in notebooks:
            if n.lesson is not None:
                old = best.get(n.lesson)
                if old is None or (-n.score, n.path) < (-old.score, old.path):
                    best[n.lesson] = n
        bests[student] = best
    return bests


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


def _json_pieces(data: dict[str, Any]) -> Iterator[str]:
    """``data`` as JSON with one notebook a line (``data["notebooks"]``: their JSON texts), in
    pieces: readable and diffable, and written by the json module's C encoder (an indented
    dump of 40,000 notebooks takes it ten times longer)."""
    notebooks = data.pop("notebooks")
    head = json.dumps(data, ensure_ascii=False)
    yield head[:-1] + (", " if data else "") + _NOTEBOOKS + "\n"
    for i, text in enumerate(notebooks):
        yield ("  " if i == 0 else ",\n  ") + text
    yield "\n]}\n"


_NOTEBOOKS = '"notebooks": ['


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
    spreadsheets, and no file holds a path of this machine. The pages show what
    ``book.feedback`` lets them (:mod:`.feedback`). The work is linear in the number of
    notebooks. ``changed``: the only students whose rows and feedback pages can differ from
    those in ``out`` (a regrade merged into the report there, with the same feedback policy);
    the others' exercises.csv rows are copied as they stand and their pages are not rebuilt.
    Returns the paths written.
    """
    with no_gc():
        return _write_report(book, Path(out), None if changed is None else set(changed))


class _Writing:
    """What the files of one report are made from: the gradebook indexed once."""

    def __init__(self, book: Gradebook, out: Path, changed: set[str] | None) -> None:
        self.book, self.out, self.changed = book, out, changed
        self.paths = _machine_paths()
        self.keys = book.lesson_keys()
        self.mine = book.by_student()
        self.bests = _bests(self.mine)
        self.counted = _counted(book, self.mine, self.bests)
        self.missing = book.missing()

    def clean(self, text: str) -> str:
        return scrub(text, paths=self.paths)

    def is_changed(self, student: str) -> bool:
        return self.changed is None or student in self.changed


def _write_report(book: Gradebook, out: Path, changed: set[str] | None) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    _real_dir(out / "feedback")
    w = _Writing(book, out, changed)
    written = []
    for name, text in (("grades.csv", _csv_text(_grades_rows(w))),
                       ("exercises.csv", _exercises_text(w))):
        _atomic_write(out / name, text)
        written.append(out / name)
    path = out / "unattributed.csv"
    if book.unattributed:
        _atomic_write(path, _csv_text([["notebook", "why"]] + [
            [w.clean(u["path"]), u["why"]] for u in book.unattributed]))
        written.append(path)
    elif path.is_file() and not path.is_symlink():
        path.unlink()
    _atomic_write(out / "grades.json", _json_pieces(_grades_data(w)))
    written.append(out / "grades.json")
    return written + _write_pages(w)


def _grades_rows(w: _Writing) -> list[list[object]]:
    """grades.csv: a row per student (and per roster student with nothing handed in)."""
    book, people, keys = w.book, w.book.people, w.keys
    roster = bool(people)
    rows: list[list[object]] = [["student", *(["name", "section"] if roster else []), *keys,
                                 "total", "late", "issues"]]
    for student in sorted([*w.counted, *w.missing]):
        who = [people.get(student, {}).get("name", ""),
               people.get(student, {}).get("section", "")] if roster else []
        if student not in w.counted:
            rows.append([student, *who, *([""] * len(keys)), "", "", "no submission"])
            continue
        notebooks = w.counted[student]
        scores = {n.lesson: _num(n.score) for n in notebooks if n.lesson}
        rows.append([student, *who, *(scores.get(key, "") for key in keys),
                     _num(sum(n.score for n in w.bests[student].values())),
                     _late(notebooks, book),
                     w.clean(_issue_summary(notebooks, book))])
    return rows


def _exercises_text(w: _Writing) -> str:
    """exercises.csv: a row per student, lesson and exercise; on a regrade (``changed``) the
    rows of everyone else are the old file's text, as it was."""
    old = _old_blocks(w.out / "exercises.csv", _EXERCISE_COLUMNS) if w.changed is not None \
        else {}
    parts = [_csv_text([_EXERCISE_COLUMNS], escaped=True)]
    for student, notebooks in w.counted.items():
        kept = old.get(csv_cell(student)) if not w.is_changed(student) else None
        if kept is not None:
            parts.append(kept)
            continue
        rows: list[list[object]] = []
        for notebook in notebooks:
            for exercise in notebook.exercises:
                reported = "; ".join(dict.fromkeys(c.self_reported for c in exercise.checks
                                                   if c.self_reported))
                rows.append([csv_cell(cell) for cell in [
                    notebook.student, notebook.lesson, exercise.exercise, exercise.title,
                    _num(exercise.points), _num(exercise.max_points),
                    str(exercise.passed).lower(), exercise.status, w.clean(exercise.message),
                    reported, os.path.basename(notebook.path), str(notebook.late).lower(),
                    notebook.release, notebook.submitted_release, notebook.graded_at]])
        parts.append(_csv_text(rows, escaped=True))
    return "".join(parts)


def _grades_data(w: _Writing) -> dict[str, Any]:
    """grades.json's content: the notebooks as their JSON lines, each student's scores."""
    book = w.book
    data = book.to_dict(notebooks=False)
    data["notebooks"] = [n.to_json() for n in book.notebooks]
    data["students"] = {}
    for student in w.mine:
        best = w.bests[student]
        scores = {key: best[key].score for key in w.keys if key in best}
        data["students"][student] = {"scores": scores, "total": sum(scores.values())}
    data["missing"] = w.missing
    return data


def _write_pages(w: _Writing) -> list[Path]:
    """The feedback pages: those of students no longer there removed, those that can have
    changed written (when their text did)."""
    from .feedback import policy_feedback

    folder = w.out / "feedback"
    pages = {name: student for student, name in feedback_names(list(w.mine)).items()}
    for stale in folder.glob("*.md"):
        if stale.name not in pages:
            stale.unlink()
    written = []
    for name, student in pages.items():
        path = folder / name
        if not w.is_changed(student) and path.is_file():
            continue
        text = policy_feedback(w.book, student, w.book.feedback, w.mine[student], w.paths)
        if _write_if_changed(path, text):
            written.append(path)
    return written


def read_gradebook(out: str | os.PathLike[str]) -> Gradebook | None:
    """The gradebook a previous run wrote into ``out`` (None when there is none).

    Each notebook is read from its line of grades.json by
    :meth:`~.results.NotebookGrade.from_json_text`: its exercises stay text until they are
    used, and a notebook unchanged since is written back as the very same line."""
    path = Path(out) / "grades.json"
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8")
    with no_gc():
        start = text.find(_NOTEBOOKS + "\n")
        if start < 0:                      # a report written before one notebook a line
            return Gradebook.from_dict(json.loads(text))
        lines = text.split("\n")
        if lines[-2:] != ["]}", ""] or not lines[0].endswith(_NOTEBOOKS):
            return Gradebook.from_dict(json.loads(text))    # (not one notebook a line)
        book = Gradebook.from_dict(json.loads(text[:start] + _NOTEBOOKS + "]}"))
        del text
        book.notebooks = [NotebookGrade.from_json_text(_notebook_text(line))
                          for line in lines[1:-2] if line and not line.isspace()]
        return book


def _notebook_text(line: str) -> str:
    """A notebook's JSON in its line of grades.json (``  {...},``)."""
    if line.startswith("  {") and line.endswith("},"):
        return line[2:-1]
    return line.strip().removesuffix(",")


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
            points = [n.score for mine in counted.values() for n in mine if n.lesson == key]
            means.append(f"{key[:2]} {sum(points) / len(points):.3g}/"
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

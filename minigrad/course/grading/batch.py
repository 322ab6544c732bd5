"""Grading a class into a report folder without ever losing a row.

:func:`grade_class` is what ``minigrad-grade`` runs: it finds the submissions
(:func:`.submissions.scan`, with the roster and the shard), grades them (:func:`.runner.grade`),
and writes the report (:func:`.report.write_report`), with three guarantees:

* **a journal**: each notebook's grade is appended to ``<out>/journal.jsonl`` (and flushed to
  disk) as it finishes, so that an interrupted or crashed run loses nothing; ``resume=True``
  (``--resume``) continues it, grading only what the journal does not have (a notebook whose
  bytes, student and release are unchanged is not graded again). A new run refuses to start
  over an interrupted one's journal without ``--resume``;
* **no silent replacement**: a run over part of the class that an existing report covers
  either merges into it (``students=``: those students' rows are replaced; ``merge=True``: every
  (student, lesson) this run graded is replaced, the rest kept) or refuses with a message
  that names the rows it would drop, before it grades anything when it can tell;
* **the same cases everywhere**: the probes of each (student, lesson) come from the course's
  secret (:mod:`.secret`), so a regrade, a resumed run and every shard draw the same ones.

:func:`merge_reports` joins the reports of ``--shard I/N`` runs into the report one run over
the whole class would have written (every field but the times).
"""
from __future__ import annotations

import dataclasses
import datetime
import json
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

from .lessons import LessonError, ReleasedLesson, load_lessons
from .report import read_gradebook, write_report
from .results import Gradebook, NotebookGrade, no_gc
from .roster import Roster, read_roster
from .runner import (GraderError, GradingOptions, Interrupted, _mark_duplicates, _summaries,
                     grade)
from .secret import fingerprint, load_secret
from .submissions import (Found, Submission, UnreadableNotebook, identify, read_notebook, scan,
                          sha256, shard_of)

__all__ = ["grade_class", "merge_reports", "Journal", "parse_shard", "JOURNAL"]

#: The journal's file name in the report folder.
JOURNAL = "journal.jsonl"


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def parse_shard(text: str) -> tuple[int, int]:
    """``"2/4"`` -> ``(2, 4)``: shard index ``I`` (0 to N-1, as Slurm's ``--array=0-3`` and a
    Kubernetes Indexed Job's completion index count) of ``N``.

    Raises
    ------
    ValueError
        Naming what was expected and what came.
    """
    index, slash, count = text.partition("/")
    try:
        i, n = int(index), int(count)
    except ValueError:
        i = n = -1
    if not slash or n < 1 or not 0 <= i < n:
        raise ValueError(f"--shard: expected I/N with 0 <= I < N (e.g. 0/4); got {text!r}")
    return i, n


_ENTRY = '{"notebook": '


def _entry(line: str) -> dict[str, Any]:
    """One line of the journal as JSON ({} for a line cut off by a crash)."""
    try:
        entry = json.loads(line)
    except ValueError:
        return {}
    return entry if isinstance(entry, dict) else {}


class Journal:
    """``<out>/journal.jsonl``: a header line, one line per graded notebook, an end line."""

    def __init__(self, out: Path) -> None:
        self.path = Path(out) / JOURNAL
        self._file: Any = None

    def read(self) -> tuple[str, dict[str, Any], list[NotebookGrade]]:
        """``(state, header, grades)``; state is "none", "complete" or "interrupted".

        A last line cut off by a crash is ignored (its notebook is graded again)."""
        if not self.path.is_file():
            return "none", {}, []
        header: dict[str, Any] = {}
        grades: list[NotebookGrade] = []
        complete = False
        with no_gc():
            for line in self.path.read_text(encoding="utf-8").split("\n"):
                if line.startswith(_ENTRY) and line.endswith("}}"):
                    try:     # (the notebook's own JSON line, as grades.json holds it)
                        grades.append(NotebookGrade.from_json_text(line[len(_ENTRY):-1]))
                        continue
                    except ValueError:
                        pass
                entry = _entry(line)
                if "journal" in entry:
                    header = entry
                elif "notebook" in entry:
                    grades.append(NotebookGrade.from_dict(entry["notebook"]))
                elif "done" in entry:
                    complete = True
        return ("complete" if complete else "interrupted"), header, grades

    def state(self) -> tuple[str, dict[str, Any], int]:
        """``(state, header, notebooks)`` as :meth:`read` says them, without reading the
        notebooks' grades (a journal of 40,000 notebooks is a hundred megabytes)."""
        if not self.path.is_file():
            return "none", {}, 0
        header: dict[str, Any] = {}
        complete, count = False, 0
        with open(self.path, encoding="utf-8") as f:
            for line in f:
                if line.startswith(_ENTRY):
                    count += line.endswith("}}\n") or "notebook" in _entry(line)
                    continue
                entry = _entry(line)
                header = entry if "journal" in entry else header
                complete = complete or "done" in entry
        return ("complete" if complete else "interrupted"), header, count

    def open(self, header: dict[str, Any] | None) -> None:
        """Start a new journal with ``header``, or (None) go on appending to this one."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(self.path, "w" if header is not None else "a", encoding="utf-8")
        if header is not None:
            self._write({"journal": 1, **header})

    def _write(self, entry: dict[str, Any]) -> None:
        self._file.write(json.dumps(entry, ensure_ascii=False) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def append(self, notebook: NotebookGrade) -> None:
        """Record one graded notebook (on disk before this returns)."""
        self._write({"notebook": notebook.to_dict()})

    def close(self, done: bool) -> None:
        if self._file is not None:
            if done:
                self._write({"done": _now()})
            self._file.close()
            self._file = None


def _refusal(out: Path, lost: list[str], what: str) -> str:
    shown = ", ".join(lost[:8]) + (f", … ({len(lost) - 8} more)" if len(lost) > 8 else "")
    return (f"the report in {out} has {len(lost)} {what} that this run does not grade "
            f"({shown}); writing it would drop them. Pass --merge to keep them and update "
            "the rest (or --student NAME for a regrade), choose another --out, or remove the "
            "old report to start afresh")


def grade_class(paths: Sequence[str | os.PathLike[str]], out: str | os.PathLike[str], *,
                students: Sequence[str] | None = None, merge: bool = False,
                resume: bool = False, roster: str | os.PathLike[str] | None = None,
                shard: tuple[int, int] | None = None,
                secret: str | os.PathLike[str] | None = None, jobs: int = 1,
                released: str | os.PathLike[str] | None = None,
                checks_package: str | None = None, options: GradingOptions | None = None,
                progress: bool | None = False, feedback: str = "full") -> Gradebook:
    """Grade the notebooks under ``paths`` into the report folder ``out``; return its gradebook.

    Long because its signature and docstring list every option of a class's run (14
    parameters); its body, about 40 lines, calls one helper per stage.

    Parameters
    ----------
    paths : sequence of paths
        Notebooks and folders of them (:mod:`.submissions`).
    out : path
        The report folder: the report, the journal, and (by default) the secret live there.
    students : sequence of str, optional
        Grade only these students; their rows replace theirs in the existing report.
    merge : bool
        Merge into the existing report: replace the (student, lesson) rows this run grades.
    resume : bool
        Continue the interrupted run whose journal is in ``out``.
    roster : path, optional
        A roster CSV (:mod:`.roster`).
    shard : (index, count), optional
        Grade only shard ``index`` of ``count`` (by student, :func:`.submissions.shard_of`).
    secret : path, optional
        The probe secret's file (default ``<out>/.secret``, made when missing).
    feedback : str
        What the students' feedback pages show (:data:`.feedback.POLICIES`).
    jobs, released, checks_package, options, progress
        As for :func:`.runner.grade`.

    Raises
    ------
    GraderError
        When nothing can be graded, the run would drop rows of the existing report (told
        before grading, from the file names and the notebooks' cells), or the journal does
        not fit (an interrupted run without ``resume``, or ``resume`` without one).
    runner.Interrupted
        On Ctrl-C, after the report has been written with what had finished (merged by row
        into an existing report, so nothing is lost) and the journal kept for ``--resume``.
    """
    out = Path(out)
    _check_feedback(feedback)
    lessons, people_of = _lessons_and_roster(released, checks_package, roster)
    found = _found(paths, students, people_of, shard)
    previous = read_gradebook(out)
    if previous is not None and not merge and not students and not resume:
        _refuse_drops(previous, found, lessons, out)
    key = _secret(secret, out)
    options = dataclasses.replace(options or GradingOptions(), secret=key)
    releases = {lesson.key: lesson.release for lesson in lessons.values()}
    header = {"started": _now(), "releases": releases, "secret_id": fingerprint(key),
              "shard": list(shard) if shard else None, "students": list(students or []),
              "merge": merge}
    journal = Journal(out)
    done = _journal_done(journal, header, resume)
    kept, todo = _unchanged(found.submissions, done, releases)
    journal.open(None if resume else header)
    interrupted = None
    try:
        if todo:
            book = grade(paths, students=students, jobs=jobs, released=released,
                         checks_package=checks_package, options=options, progress=progress,
                         on_graded=journal.append, found=Found(todo))
        else:
            book = Gradebook(lessons=_summaries(lessons), notebooks=[], jobs=jobs)
    except Interrupted as exc:
        interrupted, book = exc, exc.gradebook
    except BaseException:
        journal.close(done=False)
        raise
    book = _run_book(book, kept, found, people_of, shard, students, key, feedback)
    try:
        final, changed = _into_previous(previous, book, students, merge, interrupted, out,
                                        journal)
    except GraderError:
        journal.close(done=False)
        raise
    write_report(final, out, changed=changed)
    journal.close(done=interrupted is None)
    if interrupted is not None:
        raise Interrupted(final) from None
    return final


def _check_feedback(policy: str) -> None:
    from .feedback import POLICIES
    if policy not in POLICIES:
        raise GraderError(f"feedback must be one of {', '.join(POLICIES)}; got {policy!r}")


def _lessons_and_roster(released: str | os.PathLike[str] | None, checks_package: str | None,
                        roster: str | os.PathLike[str] | None
                        ) -> tuple[dict[int, ReleasedLesson], Roster | None]:
    """The released lessons and the roster, or a :class:`GraderError` saying what is wrong."""
    try:
        lessons = load_lessons(released, checks_package)
    except LessonError as exc:
        raise GraderError(str(exc)) from exc
    try:
        return lessons, (read_roster(roster) if roster is not None else None)
    except ValueError as exc:
        raise GraderError(str(exc)) from exc


def _found(paths: Sequence[str | os.PathLike[str]], students: Sequence[str] | None,
           people_of: Roster | None, shard: tuple[int, int] | None) -> Found:
    """The submissions under ``paths``; a :class:`GraderError` when there are none."""
    try:
        found = scan(paths, students, people_of, shard)
    except FileNotFoundError as exc:
        raise GraderError(str(exc)) from exc
    if not found.submissions and shard is None:   # (a shard may hold nobody)
        who = f" from {', '.join(students)}" if students else ""
        hint = f" ({len(found.unattributed)} notebook(s) name no student: see the layout in " \
            "--help)" if found.unattributed else ""
        raise GraderError(f"no notebooks{who} under {', '.join(map(str, paths))}{hint}")
    return found


def _expected_lesson(submission: Submission, lessons: Mapping[int, ReleasedLesson]) -> str | None:
    """The lesson the grader will grade ``submission`` as (:func:`.submissions.identify`, on
    its file name, else its cells), or None when it will be no lesson."""
    notebook = None
    if submission.number_in_name not in lessons:
        try:
            notebook = read_notebook(submission.path.read_bytes())
        except (OSError, UnreadableNotebook):
            notebook = None
    lesson, _ = identify(notebook, submission, lessons)
    return lesson.key if lesson is not None else None


def _refuse_drops(previous: Gradebook, found: Found, lessons: Mapping[int, ReleasedLesson],
                  out: Path) -> None:
    """Refuse, before anything is graded, a run that would drop rows of the report in
    ``out``: students it lacks, or (student, lesson) rows that none of the student's
    notebooks in this run will be graded as. Rows of notebooks of no lesson are left to the
    check after grading (:meth:`.results.Gradebook.lost_by`)."""
    lost = sorted({n.student for n in previous.notebooks}
                  - {s.student for s in found.submissions})
    if lost:
        raise GraderError(_refusal(out, lost, "student(s)"))
    covered = {(s.student, _expected_lesson(s, lessons)) for s in found.submissions}
    rows = sorted({n.key for n in previous.notebooks if n.lesson is not None}
                  - covered)
    if rows:
        raise GraderError(_refusal(out, [f"{s} {lesson}" for s, lesson in rows], "row(s)")
                          + "; nothing was graded")


def _secret(secret: str | os.PathLike[str] | None, out: Path) -> bytes:
    try:
        return load_secret(Path(secret) if secret is not None else out / ".secret")
    except (OSError, ValueError) as exc:
        raise GraderError(str(exc)) from exc


def _journal_done(journal: Journal, header: dict[str, Any], resume: bool) -> list[NotebookGrade]:
    """What the journal in ``out`` has graded, when this run resumes it (else nothing); a
    :class:`GraderError` when it does not fit: another run's, or an interrupted run's
    without ``resume``."""
    if not resume:
        state, _, count = journal.state()
        if state == "interrupted":
            raise GraderError(f"{journal.path} holds an interrupted run ({count} notebook(s) "
                              "graded): --resume continues it without grading those again; "
                              "remove the file to start afresh")
        return []
    state, old_header, done = journal.read()
    if state == "none":
        raise GraderError(f"--resume: there is no journal ({JOURNAL}) in {journal.path.parent} "
                          "to resume")
    for field, what in (("releases", "other released lessons"),
                        ("secret_id", "another secret"), ("shard", "another shard")):
        if old_header.get(field) != header[field]:
            raise GraderError(f"--resume: the run in {journal.path} graded with {what} "
                              f"({old_header.get(field)} there, {header[field]} now); "
                              "start afresh without --resume")
    return done


def _unchanged(submissions: list[Submission], done: list[NotebookGrade],
               releases: dict[str, str]) -> tuple[list[NotebookGrade], list[Submission]]:
    """``(kept, todo)``: the journal's grades of notebooks whose bytes, student and release
    are unchanged, and the submissions to grade."""
    by_path = {Path(n.path).resolve(): n for n in done}
    kept: list[NotebookGrade] = []
    todo = []
    for submission in submissions:
        before = by_path.get(submission.path.resolve())
        if before is not None and before.student == submission.student and \
                before.release == releases.get(before.lesson or "", before.release):
            try:
                same = sha256(submission.path.read_bytes()) == before.sha256
            except OSError:
                same = False
            if same:
                kept.append(before)
                continue
        todo.append(submission)
    return kept, todo


def _run_book(book: Gradebook, kept: list[NotebookGrade], found: Found,
              people_of: Roster | None, shard: tuple[int, int] | None,
              students: Sequence[str] | None, key: bytes, feedback: str) -> Gradebook:
    """The gradebook of this run: the notebooks kept from the journal and those graded,
    duplicates marked again over all of them, the roster's people this run covers."""
    notebooks = kept + book.notebooks
    for notebook in notebooks:   # duplicates are marked again over the whole run
        notebook.issues = [i for i in notebook.issues if i.kind != "duplicate"]
    notebooks.sort(key=lambda n: (n.student, n.lesson or "~", n.path))
    _mark_duplicates(notebooks)
    people = people_of.people() if people_of is not None else {}
    if shard is not None:
        people = {k: v for k, v in people.items() if shard_of(k, shard[1]) == shard[0]}
    if students:
        people = {k: v for k, v in people.items() if k in set(students)}
    return Gradebook(lessons=book.lessons, notebooks=notebooks, seconds=book.seconds,
                     jobs=book.jobs, people=dict(sorted(people.items())),
                     shard=list(shard) if shard else None, secret_id=fingerprint(key),
                     unattributed=[{"path": str(u.path), "why": u.why}
                                   for u in found.unattributed], feedback=feedback)


def _into_previous(previous: Gradebook | None, book: Gradebook, students: Sequence[str] | None,
                   merge: bool, interrupted: Interrupted | None, out: Path, journal: Journal
                   ) -> tuple[Gradebook, list[str] | None]:
    """``(final, changed)``: the report to write (this run's, or merged into the previous
    one) and the students whose rows and pages can differ from those in ``out`` (None: any).
    A run that would drop rows after all raises :class:`GraderError`."""
    if previous is None:
        return book, None
    same_pages = previous.feedback == book.feedback
    if students:
        return previous.merged(book, students), list(students) if same_pages else None
    if merge or interrupted is not None:
        return previous.merged_rows(book), book.students() if same_pages else None
    rows = previous.lost_by(book)
    if rows:
        raise GraderError(_refusal(out, [f"{s} {lesson}" for s, lesson in rows], "row(s)")
                          + "; the grades of this run are kept in "
                          f"{journal.path}: --merge --resume writes them without grading again")
    return book, None


def merge_reports(reports: Sequence[str | os.PathLike[str]], out: str | os.PathLike[str],
                  feedback: str = "full") -> Gradebook:
    """Join shard reports (folders with a ``grades.json``) into one report written to ``out``.

    The shards must have graded the same released lessons with the same secret, hold no
    student twice, and, when they are ``--shard I/N`` runs, be all N of them. ``feedback``:
    what the joined report's feedback pages show (:data:`.feedback.POLICIES`).

    Raises
    ------
    GraderError
        Naming the report that does not fit, and why.
    """
    _check_feedback(feedback)
    books = []
    for folder in reports:
        book = read_gradebook(folder)
        if book is None:
            raise GraderError(f"merge: {folder} holds no report (no grades.json)")
        books.append((Path(folder), book))
    if not books:
        raise GraderError("merge: give at least one report folder")
    _check_shards(books)
    first = books[0][1]
    notebooks = sorted((n for _, book in books for n in book.notebooks),
                       key=lambda n: (n.student, n.lesson or "~", n.path))
    unattributed = sorted((u for _, book in books for u in book.unattributed),
                          key=lambda u: u["path"])
    people: dict[str, dict[str, str]] = {}
    for _, book in books:
        people.update(book.people)
    merged = Gradebook(lessons=first.lessons, notebooks=notebooks,
                       seconds=round(sum(book.seconds for _, book in books), 2),
                       jobs=sum(book.jobs for _, book in books), unattributed=unattributed,
                       people=dict(sorted(people.items())), secret_id=first.secret_id,
                       feedback=feedback)
    write_report(merged, out)
    return merged


def _check_shards(books: list[tuple[Path, Gradebook]]) -> None:
    """Raise :class:`GraderError` unless the reports are parts of one class: the same
    released lessons and secret, no student twice, all N shards of ``--shard I/N`` runs."""
    first_path, first = books[0]
    releases = {lesson.key: lesson.release for lesson in first.lessons}
    owner: dict[str, Path] = {}
    shards: dict[int, Path] = {}
    counts = set()
    for path, book in books:
        if {lesson.key: lesson.release for lesson in book.lessons} != releases:
            raise GraderError(f"merge: {path} was graded with other released lessons than "
                              f"{first_path}")
        if book.secret_id != first.secret_id:
            raise GraderError(f"merge: {path} and {first_path} were graded with different "
                              "probe secrets: give every shard the same --secret FILE")
        if book.shard is not None:
            index, count = book.shard
            counts.add(count)
            if index in shards:
                raise GraderError(f"merge: {path} and {shards[index]} are both shard "
                                  f"{index}/{count}")
            shards[index] = path
        for student in book.students():
            if student in owner and owner[student] != path:
                raise GraderError(f"merge: {student} is in both {owner[student]} and {path}")
            owner[student] = path
    if len(counts) > 1:
        raise GraderError(f"merge: the reports are shards of different counts {sorted(counts)}")
    if counts:
        (count,) = counts
        absent = sorted(set(range(count)) - set(shards))
        if absent or len(shards) != len(books):
            raise GraderError(f"merge: shard(s) {', '.join(f'{i}/{count}' for i in absent)} "
                              "missing" if absent else "merge: shard and whole-class reports "
                              "cannot be mixed")

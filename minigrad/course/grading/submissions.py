"""Finding submissions, naming their students, and building the notebook the grader runs.

Who handed a notebook in (the first that applies):

* a learning-management system's file name, whatever follows it (in any folder, so that
  ``submissions/lesson1/<a Canvas export>`` is not graded as one student called lesson1):

  - Canvas ``lastfirst_[LATE_]ID_FILEID_name``: the login-like name and the user id
    (``doejane_12345``); ``LATE`` sets the notebook's late mark;
  - Blackboard ``Assignment_username_attempt_YYYY-MM-DD-HH-MM-SS_name``: the user name;
  - Moodle ``Full Name_NNN_assignsubmission_file_name``: the full name (NNN is a participant id
    of one assignment, different in every lesson, so it never names the student);

* ``submissions/<student>/.../<anything>.ipynb`` -- one folder per student (recommended): the
  first folder under the one given on the command line names the student (a Moodle folder,
  ``Jane Doe_123_assignsubmission_file_``, names Jane Doe);
* ``submissions/<student>_<NN>_<anything>.ipynb``: the part before the lesson number;
* a notebook given directly: the folder it is in. A folder given whose notebooks all lack a
  student part (and that has no student folders) is one student's, named after the folder.

Any other file is *unattributed*: listed in the report as such, never graded as an invented
student. A roster (:mod:`.roster`) then maps each identity to a student of the course.

The lesson is the ``NN`` prefix of what follows the identity (``01_x.ipynb``,
``doejane_12345_678_02_y.ipynb``); when there is none, or it names no released lesson, the
notebook's ``exercise:``/``check:`` tags (or ``metadata.minigrad.lesson``) tell. A notebook
whose cells belong to another lesson than its name says is graded as the lesson its name
says, and flagged ("wrong lesson").

The notebook that runs is the *released* lesson with the student's exercise cells put in place
(as nbgrader restores locked cells): every other cell is the released one, ``demo`` cells are
left out, and check cells become runs of the released checks (see :mod:`.runner`).
"""
from __future__ import annotations

import datetime
import hashlib
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import nbformat

from .lessons import (ReleasedLesson, cell_ids, cell_tags, checksum, lesson_of, metadata_version,
                      normalize, release_changes, submitted_release)
from .results import Issue, NotebookGrade

if TYPE_CHECKING:
    from .roster import Roster

__all__ = ["stamp", "Submission", "Found", "Unattributed", "find_submissions", "scan", "parse_name",
           "NameParts", "read_notebook", "identify", "assemble", "Step", "Assembly",
           "UnreadableNotebook", "shard_of"]

_NAME = re.compile(r"^(?:(?P<student>.+?)[_\-\s]+)?(?P<number>\d{2})(?:[_\-\s.]|$)")
_NUMBER = re.compile(r"^(?P<number>\d{2})(?:[_\-\s.]|$)")
_SKIP_DIRS = {"__pycache__", "node_modules"}

# The identity part of the file names learning-management systems give a download:
#   Canvas      doejane_12345_67890_x.ipynb, doejane_LATE_12345_67890_x.ipynb (user id, then a
#               file id that changes with every upload)
#   Blackboard  Lesson 1_jdoe_attempt_2026-09-01-12-30-00_x.ipynb
#   Moodle      Jane Doe_4242_assignsubmission_file_x.ipynb (4242: a participant id of this
#               assignment only)
_MOODLE = re.compile(r"^(?P<name>.+?)_(?P<pid>\d+)_assignsubmission_(?:file|onlinetext)_?"
                     r"(?P<rest>.*)$", re.S)
_CANVAS = re.compile(r"^(?P<login>[^_\s]+)(?P<late>_late)?_(?P<user>\d{3,})_(?P<file>\d{3,})"
                     r"(?:_(?P<rest>.*))?$", re.S | re.I)
_BLACKBOARD = re.compile(r"^(?P<assignment>.*?)_?(?P<user>[^_]+)_attempt_"
                         r"(?P<date>\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2})(?:_(?P<rest>.*))?$", re.S)


@dataclass(frozen=True)
class NameParts:
    """What a file (or folder) name says about who handed it in.

    ``student`` is the identity (None when the name has none), ``source`` the format that
    matched (``"canvas"``, ``"blackboard"``, ``"moodle"``, ``"name"``), ``rest`` what follows the
    identity (where the lesson number is looked for), ``late`` Canvas's ``LATE`` mark, ``user_id``
    Canvas's numeric user id (what a Canvas gradebook export calls ``ID``), ``login`` the
    login-like part (Canvas's ``lastfirst``, Blackboard's user name).
    """

    student: str | None
    source: str
    rest: str
    late: bool = False
    user_id: str = ""
    login: str = ""
    #: Blackboard's attempt date (``YYYY-MM-DD-HH-MM-SS``, as its name says it).
    submitted: str = ""


def parse_name(name: str) -> NameParts:
    """Split a submission's file name (or a student folder's name) into identity and rest.

    >>> parse_name("doejane_LATE_12345_67890_lesson1.ipynb")
    NameParts(student='doejane_12345', source='canvas', rest='lesson1.ipynb', late=True, user_id='12345', login='doejane', submitted='')
    >>> parse_name("Lesson 1_jdoe_attempt_2026-09-01-12-30-00_x.ipynb").submitted
    '2026-09-01-12-30-00'
    >>> parse_name("Jane Doe_4242_assignsubmission_file_01_x.ipynb").student
    'Jane Doe'
    >>> parse_name("09_toy.ipynb").student is None
    True
    """
    match = _MOODLE.match(name)
    if match and match["name"].strip():
        return NameParts(" ".join(match["name"].split()), "moodle", match["rest"] or "")
    match = _CANVAS.match(name)
    if match:
        return NameParts(f"{match['login']}_{match['user']}", "canvas", match["rest"] or "",
                         late=bool(match["late"]), user_id=match["user"], login=match["login"])
    match = _BLACKBOARD.match(name)
    if match:
        return NameParts(match["user"], "blackboard", match["rest"] or "", login=match["user"],
                         submitted=match["date"])
    match = _NAME.match(name)
    if match and match["student"]:
        student = match["student"]
        return NameParts(student, "name", name[len(student):].lstrip("_- "), login=student)
    return NameParts(None, "", name)


@dataclass(frozen=True)
class Submission:
    """A notebook on disk and the student it belongs to.

    ``rest`` is the part of the file name after the student's identity (where the lesson
    number is read); ``late`` the LMS's late mark; ``name``, ``section`` and ``note`` come from
    a roster (``note`` says what did not match it).
    """

    path: Path
    student: str
    rest: str | None = None
    late: bool = False
    source: str = ""
    user_id: str = ""
    login: str = ""
    name: str = ""
    section: str = ""
    note: str = ""
    #: When the LMS's file name says it was handed in (Blackboard's attempt date).
    submitted: str = ""

    @property
    def number_in_name(self) -> int | None:
        """The lesson number the file name starts with (after any student part), if any."""
        if self.rest is None:
            match = _NAME.match(self.path.name)
            return int(match["number"]) if match else None
        match = _NUMBER.match(self.rest)
        return int(match["number"]) if match else None


@dataclass(frozen=True)
class Unattributed:
    """A notebook that the grader cannot credit to anyone, and why."""

    path: Path
    why: str


@dataclass
class Found:
    """What :func:`scan` found: the submissions, and the notebooks nobody can be credited with."""

    submissions: list[Submission]
    unattributed: list[Unattributed] = field(default_factory=list)


def shard_of(key: str, shards: int) -> int:
    """The shard (0 .. shards-1) that grades ``key`` (a student): the same on every machine."""
    return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big") % shards


def _student_in_name(filename: str) -> str | None:
    return parse_name(filename).student


def _from_name(path: Path, parts: NameParts, student: str | None = None) -> Submission:
    return Submission(path, student or parts.student or "", rest=parts.rest, late=parts.late,
                      source=parts.source, user_id=parts.user_id, login=parts.login,
                      submitted=parts.submitted)


def _notebooks_under(folder: Path) -> Iterable[Path]:
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS)
        for name in sorted(files):
            if name.endswith(".ipynb") and not name.startswith("."):
                yield Path(root) / name


def scan(paths: Sequence[str | os.PathLike[str]], students: Iterable[str] | None = None,
         roster: "Roster | None" = None, shard: tuple[int, int] | None = None) -> Found:
    """Every notebook under ``paths``, with its student, and those that have none.

    Parameters
    ----------
    paths : sequence of paths
        Notebooks and folders of them (searched recursively; hidden folders such as
        ``.ipynb_checkpoints`` are skipped).
    students : iterable of str, optional
        Keep only these students' notebooks.
    roster : Roster, optional
        Names each identity as the course's student (:meth:`.roster.Roster.attribute`).
    shard : (index, count), optional
        Keep only the students (and unattributed files) of shard ``index`` of ``count``.

    Raises
    ------
    FileNotFoundError
        When a path does not exist.
    """
    found: dict[Path, Submission] = {}
    lost: dict[Path, Unattributed] = {}
    for given in map(Path, paths):
        if given.is_dir():
            _scan_folder(given.resolve(), found, lost)
        elif given.is_file():
            parts = parse_name(given.name)
            if parts.student is None:
                parts = NameParts(given.resolve().parent.name, "folder", given.name)
            found.setdefault(given.resolve(), _from_name(given, parts))
        else:
            raise FileNotFoundError(f"no such notebook or folder: {given}")
    subs = list(found.values())
    if roster is not None:
        subs = [roster.attribute(s) for s in subs]
    wanted = set(students) if students is not None else None
    subs = [s for s in subs if wanted is None or s.student in wanted]
    unattributed = sorted(lost.values(), key=lambda u: str(u.path)) if wanted is None else []
    if shard is not None:
        index, count = shard
        subs = [s for s in subs if shard_of(s.student, count) == index]
        unattributed = [u for u in unattributed if shard_of(u.path.name, count) == index]
    return Found(sorted(subs, key=lambda s: (s.student, str(s.path))), unattributed)


def _scan_folder(folder: Path, found: dict[Path, Submission],
                 lost: dict[Path, Unattributed]) -> None:
    """Add the notebooks under ``folder`` to ``found`` (by resolved path, the first naming
    kept) or, when nothing names their student, to ``lost``."""
    notebooks = list(_notebooks_under(folder))
    relative = [p.relative_to(folder) for p in notebooks]
    loose = [p for p, r in zip(notebooks, relative) if len(r.parts) == 1]
    one_student = not any(len(r.parts) > 1 for r in relative) and all(
        parse_name(p.name).student is None for p in loose)
    for path, rel in zip(notebooks, relative):
        if len(rel.parts) > 1:
            folder_parts = parse_name(rel.parts[0])
            student = folder_parts.student if folder_parts.source in (
                "moodle", "canvas", "blackboard") else rel.parts[0]
            parts = parse_name(path.name)   # an LMS name wins over the folder
            if parts.source not in ("canvas", "blackboard", "moodle"):
                parts = NameParts(student, "folder", path.name)
            sub = _from_name(path, parts)
        elif (parts := parse_name(path.name)).student is not None:
            sub = _from_name(path, parts)
        elif one_student:
            sub = _from_name(path, NameParts(folder.name, "folder", path.name))
        else:
            lost.setdefault(path.resolve(), Unattributed(path, (
                "its name has no student part (lastfirst_ID_FILEID_…, …_user_attempt_"
                "…, Full Name_NNN_assignsubmission_file_…, student_NN_…) and it is not "
                "in a student's folder")))
            continue
        found.setdefault(path.resolve(), sub)


def find_submissions(paths: Sequence[str | os.PathLike[str]],
                     students: Iterable[str] | None = None) -> list[Submission]:
    """The attributed notebooks under ``paths``, sorted by student then path (see :func:`scan`).

    Raises
    ------
    FileNotFoundError
        When a path does not exist.
    """
    return scan(paths, students).submissions


class UnreadableNotebook(ValueError):
    """The file is empty, not JSON, or not a notebook; the message says which."""


def read_notebook(data: bytes) -> nbformat.NotebookNode:
    """Parse a submission's bytes into a notebook (version 4), never touching the file.

    Raises
    ------
    UnreadableNotebook
        With a message a student understands: empty, not UTF-8, not JSON (where), not a notebook.
    """
    if not data.strip():
        raise UnreadableNotebook(f"the file is empty ({len(data)} bytes)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnreadableNotebook(f"the file is not UTF-8 text ({exc.reason} at byte "
                                 f"{exc.start})") from None
    try:
        notebook = nbformat.reads(text, as_version=4)
    except nbformat.reader.NotJSONError:
        import json
        try:
            json.loads(text)
        except json.JSONDecodeError as exc:
            raise UnreadableNotebook(f"the file is not valid JSON (line {exc.lineno}, column "
                                     f"{exc.colno}: {exc.msg}); was it saved completely?") from None
        raise UnreadableNotebook("the file is not a notebook") from None
    except Exception as exc:  # valid JSON of the wrong shape
        raise UnreadableNotebook(f"the file is JSON but not a notebook ({type(exc).__name__}: "
                                 f"{exc})") from None
    cells = notebook.get("cells")
    if not isinstance(cells, list) or not all(isinstance(c, Mapping) for c in cells):
        raise UnreadableNotebook("the file is JSON but not a notebook (no list of cells)")
    for cell in cells:
        source = cell.get("source", "")
        cell["source"] = "".join(source) if isinstance(source, list) else str(source)
    return notebook


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def identify(notebook: Mapping[str, Any] | None, submission: Submission,
             lessons: Mapping[int, ReleasedLesson]) -> tuple[ReleasedLesson | None, list[Issue]]:
    """Which released lesson a submission is, and any doubt about it.

    The file name's lesson number wins when it names a released lesson (a notebook whose
    cells are another lesson's is then flagged, and not run); otherwise the notebook's tags
    (or ``metadata.minigrad.lesson``) decide.
    """
    issues: list[Issue] = []
    in_name = submission.number_in_name
    in_cells = _lesson_in_cells(notebook) if notebook is not None else None
    if in_name is not None and in_name in lessons:
        lesson = lessons[in_name]
        if in_cells is not None and in_cells != in_name:
            issues.append(Issue("wrong lesson", f"the file is named as lesson {in_name} but its "
                                f"exercise and check cells are lesson {in_cells}'s: it was "
                                f"graded as lesson {in_name}"))
        return lesson, issues
    if in_cells is not None and in_cells in lessons:
        if in_name is not None:
            issues.append(Issue("wrong lesson", f"the file name says lesson {in_name}, which "
                                f"was not released; its cells are lesson {in_cells}'s"))
        return lessons[in_cells], issues
    what = f"lesson {in_cells}, which was not released" if in_cells is not None else \
        "no lesson (no NN_ prefix in its name and no exercise or check tags)"
    issues.append(Issue("unidentified", f"the notebook looks like {what}"))
    return None, issues


def _lesson_in_cells(notebook: Mapping[str, Any]) -> int | None:
    votes: Counter[int] = Counter()
    for cell in notebook.get("cells", []):
        for kind in ("exercise", "check"):
            votes.update(lesson_of(i) for i in cell_ids(cell, kind))
    if votes:
        return votes.most_common(1)[0][0]
    metadata = notebook.get("metadata")
    course = metadata.get("minigrad") if isinstance(metadata, Mapping) else None
    lesson = course.get("lesson") if isinstance(course, Mapping) else None
    try:
        return int(lesson) if lesson is not None else None
    except (TypeError, ValueError):
        return None


@dataclass
class Step:
    """One thing to run in the kernel: a notebook cell, or a released check cell.

    ``label`` says where it came from, for messages: ``"exercise 1.3"``, ``"cell 12"``,
    ``"check 1.3"``.
    """

    kind: str            # "cell" or "check"
    source: str
    label: str
    exercise: str | None = None


@dataclass
class Assembly:
    """The notebook to run for one submission, and what the comparison with the release found."""

    steps: list[Step]
    attempted: set[str] = field(default_factory=set)
    issues: list[Issue] = field(default_factory=list)


def assemble(notebook: Mapping[str, Any], lesson: ReleasedLesson) -> Assembly:
    """Build the steps to run: the released lesson with the submission's exercise cells in place.

    Also compares the submission with the release: exercises not attempted (missing, or still
    the released placeholder), check cells edited or deleted, and signs of another version.
    """
    mine: dict[str, dict[str, list[str]]] = {"exercise": {}, "check": {}}
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        for kind, table in mine.items():
            for exercise_id in cell_ids(cell, kind):
                table.setdefault(exercise_id, []).append(cell.get("source", ""))
    assembly = Assembly(steps=[])
    placed = _place_exercises(mine["exercise"], lesson, assembly)
    issues = assembly.issues
    # check cells: the released source always runs; edits and deletions are reported
    for exercise_id in lesson.check_cells:
        sources = mine["check"].get(exercise_id)
        if not sources:
            issues.append(Issue("deleted check", f"the check cell of exercise {exercise_id} is "
                                "missing; the released check was run"))
        elif sorted(map(checksum, sources)) != lesson.check_checksums(exercise_id):
            issues.append(Issue("tampered check", f"the check cell of exercise {exercise_id} "
                                "differs from the released one; the released check was run"))
    issues += _version_issues(notebook, lesson, mine)
    for index, cell in enumerate(lesson.notebook.cells):
        if cell.cell_type != "code":
            continue
        checks = cell_ids(cell, "check")
        if index in placed:
            exercise_id = cell_ids(cell, "exercise")[0]
            assembly.steps.append(Step("cell", placed[index], f"exercise {exercise_id}",
                                       exercise_id))
        elif checks:
            assembly.steps += [Step("check", cell.source, f"check {c}", c) for c in checks]
        elif "demo" not in cell_tags(cell):
            assembly.steps.append(Step("cell", cell.source, f"cell {index + 1}"))
    return assembly


def _place_exercises(exercises: dict[str, list[str]], lesson: ReleasedLesson,
                     assembly: Assembly) -> dict[int, str]:
    """The student's source for each released exercise cell (by the cell's index), the
    exercises attempted (not missing, not still the released placeholder) marked in
    ``assembly``, and missing or split exercises among its issues."""
    placed: dict[int, str] = {}
    for exercise_id, indices in lesson.exercise_cells.items():
        sources = exercises.get(exercise_id)
        released = [lesson.source(i) for i in indices]
        if not sources:
            assembly.issues.append(Issue("missing exercise", f"no cell is tagged exercise:"
                                         f"{exercise_id}; the released placeholder was run "
                                         "instead"))
            sources = released
        elif len(sources) != len(indices):
            assembly.issues.append(Issue("split exercise", f"{len(sources)} cells are tagged "
                                         f"exercise:{exercise_id}; they were run together, in "
                                         "order"))
            sources = ["\n\n".join(sources)] + [""] * (len(indices) - 1)
        if [normalize(s) for s in sources] != [normalize(s) for s in released]:
            assembly.attempted.add(exercise_id)
        placed.update(zip(indices, sources))
    return placed


def _version_issues(notebook: Mapping[str, Any], lesson: ReleasedLesson,
                    mine: dict[str, dict[str, list[str]]]) -> list[Issue]:
    """An "old release" issue naming what changed, else "other version" when the notebook
    has exercises the release lacks or metadata of another version (else none)."""
    foreign = sorted(set(mine["exercise"]) | set(mine["check"]), key=_id_order)
    foreign = [i for i in foreign if lesson_of(i) == lesson.number
               and i not in lesson.exercise_cells and i not in lesson.check_cells]
    theirs, ours = metadata_version(notebook), lesson.version
    changes = release_changes(notebook, lesson)
    if changes:
        return [Issue("old release", f"this notebook was handed out in release "
                      f"{submitted_release(notebook)} of lesson {lesson.number}; it was "
                      f"graded with release {lesson.release}: " + "; ".join(changes))]
    if foreign or (theirs is not None and ours is not None and theirs != ours):
        why = f"it has exercises the release does not ({', '.join(foreign)})" if foreign else \
            f"its metadata says version {theirs}, the release is {ours}"
        return [Issue("other version", f"this notebook is from another version of lesson "
                      f"{lesson.number}: {why}")]
    return []


def past_due(submission: Submission, lesson: int, due: Mapping[int | None, str]) -> bool:
    """Whether the submission's attempt date (Blackboard's, in its name) is after the due
    date of ``lesson`` in ``due`` (``{number or None (every lesson): "YYYY-MM-DDTHH:MM[:SS]"}``,
    in the time zone of Blackboard's names)."""
    when = due.get(lesson, due.get(None))
    if not submission.submitted or when is None:
        return False
    handed = datetime.datetime.strptime(submission.submitted, "%Y-%m-%d-%H-%M-%S")
    return handed > datetime.datetime.fromisoformat(when)


def stamp(grade: NotebookGrade, submission: Submission, notebook: Mapping[str, Any] | None = None,
          lesson: ReleasedLesson | None = None, due: Mapping[int | None, str] | None = None
          ) -> None:
    """Write onto ``grade`` what the submission's name, the roster and the release say: the
    late mark (the LMS's own, or an attempt date past ``due``), a "not on roster" issue, the
    release graded with and the one handed in."""
    grade.late = submission.late or (lesson is not None and due is not None
                                     and past_due(submission, lesson.number, due))
    if not grade.graded_at:
        grade.graded_at = datetime.datetime.now(datetime.timezone.utc).isoformat(
            timespec="seconds")
    if submission.note and not any(i.kind == "not on roster" for i in grade.issues):
        grade.issues.insert(0, Issue("not on roster", submission.note))
    if lesson is not None:
        grade.release = lesson.release
        grade.submitted_release = submitted_release(notebook)


def _id_order(exercise_id: str) -> tuple[tuple[int, int, str], ...]:
    """Sort key for exercise ids: ``"1.2" < "1.10"``."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in exercise_id.split("."))

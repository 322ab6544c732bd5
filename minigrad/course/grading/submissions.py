"""Finding submissions, naming their students, and building the notebook the grader runs.

Layout (the first that applies names the student):

* ``submissions/<student>/<NN>_<anything>.ipynb`` -- one folder per student (recommended);
  deeper folders are fine, the first folder under the one given on the command line names
  the student;
* ``submissions/<student>_<NN>_<anything>.ipynb`` -- a flat folder, as learning-management
  systems export them: the student is the part before the lesson number, less the
  submission ids an export adds (``smithjohn_12345_67890_01_x.ipynb`` and
  ``smithjohn_LATE_12345_67999_02_y.ipynb`` are both ``smithjohn_12345``);
* a notebook given directly, or one sitting directly in the folder given, without a student
  part in its name: the student is the name of the folder it is in.

The lesson is the file name's ``NN`` prefix; when the name has none (or names no released
lesson) the notebook's ``exercise:``/``check:`` tags tell. A notebook whose cells belong to
another lesson than its name says is graded as the lesson its name says, and flagged.

The notebook that runs is the *released* lesson with the student's exercise cells put in place
(as nbgrader restores locked cells): every other cell is the released one, ``demo`` cells are
left out, and check cells become runs of the released checks (see :mod:`.runner`).
"""
from __future__ import annotations

import hashlib
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import nbformat

from .lessons import (ReleasedLesson, cell_ids, cell_tags, checksum, lesson_of, metadata_version,
                      normalize)
from .results import Issue

__all__ = ["Submission", "find_submissions", "read_notebook", "identify", "assemble", "Step",
           "Assembly", "UnreadableNotebook"]

_NAME = re.compile(r"^(?:(?P<student>.+?)[_\-\s]+)?(?P<number>\d{2})(?:[_\-\s.]|$)")
_SKIP_DIRS = {"__pycache__", "node_modules"}


@dataclass(frozen=True)
class Submission:
    """A notebook on disk and the student it belongs to."""

    path: Path
    student: str

    @property
    def number_in_name(self) -> int | None:
        """The lesson number the file name starts with (after any student part), if any."""
        match = _NAME.match(self.path.name)
        return int(match["number"]) if match else None


# What learning-management systems put after the student's name in an export's file names:
# Canvas "smithjohn_12345_67890_..." or "smithjohn_LATE_12345_67890_..." (user id, then a
# submission id that changes with every upload), Moodle "John Smith_12345_assignsubmission_file_".
_LMS = re.compile(r"^(?P<name>.+?)(?:_LATE)?_(?P<user>\d{3,})(?:_\d+)*"
                  r"(?:_assignsubmission_file)?_*$")


def _student_in_name(filename: str) -> str | None:
    match = _NAME.match(filename)
    if not match or not match["student"]:
        return None
    student = match["student"]
    lms = _LMS.match(student)
    return f"{lms['name']}_{lms['user']}" if lms else student


def _notebooks_under(folder: Path) -> Iterable[Path]:
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS)
        for name in sorted(files):
            if name.endswith(".ipynb") and not name.startswith("."):
                yield Path(root) / name


def find_submissions(paths: Sequence[str | os.PathLike[str]],
                     students: Iterable[str] | None = None) -> list[Submission]:
    """Every notebook under ``paths``, with its student, sorted by student then path.

    Parameters
    ----------
    paths : sequence of paths
        Notebooks and folders of them (searched recursively; hidden folders such as
        ``.ipynb_checkpoints`` are skipped).
    students : iterable of str, optional
        Keep only these students' notebooks.

    Raises
    ------
    FileNotFoundError
        When a path does not exist.
    """
    found: dict[Path, Submission] = {}
    for given in map(Path, paths):
        if given.is_dir():
            folder = given.resolve()
            for path in _notebooks_under(folder):
                relative = path.relative_to(folder)
                student = relative.parts[0] if len(relative.parts) > 1 else (
                    _student_in_name(path.name) or folder.name)
                found.setdefault(path.resolve(), Submission(path, student))
        elif given.is_file():
            student = _student_in_name(given.name) or given.resolve().parent.name
            found.setdefault(given.resolve(), Submission(given, student))
        else:
            raise FileNotFoundError(f"no such notebook or folder: {given}")
    wanted = set(students) if students is not None else None
    return sorted((s for s in found.values() if wanted is None or s.student in wanted),
                  key=lambda s: (s.student, str(s.path)))


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


def identify(notebook: Mapping | None, submission: Submission,
             lessons: Mapping[int, ReleasedLesson]) -> tuple[ReleasedLesson | None, list[Issue]]:
    """Which released lesson a submission is, and any doubt about it.

    The file name's lesson number wins when it names a released lesson; otherwise the
    notebook's tags (or ``metadata.minigrad.lesson``) decide.
    """
    issues: list[Issue] = []
    in_name = submission.number_in_name
    in_cells = _lesson_in_cells(notebook) if notebook is not None else None
    if in_name in lessons:
        lesson = lessons[in_name]
        if in_cells is not None and in_cells != in_name:
            issues.append(Issue("wrong lesson", f"the file is named as lesson {in_name} but its "
                                f"exercise and check cells are lesson {in_cells}'s: it was "
                                f"graded as lesson {in_name}"))
        return lesson, issues
    if in_cells in lessons:
        if in_name is not None:
            issues.append(Issue("wrong lesson", f"the file name says lesson {in_name}, which "
                                f"was not released; its cells are lesson {in_cells}'s"))
        return lessons[in_cells], issues
    what = f"lesson {in_cells}, which was not released" if in_cells is not None else \
        "no lesson (no NN_ prefix in its name and no exercise or check tags)"
    issues.append(Issue("unidentified", f"the notebook looks like {what}"))
    return None, issues


def _lesson_in_cells(notebook: Mapping) -> int | None:
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


def assemble(notebook: Mapping, lesson: ReleasedLesson) -> Assembly:
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
    issues = assembly.issues

    # exercises: attempted or not, and the student's source for each released exercise cell
    placed: dict[int, str] = {}
    for exercise_id, indices in lesson.exercise_cells.items():
        sources = mine["exercise"].get(exercise_id)
        released = [lesson.source(i) for i in indices]
        if not sources:
            issues.append(Issue("missing exercise", f"no cell is tagged exercise:{exercise_id}; "
                                "the released placeholder was run instead"))
            sources = released
        elif len(sources) != len(indices):
            issues.append(Issue("split exercise", f"{len(sources)} cells are tagged "
                                f"exercise:{exercise_id}; they were run together, in order"))
            sources = ["\n\n".join(sources)] + [""] * (len(indices) - 1)
        if [normalize(s) for s in sources] != [normalize(s) for s in released]:
            assembly.attempted.add(exercise_id)
        placed.update(zip(indices, sources))

    # check cells: the released source always runs; edits and deletions are reported
    for exercise_id in lesson.check_cells:
        sources = mine["check"].get(exercise_id)
        if not sources:
            issues.append(Issue("deleted check", f"the check cell of exercise {exercise_id} is "
                                "missing; the released check was run"))
        elif sorted(map(checksum, sources)) != lesson.check_checksums(exercise_id):
            issues.append(Issue("tampered check", f"the check cell of exercise {exercise_id} "
                                "differs from the released one; the released check was run"))

    # another version of the lesson?
    foreign = sorted(set(mine["exercise"]) | set(mine["check"]), key=_id_order)
    foreign = [i for i in foreign if lesson_of(i) == lesson.number
               and i not in lesson.exercise_cells and i not in lesson.check_cells]
    theirs, ours = metadata_version(notebook), lesson.version
    if foreign or (theirs is not None and ours is not None and theirs != ours):
        why = f"it has exercises the release does not ({', '.join(foreign)})" if foreign else \
            f"its metadata says version {theirs}, the release is {ours}"
        issues.append(Issue("other version", f"this notebook is from another version of lesson "
                            f"{lesson.number}: {why}"))

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


def _id_order(exercise_id: str) -> tuple:
    """Sort key for exercise ids: ``"1.2" < "1.10"``."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in exercise_id.split("."))

"""The released lessons: what was handed out, the checks' checksums, the exercises' weights.

The grader trusts only what it ships with: the released notebooks (package data in
``minigrad/course/released/``, written by ``python -m minigrad.course release``) and the
``EXERCISES`` table of each lesson's checks module (``minigrad/course/checks/lessonN.py``). A
submission is compared with these, cell by cell, never with itself.

Cells are found by their tags:

* ``exercise:<id>`` (e.g. ``exercise:1.3``): code the student writes; the grader takes it from
  the submission;
* ``check:<id>``: a call into the checks module; the grader runs the *released* source;
* ``demo``: a demonstration (long training, timings, figures) the grader skips.
"""
from __future__ import annotations

import functools
import hashlib
import importlib
import os
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Mapping

import nbformat

from minigrad.course.notebooks import RELEASE_KEY, normalize_source, release_info

__all__ = [
    "ReleasedLesson", "LessonError", "load_lessons", "default_released_dir", "cell_ids",
    "checksum", "normalize", "DEFAULT_CHECKS_PACKAGE", "CHECKS_ALIAS", "submitted_release",
    "release_changes",
]

#: The package the check cells call into; ``lessonN`` modules live in it.
DEFAULT_CHECKS_PACKAGE = "minigrad.course.checks"
#: The name the lessons' setup cell binds the checks package to (``from minigrad.course import checks``).
CHECKS_ALIAS = "checks"

_TAG = re.compile(r"^(?P<kind>exercise|check):(?P<id>(?P<lesson>\d+)\.[A-Za-z0-9_.-]+)$")
_LESSON_FILE = re.compile(r"^(?P<number>\d{2})_[^/]*\.ipynb$")


class LessonError(RuntimeError):
    """The released lessons cannot be used for grading (missing, unreadable or inconsistent)."""


#: A cell's source with line endings unified and trailing blank space dropped: editors differ
#: in these and nothing else, so they must not make a cell look edited.
normalize = normalize_source


def checksum(source: str) -> str:
    """SHA-256 of a cell's normalized source (hex)."""
    return hashlib.sha256(normalize(source).encode("utf-8")).hexdigest()


def cell_tags(cell: Mapping[str, Any]) -> list[str]:
    """The tags of a notebook cell (an empty list when it has none or they are malformed)."""
    metadata = cell.get("metadata")
    tags = metadata.get("tags", []) if isinstance(metadata, Mapping) else []
    return [tag for tag in tags if isinstance(tag, str)] if isinstance(tags, list) else []


def cell_ids(cell: Mapping[str, Any], kind: str) -> list[str]:
    """The ids in a cell's ``<kind>:<id>`` tags, e.g. ``cell_ids(cell, "exercise") == ["1.3"]``."""
    ids = []
    for tag in cell_tags(cell):
        match = _TAG.match(tag)
        if match and match["kind"] == kind:
            ids.append(match["id"])
    return ids


def lesson_of(exercise_id: str) -> int:
    """The lesson number in an exercise id: ``lesson_of("2.4") == 2``."""
    return int(exercise_id.partition(".")[0])


def default_released_dir() -> Path:
    """Where the released lessons are: ``$MINIGRAD_RELEASED_DIR``, else the package data."""
    configured = os.environ.get("MINIGRAD_RELEASED_DIR")
    if configured:
        return Path(configured)
    return Path(str(resources.files("minigrad") / "course" / "released"))


@dataclass
class ReleasedLesson:
    """One released lesson notebook and everything the grader derives from it.

    Attributes
    ----------
    key : str
        The file's stem, e.g. ``"01_from_scalars_to_tensors"``: the lesson's column in reports.
    number : int
        The lesson number (the file's ``NN`` prefix).
    notebook : nbformat.NotebookNode
        The released notebook.
    exercises : dict
        ``{"1.1": {"title": ..., "points": ...}, ...}`` from the checks module, in its order.
    checks_module : str
        The module that holds the lesson's checks, e.g. ``"minigrad.course.checks.lesson1"``.
    """

    key: str
    number: int
    path: Path
    notebook: nbformat.NotebookNode = field(repr=False)
    exercises: dict[str, dict[str, Any]]
    checks_package: str
    checks_module: str
    exercise_cells: dict[str, list[int]] = field(default_factory=dict, repr=False)
    check_cells: dict[str, list[int]] = field(default_factory=dict, repr=False)

    @property
    def max_points(self) -> float:
        """The points of all exercises together."""
        return float(sum(exercise["points"] for exercise in self.exercises.values()))

    def source(self, index: int) -> str:
        """The released source of cell ``index``."""
        return self.notebook.cells[index].source

    def check_checksums(self, exercise_id: str) -> list[str]:
        """Checksums of the released check cells of one exercise, sorted."""
        return sorted(checksum(self.source(i)) for i in self.check_cells.get(exercise_id, []))

    @property
    def digest(self) -> str:
        """A short fingerprint of this release: the checksum of all its check cells in order."""
        text = "\n".join(f"{exercise_id}:{checksum(self.source(i))}"
                         for exercise_id, cells in self.check_cells.items() for i in cells)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]

    @property
    def release(self) -> str:
        """The release id: a hash of the released exercise and check cells
        (:func:`minigrad.course.notebooks.release_info`)."""
        return self.release_info["release"]

    @functools.cached_property
    def release_info(self) -> dict[str, Any]:
        """The release id and each exercise's fingerprints, computed from the cells."""
        return release_info(self.notebook)

    @property
    def version(self) -> str | None:
        """The version the release tool wrote into the notebook's metadata, if any."""
        return metadata_version(self.notebook)


def _course_metadata(notebook: Mapping[str, Any]) -> Mapping[str, Any]:
    metadata = notebook.get("metadata")
    course = metadata.get(RELEASE_KEY) if isinstance(metadata, Mapping) else None
    return course if isinstance(course, Mapping) else {}


def metadata_version(notebook: Mapping[str, Any]) -> str | None:
    """``metadata.minigrad.version`` of a notebook (a course's own version label), if present."""
    version = _course_metadata(notebook).get("version")
    return str(version) if version is not None else None


def submitted_release(notebook: Mapping[str, Any] | None) -> str:
    """The release id a submission's metadata carries ("" when none: an older hand-out)."""
    release = _course_metadata(notebook).get("release") if notebook is not None else None
    return release if isinstance(release, str) and re.fullmatch(r"[0-9a-f]{6,64}", release) \
        else ""


def _order(exercise_id: str) -> tuple[tuple[int, int, str], ...]:
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in exercise_id.split("."))


def release_changes(notebook: Mapping[str, Any], lesson: "ReleasedLesson") -> list[str]:
    """What changed between the release a submission was handed out in and ``lesson``'s.

    Read from the fingerprints in the submission's metadata (:func:`submitted_release`);
    an empty list when it carries the current release, or none at all.
    """
    theirs = submitted_release(notebook)
    if not theirs or theirs == lesson.release:
        return []
    old = _course_metadata(notebook).get("exercises")
    old = old if isinstance(old, Mapping) else {}
    new = lesson.release_info["exercises"]
    changes = []
    for ident in sorted(set(old) | set(new), key=_order):
        before, after = old.get(ident), new.get(ident)
        if before is None:
            changes.append(f"exercise {ident} was added after your copy was handed out")
        elif after is None:
            changes.append(f"exercise {ident} was removed after your copy was handed out")
        elif isinstance(before, Mapping):
            what = [kind for kind in ("exercise", "check") if before.get(kind) != after[kind]]
            if what == ["exercise", "check"]:
                changes.append(f"exercise {ident}'s starting cell and its check changed")
            elif what == ["exercise"]:
                changes.append(f"exercise {ident}'s starting cell changed")
            elif what == ["check"]:
                changes.append(f"exercise {ident}'s check changed")
    return changes or ["its release id differs (the metadata does not say what changed)"]


def _weights(module_name: str, key: str) -> dict[str, dict[str, Any]]:
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # a broken checks module: say which and why
        raise LessonError(f"lesson {key}: cannot import {module_name} to read its EXERCISES "
                          f"weights: {type(exc).__name__}: {exc}") from exc
    table = getattr(module, "EXERCISES", None)
    if not isinstance(table, Mapping):
        raise LessonError(f"lesson {key}: {module_name} has no EXERCISES dict (expected "
                          f'{{"1.1": {{"title": "...", "points": 1}}, ...}}); got {table!r}')
    exercises = {}
    for exercise_id, entry in table.items():
        points = entry.get("points") if isinstance(entry, Mapping) else None
        if isinstance(points, bool) or not isinstance(points, (int, float)) or points < 0:
            raise LessonError(f"lesson {key}: EXERCISES[{exercise_id!r}] in {module_name} needs "
                              f"a number of points >= 0; got {entry!r}")
        exercises[str(exercise_id)] = {"title": str(entry.get("title", exercise_id)),
                                       "points": points}
    return exercises


def load_lesson(path: Path, checks_package: str = DEFAULT_CHECKS_PACKAGE) -> ReleasedLesson:
    """Read one released notebook and its weights, and check that they agree.

    Raises
    ------
    LessonError
        When the notebook cannot be read, or its exercise and check cells do not match the
        ``EXERCISES`` table (every weighted exercise needs an exercise cell and a check cell,
        and every check cell a weighted exercise).
    """
    path = Path(path)
    match = _LESSON_FILE.match(path.name)
    if not match:
        raise LessonError(f"{path.name}: a released lesson's name must start with its two-digit "
                          "number, e.g. 01_from_scalars_to_tensors.ipynb")
    number, key = int(match["number"]), path.stem
    try:
        notebook = nbformat.read(path, as_version=4)
    except Exception as exc:
        raise LessonError(f"cannot read the released lesson {path}: {exc}") from exc
    lesson = ReleasedLesson(key=key, number=number, path=path, notebook=notebook, exercises={},
                            checks_package=checks_package,
                            checks_module=f"{checks_package}.lesson{number}")
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        for kind, table in (("exercise", lesson.exercise_cells), ("check", lesson.check_cells)):
            for exercise_id in cell_ids(cell, kind):
                if lesson_of(exercise_id) != number:
                    raise LessonError(f"{path.name}: cell {index} is tagged {kind}:{exercise_id}, "
                                      f"which belongs to lesson {lesson_of(exercise_id)}, not "
                                      f"{number}")
                table.setdefault(exercise_id, []).append(index)
    if not lesson.exercise_cells and not lesson.check_cells:
        return lesson  # a lesson without graded exercises
    lesson.exercises = _weights(lesson.checks_module, key)
    weighted = set(lesson.exercises)
    problems = []
    for exercise_id in lesson.exercises:
        if exercise_id not in lesson.exercise_cells:
            problems.append(f"EXERCISES has {exercise_id} but no cell is tagged "
                            f"exercise:{exercise_id}")
        if exercise_id not in lesson.check_cells:
            problems.append(f"EXERCISES has {exercise_id} but no cell is tagged "
                            f"check:{exercise_id}")
    for kind, table in (("check", lesson.check_cells), ("exercise", lesson.exercise_cells)):
        problems += [f"a cell is tagged {kind}:{exercise_id} but {lesson.checks_module}.EXERCISES "
                     "has no such exercise" for exercise_id in table if exercise_id not in weighted]
    if problems:
        raise LessonError(f"lesson {key} ({path}) does not match its weights: "
                          + "; ".join(problems))
    return lesson


def load_lessons(released: str | os.PathLike[str] | None = None,
                 checks_package: str | None = None) -> dict[int, ReleasedLesson]:
    """Load every released lesson, keyed by lesson number.

    Parameters
    ----------
    released : path, optional
        A folder of released notebooks ``NN_name.ipynb``. Default: :func:`default_released_dir`.
    checks_package : str, optional
        The package whose ``lessonN`` modules hold the checks and ``EXERCISES`` weights.
        Default: ``$MINIGRAD_CHECKS_PACKAGE`` or ``"minigrad.course.checks"``.

    Raises
    ------
    LessonError
        When the folder holds no released lesson or one of them is unusable.
    """
    folder = Path(released) if released is not None else default_released_dir()
    package = checks_package or os.environ.get("MINIGRAD_CHECKS_PACKAGE") or DEFAULT_CHECKS_PACKAGE
    paths = sorted(p for p in folder.glob("*.ipynb") if _LESSON_FILE.match(p.name)) \
        if folder.is_dir() else []
    if not paths:
        raise LessonError(f"no released lessons (NN_name.ipynb) in {folder}: run "
                          "`python -m minigrad.course release` first, or pass --released DIR")
    lessons: dict[int, ReleasedLesson] = {}
    for path in paths:
        lesson = load_lesson(path, package)
        if lesson.number in lessons:
            raise LessonError(f"two released notebooks for lesson {lesson.number}: "
                              f"{lessons[lesson.number].path.name} and {path.name}")
        lessons[lesson.number] = lesson
    return lessons

"""What grading produces: a :class:`NotebookGrade` per submitted notebook, in a :class:`Gradebook`.

These are plain dataclasses that turn into JSON and back (``grades.json`` is the report's
source of truth: ``--student NAME`` regrades one student and merges into it).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Iterable

__all__ = ["CheckOutcome", "ExerciseGrade", "Issue", "NotebookGrade", "LessonSummary",
           "Gradebook", "ISSUES"]

#: Every kind of problem the grader reports about a submission, and what it means.
ISSUES = {
    "unreadable": "the file is empty or not a notebook",
    "unidentified": "the grader could not tell which lesson the notebook is",
    "wrong lesson": "the notebook's cells belong to another lesson than its file name says",
    "other version": "the notebook comes from another release of the lesson",
    "duplicate": "the student handed in several notebooks for one lesson (the best counts)",
    "tampered check": "a check cell's source differs from the released one (ignored: the grader "
                      "runs the released checks)",
    "deleted check": "a released check cell is missing from the submission (ignored: the grader "
                     "runs the released checks)",
    "patched checks": "the notebook replaced parts of the checks module (undone: the grader "
                      "reloads the checks before each check)",
    "patched engine": "the notebook replaced functions of numpy or minigrad (not undone: look "
                      "at it by hand)",
    "missing exercise": "no cell carries an exercise's tag (the released placeholder was run)",
    "split exercise": "an exercise's tag is on several cells (they were run together, in order)",
    "cell error": "a cell raised an exception while the notebook ran",
    "timeout": "a cell or check ran past its time limit and was interrupted",
    "kernel died": "the notebook's process stopped (crashed, exited, ran out of memory, or was "
                   "ended after a time limit)",
    "output": "the notebook printed more output than the grader keeps",
    "processes": "the notebook left processes running (they were ended with its sandbox)",
    "grader": "the grader could not run this notebook (no sandbox, or a bug of the grader's)",
}


@dataclass
class Issue:
    """A problem with a submission: a kind (a key of :data:`ISSUES`) and what exactly happened."""

    kind: str
    text: str


@dataclass
class CheckOutcome:
    """The outcome of one released check cell.

    ``kind`` is ``"passed"``, ``"check"`` (the check failed), ``"not implemented"``,
    ``"error"`` (the student's code raised), ``"timeout"``, or ``"not run"``.
    """

    exercise: str
    passed: bool
    kind: str
    message: str = ""
    where: str = ""
    output: str = ""
    seconds: float = 0.0
    #: What of this check's verdict the submission's own process reported (and could have
    #: forged): "" when the grader judged all of it.
    self_reported: str = ""


@dataclass
class ExerciseGrade:
    """One exercise of one notebook: ``status`` is passed, failed, not attempted or not graded."""

    exercise: str
    title: str
    points: float
    max_points: float
    status: str
    message: str = ""
    checks: list[CheckOutcome] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.status == "passed"


@dataclass
class NotebookGrade:
    """The grade of one submitted notebook.

    ``status`` says what happened as a whole: ``"graded"`` (it ran), ``"not run"`` (nothing to
    run: no exercise attempted, or the wrong lesson), ``"unreadable"``, ``"unidentified"`` or
    ``"error"`` (the grader could not run it).
    """

    student: str
    path: str
    sha256: str
    lesson: str | None
    status: str
    score: float = 0.0
    max_score: float = 0.0
    exercises: list[ExerciseGrade] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)
    seconds: float = 0.0

    def issue_kinds(self) -> list[str]:
        """The kinds of this notebook's issues, each once, in order."""
        return list(dict.fromkeys(issue.kind for issue in self.issues))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "NotebookGrade":
        exercises = [ExerciseGrade(**{**e, "checks": [CheckOutcome(**c) for c in e["checks"]]})
                     for e in data.get("exercises", [])]
        issues = [Issue(**i) for i in data.get("issues", [])]
        return cls(**{**data, "exercises": exercises, "issues": issues})


@dataclass
class LessonSummary:
    """What the report needs to know about a released lesson."""

    key: str
    number: int
    max_points: float
    digest: str
    exercises: dict[str, dict[str, Any]]


@dataclass
class Gradebook:
    """All the graded notebooks of one run, and the lessons they were graded against."""

    lessons: list[LessonSummary]
    notebooks: list[NotebookGrade]
    seconds: float = 0.0
    jobs: int = 1

    def students(self) -> list[str]:
        """Every student with at least one notebook, sorted."""
        return sorted({notebook.student for notebook in self.notebooks})

    def lesson_keys(self) -> list[str]:
        """The lessons that at least one notebook was graded as, in lesson order."""
        graded = {notebook.lesson for notebook in self.notebooks}
        return [lesson.key for lesson in sorted(self.lessons, key=lambda lesson: lesson.number)
                if lesson.key in graded]

    def lesson(self, key: str) -> LessonSummary:
        return next(lesson for lesson in self.lessons if lesson.key == key)

    def best(self, student: str, lesson_key: str) -> NotebookGrade | None:
        """The student's notebook that counts for a lesson: the highest score, then the path."""
        candidates = [n for n in self.notebooks if n.student == student and n.lesson == lesson_key]
        return min(candidates, key=lambda n: (-n.score, n.path), default=None)

    def total(self, student: str) -> float:
        """The sum of the student's best score in each lesson."""
        return sum(best.score for key in self.lesson_keys()
                   if (best := self.best(student, key)) is not None)

    def merged(self, newer: "Gradebook", students: Iterable[str]) -> "Gradebook":
        """This gradebook with the given students' notebooks replaced by ``newer``'s."""
        replaced = set(students)
        kept = [n for n in self.notebooks if n.student not in replaced]
        notebooks = sorted(kept + [n for n in newer.notebooks if n.student in replaced],
                           key=_order)
        return Gradebook(lessons=newer.lessons, notebooks=notebooks, seconds=newer.seconds,
                         jobs=newer.jobs)

    def to_dict(self) -> dict[str, Any]:
        return {"lessons": [asdict(lesson) for lesson in self.lessons],
                "notebooks": [notebook.to_dict() for notebook in self.notebooks],
                "seconds": self.seconds, "jobs": self.jobs}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Gradebook":
        return cls(lessons=[LessonSummary(**lesson) for lesson in data["lessons"]],
                   notebooks=[NotebookGrade.from_dict(n) for n in data["notebooks"]],
                   seconds=data.get("seconds", 0.0), jobs=data.get("jobs", 1))


def _order(notebook: NotebookGrade) -> tuple:
    return (notebook.student, notebook.lesson or "~", notebook.path)

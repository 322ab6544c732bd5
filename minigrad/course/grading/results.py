"""What grading produces: a :class:`NotebookGrade` per submitted notebook, in a :class:`Gradebook`.

These are plain dataclasses that turn into JSON and back (``grades.json`` is the report's
source of truth: ``--student NAME`` regrades one student and merges into it).
"""
from __future__ import annotations

import contextlib
import gc
import json
import operator
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator, TypeVar, cast

__all__ = ["CheckOutcome", "ExerciseGrade", "Issue", "NotebookGrade", "LessonSummary",
           "Gradebook", "ISSUES"]

#: Every kind of problem the grader reports about a submission, and what it means.
ISSUES = {
    "unreadable": "the file is empty or not a notebook",
    "unidentified": "the grader could not tell which lesson the notebook is",
    "wrong lesson": "the notebook's cells belong to another lesson than its file name says",
    "other version": "the notebook comes from another version of the lesson",
    "old release": "the notebook was handed out in an earlier release of the lesson (graded with "
                   "the current checks; the issue names what changed)",
    "not on roster": "the submission's login, id or name matches no student of the roster",
    "retried": "the notebook's process died once and it was run again (the grade is the second "
               "run's)",
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
    #: The LMS's late mark (Canvas's ``LATE``).
    late: bool = False
    #: When it was graded (UTC, ISO 8601) and the release id of the lesson it was graded with.
    graded_at: str = ""
    release: str = ""
    #: The release id in the submission's own metadata ("" when it has none).
    submitted_release: str = ""

    @property
    def key(self) -> tuple[str, str]:
        """What a newer grade of the same work replaces: (student, lesson), or (student, file)."""
        return (self.student, self.lesson or "file:" + Path(self.path).name)

    def issue_kinds(self) -> list[str]:
        """The kinds of this notebook's issues, each once, in order."""
        return list(dict.fromkeys(issue.kind for issue in self.issues))

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON (as :func:`dataclasses.asdict`, several times faster), with the
        exercises last: :meth:`from_json_text` reads everything before them without parsing
        them."""
        data = {k: v for k, v in vars(self).items() if k[0] != "_" and k != "exercises"}
        data["issues"] = [dict(vars(i)) for i in self.issues]
        data["exercises"] = [{**vars(e), "checks": [dict(vars(c)) for c in e.checks]}
                             for e in self.exercises]
        return data

    def to_json(self) -> str:
        """The notebook as one line of JSON: the text it was read from (:meth:`from_json_text`)
        when nothing of it has changed since, else :meth:`to_dict` encoded."""
        raw = self.__dict__.get("_raw")
        if raw is not None and "exercises" not in self.__dict__ and raw[0] == self._stamp():
            return str(raw[1])
        return json.dumps(self.to_dict(), ensure_ascii=False)

    def _stamp(self) -> tuple[Any, ...]:
        """Everything of the notebook but its exercises, to tell whether it changed."""
        try:
            head = _head_of(self.__dict__)
        except KeyError:
            head = tuple(getattr(self, k) for k in _HEAD)
        return (head, tuple((i.kind, i.text) for i in self.issues))

    if not TYPE_CHECKING:   # (hidden from mypy, which would let any attribute through)
        def __getattr__(self, name: str) -> Any:
            """The exercises of a notebook read by :meth:`from_json_text`, parsed when first
            asked for (most of a report's rows are written again as they were read)."""
            if name == "exercises" and "_exercises" in self.__dict__:
                exercises = _exercises_of(self.__dict__.pop("_exercises"),
                                          str(self.__dict__["_raw"][1]))
                self.__dict__["exercises"] = exercises
                return exercises
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @classmethod
    def from_json_text(cls, raw: str) -> "NotebookGrade":
        """The notebook of one line of JSON that :meth:`to_json` wrote, its exercises left as
        text until they are used (:meth:`from_json` of the whole line for any other layout).

        The exercises are the line's last key: in JSON text a ``"`` inside a string is always
        escaped, so the first ``, "exercises": [`` is the key itself, and what comes before it
        is every other field (checked: a line of another layout is parsed whole)."""
        at = raw.find(_EXERCISES)
        if at > 0 and raw.endswith("]}"):
            head = json.loads(raw[:at] + "}")
            if head.keys() == _HEAD_KEYS:
                head["issues"] = [_made(Issue, i) for i in head["issues"]]
                made = object.__new__(cls)
                made.__dict__.update(head)
                made.__dict__["_exercises"] = at + len(_EXERCISES) - 1
                made.__dict__["_raw"] = (made._stamp(), raw)
                return made
        made = cls.from_json(json.loads(raw))
        made.__dict__["_raw"] = (made._stamp(), raw)
        made.__dict__.pop("exercises")    # (parsed again from the line when asked for)
        made.__dict__["_exercises"] = None
        return made

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "NotebookGrade":
        """:meth:`from_dict` for a dict just parsed from JSON, which it takes over (its
        exercise and check dicts become the objects' own: no copies)."""
        data["exercises"] = _exercise_grades(data.get("exercises", ()))
        data["issues"] = [_made(Issue, i) for i in data.get("issues", ())]
        return _made(cls, data)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "NotebookGrade":
        exercises = [_made(ExerciseGrade, {**e, "checks": [_made(CheckOutcome, c)
                                                            for c in e["checks"]]})
                     for e in data.get("exercises", [])]
        issues = [_made(Issue, i) for i in data.get("issues", [])]
        return _made(cls, {**data, "exercises": exercises, "issues": issues})


#: The fields of a notebook's JSON before its exercises (see NotebookGrade.from_json_text).
_HEAD = tuple(f.name for f in fields(NotebookGrade) if f.name not in ("exercises", "issues"))
_HEAD_KEYS = frozenset((*_HEAD, "issues"))
_head_of = operator.itemgetter(*_HEAD)
_EXERCISES = ', "exercises": ['


def _exercise_grades(data: Iterable[dict[str, Any]]) -> list[ExerciseGrade]:
    """Exercise grades of parsed JSON (taken over, as :meth:`NotebookGrade.from_json`)."""
    exercises = []
    for exercise in data:
        exercise["checks"] = [_made(CheckOutcome, c) for c in exercise["checks"]]
        exercises.append(_made(ExerciseGrade, exercise))
    return exercises


def _exercises_of(start: int | None, line: str) -> list[ExerciseGrade]:
    """The exercises of a notebook's JSON line: their array starts at ``start`` and ends the
    line but for its last ``}`` (None: the line is of another layout, parsed whole)."""
    if start is not None:
        try:
            value, end = _DECODER.raw_decode(line, start)
        except ValueError:
            value, end = None, -1
        if end == len(line) - 1 and isinstance(value, list):
            return _exercise_grades(value)
    return _exercise_grades(json.loads(line).get("exercises", ()))


_DECODER = json.JSONDecoder()


@dataclass
class LessonSummary:
    """What the report needs to know about a released lesson."""

    key: str
    number: int
    max_points: float
    digest: str
    exercises: dict[str, dict[str, Any]]
    #: The lesson's release id (:func:`minigrad.course.notebooks.release_id`).
    release: str = ""


@dataclass
class Gradebook:
    """All the graded notebooks of one run, and the lessons they were graded against.

    Besides the notebooks: ``unattributed`` (``{"path", "why"}`` of files credited to nobody),
    ``people`` (the roster: ``{student: {"name", "section", "sis_id"}}``), ``shard`` (``[index,
    count]`` of a shard's run) and ``secret_id`` (a fingerprint of the probe secret: shards
    graded with different secrets do not merge).
    """

    lessons: list[LessonSummary]
    notebooks: list[NotebookGrade]
    seconds: float = 0.0
    jobs: int = 1
    unattributed: list[dict[str, str]] = field(default_factory=list)
    people: dict[str, dict[str, str]] = field(default_factory=dict)
    shard: list[int] | None = None
    secret_id: str = ""
    #: What the students' feedback pages show (:data:`.feedback.POLICIES`).
    feedback: str = "full"

    def by_student(self) -> dict[str, list[NotebookGrade]]:
        """Each student's notebooks, students sorted (one pass over the notebooks)."""
        table: dict[str, list[NotebookGrade]] = {}
        for notebook in self.notebooks:
            table.setdefault(notebook.student, []).append(notebook)
        return dict(sorted(table.items()))

    def students(self) -> list[str]:
        """Every student with at least one notebook, sorted."""
        return sorted({notebook.student for notebook in self.notebooks})

    def missing(self) -> list[str]:
        """Roster students with no notebook, sorted."""
        handed_in = {notebook.student for notebook in self.notebooks}
        return sorted(set(self.people) - handed_in)

    def lesson_keys(self) -> list[str]:
        """The lessons that at least one notebook was graded as, in lesson order."""
        graded = {notebook.lesson for notebook in self.notebooks}
        return [lesson.key for lesson in sorted(self.lessons, key=lambda lesson: lesson.number)
                if lesson.key in graded]

    def lesson(self, key: str) -> LessonSummary:
        return next(lesson for lesson in self.lessons if lesson.key == key)

    def best(self, student: str, lesson_key: str,
             notebooks: list[NotebookGrade] | None = None) -> NotebookGrade | None:
        """The student's notebook that counts for a lesson: the highest score, then the path.

        ``notebooks``: the student's notebooks, when the caller has them (saves a scan)."""
        mine = notebooks if notebooks is not None else self.notebooks
        candidates = [n for n in mine if n.student == student and n.lesson == lesson_key]
        return min(candidates, key=lambda n: (-n.score, n.path), default=None)

    def total(self, student: str, notebooks: list[NotebookGrade] | None = None) -> float:
        """The sum of the student's best score in each lesson."""
        keys = self.lesson_keys() if notebooks is None else \
            list(dict.fromkeys(n.lesson for n in notebooks if n.lesson is not None))
        return sum(best.score for key in keys
                   if (best := self.best(student, key, notebooks)) is not None)

    def merged(self, newer: "Gradebook", students: Iterable[str]) -> "Gradebook":
        """This gradebook with the given students' notebooks replaced by ``newer``'s."""
        replaced = set(students)
        with no_gc():
            kept = [n for n in self.notebooks if n.student not in replaced]
            notebooks = sorted(kept + [n for n in newer.notebooks if n.student in replaced],
                               key=_order)
        return self._with(newer, notebooks)

    def merged_rows(self, newer: "Gradebook") -> "Gradebook":
        """This gradebook with every (student, lesson) that ``newer`` graded replaced by its
        notebooks; everything else kept."""
        replaced = {n.key for n in newer.notebooks}
        with no_gc():
            kept = [n for n in self.notebooks if n.key not in replaced]
            notebooks = sorted(kept + newer.notebooks, key=_order)
        return self._with(newer, notebooks)

    def lost_by(self, newer: "Gradebook") -> list[tuple[str, str]]:
        """The (student, lesson) rows of this gradebook that ``newer`` has none of."""
        covered = {n.key for n in newer.notebooks}
        return sorted({n.key for n in self.notebooks} - covered)

    def _with(self, newer: "Gradebook", notebooks: list[NotebookGrade]) -> "Gradebook":
        lessons = {lesson.key: lesson for lesson in self.lessons}
        lessons.update({lesson.key: lesson for lesson in newer.lessons})
        return Gradebook(lessons=sorted(lessons.values(), key=lambda lesson: lesson.number),
                         notebooks=notebooks, seconds=newer.seconds, jobs=newer.jobs,
                         unattributed=list({u["path"]: u for u in [*self.unattributed,
                                                                    *newer.unattributed]}.values()),
                         people={**self.people, **newer.people},
                         shard=None, secret_id=newer.secret_id or self.secret_id,
                         feedback=newer.feedback)

    def to_dict(self, notebooks: bool = True) -> dict[str, Any]:
        """Plain data for JSON (``notebooks=False``: all but the notebooks)."""
        return {"lessons": [asdict(lesson) for lesson in self.lessons],
                **({"notebooks": [n.to_dict() for n in self.notebooks]} if notebooks else {}),
                "seconds": self.seconds, "jobs": self.jobs, "unattributed": self.unattributed,
                "people": self.people, "shard": self.shard, "secret_id": self.secret_id,
                "feedback": self.feedback}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Gradebook":
        with no_gc():
            notebooks = [NotebookGrade.from_dict(n) for n in data["notebooks"]]
        return cls(lessons=[LessonSummary(**lesson) for lesson in data["lessons"]],
                   notebooks=notebooks,
                   seconds=data.get("seconds", 0.0), jobs=data.get("jobs", 1),
                   unattributed=data.get("unattributed", []), people=data.get("people", {}),
                   shard=data.get("shard"), secret_id=data.get("secret_id", ""),
                   feedback=data.get("feedback", "full"))


_FIELDS: dict[type, frozenset[str]] = {}


_T = TypeVar("_T")


def _made(cls: type[_T], data: dict[str, Any]) -> _T:
    """``cls(**data)``, for a dataclass read back from JSON: when ``data`` has exactly the
    fields, the instance's ``__dict__`` is filled directly (a gradebook of 40,000 notebooks
    is 400,000 of these, and ``__init__`` with keywords costs three times as much); otherwise
    unknown keys are dropped and missing ones get their defaults."""
    known = _FIELDS.get(cls)
    if known is None:
        known = _FIELDS[cls] = frozenset(f.name for f in fields(cast(Any, cls)))
    if data.keys() == known:
        made = object.__new__(cls)
        made.__dict__.update(data)
        return made
    return cls(**{k: v for k, v in data.items() if k in known})


@contextlib.contextmanager
def no_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector: a class's gradebook is hundreds of thousands of
    small objects, and collections triggered while they are made cost more than the work."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _order(notebook: NotebookGrade) -> tuple[str, str, str]:
    return (notebook.student, notebook.lesson or "~", notebook.path)

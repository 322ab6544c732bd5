"""The instructor's grader: run students' lesson notebooks and score them with the lessons' checks.

From the command line::

    minigrad-grade submissions/ --jobs 4 --out grading-report

From Python::

    from minigrad.course.grading import grade, write_report, summary
    book = grade(["submissions/"], jobs=4)
    write_report(book, "grading-report")
    print(summary(book))

Each notebook runs in a fresh kernel as the *released* lesson with the student's exercise cells
put in place; the released checks run afresh after the student's code, and the weights come
from ``minigrad.course.checks.lessonN.EXERCISES``. See :mod:`.runner` for what runs and
:mod:`.submissions` for the folder layout. The grader needs ``nbclient``, ``nbformat``,
``ipykernel`` and ``tqdm`` (the ``dev`` extra has them).

Threat model: a student who edits or deletes check cells, or patches ``minigrad.course.checks`` from a
cell, gains nothing. The grader is not a sandbox: notebooks run with the instructor's rights,
so run it in a container or an unprivileged account when that matters.
"""
import importlib
from typing import Any

#: Where each public name lives. They are imported on first use, so that ``minigrad-grade``
#: can say what is missing when nbclient & co. are not installed, instead of a traceback.
_EXPORTS = {
    "grade": "runner", "grade_submission": "runner", "GradingOptions": "runner",
    "GraderError": "runner", "Gradebook": "results", "NotebookGrade": "results",
    "ExerciseGrade": "results", "CheckOutcome": "results", "Issue": "results",
    "write_report": "report", "summary": "report", "feedback": "report",
    "read_gradebook": "report", "load_lessons": "lessons", "ReleasedLesson": "lessons",
    "LessonError": "lessons", "Submission": "submissions", "find_submissions": "submissions",
}
__all__ = list(_EXPORTS)

MISSING = ("the grader needs nbclient, nbformat, ipykernel and tqdm ({} is not installed): "
           "pip install 'minigrad-course[dev]'")


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(MISSING.format(exc.name), name=exc.name) from exc
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)

"""The instructor's grader: run students' lesson notebooks and score them with the lessons' checks.

From the command line::

    minigrad-grade submissions/ --jobs 4 --out grading-report

From Python::

    from minigrad.course.grading import grade_class, summary
    book = grade_class(["submissions/"], "grading-report", jobs=4)   # journal, merge, report
    print(summary(book))

(``grade`` and ``write_report`` are the two halves, without the journal and the checks that
a run never drops rows of an existing report: :mod:`.batch`.)

Each notebook runs in its own sandbox (:mod:`.sandbox`, bubblewrap) as the *released* lesson
with the student's exercise cells put in place; the checks' expected values are computed and
compared here, in the grader, on inputs drawn from a secret seed (:mod:`.runner`), and the
weights come from ``minigrad.course.checks.lessonN.EXERCISES``. See :mod:`.submissions` for
the folder layout and the "Grading, and the threat model" page (``docs/guide/grading.md``)
for the threat model. The grader needs
``nbformat``, ``ipython``, ``tqdm``, and what the lessons import (``matplotlib``,
``scikit-learn``): the ``grade`` extra has them all.

Imports: the engine, ``minigrad.course`` (checks, the released notebooks) and the packages
above. The student's code never runs in this process, and nothing here is imported by the
engine, by ``minigrad.export`` or by the checks.
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
    "scan": "submissions", "grade_class": "batch", "merge_reports": "batch",
    "read_roster": "roster", "Roster": "roster",
}
__all__ = list(_EXPORTS)

MISSING = ("the grader needs nbformat, ipython, tqdm, matplotlib and scikit-learn ({} is not "
           "installed): pip install 'minigrad-course[grade]'")


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

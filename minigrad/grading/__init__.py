"""The instructor's grader: run students' lesson notebooks and score them with the lessons' checks.

From the command line::

    minigrad-grade submissions/ --jobs 4 --out grading-report

From Python::

    from minigrad.grading import grade, write_report, summary
    book = grade(["submissions/"], jobs=4)
    write_report(book, "grading-report")
    print(summary(book))

Each notebook runs in a fresh kernel as the *released* lesson with the student's exercise cells
put in place; the released checks run afresh after the student's code, and the weights come
from ``minigrad.checks.lessonN.EXERCISES``. See :mod:`.runner` for what runs and
:mod:`.submissions` for the folder layout. The grader needs ``nbclient``, ``nbformat``,
``ipykernel`` and ``tqdm`` (the ``dev`` extra has them).

Threat model: a student who edits or deletes check cells, or patches ``minigrad.checks`` from a
cell, gains nothing. The grader is not a sandbox: notebooks run with the instructor's rights,
so run it in a container or an unprivileged account when that matters.
"""
from .lessons import LessonError, ReleasedLesson, load_lessons
from .report import feedback, read_gradebook, summary, write_report
from .results import CheckOutcome, ExerciseGrade, Gradebook, Issue, NotebookGrade
from .runner import GraderError, GradingOptions, grade, grade_submission
from .submissions import Submission, find_submissions

__all__ = [
    "grade", "grade_submission", "GradingOptions", "GraderError", "Gradebook", "NotebookGrade",
    "ExerciseGrade", "CheckOutcome", "Issue", "write_report", "summary", "feedback",
    "read_gradebook", "load_lessons", "ReleasedLesson", "LessonError", "Submission",
    "find_submissions",
]

"""How much the students' feedback shows: the ``--feedback full|cases|score`` policy.

* ``full`` (the default, as in the notebooks): each failed check's whole message, the usual
  cause of the mistake included;
* ``cases``: the failing case and expected versus got, without the ``usual cause:`` lines (which
  often state the rule itself, such as ``-g * a.data / b.data**2``);
* ``score``: the points of each exercise only, no messages.

The policy applies to what a student sees: the pages in ``feedback/``, the feedback comments of
a Moodle worksheet and the output of a Gradescope test. ``exercises.csv`` and ``grades.json``
are the instructor's and always hold the whole message.
"""
from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path
from typing import Sequence

from .results import Gradebook, NotebookGrade

__all__ = ["POLICIES", "shown_message", "policy_feedback", "write_feedback_pages"]

#: The policies, least shown last.
POLICIES = ("full", "cases", "score")

_CAUSE = re.compile(r"^(\s*)usual cause:")


def _check_policy(policy: str) -> None:
    if policy not in POLICIES:
        raise ValueError(f"feedback policy must be one of {', '.join(POLICIES)}; got {policy!r}")


def shown_message(message: str, policy: str) -> str:
    """The part of a check's ``message`` that ``policy`` shows a student.

    ``cases`` drops every ``usual cause:`` line together with the lines indented below it
    (the cause's continuation); ``score`` shows nothing; ``full`` all of it.
    """
    _check_policy(policy)
    if policy == "full":
        return message
    if policy == "score":
        return ""
    kept: list[str] = []
    depth: int | None = None     # the indentation of the cause being dropped
    for line in message.split("\n"):
        if depth is not None:
            if line.strip() and len(line) - len(line.lstrip()) > depth:
                continue
            depth = None
        match = _CAUSE.match(line)
        if match:
            depth = len(match.group(1))
            continue
        kept.append(line)
    return "\n".join(kept).rstrip()


def _shown(notebook: NotebookGrade, policy: str) -> NotebookGrade:
    exercises = [dataclasses.replace(e, message=shown_message(e.message, policy))
                 for e in notebook.exercises]
    return dataclasses.replace(notebook, exercises=exercises)


def _num(value: float) -> str:
    return f"{value:g}"


def policy_feedback(book: Gradebook, student: str, policy: str = "full",
                    notebooks: list[NotebookGrade] | None = None,
                    paths: Sequence[str] | None = None) -> str:
    """The Markdown feedback page of ``student`` as ``policy`` shows it.

    ``full`` and ``cases`` are :func:`.report.feedback`'s page (with the messages cut down for
    ``cases``); ``score`` is the points alone: each lesson's score, each exercise's points and
    status, and the names of what the grader noticed (late, a changed check cell ...).
    ``notebooks``: the student's, when known; ``paths``: the machine's folders to scrub, when
    known.
    """
    from .report import feedback, scrub

    _check_policy(policy)
    if notebooks is None:
        notebooks = [n for n in book.notebooks if n.student == student]
    if policy == "full":
        return feedback(book, student, notebooks, paths)
    if policy != "score":
        return feedback(book, student, [_shown(n, policy) for n in notebooks], paths)
    total = book.total(student, notebooks)
    maximum = sum(book.lesson(key).max_points
                  for key in dict.fromkeys(n.lesson for n in notebooks if n.lesson))
    lines = [f"# Scores for {student}", "", f"Total: **{_num(total)} / {_num(maximum)}** points.",
             ""]
    for notebook in notebooks:
        title = notebook.lesson or f"`{os.path.basename(notebook.path)}`"
        score = f": {_num(notebook.score)} / {_num(notebook.max_score)}" if notebook.lesson else ""
        counted = notebook.lesson and book.best(student, notebook.lesson, notebooks) \
            is not notebook
        lines += [f"## {title}{score}" + (" (not counted)" if counted else "")
                  + (" (late)" if notebook.late else ""), ""]
        if notebook.exercises:
            lines += ["| exercise | points | result |", "|---|---:|---|"]
            lines += [f"| {e.exercise} | {_num(e.points)} / {_num(e.max_points)} | {e.status} |"
                      for e in notebook.exercises]
            lines.append("")
        if notebook.issues:
            lines += ["The grader noticed: " + ", ".join(notebook.issue_kinds()) + ".", ""]
    return scrub("\n".join(lines).rstrip() + "\n", paths=paths)


def write_feedback_pages(book: Gradebook, out: str | os.PathLike[str], policy: str,
                         students: Sequence[str] | None = None) -> list[Path]:
    """Write ``feedback/<student>.md`` in ``out`` for ``students`` (default: all) under
    ``policy``, atomically, each in the file :func:`.report.write_report` names it; returns the
    pages written (those whose text changed)."""
    from .report import _write_if_changed, feedback_names

    _check_policy(policy)
    mine = book.by_student()
    names = feedback_names(list(mine))
    folder = Path(out) / "feedback"
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for student in (mine if students is None else students):
        path = folder / names[student]
        if _write_if_changed(path, policy_feedback(book, student, policy, mine[student])):
            written.append(path)
    return written

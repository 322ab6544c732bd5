"""What ``minigrad.course.demos`` is inside the grader's sandbox: no reference implementations.

The sandbox mounts this file over ``minigrad/course/demos.py`` (:func:`.sandbox.command`), and
an empty file over its byte code, so that a notebook can neither import nor read the demos'
reference versions of the exercises: a wrapper around ``demos.reference(...)`` scores zero
instead of full marks. A lesson cell that asks for the student's objects or the references
(``yours_or_reference``) gets the student's own, always: the grader judges nothing a demo
shows, and a demo of an unfinished exercise raises the exercise's own error.
"""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any

__all__ = ["reference", "yours_or_reference"]


def yours_or_reference(*exercises: str, **yours: Any) -> SimpleNamespace:
    """The student's objects, under the names the lesson gives them (never a reference)."""
    return SimpleNamespace(**yours)


def reference(lesson: int, name: str) -> Any:
    """Refused: the grader's sandbox holds no reference implementation."""
    raise LookupError(f"reference({lesson}, {name!r}): the grader's sandbox holds no reference "
                      "implementations; your own code is what is graded")

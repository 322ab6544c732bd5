"""What a lesson's kernel does for a student who runs cells out of order.

A check cell passes the student's objects by name, ``checks.lesson1.topological_order(
topological_order)``. When the exercise cell above it was never run (or stopped at a syntax
error), that name does not exist and Python raises ``NameError`` before any check runs.
:func:`install` (called when ``minigrad.course.checks`` is imported in an IPython kernel) shows
that error, in a check cell, as the check's own message instead::

    CheckFailed: exercise 1.2: run the exercise cell above first; it has not defined
    `topological_order` yet

Everywhere else a ``NameError`` is shown as IPython shows it. Nothing changes outside IPython,
and nothing changes what the grader records (it reads the error itself, not its display).
"""
from __future__ import annotations

import linecache
import re
from types import TracebackType
from typing import Any

__all__ = ["install", "missing_name_message"]

_CALL = re.compile(r"\bchecks\.lesson(\d+)\.(\w+)\s*\((.*?)\)\s*$", re.DOTALL | re.MULTILINE)


def missing_name_message(source: str, name: str) -> str | None:
    """The message for ``name`` missing in a check cell of ``source``; None when ``source`` is
    not a check cell that passes ``name`` to a check.

    >>> missing_name_message("checks.lesson1.topological_order(topological_order)",
    ...                      "topological_order")
    'exercise 1.2: run the exercise cell above first; it has not defined `topological_order` yet'
    """
    for match in _CALL.finditer(source):
        if re.search(rf"\b{re.escape(name)}\b", match.group(3)):
            exercise_id = _exercise_of(int(match.group(1)), match.group(2))
            where = f"exercise {exercise_id}: " if exercise_id else ""
            return (f"{where}run the exercise cell above first; it has not defined "
                    f"`{name}` yet")
    return None


def _exercise_of(lesson: int, check: str) -> str | None:
    try:
        import importlib

        module = importlib.import_module(f"minigrad.course.checks.lesson{lesson}")
    except ImportError:
        return None
    return getattr(getattr(module, check, None), "exercise_id", None)


def _message(tb: TracebackType | None, name: str) -> str | None:
    """:func:`missing_name_message` for the innermost frame of ``tb``, the code that raised:
    a cell, whose source IPython keeps in ``linecache``."""
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return None
    return missing_name_message("".join(linecache.getlines(tb.tb_frame.f_code.co_filename)),
                                name)


def _handler(shell: Any, etype: type, value: BaseException, tb: TracebackType | None,
             tb_offset: int | None = None) -> list[str]:
    """Show the error (IPython calls a handler of its own and ignores what it returns)."""
    name = getattr(value, "name", None)
    message = _message(tb, name) if name else None
    if message is None:
        stb = shell.InteractiveTB.structured_traceback(etype, value, tb, tb_offset=tb_offset)
        shell._showtraceback(etype, value, stb)
        return stb
    from .checks import _RESULTS, CheckFailed

    if message.startswith("exercise "):
        _RESULTS[message.split(":")[0].removeprefix("exercise ")] = False
    error = CheckFailed(message)
    stb = error._render_traceback_()
    shell._showtraceback(CheckFailed, error, stb)
    return stb


def install() -> bool:
    """Show a check cell's ``NameError`` as "run the exercise cell above first" in this
    IPython kernel; True when installed (False outside IPython, or when another handler of
    ``NameError`` is already set)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None:
        return False
    current = getattr(shell, "custom_exceptions", ())
    if getattr(shell, "_minigrad_name_errors", False):
        return True
    if current and NameError not in current:
        return False
    shell.set_custom_exc((NameError,), _handler)
    shell._minigrad_name_errors = True
    return True

"""Asserting that a check fails with the message a student would read."""
from __future__ import annotations

import re
from typing import Any, Callable

import pytest

from minigrad.course.checks import CheckFailed


def fails(check: Callable[..., Any], *args: Any, match: str) -> str:
    """Run ``check(*args)``, assert it raises ``CheckFailed`` and its message matches ``match``.

    ``match`` is a regular expression searched across lines, ignoring case. Returns the message.
    The tables of mistakes in ``tests/course/checks/test_checks_lesson*.py`` use it, one row a
    mistake.
    """
    with pytest.raises(CheckFailed) as info:
        check(*args)
    message = str(info.value)
    assert re.search(match, message, flags=re.DOTALL | re.IGNORECASE), \
        f"the message does not match {match!r}:\n{message}"
    return message

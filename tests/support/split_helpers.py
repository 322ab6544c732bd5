"""Helpers for testing a check's probe / run / judge split (see minigrad.course.checks.Split).

What a forger or a broken sandbox could send back to the grader, made from real outputs:
every array zeroed, every array reshaped, any one value replaced by junk. And the test that
``run`` sends back plain data only. Lesson 4's tests use them; the other lessons' split tests
can too (one home for these).
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np


def is_plain(x: Any) -> bool:
    """Whether ``x`` is plain data: None, numbers, strings, arrays of numbers, and lists,
    tuples and dicts (string keys) of them; nothing else, at any depth."""
    if x is None or isinstance(x, (bool, int, float, str)):
        return True
    if isinstance(x, np.ndarray):
        return x.dtype.kind in "biuf"
    if type(x) in (list, tuple):
        return all(is_plain(v) for v in x)
    if isinstance(x, dict):
        return all(isinstance(k, str) and is_plain(v) for k, v in x.items())
    return False


def _each_array(x: Any, change: Any) -> Any:
    if isinstance(x, np.ndarray):
        return change(x)
    if isinstance(x, list):
        return [_each_array(v, change) for v in x]
    if isinstance(x, dict):
        return {k: _each_array(v, change) for k, v in x.items()}
    return x


def zeros(x: Any) -> Any:
    """``x`` with every array replaced by zeros of its shape (a forger's guess)."""
    return _each_array(x, np.zeros_like)


def reshaped(x: Any) -> Any:
    """``x`` with every array given an extra axis: the right values in the wrong shape."""
    return _each_array(x, lambda a: a[None])


def places(x: Any, path: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    """Every place in ``x`` that holds a value, the root last: (path of keys and indexes,
    value)."""
    if isinstance(x, dict):
        for k, v in x.items():
            yield from places(v, path + (k,))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from places(v, path + (i,))
    yield path, x


def replaced(x: Any, path: tuple, value: Any) -> Any:
    """A copy of ``x`` with the value at ``path`` replaced by ``value`` (``x`` is unchanged)."""
    if not path:
        return value
    copy = dict(x) if isinstance(x, dict) else list(x)
    copy[path[0]] = replaced(x[path[0]], path[1:], value)
    return copy


#: Junk for :func:`replaced`: one value of each kind that a run could wrongly send.
JUNK = [None, "x", 1.5, -1, True, [], {}, {"type": "Tensor"}, np.zeros(7), np.ones((2, 2))]


def junk_forgeries(outputs: Any) -> Iterator[tuple[tuple, Any]]:
    """``outputs`` with one value replaced by one of :data:`JUNK`, every way that changes it:
    (path of the replaced value, the forged outputs)."""
    from minigrad.course.grading.protocol import dumps

    for path, value in list(places(outputs)):
        for bad in JUNK:
            if not (type(bad) is type(value) and dumps(bad) == dumps(value)):
                yield path, replaced(outputs, path, bad)

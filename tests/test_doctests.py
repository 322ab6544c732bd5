"""The examples in the package's docstrings run and print what they say.

Every module of ``minigrad`` is imported and its docstring examples run with ``doctest``, so an
example that drifts from the code fails here. Modules whose optional dependencies are missing
(onnx, say) are skipped with the reason.
"""
from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import minigrad

MODULES = sorted(m.name for m in pkgutil.walk_packages(minigrad.__path__, "minigrad.")
                 if not m.name.endswith("__main__"))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:  # an optional dependency
        pytest.skip(f"{name} needs {exc.name}, which is not installed")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
                             verbose=False, report=True)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed"


def test_the_docstrings_hold_examples():
    """A guard against the runner above quietly finding nothing."""
    attempted = 0
    for name in ("minigrad", "minigrad.broadcast", "minigrad.nn.modules"):
        finder = doctest.DocTestFinder()
        attempted += sum(len(t.examples) for t in finder.find(importlib.import_module(name)))
    assert attempted >= 5

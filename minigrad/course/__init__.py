"""The course tooling: build the solution notebooks, release the student lessons, check both.

Command line (from the repository root)::

    python -m minigrad.course build [NN ...]   # solutions/NN_*.py -> executed solutions/NN_*.ipynb
    python -m minigrad.course release          # solutions/ -> lessons/ and minigrad/course/released/
    python -m minigrad.course check            # non-zero exit when anything above is stale

The functions the grader and the tests use are importable from here: :func:`release_notebook`,
:func:`exercise_cells`, :func:`check_cells`, :func:`released_notebook`, :func:`cell_checksum`...

What lives here: everything that exists for the course — ``checks/`` (one file per lesson),
``grading/`` (the instructor's sandboxed grader), ``widgets/``, ``scalar.py`` (the scalar
``Var`` the course starts from), ``byhand.py`` (the oracle), ``demos.py``, ``student.py`` and
the notebooks' build and release. Imports: the engine and the standard library;
``byhand.py`` and ``scalar.py`` import not even the engine (the oracle must not use what it
checks; ``scalar.py`` takes only the topological order from ``minigrad._utils``, which imports
nothing). Nothing in the engine or in ``minigrad.export`` imports this package.
"""
import importlib
from typing import Any

__all__ = [
    "BEGIN", "END", "PLACEHOLDER", "ReleaseError", "cell_checksum", "cell_tags", "check_cells",
    "check_id", "demo_cells", "exercise_cells", "exercise_id", "lesson_number", "lesson_paths",
    "lessons_dir", "notebook_bytes", "read_notebook", "release", "release_notebook",
    "release_source", "released_dir", "released_notebook", "released_paths", "repo_root",
    "solution_paths", "solutions_dir", "stale", "validate_notebook", "write_notebook",
]


def __getattr__(name: str) -> Any:
    """The tooling is imported on first use: ``from minigrad.course import checks`` (every
    lesson's first cell, and every graded notebook) must not pay for nbformat's import."""
    if name in __all__:
        value = getattr(importlib.import_module(f"{__name__}.notebooks"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

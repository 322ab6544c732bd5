"""The reference solutions the check tests use: the solution notebooks' own exercise cells.

Loading them from ``solutions/`` (rather than copying them into the tests) keeps one source:
when a lesson's solution changes, its check tests test the new one.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from minigrad.course import exercise_cells, read_notebook

ROOT = Path(__file__).resolve().parents[2]


def solution_namespace(name: str) -> dict:
    """Run the set-up cell and every exercise cell of ``solutions/<name>.ipynb`` in one namespace.

    NumPy's print options are restored afterwards: lessons 3 and 4 set their own
    (``np.set_printoptions(suppress=True)``), which would otherwise change how every later
    test's messages print arrays, so that a message would depend on the order the tests ran in.
    """
    nb = read_notebook(ROOT / "solutions" / f"{name}.ipynb")
    setup = next(c for c in nb.cells if c.cell_type == "code")
    ns: dict = {"__name__": "__main__"}
    with np.printoptions():
        for cell in [setup, *exercise_cells(nb).values()]:
            exec(compile(cell.source, f"<{name}>", "exec"), ns)
    return ns


def solution_with_mistake(name: str, exercise: str, right: str, wrong: str) -> dict:
    """:func:`solution_namespace`, then exercise ``exercise``'s cell run again with the text
    ``right`` (which must stand in it exactly once) replaced by ``wrong``.

    A student's mistake written as a one-line change of the solution, so the test follows the
    solution when it changes, and no test holds a copy of it.
    """
    ns = solution_namespace(name)
    source = exercise_cells(read_notebook(ROOT / "solutions" / f"{name}.ipynb"))[exercise].source
    assert source.count(right) == 1, f"{name} {exercise}: {right!r} is not in the solution once"
    exec(compile(source.replace(right, wrong), f"<{name} {exercise}, mistaken>", "exec"), ns)
    return ns

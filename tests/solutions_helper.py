"""The reference solutions the check tests use: the solution notebooks' own exercise cells.

Loading them from ``solutions/`` (rather than copying them into the tests) keeps one source:
when a lesson's solution changes, its check tests test the new one.
"""
from __future__ import annotations

from pathlib import Path

from minigrad.course import exercise_cells, read_notebook

ROOT = Path(__file__).resolve().parents[1]


def solution_namespace(name: str) -> dict:
    """Run the set-up cell and every exercise cell of ``solutions/<name>.ipynb`` in one namespace."""
    nb = read_notebook(ROOT / "solutions" / f"{name}.ipynb")
    setup = next(c for c in nb.cells if c.cell_type == "code")
    ns: dict = {"__name__": "__main__"}
    for cell in [setup, *exercise_cells(nb).values()]:
        exec(compile(cell.source, f"<{name}>", "exec"), ns)
    return ns

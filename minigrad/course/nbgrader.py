"""An nbgrader ``source/`` tree of the lessons: ``python -m minigrad.course release --nbgrader DIR``.

JupyterHub courses that hand out and collect with nbgrader build their releases themselves,
with ``nbgrader generate_assignment``, from a ``source/<assignment>/`` folder of notebooks whose
cells carry nbgrader's metadata. :func:`write_source` writes that tree from ``solutions/``:

* an exercise cell (tag ``exercise:<id>``) is a *solution* cell (``solution: true``), whose
  ``### BEGIN SOLUTION`` / ``### END SOLUTION`` region nbgrader clears as it releases;
* the first check cell of an exercise (tag ``check:<id>``) is a locked *autograder test* with
  the exercise's points (``grade: true``, ``points``); further check cells of the same
  exercise are locked and ungraded;
* every other cell is locked (``locked: true``: students cannot edit it in nbgrader's UI).

Each cell keeps its tags, so ``minigrad-grade`` grades nbgrader's ``submitted/`` tree as it
grades any other (a folder per student). One assignment per lesson, named like its notebook
without the ``.ipynb`` (``01_from_scalars_to_tensors``).
"""
from __future__ import annotations

import copy
import os
import re
from pathlib import Path
from typing import Any

import nbformat

from .notebooks import (check_id, exercise_id, read_notebook, repo_root, solution_paths,
                        validate_notebook, write_notebook)

__all__ = ["SCHEMA_VERSION", "nbgrader_notebook", "write_source"]

#: nbgrader's cell-metadata schema written here (nbgrader 0.9).
SCHEMA_VERSION = 3


def _grade_id(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "_", text)


def _points() -> dict[str, float]:
    import json

    table = Path(__file__).with_name("checks") / "exercises.json"
    data = json.loads(table.read_text(encoding="utf-8"))
    return {k: float(v["points"]) for k, v in data["exercises"].items()}


def nbgrader_notebook(nb: dict[str, Any], points: dict[str, float] | None = None,
                      name: str = "notebook") -> nbformat.NotebookNode:
    """The solution notebook ``nb`` with nbgrader's cell metadata (a new object).

    Raises
    ------
    ValueError
        When an exercise has no points in ``points`` (default: ``checks/exercises.json``).
    """
    points = _points() if points is None else points
    out = copy.deepcopy(nb)
    if not isinstance(out, nbformat.NotebookNode):
        out = nbformat.from_dict(out)
    graded: set[str] = set()
    for i, cell in enumerate(out.cells):
        exercise, check = exercise_id(cell), check_id(cell)
        meta = {"grade": False, "locked": True, "solution": False, "task": False,
                "schema_version": SCHEMA_VERSION, "grade_id": f"cell-{i:03d}"}
        if cell.cell_type == "code" and exercise:
            meta.update(solution=True, locked=False, grade_id=_grade_id(f"exercise-{exercise}"))
        elif cell.cell_type == "code" and check and check not in graded:
            if check not in points:
                raise ValueError(f"{name}: exercise {check} has no points in "
                                 "checks/exercises.json")
            graded.add(check)
            meta.update(grade=True, points=points[check],
                        grade_id=_grade_id(f"check-{check}"))
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        cell.metadata["nbgrader"] = nbformat.from_dict(meta)
    return out


#: ``nbgrader_config.py`` written into a course folder that has none: nbgrader's stub for a
#: cleared solution then is the lessons' own, so its release has exactly their cells.
CONFIG = '''\
# Written by python -m minigrad.course release --nbgrader: nbgrader's release of a lesson then
# has exactly the cells of minigrad's own (lessons/), which minigrad-grade compares with.
c = get_config()  # noqa: F821
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\\nraise NotImplementedError"}
'''


def write_source(folder: str | os.PathLike[str], root: str | Path | None = None) -> list[Path]:
    """Write ``folder/source/<lesson>/<lesson>.ipynb`` for every solution notebook, and
    ``folder/nbgrader_config.py`` (:data:`CONFIG`) when there is none.

    Returns the files written (unchanged ones are left alone).
    """
    root = Path(root or repo_root())
    points = _points()
    written = []
    config = Path(folder) / "nbgrader_config.py"
    if not config.exists():
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(CONFIG, encoding="utf-8")
        written.append(config)
    for path in solution_paths(root):
        nb = read_notebook(path)
        problems = validate_notebook(nb, path.name)
        if problems:
            raise ValueError("cannot write the nbgrader source:\n  " + "\n  ".join(problems))
        target = Path(folder) / "source" / path.stem / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        if write_notebook(nbgrader_notebook(nb, points, path.name), target):
            written.append(target)
    return written

"""The grader's toy lesson: a solution notebook, its release, and ways to break a submission.

``09_toy`` has three exercises (weights in ``gradingtoy/lesson9.py``), a check cell for each, a
``demo`` cell that must never run, and an ordinary cell that uses the student's code.
"""
from __future__ import annotations

import re
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

FIXTURES = Path(__file__).resolve().parent
CHECKS_PACKAGE = "gradingtoy"
KEY = "09_toy"

SETUP = "import numpy as np\nimport minigrad as mg\nimport gradingtoy as checks"
DOUBLE = '''def double(x):
    """Twice x."""
    ### BEGIN SOLUTION
    return 2 * x
    ### END SOLUTION'''
MUL = '''def mul(a, b):
    """a * b as a graph node; a and b may broadcast."""
    ### BEGIN SOLUTION
    return mg.op(a.data * b.data, (a, b),
                 lambda g, x, y: (mg.unbroadcast(g * y, x.shape), mg.unbroadcast(g * x, y.shape)),
                 saved=(a.data, b.data), name="mul")
    ### END SOLUTION'''
MEAN = '''def mean(x):
    """The mean of all elements, as a graph node."""
    ### BEGIN SOLUTION
    return mg.op(x.data.mean(), (x,), lambda g, d: (np.full(d.shape, g / d.size),),
                 saved=(x.data,), name="mean")
    ### END SOLUTION'''


def _code(source, *tags):
    cell = new_code_cell(source)
    if tags:
        cell.metadata["tags"] = list(tags)
    return cell


def solution() -> nbformat.NotebookNode:
    """The complete toy lesson, as its author writes it."""
    cells = [
        new_markdown_cell("# Toy lesson 9\nThree small exercises for the grader's tests."),
        _code(SETUP),
        new_markdown_cell("## Exercise 9.1: double"),
        _code(DOUBLE, "exercise:9.1"),
        _code("checks.lesson9.double(double)", "check:9.1"),
        _code('raise RuntimeError("the grader must skip demo cells")', "demo"),
        new_markdown_cell("## Exercise 9.2: mul"),
        _code(MUL, "exercise:9.2"),
        _code("checks.lesson9.mul(mul)", "check:9.2"),
        _code('print("double(21) =", double(21))'),
        new_markdown_cell("## Exercise 9.3: mean"),
        _code(MEAN, "exercise:9.3"),
        _code("checks.lesson9.mean(mean)", "check:9.3"),
    ]
    notebook = new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                       "language": "python"}
    for index, cell in enumerate(notebook.cells):
        cell["id"] = f"toy-{index:02d}"
    return notebook


_REGION = re.compile(r"^(?P<indent>[ \t]*)### BEGIN SOLUTION\n.*?^[ \t]*### END SOLUTION[ \t]*$",
                     re.S | re.M)


def release(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The student's version: each solution region becomes the placeholder (the course format)."""
    released = nbformat.from_dict(notebook)
    for cell in released.cells:
        cell.source = _REGION.sub(
            lambda m: f"{m['indent']}# YOUR CODE HERE\n{m['indent']}raise NotImplementedError()",
            cell.source)
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return released


def with_exercise(notebook: nbformat.NotebookNode, exercise_id: str, old: str | None = None,
                  new: str = "", *, source: str | None = None) -> nbformat.NotebookNode:
    """A copy of ``notebook`` with one exercise cell changed: ``old`` -> ``new``, or ``source``."""
    changed = nbformat.from_dict(notebook)
    for cell in changed.cells:
        if f"exercise:{exercise_id}" in cell.metadata.get("tags", []):
            if source is not None:
                cell.source = source
            else:
                assert old in cell.source, f"{old!r} is not in exercise {exercise_id}"
                cell.source = cell.source.replace(old, new)
            return changed
    raise KeyError(f"no exercise:{exercise_id} cell")


def write(notebook: nbformat.NotebookNode, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, str(path))
    return path


def released_dir(folder: Path) -> Path:
    """Write the released toy lesson into ``folder``, as minigrad/course/released/ holds them."""
    write(release(solution()), folder / f"{KEY}.ipynb")
    return folder

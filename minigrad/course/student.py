"""The student's commands: a working folder, progress through the checks, one exercise reset.

::

    python -m minigrad.course start DIR                 # copy the four lessons into DIR
    python -m minigrad.course progress DIR              # run DIR's notebooks: done / not done
    python -m minigrad.course reset DIR/01_*.ipynb 1.3  # exercise 1.3 back as released

``progress`` runs the student's own notebooks in a kernel of this environment, with the checks
raising (``MINIGRAD_CHECKS_RAISE=1``), and reads each check cell's outcome. No sandbox: it is
the student's own work on the student's own machine (the grader, in :mod:`.grading`, is the
sandboxed one).
"""
from __future__ import annotations

import contextlib
import importlib
import shutil
from dataclasses import dataclass
from pathlib import Path

import nbformat

from .notebooks import (
    check_id,
    exercise_cells,
    lesson_number,
    read_notebook,
    released_notebook,
    released_paths,
    write_notebook,
)

__all__ = ["Exercise", "format_progress", "progress", "reset", "start"]


@dataclass(frozen=True)
class Exercise:
    """One exercise of one notebook, as :func:`progress` found it."""

    notebook: str
    exercise_id: str
    title: str
    points: float
    done: bool
    why: str = ""   # the first line of the check's failure when not done


def start(folder: str | Path) -> list[Path]:
    """Copy the released lessons into ``folder`` (made if missing); return the files copied.

    A notebook already in ``folder`` is never overwritten: it may hold the student's work.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    copied = []
    for source in released_paths():
        target = folder / source.name
        if not target.exists():
            shutil.copyfile(source, target)
            copied.append(target)
    return copied


def _exercise_table(number: int) -> dict[str, dict]:
    try:
        module = importlib.import_module(f"minigrad.course.checks.lesson{number}")
    except ImportError:
        return {}
    return dict(getattr(module, "EXERCISES", {}))


def _notebooks(folder: Path) -> list[Path]:
    found = []
    for path in sorted(folder.glob("[0-9][0-9]_*.ipynb")):
        with contextlib.suppress(ValueError):
            lesson_number(path)
            found.append(path)
    return found


def progress(folder: str | Path, timeout: int = 300) -> list[Exercise]:
    """Run every lesson notebook in ``folder`` and say, per exercise, whether its check passed.

    Each notebook runs top to bottom in a fresh kernel (cwd ``folder``); a cell that fails does
    not stop the run. An exercise is done when every one of its check cells ran without error.
    The notebooks on disk are not changed.
    """
    from .build import checks_raising, execute

    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"progress: {folder} is not a folder (make one with: python -m "
                                f"minigrad.course start {folder})")
    found: list[Exercise] = []
    for path in _notebooks(folder):
        nb = read_notebook(path)
        with checks_raising():
            execute(nb, cwd=folder, timeout=timeout, allow_errors=True)
        outcome: dict[str, str] = {}        # exercise id -> "" (passed) or the failure's line
        for cell in nb.cells:
            key = check_id(cell)
            if key is None:
                continue
            errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
            if errors and not outcome.get(key):
                first = (errors[0].get("evalue") or errors[0].get("ename") or "").strip()
                outcome[key] = first.splitlines()[0] if first else "the check failed"
            else:
                outcome.setdefault(key, "")
        table = _exercise_table(lesson_number(path))
        for key in exercise_cells(nb):
            info = table.get(key, {})
            why = outcome.get(key, "its check cell is missing")
            found.append(Exercise(path.name, key, str(info.get("title", "")),
                                  float(info.get("points", 0)), why == "", why))
    return found


def format_progress(rows: list[Exercise]) -> str:
    """The table ``progress`` prints: one line per exercise, then points done per notebook."""
    if not rows:
        return "no lesson notebooks (NN_name.ipynb) found"
    lines = [f"{'exercise':<9} {'':<2} {'points':>6}  title"]
    notebook = None
    for row in rows:
        if row.notebook != notebook:
            notebook = row.notebook
            mine = [r for r in rows if r.notebook == notebook]
            got = sum(r.points for r in mine if r.done)
            lines.append(f"{notebook}: {sum(r.done for r in mine)}/{len(mine)} done, "
                         f"{got:g}/{sum(r.points for r in mine):g} points")
        mark = "\u2713" if row.done else "\u2717"
        lines.append(f"  {row.exercise_id:<7} {mark:<2} {row.points:>6g}  {row.title}")
        if not row.done:
            lines.append(f"{'':<21}{row.why[:100]}")
    return "\n".join(lines)


def reset(notebook: str | Path, exercise: str) -> None:
    """Put the cell of ``exercise`` in ``notebook`` back as released (outputs cleared).

    Every other cell stays as the student left it. Raises ``KeyError`` naming the exercises
    the notebook has when ``exercise`` is not one of them.
    """
    path = Path(notebook)
    nb = read_notebook(path)
    released = exercise_cells(released_notebook(lesson_number(path)))
    mine = exercise_cells(nb)
    if exercise not in released or exercise not in mine:
        have = sorted(mine, key=lambda k: [int(p) for p in k.split(".") if p.isdigit()])
        raise KeyError(f"reset: {path.name} has no exercise {exercise!r}; its exercises are "
                       f"{', '.join(have) or 'none'}")
    cell = mine[exercise]
    cell.source = released[exercise].source
    cell.outputs = []
    cell.execution_count = None
    write_notebook(nbformat.from_dict(nb), path)

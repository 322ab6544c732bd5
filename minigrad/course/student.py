"""The student's commands: a working folder, progress through the checks, one exercise reset.

::

    python -m minigrad.course start DIR                 # copy the four lessons into DIR
    python -m minigrad.course progress DIR              # run DIR's notebooks: done / not done
    python -m minigrad.course progress DIR/01_*.ipynb   # ... or one of them
    python -m minigrad.course reset DIR/01_*.ipynb 1.3  # exercise 1.3 back as released

``reset`` keeps a copy of the code it replaces beside the notebook
(``01_name.exercise-1.3.py``, numbered when one exists) and returns what changed.

``progress`` runs the student's own notebooks in a kernel of this environment, with the checks
raising (``MINIGRAD_CHECKS_RAISE=1``), and reads each check cell's outcome. No sandbox: it is
the student's own work on the student's own machine (the grader, in :mod:`.grading`, is the
sandboxed one).
"""
from __future__ import annotations

import contextlib
import difflib
import importlib
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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

__all__ = ["Exercise", "Reset", "format_progress", "progress", "reset", "start"]


@dataclass(frozen=True)
class Exercise:
    """One exercise of one notebook, as :func:`progress` found it."""

    notebook: str
    exercise_id: str
    title: str
    points: float
    done: bool
    why: str = ""   # the check's whole failure message when not done


@dataclass(frozen=True)
class Reset:
    """What :func:`reset` did: where it kept the replaced code, and the change as a diff."""

    notebook: Path
    exercise_id: str
    kept: Path | None   # the copy of the student's code (None when it was already as released)
    diff: str           # a unified diff, the student's code to the released cell


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


def _exercise_table(number: int) -> dict[str, dict[str, Any]]:
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


def _failure(output: dict[str, Any]) -> str:
    """An error output's message, whole: a check's CheckFailed with its usual cause."""
    text = (output.get("evalue") or "").strip()
    name = output.get("ename") or "an error"
    if not text:
        return f"the check failed with {name}"
    return text if name == "CheckFailed" else f"{name}: {text}"


def progress(where: str | Path, timeout: int = 300) -> list[Exercise]:
    """Run one lesson notebook, or every one in a folder, and say per exercise whether its check
    passed.

    Each notebook runs top to bottom in a fresh kernel (cwd: its folder); a cell that fails does
    not stop the run. An exercise is done when every one of its check cells ran without error.
    The notebooks on disk are not changed.
    """
    from .build import checks_raising, execute

    where = Path(where)
    if where.is_file():
        lesson_number(where)        # a ValueError naming the file unless it is NN_name.ipynb
        paths, folder = [where], where.parent
    elif where.is_dir():
        paths, folder = _notebooks(where), where
    elif where.suffix == ".ipynb":
        raise FileNotFoundError(f"progress: {where} does not exist; the lessons in "
                                f"{where.parent}: {_listing(where.parent)}")
    else:
        raise FileNotFoundError(f"progress: {where} is not a folder (make one with: python -m "
                                f"minigrad.course start {where})")
    found: list[Exercise] = []
    for path in paths:
        nb = read_notebook(path)
        with checks_raising():
            execute(nb, cwd=folder, timeout=timeout, allow_errors=True, transport="ipc")
        outcome: dict[str, str] = {}        # exercise id -> "" (passed) or the failure's line
        for cell in nb.cells:
            key = check_id(cell)
            if key is None:
                continue
            errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
            if errors and not outcome.get(key):
                outcome[key] = _failure(errors[0])
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
            lines += [f"{'':<13}{line}" for line in row.why.splitlines()]
    return "\n".join(lines)


def _listing(folder: Path) -> str:
    names = [p.name for p in _notebooks(folder)] if folder.is_dir() else []
    return ", ".join(names) if names else "none"


def _kept_path(path: Path, exercise: str) -> Path:
    base = path.with_name(f"{path.stem}.exercise-{exercise}.py")
    n = 2
    kept = base
    while kept.exists():
        kept, n = base.with_name(f"{path.stem}.exercise-{exercise}.{n}.py"), n + 1
    return kept


def reset(notebook: str | Path, exercise: str) -> Reset:
    """Put the cell of ``exercise`` in ``notebook`` back as released (outputs cleared).

    Every other cell stays as the student left it. The code it replaces is kept in a file
    beside the notebook (``NN_name.exercise-1.3.py``, numbered if one exists). Raises
    ``FileNotFoundError`` naming the notebook when it does not exist, and ``KeyError`` naming
    the exercises the notebook has when ``exercise`` is not one of them.
    """
    path = Path(notebook)
    if not path.is_file():
        raise FileNotFoundError(f"reset: {path} does not exist; the lessons in {path.parent}: "
                                f"{_listing(path.parent)}")
    nb = read_notebook(path)
    released = exercise_cells(released_notebook(lesson_number(path)))
    mine = exercise_cells(nb)
    if exercise not in released or exercise not in mine:
        have = sorted(mine, key=lambda k: [int(p) for p in k.split(".") if p.isdigit()])
        raise KeyError(f"reset: {path.name} has no exercise {exercise!r}; its exercises are "
                       f"{', '.join(have) or 'none'}")
    cell = mine[exercise]
    before, after = cell["source"], released[exercise]["source"]
    kept = None
    if before != after:
        kept = _kept_path(path, exercise)
        kept.write_text(before if before.endswith("\n") else before + "\n", encoding="utf-8")
    diff = "".join(difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True),
        fromfile=f"your exercise {exercise}", tofile="as released"))
    cell["source"] = after
    cell["outputs"] = []
    cell["execution_count"] = None
    write_notebook(nbformat.from_dict(nb), path)
    return Reset(path, exercise, kept, diff)

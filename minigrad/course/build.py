"""Build ``solutions/NN_name.ipynb`` from its reviewed twin ``solutions/NN_name.py``.

The ``.py`` file is a jupytext "percent" notebook: cells start with ``# %%`` (code) or
``# %% [markdown]``, and a cell's tags follow on that line (``# %% tags=["exercise:1.3"]``).
Building it

1. converts it to a notebook with deterministic cell ids (from the exercise/check tag, else from
   the cell's content) and the same small metadata on every machine (kernel ``python3``);
2. executes it with nbclient in the current environment, with ``solutions/`` as the working
   directory (a failing cell stops the build and says which);
3. removes from the outputs anything that belongs to this machine: its paths, timing metadata,
   widget state (a widget's output becomes a short note to run the cell);
4. writes the ``.ipynb`` next to the ``.py``.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import site
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import nbformat

from .notebooks import (
    check_id,
    exercise_id,
    solutions_dir,
    validate_notebook,
    write_notebook,
)

__all__ = [
    "NOTEBOOK_METADATA",
    "build",
    "checks_raising",
    "execute",
    "notebook_from_text",
    "sanitize",
    "twin_mismatches",
    "twin_paths",
]

NOTEBOOK_METADATA = {
    "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python",
                   "name": "python3"},
    "language_info": {"name": "python"},
}

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
WIDGET_NOTE = "(an interactive widget: run this cell in JupyterLab to use it)"


def twin_paths(root: str | Path | None = None, only: list[str] | None = None) -> list[Path]:
    """The jupytext twins ``solutions/NN_name.py``; ``only`` picks lessons by number or name."""
    folder = solutions_dir(root)
    paths = sorted(p for p in folder.glob("[0-9][0-9]_*.py"))
    if only:
        wanted = [str(w) for w in only]
        paths = [p for p in paths
                 if any(p.name.startswith(w.zfill(2) + "_") or p.stem == w or p.name == w
                        for w in wanted)]
        if not paths:
            raise FileNotFoundError(f"no solutions/NN_name.py matches {only}")
    return paths


def _cell_id(cell: dict[str, Any], seen: set[str]) -> str:
    ex, ck = exercise_id(cell), check_id(cell)
    if ex is not None:
        base = "exercise-" + ex.replace(".", "-")
    elif ck is not None:
        base = "check-" + ck.replace(".", "-")
    else:
        digest = hashlib.sha1(cell["source"].encode("utf-8")).hexdigest()[:8]
        base = ("md-" if cell["cell_type"] == "markdown" else "code-") + digest
    cid, n = base, 2
    while cid in seen:
        cid, n = f"{base}-{n}", n + 1
    seen.add(cid)
    return cid


class MissingPackage(RuntimeError):
    """A maintainer's command needs a package that is not installed; the message says how to
    install it."""


def _require(module: str, requirement: str) -> ModuleType:
    """Import ``module``, or raise :class:`MissingPackage` naming it and the install command."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise MissingPackage(
            f"python -m minigrad.course build and check need {module}, which is not installed "
            f"({error}); install it with: python -m pip install '{requirement}' (or the whole "
            f"dev extra: python -m pip install -e '.[dev]')") from error


def notebook_from_text(text: str) -> nbformat.NotebookNode:
    """A notebook (not executed) from the text of a jupytext percent file.

    Cells keep only their tags; check cells are also marked not editable and not deletable (a
    hint to the student, honoured by JupyterLab). Ids and notebook metadata are deterministic.
    """
    jupytext = _require("jupytext", "jupytext>=1.16")
    raw = jupytext.reads(text, fmt="py:percent")
    nb = nbformat.v4.new_notebook()
    nb.nbformat, nb.nbformat_minor = 4, 5
    nb.metadata = nbformat.from_dict(NOTEBOOK_METADATA)
    seen: set[str] = set()
    for cell in raw.cells:
        tags = list(cell.metadata.get("tags", []))
        source = cell.source
        if cell.cell_type == "markdown":
            new = nbformat.v4.new_markdown_cell(source)
        elif cell.cell_type == "code":
            new = nbformat.v4.new_code_cell(source)
        else:
            new = nbformat.v4.new_raw_cell(source)
        new.metadata = nbformat.NotebookNode()
        if any(t.startswith("check:") for t in tags):
            new.metadata["deletable"] = False
            new.metadata["editable"] = False
        if tags:
            new.metadata["tags"] = tags
        new.id = _cell_id({"cell_type": cell.cell_type, "source": source,
                           "metadata": {"tags": tags}}, seen)
        nb.cells.append(new)
    return nb


def _machine_paths(cwd: str | Path | None = None) -> list[tuple[str, str]]:
    """(path, placeholder) pairs, longest path first, for scrubbing outputs."""
    pairs: dict[str, str] = {}
    if cwd is not None:  # the notebook's folder reads as ".", the repository as ".."
        pairs[str(Path(cwd).resolve())] = "."
        pairs[str(Path(cwd).resolve().parent)] = ".."
    for p in site.getsitepackages() + [site.getusersitepackages()]:
        pairs[str(Path(p))] = "<site-packages>"
    pairs[str(Path(sys.prefix))] = "<python>"
    pairs[str(Path(sys.base_prefix))] = "<python>"
    pairs.setdefault(str(Path(__file__).resolve().parents[2]), "<minigrad>")
    pairs.setdefault(str(Path.cwd()), "<cwd>")
    pairs[str(Path.home())] = "~"
    import tempfile
    pairs[tempfile.gettempdir()] = "<tmp>"
    return sorted(((k, v) for k, v in pairs.items() if len(k) > 1),
                  key=lambda kv: -len(kv[0]))


def _scrub(text: str, pairs: list[tuple[str, str]]) -> str:
    for path, placeholder in pairs:
        text = text.replace(path, placeholder)
    return text


def _coalesce_streams(outputs: list[Any]) -> list[Any]:
    """Join consecutive stdout (or stderr) pieces into one output: how they were flushed
    depends on timing, and should not show up in a diff."""
    merged: list[Any] = []
    for out in outputs:
        if (out.output_type == "stream" and merged and merged[-1].output_type == "stream"
                and merged[-1].name == out.name):
            merged[-1].text += out.text
        else:
            merged.append(out)
    return merged


def sanitize(nb: nbformat.NotebookNode, cwd: str | Path | None = None) -> nbformat.NotebookNode:
    """Remove what belongs to this machine or this run from an executed notebook (in place).

    Machine paths in outputs become placeholders, per-cell execution metadata goes, widget
    outputs become a short text note, and the notebook metadata is reset to
    :data:`NOTEBOOK_METADATA`. ``cwd``, the folder the notebook ran in, becomes ``.``.
    """
    pairs = _machine_paths(cwd)
    nb.metadata = nbformat.from_dict(NOTEBOOK_METADATA)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type != "code":
            continue
        cell.outputs = _coalesce_streams(cell.outputs)
        for out in cell.outputs:
            if out.output_type == "stream":
                out.text = _scrub(out.text, pairs)
            elif out.output_type == "error":
                out.evalue = _scrub(out.evalue, pairs)
                out.traceback = [_scrub(t, pairs) for t in out.traceback]
            elif out.output_type in ("display_data", "execute_result"):
                if WIDGET_MIME in out.data:
                    out.data = nbformat.from_dict({"text/plain": WIDGET_NOTE})
                for mime, value in list(out.data.items()):
                    if mime.startswith("text/") and isinstance(value, str):
                        out.data[mime] = _scrub(value, pairs)
                out.metadata = nbformat.from_dict(
                    {k: v for k, v in out.get("metadata", {}).items() if k != "execution"})
    return nb


@contextlib.contextmanager
def checks_raising(on: bool = True) -> Iterator[None]:
    """Set (or, with ``on=False``, remove) ``MINIGRAD_CHECKS_RAISE=1`` while the block runs.

    A kernel started inside inherits it: with it, a failing check raises ``CheckFailed``
    (building the solutions, ``progress``); without it, it prints a ✗ line (a student's Run All).
    """
    name = "MINIGRAD_CHECKS_RAISE"
    before = os.environ.get(name)
    if on:
        os.environ[name] = "1"
    else:
        os.environ.pop(name, None)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before


def execute(nb: nbformat.NotebookNode, cwd: str | Path, timeout: int = 300,
            allow_errors: bool = False, transport: str = "tcp") -> nbformat.NotebookNode:
    """Run every cell of ``nb`` in a fresh ``python3`` kernel of this environment (in place).

    ``transport="ipc"`` talks to the kernel over local sockets instead of TCP: the kernel then
    prints no warning about unencrypted TCP (what ``progress`` shows a student).
    """
    NotebookClient = _require("nbclient", "nbclient>=0.10").NotebookClient

    import tempfile

    with tempfile.TemporaryDirectory(prefix="minigrad-kernel-") as sockets:
        km = None
        if transport != "tcp":   # the sockets' path must be absolute: the kernel runs in cwd
            from jupyter_client.manager import KernelManager

            km = KernelManager(kernel_name="python3", transport=transport,
                               ip=os.path.join(sockets, "kernel"))
        client = NotebookClient(nb, km=km, timeout=timeout, kernel_name="python3",
                                resources={"metadata": {"path": str(cwd)}},
                                allow_errors=allow_errors, record_timing=False,
                                store_widget_state=False)
        client.execute()
    return nb


def build(root: str | Path | None = None, only: list[str] | None = None,
          run: bool = True, timeout: int = 300, verbose: bool = True) -> list[Path]:
    """Build the solution notebooks from their ``.py`` twins; return the notebooks written."""
    written = []
    for src in twin_paths(root, only):
        start = time.perf_counter()
        nb = notebook_from_text(src.read_text(encoding="utf-8"))
        problems = validate_notebook(nb, src.name)
        if problems:
            raise ValueError("\n".join(problems))
        if run:
            with checks_raising():  # a check that fails on the solution stops the build
                execute(nb, cwd=src.parent, timeout=timeout)
            sanitize(nb, cwd=src.parent)
        target = src.with_suffix(".ipynb")
        write_notebook(nb, target)
        written.append(target)
        if verbose:
            print(f"built {target.name} in {time.perf_counter() - start:.1f} s "
                  f"({target.stat().st_size / 1024:.0f} KiB)")
    return written


def _comparable(nb: dict[str, Any]) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(c["cell_type"], c["source"] if isinstance(c["source"], str) else "".join(c["source"]),
             tuple(c.get("metadata", {}).get("tags", []))) for c in nb["cells"]]


def twin_mismatches(root: str | Path | None = None) -> list[str]:
    """Solution notebooks whose cells differ from their ``.py`` twin (the .py was edited and
    not rebuilt, or the reverse), as readable lines."""
    from .notebooks import read_notebook

    problems = []
    for src in twin_paths(root):
        target = src.with_suffix(".ipynb")
        if not target.exists():
            problems.append(f"{target}: missing (run: python -m minigrad.course build "
                            f"{src.name[:2]})")
            continue
        want = _comparable(notebook_from_text(src.read_text(encoding="utf-8")))
        got = _comparable(read_notebook(target))
        if want != got:
            first = next((i for i, (a, b) in enumerate(zip(want, got)) if a != b),
                         min(len(want), len(got)))
            problems.append(f"{target}: cell {first} differs from {src.name} (run: python -m "
                            f"minigrad.course build {src.name[:2]})")
    return problems

"""``python -m minigrad.course site --out DIR``: the course and the library's documentation as
one static website that opens from disk.

The site is built with Sphinx, MyST-NB (the notebooks) and autodoc/autosummary (the API
reference). Nothing in it is fetched from another host: the theme's files, the search index,
MathJax (copied from the ``mathjax`` package on PyPI, django-static-mathjax) and the widget's
JavaScript all lie in the output folder. The build is strict: any Sphinx warning (a broken
link, a missing page, a docstring that does not parse) fails it.

How the pages are made, in :func:`stage`:

* ``docs/`` (the hand-written pages and ``conf.py``) is copied into a staging folder;
* each lesson page is the *executed* solution notebook with every exercise region replaced as
  in the released lesson (:func:`minigrad.course.notebooks.release_source`), its figures kept;
  the cell that shows the "Broadcast and backward" widget gets the widget's static mode
  instead of its Jupyter output (:func:`lesson_notebook`);
* the student notebooks (``lessons/``) are copied beside them for download;
* the API reference has one page per public module (each module of ``minigrad`` with an
  ``__all__``) and an entry for every name in its ``__all__`` (:func:`api_pages`);
* the widget's browser files (``minigrad/course/widgets/``) are copied into ``_static``,
  with its sentences (``messages.json``) and presets embedded as a script, since a page
  opened from disk may not fetch a JSON file.
"""
from __future__ import annotations

import ast
import importlib
import inspect
import json
import pkgutil
import shutil
import tempfile
import types
from pathlib import Path
from typing import Any

import nbformat

from .notebooks import lesson_paths, release_source, repo_root, solution_paths

__all__ = ["build_site", "stage", "lesson_notebook", "api_pages", "public_modules",
           "widget_mount", "widget_data", "lesson_minutes"]

_WIDGETS = Path(__file__).resolve().parent / "widgets"

#: The widget's files the static pages load, in order (classic scripts: a page opened from
#: disk cannot load ES modules).
WIDGET_SCRIPTS = ["bb_text.js", "static_mode.js", "broadcast_backward_classic.js",
                  "static_page.js"]


# ---------------------------------------------------------------------------------------------
# The lessons


def widget_mount(shape_a: str = "3,1", shape_b: str = "1,4", op: str = "+") -> str:
    """The HTML a static page holds where the widget goes: ``static_page.js`` mounts it."""
    from html import escape

    return (f'<div class="mg-static-widget" data-shape-a="{escape(shape_a)}" '
            f'data-shape-b="{escape(shape_b)}" data-op="{escape(op)}">'
            '<noscript>The interactive needs JavaScript.</noscript></div>')


def lesson_minutes(root: str | Path | None = None) -> dict[str, int]:
    """``{"minutes_1": 30, ..., "minutes_all": 125}``: the time each lesson's first cell states.

    The home page shows them (MyST substitutions). A lesson that states no time is an error.
    """
    from .lesson_table import count

    minutes = {}
    for path in solution_paths(root):
        stated = count(path).minutes
        if stated is None:
            raise RuntimeError(f"site: {path.name} states no time in its first cell "
                               "('**Time:** about N minutes')")
        minutes[f"minutes_{int(path.name[:2])}"] = stated
    minutes["minutes_all"] = sum(minutes.values())
    return minutes


def _widget_arguments(source: str) -> dict[str, str] | None:
    """The shapes and operator of the first ``BroadcastBackward(...)`` call in a cell, if any."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "BroadcastBackward":
            values: dict[str, str] = {"shape_a": "3,1", "shape_b": "1,4", "op": "+"}
            for name, arg in zip(("shape_a", "shape_b", "op"), node.args):
                if isinstance(arg, ast.Constant):
                    values[name] = str(arg.value)
            for kw in node.keywords:
                if kw.arg in values and isinstance(kw.value, ast.Constant):
                    values[kw.arg] = str(kw.value.value)
            return values
    return None


def lesson_notebook(nb: nbformat.NotebookNode, name: str = "notebook",
                    download: str | None = None) -> nbformat.NotebookNode:
    """The page version of an executed solution notebook (a new object).

    Every ``### BEGIN SOLUTION`` region is replaced as in the released lesson, and the outputs
    of those exercise cells are dropped (the placeholder would not make them); every other
    output (figures, printed numbers, the checks' ✓ lines) is kept. A cell that shows the
    ``BroadcastBackward`` widget gets the widget's static mode as its output. With
    ``download`` (the student notebook's path from the page), a line after the title links to
    it and gives the command that starts a workspace.
    """
    import copy

    out = copy.deepcopy(nb)
    if download is not None:
        out.cells.insert(1, nbformat.v4.new_markdown_cell(
            f"**Work through it yourself:** download the student notebook, "
            f"{{download}}`{Path(download).name} <{download}>`, or start a folder with all "
            "four and open it in JupyterLab:\n\n"
            "```bash\npython -m minigrad.course start work/\npython -m jupyter lab work/\n```\n\n"
            "This page shows the lesson as solved and run, with each exercise's code left out "
            "as in the student notebook."))
    for i, cell in enumerate(out.cells):
        if cell.cell_type != "code":
            continue
        released = release_source(cell.source, f"{name}, cell {i}")
        if released != cell.source:
            cell.source = released
            cell.outputs = []
        widget = _widget_arguments(cell.source)
        if widget is not None:
            cell.outputs = [nbformat.v4.new_output(
                "display_data", data={"text/html": widget_mount(**widget),
                                      "text/plain": "BroadcastBackward (static mode)"})]
    return out


# ---------------------------------------------------------------------------------------------
# The API reference


def public_modules(refused: dict[str, str] | None = None) -> list[str]:
    """``minigrad`` and every module under it with an ``__all__`` and no ``_`` in its path.

    A module whose import raises ``ImportError`` (such as the grader's stand-in for the
    modules a sandbox must not see) is left out; pass a dict as ``refused`` to learn which,
    and why (the API index lists them).
    """
    import minigrad

    names = ["minigrad"]
    for info in pkgutil.walk_packages(minigrad.__path__, "minigrad.",
                                      onerror=lambda name: None):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError as error:
            if refused is not None:
                refused[info.name] = str(error)
            continue
        if getattr(module, "__all__", None) is not None:
            names.append(info.name)
    return sorted(names)


def _kind(obj: Any) -> str:
    if isinstance(obj, types.ModuleType):
        return "module"
    if inspect.isclass(obj):
        return "exception" if issubclass(obj, BaseException) else "class"
    if inspect.isfunction(obj) or inspect.isbuiltin(obj) or inspect.ismethod(obj):
        return "function"
    if callable(obj) and hasattr(obj, "__wrapped__"):
        return "function"
    return "data"


def _homes(modules: list[str]) -> dict[int, str]:
    """For each class and function listed somewhere: the module whose page documents it.

    Its defining module when that module lists it, else the shortest module name listing it.
    """
    listed: dict[int, list[str]] = {}
    objects: dict[int, Any] = {}
    absent = [f"{m}.{name}" for m in modules for name in importlib.import_module(m).__all__
              if not hasattr(importlib.import_module(m), name)]
    if absent:
        raise RuntimeError("site: these names are in their module's __all__ but the module "
                           "does not define them: " + ", ".join(absent))
    for m in modules:
        module = importlib.import_module(m)
        for name in module.__all__:
            obj = getattr(module, name)
            if _kind(obj) in ("class", "exception", "function"):
                listed.setdefault(id(obj), []).append(m)
                objects[id(obj)] = obj
    homes = {}
    for key, where in listed.items():
        defined = getattr(objects[key], "__module__", None)
        homes[key] = defined if defined in where else min(where, key=lambda m: (len(m), m))
    return homes


def _data_entry(module: str, name: str, value: Any) -> list[str]:
    """A constant's entry: its type, its value when short, and where the module explains it.

    (autodoc would show the docstring of the value's *type*, such as ``dict``'s.)
    """
    shown = repr(value)
    lines = [f".. py:data:: {name}", f"   :type: {type(value).__name__}"]  # in the module
    if len(shown) <= 70 and "\n" not in shown:
        lines.append(f"   :value: {shown}")
    lines += ["", f"   A constant of :mod:`{module}`; the module's description above says what "
              "it holds.", ""]
    return lines


def api_pages(modules: list[str] | None = None) -> dict[str, str]:
    """The API reference: ``{file name: MyST text}``, an index and one page per module.

    Every name in a module's ``__all__`` gets an entry on that module's page: classes,
    exceptions and functions are documented (autodoc) on the page of the module that defines
    them, and appear on the pages of modules that re-export them as a line that links there;
    constants are documented where they are listed.
    """
    refused: dict[str, str] = {}
    modules = modules or public_modules(refused)
    homes = _homes(modules)
    pages = {f"{m}.md": _module_page(m, homes) for m in modules}
    toc = "\n".join(f"{m}" for m in modules)
    pages["index.md"] = (
        "# API reference\n\nEvery public module of `minigrad` and every name in its "
        "`__all__`, from the docstrings. Most users need only `minigrad` (the tensor, the "
        "operations, `op`, `no_grad`), `minigrad.nn`, `minigrad.optim` and "
        "`minigrad.functional`.\n\n```{toctree}\n:maxdepth: 1\n\n" + toc + "\n```\n"
        + ("\nModules whose import refuses to run here, so they have no page:\n\n"
           + "".join(f"- `{m}`: {why}\n" for m, why in sorted(refused.items()))
           if refused else ""))
    return pages


def _sorted_names(m: str, homes: dict[int, str]) -> tuple[list[tuple[str, str]],
                                                           list[tuple[str, str]]]:
    """The names of module ``m``'s ``__all__``: those documented on its page, with their kind,
    and the aliases (modules and re-exported names), with the link to where they live."""
    module = importlib.import_module(m)
    documented, aliases = [], []
    for name in module.__all__:
        obj = getattr(module, name)
        kind = _kind(obj)
        if kind == "module":
            aliases.append((name, f"{{py:mod}}`{obj.__name__}`"))
        elif kind == "data" or homes.get(id(obj)) == m:
            documented.append((name, kind))
        else:
            home = homes[id(obj)]
            target = f"{home}.{name}" if getattr(obj, "__name__", name) == name \
                else f"{home}.{obj.__name__}"
            aliases.append((name, f"{{py:obj}}`{target}`"))
    return documented, aliases


def _module_page(m: str, homes: dict[int, str]) -> str:
    """One module's page: its docstring, a summary table, its constants, the names it
    re-exports, and the reference of everything it defines."""
    module = importlib.import_module(m)
    documented, aliases = _sorted_names(m, homes)
    lines = [f"# `{m}`", "", f"```{{eval-rst}}", f".. automodule:: {m}", "   :no-members:",
             "```", ""]
    callables = [name for name, kind in documented if kind != "data"]
    constants = [name for name, kind in documented if kind == "data"]
    if callables:
        lines += ["```{eval-rst}", ".. autosummary::", ""]
        lines += [f"   {name}" for name in callables]
        lines += ["```", ""]
    if constants:
        lines += ["Constants: " + ", ".join(f"{{py:data}}`~{m}.{name}`" for name in constants)
                  + ".", ""]
    if aliases:
        lines += ["## Also here", "", "Names this module re-exports, documented where they "
                  "are defined:", ""]
        for name, link in aliases:
            lines += [f"- `{m}.{name}`: {link}"]
        lines.append("")
    if documented:
        lines += ["## Reference", "", "```{eval-rst}"]
        for name, kind in documented:
            if kind == "data":
                lines += _data_entry(m, name, getattr(module, name))
                continue
            directive = {"class": "autoclass", "exception": "autoexception",
                         "function": "autofunction"}[kind]
            lines.append(f".. {directive}:: {m}.{name}")
            if kind in ("class", "exception"):
                lines += ["   :members:", "   :show-inheritance:"]
            lines.append("")
        lines += ["```", ""]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Staging and building


def _classic_script(module_text: str) -> str:
    """The widget's ES module as a classic script that sets ``window.MinigradBB``."""
    marker = "export default {render};"
    if marker not in module_text:
        raise ValueError(f"broadcast_backward.js no longer ends with {marker!r}: "
                         "minigrad/course/site.py cannot make its classic-script copy")
    body = module_text.replace(marker, "window.MinigradBB = {render};")
    return "// Made by minigrad/course/site.py from broadcast_backward.js.\n(function () {\n" \
        + body + "\n})();\n"


def widget_data() -> dict[str, Any]:
    """What the static mode needs from the Python side: ``text`` (every sentence template),
    ``limits`` (how much is drawn and computed), ``presets`` and ``digits`` (names of the
    characters Python reads as digits other than 0-9)."""
    from .widgets import picture, shapes, widget
    from .widgets.text import TEXT, digit_names

    limits = {"MAX_DIMS": shapes.MAX_DIMS, "MAX_SIDE": shapes.MAX_SIDE,
              "MAX_CELLS": shapes.MAX_CELLS, "MAX_COMPUTE": picture.MAX_COMPUTE,
              "ALL_OPS_UP_TO": widget.ALL_OPS_UP_TO}
    return {"text": TEXT, "limits": limits, "presets": widget._PRESETS, "digits": digit_names()}


def _widget_static(static: Path) -> None:
    static.mkdir(parents=True, exist_ok=True)
    data = widget_data()
    (static / "bb_text.js").write_text(
        "// Made by minigrad/course/site.py: the widget's sentences (messages.json), its limits,\n"
        "// its presets and the names of the digits that are not 0-9, as the Python side has them.\n"
        + "".join(f"window.MINIGRAD_BB_{key.upper()} = {json.dumps(value, ensure_ascii=False)};\n"
                  for key, value in data.items()), encoding="utf-8")
    shutil.copy(_WIDGETS / "static_mode.js", static / "static_mode.js")
    shutil.copy(_WIDGETS / "static_page.js", static / "static_page.js")
    shutil.copy(_WIDGETS / "broadcast_backward.css", static / "broadcast_backward.css")
    (static / "broadcast_backward_classic.js").write_text(
        _classic_script((_WIDGETS / "broadcast_backward.js").read_text(encoding="utf-8")),
        encoding="utf-8")


def _mathjax(static: Path) -> None:
    try:
        import mathjax  # django-static-mathjax: MathJax 3's files, no other dependency
    except ImportError:
        raise RuntimeError("site: MathJax is missing; install the dev extra "
                           "(pip install -e '.[dev]', which brings django-static-mathjax)") from None
    source = Path(mathjax.__file__).resolve().parent / "static" / "mathjax" / "es5" / \
        "tex-svg-full.js"
    if not source.is_file():
        raise RuntimeError(f"site: {source} is missing from the mathjax package")
    (static / "mathjax").mkdir(parents=True, exist_ok=True)
    shutil.copy(source, static / "mathjax" / "tex-svg-full.js")


def stage(root: str | Path | None = None, where: str | Path | None = None) -> Path:
    """Make the Sphinx source folder (see the module docstring); returns its path."""
    root = Path(root or repo_root())
    where = Path(where or tempfile.mkdtemp(prefix="minigrad-site-"))
    docs = root / "docs"
    if not (docs / "conf.py").is_file():
        raise FileNotFoundError(f"site: {docs / 'conf.py'} is missing; run from a checkout")
    src = where / "src"
    if src.exists():
        shutil.rmtree(src)
    shutil.copytree(docs, src, ignore=shutil.ignore_patterns("_build", "__pycache__"))
    (src / "lessons").mkdir(exist_ok=True)
    (src / "_lesson_minutes.json").write_text(json.dumps(lesson_minutes(root)), encoding="utf-8")
    for path in solution_paths(root):
        nb = nbformat.read(path, as_version=4)
        nbformat.write(lesson_notebook(nb, path.name, f"download/{path.name}"),
                       src / "lessons" / path.name)
    downloads = src / "lessons" / "download"
    downloads.mkdir(exist_ok=True)
    for path in lesson_paths(root):
        shutil.copy(path, downloads / path.name)
    after = root / "interactives" / "after_the_course.ipynb"
    shutil.copy(after, src / "lessons" / after.name)  # shown as it is: executed, with figures
    image = root / "interactives" / "broadcast_and_backward.png"
    (src / "_static").mkdir(exist_ok=True)
    if image.is_file():
        shutil.copy(image, src / "_static" / image.name)
    (src / "api").mkdir(exist_ok=True)
    for name, text in api_pages().items():
        (src / "api" / name).write_text(text, encoding="utf-8")
    _widget_static(src / "_static" / "widget")
    _mathjax(src / "_static")
    return src


def build_site(out: str | Path, root: str | Path | None = None, strict: bool = True,
               quiet: bool = True) -> Path:
    """Build the website into ``out``; returns the path of its ``index.html``.

    Parameters
    ----------
    out : str or Path
        The output folder (made if missing; its files are replaced).
    root : str or Path, optional
        The repository root (default: :func:`minigrad.course.notebooks.repo_root`).
    strict : bool
        Fail on any Sphinx warning (the default, and what the tests use).
    quiet : bool
        Print only warnings and errors.

    Raises
    ------
    RuntimeError
        If Sphinx reports a warning (when ``strict``) or an error; the message says how many
        and the warnings were printed above it.
    """
    from sphinx.cmd.build import build_main

    out = Path(out).resolve()
    with tempfile.TemporaryDirectory(prefix="minigrad-site-") as tmp:
        src = stage(root, tmp)
        args = ["-b", "html", str(src), str(out), "-d", str(Path(tmp) / "doctrees")]
        if strict:
            args += ["-W", "--keep-going"]
        if quiet:
            args.append("-q")
        status = build_main(args)
    if status != 0:
        raise RuntimeError(f"site: Sphinx failed (exit status {status}); its warnings and "
                           "errors are printed above")
    (out / ".nojekyll").touch()  # a static host must serve _static/ as it is
    return out / "index.html"

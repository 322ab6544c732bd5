"""No function longer than about 60 lines without a reason (issue 26 item 3).

The engine, the exporters and the course code are read: by students after the course, by
whoever maintains them. A function of more than :data:`LIMIT` lines (from its ``def`` line to
its last line, as ``wc -l`` would count them: docstring, comments and blank lines included;
decorators not) is split into named helpers, or says in its docstring why it stays whole, on a
line of its own that starts with :data:`REASON`::

    def export(model, ...):
        \"\"\"Write ``model`` as an ONNX graph.

        Long because ...
        \"\"\"

The test reads the source (``ast``), so it imports nothing and costs well under a second.
It also checks that compile's optimizing passes, which the compile issue owns, are where
``compile`` and its documentation say they are: each pass of ``compile_passes.PASSES`` is a
documented function of ``minigrad/compile_passes.py`` and is named in that module's list of
passes (and each pass the list names is one of them).
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "minigrad"

#: The most lines a function may have without a stated reason.
LIMIT = 60

#: How a docstring line that states why a function is longer begins.
REASON = "Long because"

Function = ast.FunctionDef | ast.AsyncFunctionDef


def length(node: Function) -> int:
    """Lines from the ``def`` line to the function's last line, both included."""
    assert node.end_lineno is not None
    return node.end_lineno - node.lineno + 1


def states_a_reason(node: Function) -> bool:
    """Whether the docstring has a line ``Long because <at least three more words>``."""
    for line in (ast.get_docstring(node) or "").splitlines():
        words = line.strip().split()
        if line.strip().startswith(REASON) and len(words) >= len(REASON.split()) + 3:
            return True
    return False


def too_long(source: str, where: str) -> list[str]:
    """``where:line name (N lines)`` for each function of ``source`` longer than
    :data:`LIMIT` lines that states no reason (methods and nested functions included)."""
    found = []
    for node in ast.walk(ast.parse(source, filename=where)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if length(node) > LIMIT and not states_a_reason(node):
                found.append(f"{where}:{node.lineno} {node.name} ({length(node)} lines)")
    return found


SOURCES = sorted(PACKAGE.rglob("*.py"))


def test_the_walk_covers_the_engine_the_exporters_and_the_course() -> None:
    parts = {p.relative_to(PACKAGE).parts[0] for p in SOURCES}
    assert {"export", "course", "nn", "optim", "__init__.py"} <= parts, sorted(parts)


def test_the_measure_flags_a_long_function_unless_it_says_why() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(LIMIT - 3))  # + def, docstring, return
    short = f'def f():\n    """Doc."""\n{body}    return 0\n'
    assert len(short.splitlines()) == LIMIT and too_long(short, "m.py") == []
    longer = short.replace("    return 0\n", "    x = 1\n    return 0\n")
    assert too_long(longer, "m.py") == [f"m.py:1 f ({LIMIT + 1} lines)"]
    reason = '"""Doc.\n\n    Long because the steps share many local names.\n    """'
    assert too_long(longer.replace('"""Doc."""', reason), "m.py") == []
    bare = '"""Doc.\n\n    Long because.\n    """'  # a reason must say something
    assert too_long(longer.replace('"""Doc."""', bare), "m.py") != []
    nested = "class C:\n    def m(self):\n" + "".join("        " + line + "\n"
                                                     for line in longer.splitlines())
    assert [f.split(" ")[1] for f in too_long(nested, "m.py")] == ["m", "f"]


def test_no_function_is_longer_than_60_lines_without_a_reason() -> None:
    found = []
    for path in SOURCES:
        found += too_long(path.read_text(encoding="utf-8"), str(path.relative_to(PACKAGE.parent)))
    assert not found, (
        f"{len(found)} functions are longer than {LIMIT} lines and their docstrings give no "
        f"reason (a line starting {REASON!r}); split them into named helpers, or say why "
        "they stay whole:\n  " + "\n  ".join(found))


def _module(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _is_passes(target: ast.expr) -> bool:
    return isinstance(target, ast.Name) and target.id == "PASSES"


def test_compiles_named_passes_are_documented_functions_of_compile_passes() -> None:
    path = PACKAGE / "compile_passes.py"
    assert path.exists(), "minigrad/compile_passes.py, the home of compile's passes, is missing"
    module = _module(path)
    functions = {n.name: n for n in module.body if isinstance(n, ast.FunctionDef)}
    passes = [n.value for n in module.body
              if isinstance(n, ast.Assign) and any(_is_passes(t) for t in n.targets)
              or isinstance(n, ast.AnnAssign) and _is_passes(n.target)]
    assert len(passes) == 1, "compile_passes.py must define PASSES once (compile's passes)"
    value = passes[0]
    assert isinstance(value, (ast.Tuple, ast.List)), "PASSES must be a tuple of the passes"
    named = [e.id for e in value.elts if isinstance(e, ast.Name)]
    assert named and len(named) == len(value.elts), "PASSES must name each pass's function"
    for name in named:
        assert name in functions, f"pass {name} is in PASSES but not defined in compile_passes.py"
        assert ast.get_docstring(functions[name]), f"pass {name} has no docstring"
    listed = re.findall(r"^\d+\. :func:`(\w+)`", ast.get_docstring(module) or "", re.M)
    assert listed == named, (f"compile_passes.py's docstring lists the passes {listed}; "
                             f"PASSES runs {named}")
    assert "optimize" in functions, "compile_passes.optimize (runs the passes) is missing"
    defaults = [n for n in functions["optimize"].args.defaults if isinstance(n, ast.Name)]
    assert [d.id for d in defaults] == ["PASSES"], "optimize() must run PASSES by default"

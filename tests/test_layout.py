"""The package's three parts and the direction of its imports.

``minigrad/`` (the engine and library) imports nothing from ``minigrad/export/`` or
``minigrad/course/``, and ``export/`` nothing from ``course/``. (That the oracle,
``course/byhand.py``, and the scalar engine stand alone is tested in ``test_byhand.py``.) The checks read the source (``ast``), so a lazy import inside a function counts too.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "minigrad"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> set[str]:
    """Every ``minigrad...`` module that ``path`` imports, relative imports resolved."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("minigrad"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("minigrad"):
                found.add(target)
                # ``from minigrad import nn`` imports the submodule minigrad.nn
                found.update(f"{target}.{a.name}" for a in node.names)
    return found


SOURCES = sorted(PACKAGE.rglob("*.py"))
ENGINE = [p for p in SOURCES
          if not p.relative_to(PACKAGE).parts[0] in ("export", "course")]


def test_the_three_parts_exist():
    assert (PACKAGE / "export" / "onnx.py").exists()
    assert (PACKAGE / "export" / "c" / "__init__.py").exists()
    for part in ("checks", "grading", "widgets"):
        assert (PACKAGE / "course" / part / "__init__.py").exists()
    assert (PACKAGE / "course" / "byhand.py").exists()
    assert (PACKAGE / "course" / "scalar.py").exists()
    assert (PACKAGE / "nn" / "__init__.py").exists()


@pytest.mark.parametrize("path", ENGINE, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_the_engine_imports_neither_export_nor_course(path):
    bad = sorted(m for m in imports_of(path)
                 if m.startswith(("minigrad.export", "minigrad.course")))
    assert not bad, f"{path.relative_to(PACKAGE)} imports {bad}: the engine must stand alone"


def test_export_does_not_import_course():
    for path in (PACKAGE / "export").rglob("*.py"):
        bad = sorted(m for m in imports_of(path) if m.startswith("minigrad.course"))
        assert not bad, f"{path.relative_to(PACKAGE)} imports {bad}"


def test_every_package_says_what_lives_there():
    """Each package's ``__init__`` docstring names what lives there and its import rule."""
    for init in PACKAGE.rglob("__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc and len(doc.split()) >= 15, f"{init.relative_to(PACKAGE)} has no docstring"
        assert re.search(r"\bImports?\b|\bimports\b", doc) and re.search(r"\b(never|not)\b", doc), \
            f"{init.relative_to(PACKAGE)}: say what it may import and what it must not"

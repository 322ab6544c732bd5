"""The type hints that ship (``py.typed``) are checked: mypy, strict on the engine.

The configuration is in ``pyproject.toml`` (``[tool.mypy]``): strict for the engine
(``minigrad/*.py`` and ``minigrad/nn``). ``export/`` and ``course/`` are not yet held to it.
"""
from __future__ import annotations

from pathlib import Path

import pytest

api = pytest.importorskip("mypy.api", reason="mypy is in the dev extra")

ROOT = Path(__file__).resolve().parents[1]
ENGINE = sorted((ROOT / "minigrad").glob("*.py")) + sorted((ROOT / "minigrad" / "nn").glob("*.py"))


@pytest.mark.slow
def test_mypy_finds_no_errors():
    out, err, status = api.run(["--config-file", str(ROOT / "pyproject.toml"),
                                "--cache-dir", str(ROOT / ".mypy_cache"), "--follow-imports", "silent",
                                *map(str, ENGINE)])
    assert status == 0, f"mypy found errors:\n{out}{err}"

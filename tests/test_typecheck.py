"""The type hints that ship (``py.typed``) are checked: mypy, strict on the whole package; the
benchmarks' hints too, less strictly (``bench/``: what a hint says must hold; not every function
needs one).

The configuration is in ``pyproject.toml`` (``[tool.mypy]``): strict for every module of
``minigrad``: the engine, ``nn``, ``optim``, ``utils``, ``export`` and ``course`` (its checks
and grader included). mypy's version is pinned in the dev extra, since the errors it reports
differ from one version to the next.
"""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

api = pytest.importorskip("mypy.api", reason="mypy is in the dev extra")

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "minigrad"


def _pinned_mypy() -> str:
    dev = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]["dev"]
    pins = [m.group(1) for r in dev if (m := re.fullmatch(r"mypy==(\S+)", r.strip()))]
    assert len(pins) == 1, f"the dev extra should pin mypy exactly (mypy==X.Y.Z); it has {dev}"
    return pins[0]


def test_mypy_is_the_pinned_version():
    from mypy.version import __version__

    pinned = _pinned_mypy()
    assert __version__.split("+")[0] == pinned, (
        f"mypy {__version__} is installed, the dev extra pins {pinned}: other versions report "
        f"other errors; pip install 'mypy=={pinned}'")


@pytest.mark.slow
def test_mypy_finds_no_errors():
    out, err, status = api.run(["--config-file", str(ROOT / "pyproject.toml"),
                                "--cache-dir", str(ROOT / ".mypy_cache"), str(PACKAGE)])
    assert status == 0, f"mypy found errors:\n{out}{err}"


@pytest.mark.slow
def test_mypy_finds_no_errors_in_the_benchmarks():
    out, err, status = api.run(["--config-file", str(ROOT / "pyproject.toml"),
                                "--cache-dir", str(ROOT / ".mypy_cache"), str(ROOT / "bench")])
    assert status == 0, f"mypy found errors in bench/:\n{out}{err}"

"""The widget's browser half ships inside the wheel.

An editable install reads the files from the source tree, so it would hide a ``.js`` or ``.css``
that the package data leaves out. This test builds a real wheel from a copy of the package and
looks inside it.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
WIDGET_FILES = ["minigrad/course/widgets/broadcast_backward.js",
                "minigrad/course/widgets/broadcast_backward.css",
                "minigrad/course/widgets/messages.json",  # every sentence: text.py reads it
                "minigrad/course/widgets/static_mode.js",
                "minigrad/course/widgets/static_page.js"]


@pytest.mark.slow  # builds a wheel: about 10 s
def test_the_wheel_contains_the_widgets_javascript_and_css(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "minigrad", source / "minigrad",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path / "dist"), str(source)],
        check=False, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        for name in WIDGET_FILES:
            assert name in names, f"{name} is not in {wheel.name}"
            assert zf.read(name) == (ROOT / name).read_bytes()
    assert "minigrad/course/widgets/picture.py" in names

"""docs/guide/add-an-exercise.md, done as it says, in a temporary copy of the repository.

The guide's code blocks are the edits (each names its file in its caption) and its command
blocks the commands, run in order: build and release, progress on the solution, the
grader's lesson list, then grading a right and a wrong submission (after the preflight). The
shipped course is not touched: everything happens in the copy, whose package the commands
import (``PYTHONPATH``). 49 to 78 s on the project's shared 2-core machine, by its load (build
14-30 s, progress 12-19 s, the preflight and the two submissions 19-34 s); marked slow.
"""
from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from minigrad.course.grading import sandbox

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guide" / "add-an-exercise.md"
LESSON = "01_from_scalars_to_tensors"
#: Where each captioned block goes: after the line that holds the anchor, or at the end (None).
ANCHORS = {f"solutions/{LESSON}.py": "checks.lesson1.unary_ops(exp, log, tanh, relu)\n",
           "minigrad/course/checks/exercises.json": '"1.5": {',
           "minigrad/course/checks/lesson1.py": None,
           "minigrad/course/checks/judges/lesson1.py": None}
BLOCK = re.compile(r"```\{code-block\} (\w+)\n:caption: ([^\n]+)\n\n(.*?)```", re.S)


def guide_blocks() -> list[tuple[str, str]]:
    """(caption, text) of each captioned block of the guide, in order."""
    return [(caption, text) for _, caption, text in BLOCK.findall(GUIDE.read_text())]


def test_the_guide_has_the_edits_and_commands_the_test_follows():
    captions = [caption for caption, _ in guide_blocks()]
    assert set(ANCHORS) <= set(captions) and captions.count("commands") == 2


def _copy_repository(to: Path) -> None:
    """What the commands need of a checkout: the package, the notebooks, pyproject."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".mypy_cache")
    for name in ("minigrad", "solutions", "lessons"):
        shutil.copytree(ROOT / name, to / name, ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", to / "pyproject.toml")


def _edit(root: Path, caption: str, text: str) -> None:
    path = root / caption
    source = path.read_text()
    anchor = ANCHORS[caption]
    if anchor is None:
        path.write_text(source.rstrip("\n") + "\n\n\n" + text)
        return
    at = source.index(anchor)
    end = source.index("\n", at) + 1
    path.write_text(source[:end] + ("\n" if caption.endswith(".py") else "") + text
                    + source[end:])


def _run(root: Path, command: str, env: dict[str, str]) -> str:
    """One command of the guide, in the copy; its output (it must succeed)."""
    if command.startswith("minigrad-grade"):
        command = f"{sys.executable} -m minigrad.course.grading" + command[len("minigrad-grade"):]
    command = re.sub(r"^python ", f"{sys.executable} ", command)
    start = time.monotonic()
    done = subprocess.run(command, shell=True, cwd=root, env=env, capture_output=True,
                          text=True, timeout=600)
    print(f"{time.monotonic() - start:5.1f} s  {command}")
    assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


@pytest.mark.slow
@pytest.mark.skipif(sandbox.available() is not None, reason=f"no sandbox: {sandbox.available()}")
def test_adding_exercise_1_6_as_the_guide_says(tmp_path):
    root = tmp_path / "course"
    _copy_repository(root)
    shipped = {p: (ROOT / p).read_bytes() for p in ANCHORS}
    env = {**os.environ, "PYTHONPATH": str(root), "XDG_CACHE_HOME": str(tmp_path / "cache"),
           "MINIGRAD_CHECKS_RAISE": "0"}
    outputs = []
    for caption, text in guide_blocks():
        if caption == "commands":
            outputs += [_run(root, line, env) for line in text.splitlines() if line.strip()]
        else:
            _edit(root, caption, text)
    build, progress, listed, *_, graded = outputs
    assert "built 01_from_scalars_to_tensors.ipynb" in build
    assert re.search(r"1\.6\s+\u2713\s+2\s+The backward rules of sin and cos", progress)
    assert f"{LESSON} (13 points" in listed and "1.6       2  The backward rules" in listed
    assert re.search(r"\| right \| 13 \|", graded) and re.search(r"\| wrong \| 11 \|", graded)
    released = (root / "lessons" / f"{LESSON}.ipynb").read_text()
    assert "exercise:1.6" in released and "np.cos(a.data)" not in released
    with open(root / "grading-report" / "exercises.csv", newline="") as f:
        rows = {(r["student"], r["exercise"]): r for r in csv.DictReader(f)}
    assert rows[("right", "1.6")]["points"] == "2"
    assert rows[("wrong", "1.6")]["points"] == "0"
    assert "cos, case 1 of 3" in rows[("wrong", "1.6")]["message"]
    assert "mind the sign" in rows[("wrong", "1.6")]["message"]
    assert all(rows[("wrong", f"1.{i}")]["points"] != "0" for i in range(1, 6))
    assert {p: (ROOT / p).read_bytes() for p in ANCHORS} == shipped   # the course as shipped

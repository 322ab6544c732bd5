"""``python -m minigrad.course release --nbgrader DIR`` (issue 28): an nbgrader ``source/``
tree of the lessons, and what ``nbgrader generate_assignment`` makes of it.

nbgrader's cell metadata (its "Creating assignments" docs, schema version 3): every cell has
``nbgrader`` with ``grade_id`` (unique, letters, digits, ``_`` and ``-``), ``grade``,
``solution``, ``locked``, ``task`` and ``schema_version``; a graded cell also ``points``.
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from minigrad.course.__main__ import main
from minigrad.course.notebooks import (check_id, exercise_id, read_notebook, release_notebook,
                                       repo_root, solution_paths)

EXERCISES = json.loads((repo_root() / "minigrad" / "course" / "checks" / "exercises.json")
                       .read_text())["exercises"]
KEYS = {"grade_id", "grade", "solution", "locked", "task", "schema_version"}


def _source(cell) -> str:
    return cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    folder = tmp_path_factory.mktemp("course")
    with pytest.MonkeyPatch.context() as patch:   # lessons/ and released/ are left alone
        patch.setattr("minigrad.course.__main__.release", lambda root: [])
        assert main(["--root", str(repo_root()), "release", "--nbgrader", str(folder)]) == 0
    assert (folder / "nbgrader_config.py").is_file()
    return folder


@pytest.mark.parametrize("solution", solution_paths(repo_root()), ids=lambda p: p.stem)
def test_source_notebooks_carry_nbgraders_metadata(course, solution):
    want = read_notebook(solution)
    got = json.loads((course / "source" / solution.stem / solution.name).read_text())
    assert [_source(c) for c in got["cells"]] == [_source(c) for c in want.cells]
    ids = [c["metadata"]["nbgrader"]["grade_id"] for c in got["cells"]]
    assert len(set(ids)) == len(ids) and all(re.fullmatch(r"[A-Za-z0-9_-]+", i) for i in ids)
    points: dict[str, float] = {}
    for cell in got["cells"]:
        meta = cell["metadata"]["nbgrader"]
        assert KEYS <= set(meta) and meta["schema_version"] == 3 and meta["task"] is False
        exercise, check = exercise_id(cell), check_id(cell)
        assert meta["solution"] == bool(exercise) and meta["locked"] == (not exercise)
        assert "tags" in cell["metadata"] or not (exercise or check)
        if meta["grade"]:
            assert check and check not in points
            points[check] = meta["points"]
        assert cell["cell_type"] != "code" or cell["outputs"] == []
    mine = {e for e in (exercise_id(c) for c in want.cells) if e}
    assert points == {e: EXERCISES[e]["points"] for e in mine}   # every exercise, its points


def test_nbgrader_generate_assignment_releases_the_lessons_cells(course):
    if importlib.util.find_spec("nbgrader") is None:
        pytest.skip("nbgrader is not installed (not in the dev extra: it pulls in a database "
                    "stack); pip install nbgrader to run this")
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent),
                                                  os.environ.get("PATH", "")])}
    for solution in solution_paths(repo_root()):
        done = subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment",
                               solution.stem, "--create"], cwd=course, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        released = json.loads((course / "release" / solution.stem / solution.name).read_text())
        ours = release_notebook(read_notebook(solution), solution.name)
        assert [_source(c) for c in released["cells"]] == [_source(c) for c in ours.cells]
        assert [c["metadata"].get("tags") for c in released["cells"]] == \
               [c.metadata.get("tags") for c in ours.cells]

"""The course tooling: release on toy notebooks, building from a .py twin, and the real lessons
being up to date, free of machine paths and small."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import nbformat
import pytest

from minigrad.course import (ReleaseError, cell_checksum, check_cells, exercise_cells,
                             lesson_paths, notebook_bytes, read_notebook, release,
                             release_notebook, release_source, released_dir, released_paths,
                             solution_paths, stale, validate_notebook, write_notebook)
from minigrad.course.__main__ import main as course_main
from minigrad.course.notebooks import lesson_number, release_info
from minigrad.course.build import (NOTEBOOK_METADATA, build, notebook_from_text, sanitize,
                                   twin_mismatches)

ROOT = Path(__file__).resolve().parents[2]

TOY_PY = '''\
# %% [markdown]
# # A toy lesson
#
# Write `double`.

# %%
import numpy as np

# %% tags=["exercise:9.1"]
def double(x):
    """Twice x."""
    ### BEGIN SOLUTION
    return 2 * x
    ### END SOLUTION

# %% tags=["check:9.1"]
assert double(3) == 6
print("ok")

# %% tags=["exercise:9.2"]
class Box:
    def __init__(self, v):
        self.v = v

    def get(self):
        ### BEGIN SOLUTION
        out = self.v
        return out
        ### END SOLUTION

### BEGIN SOLUTION
SECRET = 42
### END SOLUTION

# %% tags=["check:9.2"]
assert Box(5).get() == 5

# %% tags=["demo"]
import os
print(os.getcwd())
print(np.arange(3))
'''


def toy_solution() -> nbformat.NotebookNode:
    nb = notebook_from_text(TOY_PY)
    for i, cell in enumerate(nb.cells):  # as if executed
        if cell.cell_type == "code":
            cell.execution_count = i
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"out {i}\n")]
    return nb


# --- release_source ------------------------------------------------------------------------------


def test_release_source_keeps_the_indentation_of_the_begin_line():
    src = "def f(x):\n    y = 1\n    ### BEGIN SOLUTION\n    return x + y\n    ### END SOLUTION\n"
    assert release_source(src) == ("def f(x):\n    y = 1\n    # YOUR CODE HERE\n"
                                   "    raise NotImplementedError\n")


def test_release_source_several_regions_and_no_trailing_newline():
    src = "### BEGIN SOLUTION\na = 1\n### END SOLUTION\nb = 2\n  ### BEGIN SOLUTION\n  c\n  ### END SOLUTION"
    assert release_source(src) == ("# YOUR CODE HERE\nraise NotImplementedError\nb = 2\n"
                                   "  # YOUR CODE HERE\n  raise NotImplementedError")


def test_release_source_leaves_code_without_regions_alone():
    src = "x = '### BEGIN SOLUTION'  # not a marker line\nprint(x)\n"
    assert release_source(src) == src


@pytest.mark.parametrize("src, words", [
    ("### BEGIN SOLUTION\nx = 1\n", "never closed"),
    ("x = 1\n### END SOLUTION\n", "without"),
    ("### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION\n", "do not nest"),
])
def test_release_source_rejects_broken_markers(src, words):
    with pytest.raises(ReleaseError, match=words):
        release_source(src, "toy")


# --- release_notebook ----------------------------------------------------------------------------


def test_release_notebook_blanks_regions_clears_outputs_and_keeps_everything_else():
    sol = toy_solution()
    before = notebook_bytes(sol)
    les = release_notebook(sol)
    assert notebook_bytes(sol) == before, "release_notebook must not change its input"
    stamp = les.metadata.pop("minigrad")           # the release id, for the grader
    assert stamp == {"lesson": 9, **release_info(les)} and len(stamp["release"]) == 12
    assert les.metadata == sol.metadata and les.nbformat_minor == sol.nbformat_minor
    assert len(les.cells) == len(sol.cells)
    for s, l in zip(sol.cells, les.cells):
        assert l.id == s.id and l.metadata == s.metadata and l.cell_type == s.cell_type
        if s.cell_type == "code":
            assert l.outputs == [] and l.execution_count is None
            if "### BEGIN SOLUTION" not in s.source:
                assert l.source == s.source
        else:
            assert json.dumps(l, sort_keys=True) == json.dumps(s, sort_keys=True)
    ex = exercise_cells(les)
    assert ex["9.1"].source == ('def double(x):\n    """Twice x."""\n    # YOUR CODE HERE\n'
                                "    raise NotImplementedError")
    assert "        # YOUR CODE HERE\n        raise NotImplementedError\n" in ex["9.2"].source
    assert ex["9.2"].source.endswith("\n# YOUR CODE HERE\nraise NotImplementedError")
    assert "SECRET" not in ex["9.2"].source and "return out" not in ex["9.2"].source
    # check cells are identical, so their checksums are the released ones
    for k, cells in check_cells(sol).items():
        assert [cell_checksum(c) for c in cells] == [cell_checksum(c) for c in check_cells(les)[k]]


def test_released_exercise_cells_raise_not_implemented_when_used():
    les = release_notebook(toy_solution())
    env: dict = {}
    exec(exercise_cells(les)["9.1"].source, env)
    with pytest.raises(NotImplementedError):
        env["double"](3)


def test_validate_notebook_names_what_is_wrong():
    nb = toy_solution()
    assert validate_notebook(nb) == []
    nb.cells[2].metadata.tags = []                       # the exercise lost its tag
    problems = "\n".join(validate_notebook(nb, "toy"))
    assert "no exercise:<id> tag" in problems and "check:9.1 has no exercise cell" in problems


# --- building from the .py twin ------------------------------------------------------------------


def test_notebook_from_text_is_deterministic_with_readable_ids():
    a, b = notebook_from_text(TOY_PY), notebook_from_text(TOY_PY)
    assert notebook_bytes(a) == notebook_bytes(b)
    ids = [c.id for c in a.cells]
    assert "exercise-9-1" in ids and "check-9-2" in ids and len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{1,64}", i) for i in ids)
    assert a.metadata == NOTEBOOK_METADATA
    check = next(c for c in a.cells if c.id == "check-9-1")
    assert check.metadata == {"deletable": False, "editable": False, "tags": ["check:9.1"]}


def test_sanitize_removes_machine_paths_and_widget_state():
    nb = notebook_from_text(TOY_PY)
    cell = nb.cells[-1]
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text=f"{ROOT}/solutions\n{sys.prefix}/x\n"),
        nbformat.v4.new_output("display_data", data={
            "application/vnd.jupyter.widget-view+json": {"model_id": "abc", "version_major": 2},
            "text/plain": "VBox(children=(...))"}),
    ]
    cell.metadata["execution"] = {"iopub.status.busy": "2024-01-01T00:00:00"}
    sanitize(nb)
    text = notebook_bytes(nb).decode()
    assert str(ROOT) not in text and sys.prefix not in text and "model_id" not in text
    assert "iopub" not in text


def test_sanitize_joins_stream_pieces_split_by_timing():
    nb = notebook_from_text(TOY_PY)
    nb.cells[-1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="a\n"),
                            nbformat.v4.new_output("stream", name="stdout", text="b\n"),
                            nbformat.v4.new_output("stream", name="stderr", text="c\n")]
    sanitize(nb)
    assert [(o.name, o.text) for o in nb.cells[-1].outputs] == [("stdout", "a\nb\n"),
                                                                 ("stderr", "c\n")]


def test_build_executes_the_twin_and_release_then_check(tmp_path, capsys):
    (tmp_path / "solutions").mkdir()
    (tmp_path / "solutions" / "09_toy.py").write_text(TOY_PY)
    written = build(tmp_path, verbose=False)
    assert written == [tmp_path / "solutions" / "09_toy.ipynb"]
    nb = read_notebook(written[0])
    text = written[0].read_text()
    assert str(tmp_path) not in text and '      ".\\n",\n' in text
    assert "[0 1 2]" in text and '"ok\\n"' in text
    assert nb.metadata == NOTEBOOK_METADATA
    assert all("execution" not in c.metadata for c in nb.cells)
    assert twin_mismatches(tmp_path) == []

    assert course_main(["--root", str(tmp_path), "check"]) == 1          # lessons/ missing
    assert course_main(["--root", str(tmp_path), "release"]) == 0
    lesson = tmp_path / "lessons" / "09_toy.ipynb"
    packaged = tmp_path / "minigrad" / "course" / "released" / "09_toy.ipynb"
    assert lesson.read_bytes() == packaged.read_bytes()
    assert lesson.read_bytes() == notebook_bytes(release_notebook(nb))
    assert course_main(["--root", str(tmp_path), "check"]) == 0

    # editing the twin without rebuilding, or the solution without releasing, is caught
    twin = tmp_path / "solutions" / "09_toy.py"
    twin.write_text(TOY_PY.replace("return 2 * x", "return x + x"))
    assert "differs from 09_toy.py" in twin_mismatches(tmp_path)[0]
    twin.write_text(TOY_PY)
    nb.cells[2].source = nb.cells[2].source.replace("Twice x.", "Two times x.")
    write_notebook(nb, written[0])
    assert any("differs from the release" in p for p in stale(tmp_path))
    (tmp_path / "lessons" / "08_old.ipynb").write_text("{}")
    assert any("08_old.ipynb: has no solutions" in p for p in stale(tmp_path))
    changed = release(tmp_path)
    assert not (tmp_path / "lessons" / "08_old.ipynb").exists() and lesson in changed
    assert stale(tmp_path) == []


def test_release_refuses_a_broken_solution(tmp_path):
    (tmp_path / "solutions").mkdir()
    nb = toy_solution()
    nb.cells[2].source += "\n### BEGIN SOLUTION\n"
    write_notebook(nb, tmp_path / "solutions" / "09_toy.ipynb")
    with pytest.raises(ReleaseError, match="never closed"):
        release(tmp_path)


# --- the real course -----------------------------------------------------------------------------

SOLUTIONS = solution_paths(ROOT)
LESSONS = lesson_paths(ROOT)
MACHINE = re.compile(r"(/work/|/home/|/Users/|/tmp/|/root/|site-packages|\.venv|[A-Z]:\\\\)")


def test_lessons_and_package_data_are_up_to_date():
    """Fails when solutions/ changed but `python -m minigrad.course build/release` was not run."""
    problems = twin_mismatches(ROOT) + stale(ROOT)
    assert not problems, ("stale course files (run `python -m minigrad.course build` after "
                          "editing a .py twin, else `python -m minigrad.course release`):\n"
                          + "\n".join(problems))
    assert [p.name for p in LESSONS] == [p.name for p in SOLUTIONS]
    if released_dir() == ROOT / "minigrad" / "course" / "released":
        assert [p.name for p in released_paths()] == [p.name for p in SOLUTIONS]


@pytest.mark.parametrize("path", SOLUTIONS + LESSONS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_course_notebooks_are_clean_and_small(path):
    text = path.read_text(encoding="utf-8")
    assert not MACHINE.findall(text), f"{path.name} holds a machine path: {MACHINE.findall(text)[:3]}"
    assert len(text.encode()) < 400_000, f"{path.name} is {len(text) // 1024} KiB: shrink figures"
    nb = read_notebook(path)
    metadata = dict(nb.metadata)
    if path.parent.name == "lessons":   # a lesson carries its release id, for the grader
        assert metadata.pop("minigrad") == {"lesson": lesson_number(path), **release_info(nb)}
    assert metadata == NOTEBOOK_METADATA
    assert nb.nbformat == 4 and nb.nbformat_minor >= 5
    for cell in nb.cells:
        assert "execution" not in cell.metadata
        for out in cell.get("outputs", []):
            assert "application/vnd.jupyter.widget-view+json" not in out.get("data", {})
    assert notebook_bytes(nb) == path.read_bytes(), "not written by the course tooling"
    assert validate_notebook(nb, path.name) == [] or path.parent.name == "lessons"

"""nbval really compares the outputs the solutions mark with ``# NBVAL_CHECK_OUTPUT``.

A notebook is run through pytest with the project's own nbval options (pyproject addopts):
its stored outputs pass; the same notebook with one expected number changed fails; a
difference past the sixth decimal and a memory address are forgiven by the sanitize file.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from minigrad.course import write_notebook
from minigrad.course.build import execute, notebook_from_text

ROOT = Path(__file__).resolve().parents[3]

NOTEBOOK = '''\
# %%
# NBVAL_CHECK_OUTPUT
print(6 * 7)

# %%
# NBVAL_CHECK_OUTPUT
print(1 / 3)
print(object())

# %%
print("not compared (lax mode):", 1 / 7)
'''


def _run_nbval(*paths: Path) -> subprocess.CompletedProcess:
    text = (ROOT / "pyproject.toml").read_text()   # (tomllib is Python 3.11+; we support 3.10)
    addopts = re.search(r'^addopts\s*=\s*"([^"]*)"', text, re.M).group(1)
    addopts = addopts.replace("tests/nbval_sanitize.cfg",
                              str(ROOT / "tests" / "nbval_sanitize.cfg")).split()
    folder = paths[0].parent.parent
    return subprocess.run([sys.executable, "-m", "pytest", *map(str, paths), "-q", "-o",
                           "addopts=", "--rootdir", str(folder), *addopts],
                          cwd=folder, capture_output=True, text=True, timeout=180)


@pytest.fixture(scope="module")
def executed(tmp_path_factory) -> nbformat.NotebookNode:
    folder = tmp_path_factory.mktemp("nbval")
    return execute(notebook_from_text(NOTEBOOK), cwd=folder)


def _output(nb: nbformat.NotebookNode, i: int) -> str:
    return nb.cells[i].outputs[0].text


@pytest.mark.slow  # two pytest subprocesses running three small notebooks
def test_nbval_comparison_is_live(executed, tmp_path):
    for name in ("good", "forgiven", "bad"):
        (tmp_path / name).mkdir()
    write_notebook(executed, tmp_path / "good" / "nb.ipynb")

    forgiven = nbformat.from_dict(executed)
    cell = forgiven.cells[1]
    assert "0x" in _output(forgiven, 1)
    cell.outputs[0].text = cell.outputs[0].text.replace("0.3333333333333333", "0.33333339")
    cell.outputs[0].text = cell.outputs[0].text.split(" at 0x")[0] + " at 0x1234>\n"
    forgiven.cells[2].outputs[0].text = "not compared (lax mode): 99\n"
    write_notebook(forgiven, tmp_path / "forgiven" / "nb.ipynb")
    result = _run_nbval(tmp_path / "good" / "nb.ipynb", tmp_path / "forgiven" / "nb.ipynb")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "6 passed" in result.stdout, result.stdout

    corrupted = nbformat.from_dict(executed)
    corrupted.cells[0].outputs[0].text = "41\n"
    write_notebook(corrupted, tmp_path / "bad" / "nb.ipynb")
    result = _run_nbval(tmp_path / "bad" / "nb.ipynb")
    assert result.returncode != 0
    assert "41" in result.stdout and "42" in result.stdout

"""``python -m minigrad.course check|build`` without jupytext (or nbclient) name the missing
package and the command that installs it, and exit 1, instead of a traceback (issue 28)."""
from __future__ import annotations

import sys

import pytest

from minigrad.course.__main__ import main
from minigrad.course.notebooks import repo_root

CASES = [  # (command line, the module made to fail, what the message must name)
    (["check"], "jupytext", "python -m pip install 'jupytext>=1.16'"),
    (["build", "01", "--no-execute", "--no-release"], "jupytext",
     "python -m pip install 'jupytext>=1.16'"),
    (["build", "01", "--no-release"], "nbclient", "python -m pip install 'nbclient>=0.10'"),
]


@pytest.mark.parametrize("argv,module,install", CASES)
def test_missing_package_is_named(argv, module, install, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, module, None)   # makes `import module` raise ImportError
    before = {p: p.stat().st_mtime_ns for p in (repo_root() / "solutions").glob("*.ipynb")}
    assert main(["--root", str(repo_root())] + argv) == 1
    err = capsys.readouterr().err
    assert f"need {module}, which is not installed" in err
    assert install in err
    assert "Traceback" not in err
    after = {p: p.stat().st_mtime_ns for p in (repo_root() / "solutions").glob("*.ipynb")}
    assert after == before   # nothing was written on the way

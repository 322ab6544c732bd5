"""``minigrad-grade gradescope-autograder`` (issue 28): the zip's ``run_autograder`` in a
simulated ``/autograder`` tree (``MINIGRAD_GRADESCOPE_ROOT``), on the toy lesson.

``results.json`` is checked against Gradescope's documented fields ("Autograder
specifications: output format"): a top-level ``score``, ``output``, ``visibility``,
``stdout_visibility`` and ``tests``, each test with ``name``, ``number``, ``score``,
``max_score``, ``status`` (``passed``/``failed``), ``output`` and ``visibility``, the
visibilities among ``hidden``, ``after_due_date``, ``after_published`` and ``visible``.
"""
from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

from minigrad.course.grading.cli import main

FIXTURES = Path(__file__).resolve().parent / "grading_fixtures"
if str(FIXTURES) not in sys.path:
    sys.path.insert(0, str(FIXTURES))
import toy  # noqa: E402

VISIBILITIES = {"hidden", "after_due_date", "after_published", "visible"}
TEST_FIELDS = {"name": str, "number": str, "score": (int, float), "max_score": (int, float),
               "status": str, "output": str, "visibility": str}
METADATA = {"id": 123456, "created_at": "2026-09-01T10:00:00.000000-07:00",
            "assignment": {"id": 2222, "title": "Toy lesson 9", "total_points": "4.0"},
            "submission_method": "upload",
            "users": [{"email": "jane@example.org", "id": 1234, "name": "Jane Doe",
                       "sid": "S0001"}]}


def test_zip_holds_gradescopes_two_scripts(tmp_path, capsys):
    out = tmp_path / "autograder.zip"
    assert main(["gradescope-autograder", "--out", str(out), "--visibility", "visible",
                 "--requirement", "/autograder/source/minigrad.whl[grade]"]) == 0
    assert "wrote" in capsys.readouterr().out
    with zipfile.ZipFile(out) as z:
        assert sorted(z.namelist()) == ["run_autograder", "setup.sh"]
        for info in z.infolist():
            assert stat.S_IMODE(info.external_attr >> 16) == 0o755   # executable, at the root
        setup = z.read("setup.sh").decode()
        run = z.read("run_autograder").decode()
    assert "pip install /autograder/source/minigrad.whl[grade]" in setup
    assert "minigrad.course.grading.gradescope setup" in setup       # the preflight, once
    assert "gradescope run --visibility visible --feedback cases" in run
    with pytest.raises(SystemExit):
        main(["gradescope-autograder", "--visibility", "soon"])


def _expected_isolation() -> tuple[list[str], str]:
    """The zip's extra flags here, and what the results must say of the isolation."""
    from minigrad.course.grading import sandbox
    from minigrad.course.grading.gradescope import _unreadable_python

    if sandbox.available() is None:
        return [], "each notebook ran in a bubblewrap sandbox"
    if os.getuid() == 0:
        if _unreadable_python():
            pytest.skip("no bubblewrap, and another user cannot run this Python here")
        return [], "each notebook ran as a user id of its own"
    return ["--no-sandbox"], "WARNING: NO SANDBOX"


def test_run_autograder_writes_gradescopes_results(tmp_path):
    flags, isolation = _expected_isolation()
    with zipfile.ZipFile(_zip(tmp_path, flags)) as z:
        z.extractall(tmp_path / "autograder" / "source")
    root = tmp_path / "autograder"
    wrong = toy.with_exercise(toy.solution(), "9.2", "g * y, x.shape", "-g * y, x.shape")
    toy.write(wrong, root / "submission" / "09_toy.ipynb")
    # a second notebook whose name reads as another student's: still this student's, and the
    # better of the two counts (it is the lesson as handed out: 0 points, graded without a kernel)
    toy.write(toy.release(toy.solution()), root / "submission" / "jane_09_toy.ipynb")
    (root / "submission_metadata.json").write_text(json.dumps(METADATA))
    released = toy.released_dir(tmp_path / "released")
    env = {**os.environ, "MINIGRAD_GRADESCOPE_ROOT": str(root), "MINIGRAD_PYTHON": sys.executable,
           "MINIGRAD_RELEASED_DIR": str(released), "MINIGRAD_CHECKS_PACKAGE": toy.CHECKS_PACKAGE,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(FIXTURES),
                                                       os.environ.get("PYTHONPATH")]))}
    script = root / "source" / "run_autograder"
    os.chmod(script, 0o755)   # (zipfile does not restore the mode)
    done = subprocess.run([str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    assert set(results) >= {"score", "output", "visibility", "tests"}
    assert results["visibility"] in VISIBILITIES and results["stdout_visibility"] == "hidden"
    for test in results["tests"]:
        for name, kind in TEST_FIELDS.items():
            assert isinstance(test[name], kind), (name, test)
        assert test["visibility"] == "after_published" and test["status"] in ("passed", "failed")
        assert 0 <= test["score"] <= test["max_score"]
    by_number = {t["number"]: t for t in results["tests"]}
    assert list(by_number) == ["9.1", "9.2", "9.3"]
    assert [by_number[n]["max_score"] for n in by_number] == [1, 2, 1]
    assert by_number["9.2"]["score"] == 0 and by_number["9.2"]["status"] == "failed"
    assert "gradient for a is wrong" in by_number["9.2"]["output"]
    assert by_number["9.1"]["output"] == "passed"
    assert results["score"] == sum(t["score"] for t in results["tests"]) == 2
    assert results["output"].startswith("Graded as jane@example.org: ")
    assert "09_toy: 2 / 4 points (09_toy.ipynb)" in results["output"]
    assert isolation in results["output"]
    if os.getuid() == 0:   # the autograder's files are root's alone
        assert stat.S_IMODE((root / "source").stat().st_mode) == 0o700
        assert stat.S_IMODE((root / "results").stat().st_mode) == 0o755


def test_own_user_mode_cannot_touch_the_autograders_files(tmp_path, request):
    """Without bubblewrap, as root: the notebook runs as a user id of its own, which can
    neither read a root-only folder nor create a file where results.json would go."""
    if os.getuid() != 0:
        pytest.skip("the own-user mode needs root (Gradescope's autograder is root)")
    from minigrad.course.grading.gradescope import _unreadable_python
    if _unreadable_python():
        pytest.skip(f"another user cannot run this Python here ({_unreadable_python()}); "
                    "Gradescope's /opt/minigrad can")
    from minigrad.course.grading import grade
    from minigrad.course.grading.runner import GradingOptions

    base = Path(tempfile.mkdtemp(prefix="minigrad-gradescope-"))   # reachable by any user
    os.chmod(base, 0o755)
    (base / "results").mkdir(mode=0o755)          # as run_autograder leaves them
    (base / "source").mkdir(mode=0o700)
    (base / "source" / "key").write_text("autograder only")
    (base / "open.txt").write_text("anyone")      # the control: the notebook does run and read
    os.chmod(base / "open.txt", 0o644)
    request.addfinalizer(lambda: shutil.rmtree(base, ignore_errors=True))
    probe = (f"assert open({str(base / 'open.txt')!r}).read() == 'anyone'\n"
             f"for what, do in (('read', lambda: open({str(base / 'source' / 'key')!r}).read()), "
             f"('write', lambda: open({str(base / 'results' / 'results.json')!r}, 'w'))):\n"
             "    try:\n        do()\n    except PermissionError:\n        continue\n"
             "    raise RuntimeError(what + ' allowed')\n" + toy.DOUBLE)   # 9.1 would fail
    notebook = toy.with_exercise(toy.solution(), "9.1", source=probe)
    toy.write(notebook, tmp_path / "subs" / "ann" / "09_toy.ipynb")
    book = grade([tmp_path / "subs"], released=toy.released_dir(tmp_path / "released"),
                 checks_package=toy.CHECKS_PACKAGE,
                 options=GradingOptions(sandbox=False, own_user=True, cell_timeout=10,
                                        python_path=[FIXTURES]))
    (notebook,) = book.notebooks
    assert notebook.score == 4, [(e.exercise, e.message) for e in notebook.exercises]
    assert not (base / "results" / "results.json").exists()


def _zip(tmp_path: Path, flags: list[str]) -> Path:
    out = tmp_path / "autograder.zip"
    assert main(["gradescope-autograder", "--out", str(out), *flags]) == 0
    return out


ISOLATION = [  # (bubblewrap's answer, uid, another user's view of Python, --no-sandbox, result)
    (None, 1000, "", False, "bubblewrap"),
    ("bwrap: setting up uid map: Permission denied", 0, "", False, "own user"),
    ("bwrap: no namespaces", 0, "[Errno 13] Permission denied: '/root/x'", True,
     "a user id of its own cannot run this Python"),
    ("bwrap: no namespaces", 1000, "", True, "none"),
    ("bwrap: no namespaces", 1000, "", False, "rebuild the zip with --no-sandbox"),
]


@pytest.mark.parametrize("why,uid,unreadable,no_sandbox,result", ISOLATION)
def test_isolation_is_probed_and_never_silently_absent(monkeypatch, why, uid, unreadable,
                                                       no_sandbox, result):
    from minigrad.course.grading import gradescope, sandbox

    monkeypatch.setattr(sandbox, "available", lambda: why)
    monkeypatch.setattr(gradescope.os, "getuid", lambda: uid)
    monkeypatch.setattr(gradescope, "_unreadable_python", lambda: unreadable)
    if result in ("bubblewrap", "own user", "none"):
        mode, note = gradescope.isolation(no_sandbox)
        assert mode == result
        assert ("WARNING: NO SANDBOX" in note) == (mode == "none")
    else:
        with pytest.raises(RuntimeError, match=result):
            gradescope.isolation(no_sandbox)

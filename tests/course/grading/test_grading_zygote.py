"""The warm zygote (minigrad/course/grading/zygote.py) and the grader run by an ordinary user.

A zygote imports the engine once per job and forks each notebook into new namespaces. These
tests run notebooks one after another through one zygote and check that the second sees
nothing of the first: no file in ``/tmp`` or ``/dev/shm``, no process (a ``setsid`` one
included), no patched module, no pipe; that student code runs without capabilities, with
``no_new_privs`` and (as root) under another user id; that the zygote's own process is out of
reach. Then the grader grades real lesson-1 notebooks as an ordinary user (unprivileged user
namespaces), and with zygotes refused (one sandbox per notebook).

Needs bubblewrap able to create namespaces; where it cannot, these tests skip and say why.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import pytest

from minigrad.course.grading import runner, sandbox
from minigrad.course.grading.lessons import cell_ids
from minigrad.course.grading.protocol import dumps
from tests.course.grading.test_grading_tamper import LESSON, RELEASED, ROOT, SOLUTION, _alive

MARKER = "minigrad-zygote-linger-5d1a"

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    sandbox.available() is not None, reason=f"no sandbox here: {sandbox.available()}")]


def _notebook(zygote, cells: list[str], timeout: float = 60) -> tuple[list[dict], int]:
    """Run ``cells`` as one notebook through ``zygote``: the driver's records, and the
    notebook's exit status."""
    run = zygote.run()
    job = {"steps": [{"index": i, "kind": "cell", "source": source, "exercise": None}
                     for i, source in enumerate(cells)],
           "cell_timeout": timeout, "uid": zygote.uid, "package": "minigrad.course.checks",
           "alias": "checks", "max_chars": 4000, "limits": {"NPROC": 4096}, "cwd": "/tmp"}
    run.stdin.write((dumps(job) + "\n").encode())
    run.stdin.close()
    records = [json.loads(line) for line in run.stdout]
    run.stdout.close()
    return records, run.wait(timeout)


def _outputs(records: list[dict]) -> list[str]:
    steps = [r for r in records if "step" in r]
    assert all(r["status"] == "ok" for r in steps), steps
    return [r["output"].strip() for r in steps]


@pytest.fixture(scope="module")
def zygote():
    options = runner.GradingOptions()
    with runner._ZYGOTES.kept():
        made = runner._ZYGOTES.take(options, [], 1)
        if made is None:   # the grader then uses one sandbox per notebook (tested below)
            pytest.skip(f"zygotes cannot work here: {runner._ZYGOTES.unavailable}")
        yield made
        made.close()


FIRST = [
    # leave traces of every kind a later notebook might find
    "import os, subprocess, numpy\n"
    "open('/tmp/left-behind', 'w').write('secret of the first notebook')\n"
    "open('/dev/shm/left-behind', 'w').write('shared memory')\n"
    f"subprocess.Popen(['setsid', 'sh', '-c', 'sleep 120; echo {MARKER}'])\n"
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    "    if os.fork() == 0:\n"
    f"        os.execvp('sleep', ['sleep', '120', '{MARKER}'])\n"
    "    os._exit(0)\n"
    "numpy.allclose = lambda *a, **k: True\n"
    "import minigrad.course.checks as checks\n"
    "checks.CheckFailed = None\n"
    "print('first', os.getpid())",
    # a process that writes forged records into every pipe it has, for a while
    "import os, json\n"
    "if os.fork() == 0:\n"
    "    for _ in range(50):\n"
    "        for fd in range(64):\n"
    "            try:\n"
    "                os.write(fd, (json.dumps({'step': 0, 'status': 'ok', 'output': 'forged', "
    "'seconds': 0}) + '\\n').encode())\n"
    "            except OSError:\n"
    "                pass\n"
    "        __import__('time').sleep(0.05)\n"
    "    os._exit(0)\n"
    "print('forger started')",
]

SECOND = [
    "import os, sys, numpy\n"
    "print(os.path.exists('/tmp/left-behind'), os.path.exists('/dev/shm/left-behind'), "
    "sorted(os.listdir('/tmp')))",
    "import minigrad.course.checks as checks\n"
    "print(numpy.allclose(1, 2), checks.CheckFailed is not None)",
    "pids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())\n"
    "print(pids, os.getpid())",
    "status = dict(line.split(':', 1) for line in open('/proc/self/status'))\n"
    "print(os.getuid(), *(status[k].strip() for k in ('CapEff', 'CapPrm', 'CapAmb', "
    "'CapBnd', 'NoNewPrivs')))",
    # already imported: the zygote's warm modules
    "print('minigrad.functional' in sys.modules, 'matplotlib.pyplot' in sys.modules)",
]


@pytest.fixture(scope="module")
def two_notebooks(zygote):
    first, first_status = _notebook(zygote, FIRST)
    time.sleep(0.2)
    alive_between = _alive(MARKER)
    second, second_status = _notebook(zygote, SECOND)
    return {"first": first, "second": second, "statuses": (first_status, second_status),
            "alive_between": alive_between, "zygote": zygote}


def test_the_first_notebook_ran(two_notebooks):
    assert _outputs(two_notebooks["first"])[0].startswith("first")
    assert two_notebooks["statuses"] == (0, 0)


def test_nothing_of_a_notebook_outlives_it(two_notebooks):
    assert two_notebooks["alive_between"] == []
    assert _alive(MARKER) == []


def test_each_notebook_gets_an_empty_tmp_and_dev_shm(two_notebooks):
    files = _outputs(two_notebooks["second"])[0]
    assert files.startswith("False False"), files
    assert "left-behind" not in files


def test_what_a_notebook_patches_dies_with_it(two_notebooks):
    assert _outputs(two_notebooks["second"])[1] == "False True"


def test_a_notebook_sees_only_its_own_processes(two_notebooks):
    pids, own = _outputs(two_notebooks["second"])[2].rsplit(" ", 1)
    # PID 1 is the notebook's init, then the driver: the zygote and the grader are not there
    assert json.loads(pids) == [1, int(own)] and int(own) == 2


def test_student_code_runs_without_privileges(two_notebooks):
    uid, eff, prm, amb, bnd, no_new_privs = _outputs(two_notebooks["second"])[3].split()
    assert (eff, prm, amb) == ("0" * 16,) * 3
    assert no_new_privs == "1" and bnd == "0" * 16
    if os.getuid() == 0:
        assert int(uid) == two_notebooks["zygote"].uid >= sandbox.FIRST_UID


def test_the_zygote_is_warm(two_notebooks):
    assert _outputs(two_notebooks["second"])[4] == "True True"


def test_no_forged_record_reaches_the_next_notebook(two_notebooks):
    second = [r for r in two_notebooks["second"] if "step" in r]
    assert [r["step"] for r in second] == list(range(len(SECOND)))
    assert not any("forged" in r["output"] for r in second)


def test_a_notebook_that_does_not_answer_ends_with_its_zygote(zygote):
    """A notebook killed by the grader takes its zygote down; the next gets a new one."""
    options = runner.GradingOptions()
    with runner._ZYGOTES.kept():
        mine = runner._ZYGOTES.take(options, [], 1)
        assert mine is not None and mine is not zygote
        run = mine.run()
        run.kill()
        assert not mine.alive() and run.poll() is not None


def test_a_read_only_folder_under_tmp_stays_visible_under_each_fresh_tmp(tmp_path):
    """A checkout or virtual environment under /tmp (a CI clone) is bound again on top of each
    notebook's new /tmp, read-only."""
    package = tmp_path / "extra"
    package.mkdir()
    (package / "zygote_probe_module.py").write_text("VALUE = 42\n")
    with runner._ZYGOTES.kept():
        mine = runner._ZYGOTES.take(runner.GradingOptions(), [str(package)], 1)
        if mine is None:
            pytest.skip(f"zygotes cannot work here: {runner._ZYGOTES.unavailable}")
        try:
            records, status = _notebook(mine, [
                "import zygote_probe_module, os\nprint(zygote_probe_module.VALUE)",
                f"try:\n    open({str(package / 'planted.py')!r}, 'w')\n"
                "except OSError as exc:\n    print(type(exc).__name__)"])
        finally:
            mine.close()
    assert _outputs(records) == ["42", "OSError"] and status == 0
    assert not (package / "planted.py").exists()


# --- the grader, as an ordinary user and without zygotes ---------------------------------------


def _class(folder: Path) -> Path:
    submissions = folder / "submissions"
    for student, source in (("full", SOLUTION), ("unsolved", RELEASED)):
        (submissions / student).mkdir(parents=True)
        shutil.copyfile(source, submissions / student / f"{LESSON}.ipynb")
    attack = nbformat.read(RELEASED, as_version=4)
    for cell in attack.cells:   # the first exercise leaves a file for whoever comes next
        if cell_ids(cell, "exercise"):
            cell.source = (   # (the driver's folder, /tmp, is first on sys.path)
                "import os\n"
                "for name in ('sitecustomize', 'usercustomize', 'tracemalloc', 'pdb'):\n"
                "    open(f'/tmp/{name}.py', 'w').write('raise SystemExit(3)')\n"
                "os.makedirs('/tmp/.ipython/profile_default/startup', exist_ok=True)\n"
                "open('/tmp/.ipython/profile_default/startup/0.py', 'w').write("
                "'raise SystemExit(3)')\n")
            break
    (submissions / "planter").mkdir()
    nbformat.write(attack, submissions / "planter" / f"{LESSON}.ipynb")
    return submissions


GRADE = """
import json, sys
from minigrad.course.grading import runner
book = runner.grade([sys.argv[1]], jobs=2, released=sys.argv[2])
print(json.dumps({"scores": {n.student: n.score for n in book.notebooks},
                  "issues": {n.student: [i.text for i in n.issues] for n in book.notebooks},
                  "zygote": runner._ZYGOTES.unavailable, "uid": __import__("os").getuid()}))
"""


def _traversable(path: str) -> bool:
    """Whether every folder above ``path`` lets other users through."""
    parts = Path(path).resolve().parents
    return all(os.stat(p).st_mode & 0o001 for p in parts)


def _as_ordinary_user(folder: Path) -> list[str]:
    """The command prefix that runs Python as an ordinary user (``nobody`` when this is root);
    skips when that user could not run this Python."""
    if os.getuid() != 0:
        return [sys.executable]
    if shutil.which("setpriv") is None:
        pytest.skip("running as root, and setpriv (util-linux) is missing to become nobody")
    python = (sys.executable, sys.prefix, sys.base_prefix)   # (a venv's python links to
    blocked = [p for p in (*python, str(ROOT)) if not _traversable(p)]  # its base installation)
    if blocked:
        # a Python under /root (0700, as pyenv puts it): in a mount namespace of this test's
        # own, an empty /root lets nobody through to the one folder it needs. Anything else
        # that nobody cannot reach (a checkout or venv in a 0700 folder) cannot be opened.
        home = Path("/root")
        tops = {next((p for p in Path(q).resolve().parents if p.parent == home), None)
                for q in blocked}
        if None in tops or len(tops) != 1 or shutil.which("unshare") is None:
            pytest.skip(f"nobody cannot reach {blocked[0]} (a folder above it lets no other "
                        "user through), and only one folder under /root can be opened")
        top = tops.pop()
        stage = folder / "stage"
        stage.mkdir()
        script = (f"mount --bind {top} {stage} && mount -t tmpfs -o mode=0755 none {home} && "
                  f"mkdir {top} && mount --move {stage} {top} && exec \"$@\"")
        return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh",
                "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable]
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable]


def test_an_ordinary_user_grades_with_the_sandbox():
    """The grader as an ordinary user: bubblewrap makes a user namespace, the zygote makes
    each notebook's namespaces inside it; honest scores are right and the planter gets
    nothing and leaves nothing for the others."""
    folder = Path(tempfile.mkdtemp(prefix="minigrad-unprivileged-"))
    try:
        submissions = _class(folder)
        released = folder / "released"
        released.mkdir()
        shutil.copyfile(RELEASED, released / RELEASED.name)
        os.chmod(folder, 0o755)
        prefix = _as_ordinary_user(folder)
        if os.getuid() == 0:
            for path in (folder, *folder.rglob("*")):
                os.chown(path, 65534, 65534)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(folder),
               "XDG_CACHE_HOME": str(folder / "cache"), "MPLCONFIGDIR": str(folder / "mpl"),
               "PYTHONDONTWRITEBYTECODE": "1", "LANG": "C.UTF-8"}
        done = subprocess.run([*prefix, "-c", GRADE, str(submissions), str(released)], env=env,
                              capture_output=True, text=True, timeout=600, cwd=str(folder))
        if done.returncode != 0 and "Operation not permitted" in done.stderr and \
                "unshare" in prefix:
            pytest.skip(f"could not make the test's mount namespace: {done.stderr[-300:]}")
        assert done.returncode == 0, done.stderr[-3000:]
        result = json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    from minigrad.course.checks import lesson1
    full = float(sum(e["points"] for e in lesson1.EXERCISES.values()))
    assert result["uid"] != 0
    with runner._ZYGOTES.kept():
        here = runner._ZYGOTES.take(runner.GradingOptions(), [], 1)
        if here is not None:   # zygotes work for this user: for an ordinary one too
            here.close()
            assert result["zygote"] is None, result["zygote"]
    assert result["scores"] == {"full": full, "unsolved": 0.0, "planter": 0.0}, result


def test_without_zygotes_each_notebook_gets_a_sandbox_of_its_own(tmp_path, monkeypatch):
    """Where zygotes cannot work the grader starts one sandbox per notebook, as before."""
    submissions = _class(tmp_path)
    monkeypatch.setattr(runner._ZYGOTES, "unavailable", "refused for this test")
    book = runner.grade([submissions], jobs=2)
    from minigrad.course.checks import lesson1
    full = float(sum(e["points"] for e in lesson1.EXERCISES.values()))
    assert {n.student: n.score for n in book.notebooks} == {"full": full, "unsolved": 0.0,
                                                           "planter": 0.0}


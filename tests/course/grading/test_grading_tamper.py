"""The tamper suite: submissions written as a determined student would, graded next to an honest
full-marks student and an honest unsolved one, on lesson 1.

Each attack is its own student. The class is graded three times (few grader runs: CI budget):
with ``--jobs 2`` (all of it), with ``--jobs 1`` (a subset) and as a ``--student`` regrade. For
each: no attack scores beyond its honest score (0: it solves nothing), no other row changes, the
submissions folder and an unrelated file are unchanged (hashes), no secret of the grader's
environment is in any report file, nothing connected to the grader's machine over the network,
and no process of the run is alive afterwards.

Needs bubblewrap able to create namespaces; where it cannot, these tests skip and say why.
"""
from __future__ import annotations

import csv
import hashlib
import json
import os
import socket
import sys
import time
from pathlib import Path

import nbformat
import pytest

from minigrad.course.grading import sandbox
from minigrad.course.grading.cli import main
from minigrad.course.grading.lessons import cell_ids

ROOT = Path(__file__).resolve().parents[3]
LESSON = "01_from_scalars_to_tensors"
RELEASED = ROOT / "minigrad" / "course" / "released" / f"{LESSON}.ipynb"
SOLUTION = ROOT / "solutions" / f"{LESSON}.ipynb"
SECRET = "hunter2-minigrad-tamper-secret-7f3a"
MARKER = "minigrad-tamper-linger-9c2e"

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    sandbox.available() is not None, reason=f"no sandbox here: {sandbox.available()}")]


def _attack(code: str, exercise: str = "1.1") -> nbformat.NotebookNode:
    """The released (unsolved) lesson with ``code`` as the exercise cell ``exercise``."""
    notebook = nbformat.read(RELEASED, as_version=4)
    for cell in notebook.cells:
        if exercise in cell_ids(cell, "exercise"):
            cell.source = code
    return notebook


def _attacks(paths: dict[str, Path], port: int) -> dict[str, nbformat.NotebookNode]:
    solutions_dir = str(ROOT / "solutions")
    victim = str(paths["victim"])
    unrelated = str(paths["unrelated"])
    report = str(paths["report"])
    package = str(ROOT / "minigrad")
    return {
        # forging what the in-notebook checks report: hooks, a transformer, builtins
        "forges_hooks": _attack(
            "import builtins\nip = get_ipython()\n"
            "ip.events.register('post_run_cell', lambda result: print('\u2713 passed'))\n"
            "ip.input_transformers_cleanup.append(lambda lines: ['print(\"\u2713\")\\n'] "
            "if any('checks.' in line for line in lines) else lines)\n"
            "builtins.isinstance = lambda obj, cls: True\n"
            "builtins.exec = lambda *args, **kwargs: None\n"
            "builtins.compile = lambda *args, **kwargs: compile('pass', '<x>', 'exec')\n"),
        # replacing the checks: sys.modules, a package of one's own ahead on __path__
        "replaces_checks": _attack(
            "import os, sys, types, minigrad, minigrad.course\n"
            "os.makedirs('/tmp/evil/checks', exist_ok=True)\n"
            "open('/tmp/evil/checks/__init__.py', 'w').write("
            "'class CheckFailed(Exception): pass\\n')\n"
            "open('/tmp/evil/checks/lesson1.py', 'w').write('''\n"
            "EXERCISES = {}\n"
            "def _ok(*a, **k): return None\n"
            "for _n in ('tensor_class topological_order backward add sub mul div power exp "
            "log tanh relu').split():\n"
            "    globals()[_n] = _ok\n''')\n"
            "minigrad.course.__path__.insert(0, '/tmp/evil')\n"
            "fake = types.ModuleType('minigrad.course.checks')\n"
            "fake.lesson1 = types.SimpleNamespace(**{n: (lambda *a, **k: None) for n in "
            "'tensor_class topological_order backward add sub mul div power exp log tanh "
            "relu'.split()})\n"
            "sys.modules['minigrad.course.checks'] = fake\n"
            "sys.modules['minigrad.course.checks.lesson1'] = fake.lesson1\n"),
        # patching NumPy's comparisons, and the engine's
        "patches_numpy": _attack(
            "import numpy as np\n"
            "np.isclose = lambda *a, **k: np.True_\nnp.allclose = lambda *a, **k: True\n"
            "np.array_equal = lambda *a, **k: True\n"
            "class Tensor:\n    def __init__(self, data, parents=(), vjp=None):\n"
            "        self.data, self.grad, self.parents, self.vjp = data, None, (), vjp\n"),
        # writing forged records straight into the grader's channel
        "forges_channel": _attack(
            "import os, json\n"
            "for fd in range(3, 64):\n"
            "    try:\n"
            "        if 'pipe' not in os.readlink(f'/proc/self/fd/{fd}'):\n"
            "            continue\n"
            "        for step in range(200):\n"
            "            os.write(fd, (json.dumps({'step': step, 'status': 'ok', 'seconds': 0, "
            "'check': {'kind': 'self-reported', 'passed': True}}) + '\\n').encode())\n"
            "            os.write(fd, (json.dumps({'step': step, 'status': 'ok', 'check': "
            "{'kind': 'outputs', 'outputs': {'groups': [[{'forward': 1}]], 'datas': [[1]], "
            "'orders': [[0]], 'cases': []}}}) + '\\n').encode())\n"
            "    except OSError:\n"
            "        pass\n"),
        # reaching beyond the sandbox: solutions, submissions, report, package, env, network
        "harms": _attack(
            "import os, glob, socket, sys\nfound = []\n"
            f"for pattern in ['{solutions_dir}/*', '{victim}', '/proc/*/cmdline', "
            f"'{package}/../solutions/*']:\n"
            "    for path in glob.glob(pattern):\n"
            "        try:\n"
            "            found.append(open(path, 'rb').read()[:200])\n"
            "        except OSError:\n"
            "            pass\n"
            "for path, text in [\n"
            f"        ('{victim}', 'overwritten'), ('{unrelated}', 'overwritten'),\n"
            f"        ('{package}/course/checks/lesson1.py', 'raise SystemExit'),\n"
            f"        ('{package}/../evil.pth', 'import os'),\n"
            f"        ('{os.path.dirname(os.__file__)}/site-packages/evil.pth', 'import os')]:\n"
            "    try:\n"
            "        open(path, 'a').write(text)\n"
            "    except OSError:\n"
            "        pass\n"
            "try:\n"
            f"    os.symlink('{unrelated}', '{report}/grades.csv')\n"
            "except OSError:\n"
            "    pass\n"
            "try:\n"
            f"    socket.create_connection(('127.0.0.1', {port}), timeout=2).sendall(b'hi')\n"
            "except OSError:\n"
            "    pass\n"
            "raise RuntimeError(f'environment: {dict(os.environ)} found: {found}')\n"),
        # processes that try to outlive the notebook, and memory
        "lingers": _attack(
            "import subprocess, os\n"
            f"subprocess.Popen(['setsid', 'sh', '-c', '(sleep 120; echo {MARKER}) &'])\n"
            "if os.fork() == 0:\n"
            "    os.setsid()\n"
            "    if os.fork() == 0:\n"
            f"        os.execvp('sleep', ['sleep', '120', '{MARKER}'])\n"
            "    os._exit(0)\n"
            "blob = bytearray(4 * 2**30)\n"),
    }


def _hashes(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _alive(marker: str) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if marker.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                    pids.append(int(entry))
            except OSError:
                continue
    return pids


def _rows(report: Path) -> dict[str, dict[str, str]]:
    with open(report / "grades.csv", encoding="utf-8", newline="") as f:
        return {row["student"]: row for row in csv.DictReader(f)}


def _report_text(report: Path) -> str:
    """The files an instructor hands on (CSVs, feedback pages) and grades.json, together."""
    return "\n".join(p.read_text("utf-8", "replace") for p in sorted(report.rglob("*"))
                     if p.is_file())


def _handed_on(report: Path) -> str:
    return "\n".join(p.read_text("utf-8", "replace") for p in sorted(report.rglob("*"))
                     if p.is_file() and p.suffix in (".csv", ".md"))


#: The options of every grader run in the tamper suites (no preflight: they grade the solutions).
COMMON = ["--no-preflight", "--no-progress", "-q", "--timeout", "60"]


def write_class(submissions: Path, notebooks: dict[str, dict[str, nbformat.NotebookNode]]
                ) -> None:
    """Write each student's notebooks, ``{student: {lesson file stem: notebook}}``."""
    for student, lessons in notebooks.items():
        (submissions / student).mkdir(parents=True)
        for stem, notebook in lessons.items():
            nbformat.write(notebook, submissions / student / f"{stem}.ipynb")


def grade(submissions: Path, report: Path, *args: str) -> tuple[dict, str, str]:
    """One grader run over the class: the report's rows, its text, and what it hands on."""
    assert main([str(submissions), *args, "--out", str(report), *COMMON]) == 0
    return _rows(report), _report_text(report), _handed_on(report)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The class, graded with --jobs 2, then a subset with --jobs 1, then a --student regrade."""
    base = tmp_path_factory.mktemp("tamper")
    submissions, report, report1 = base / "submissions", base / "report", base / "report1"
    for folder in (submissions, report, report1):
        folder.mkdir()
    unrelated = base / "unrelated.txt"
    unrelated.write_text("an instructor's file\n")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    server.setblocking(False)
    paths = {"victim": submissions / "honest_full" / f"{LESSON}.ipynb", "unrelated": unrelated,
             "report": report}
    notebooks = {"honest_full": nbformat.read(SOLUTION, as_version=4),
                 "honest_unsolved": nbformat.read(RELEASED, as_version=4),
                 **_attacks(paths, server.getsockname()[1])}
    write_class(submissions, {student: {LESSON: nb} for student, nb in notebooks.items()})
    before = _hashes(submissions), unrelated.read_bytes()
    os.environ["MINIGRAD_TAMPER_SECRET"] = SECRET
    runs, texts, handed = {}, {}, {}
    try:
        runs["jobs2"], texts["jobs2"], handed["jobs2"] = grade(submissions, report, "--jobs", "2")
        subset = [s for s in ("honest_full", "harms", "lingers", "forges_channel")]
        args = [arg for s in subset for arg in ("--student", s)]
        runs["jobs1"], texts["jobs1"], handed["jobs1"] = grade(submissions, report1, "--jobs",
                                                               "1", *args)
        runs["regrade"], texts["regrade"], handed["regrade"] = grade(
            submissions, report, "--student", "forges_channel")
    finally:
        os.environ.pop("MINIGRAD_TAMPER_SECRET", None)
    try:
        connection, _ = server.accept()
        connected = True
        connection.close()
    except (BlockingIOError, OSError):
        connected = False
    server.close()
    time.sleep(0.5)
    return {"runs": runs, "texts": texts, "handed": handed, "base": base, "before": before, "submissions": submissions,
            "unrelated": unrelated, "connected": connected, "report": report,
            "students": list(notebooks)}


def test_honest_students_get_their_scores(graded):
    from minigrad.course.checks import lesson1
    full = f"{sum(e['points'] for e in lesson1.EXERCISES.values()):g}"
    for name, rows in graded["runs"].items():
        assert rows["honest_full"]["total"] == full, (name, rows["honest_full"])
        if "honest_unsolved" in rows:
            assert rows["honest_unsolved"]["total"] == "0", (name, rows["honest_unsolved"])


@pytest.mark.parametrize("student", ["forges_hooks", "replaces_checks", "patches_numpy",
                                     "forges_channel", "harms", "lingers"])
def test_no_attack_scores(graded, student):
    for name, rows in graded["runs"].items():
        if student in rows:
            assert rows[student]["total"] == "0", (name, student, rows[student])


def test_a_regrade_changes_no_other_row(graded):
    before, after = graded["runs"]["jobs2"], graded["runs"]["regrade"]
    assert set(before) == set(after) == set(graded["students"])
    for student in before:
        assert before[student] == after[student] or student == "forges_channel", student
    assert after["forges_channel"]["total"] == "0"


def test_nothing_outside_the_sandbox_changed(graded):
    hashes, unrelated = graded["before"]
    assert _hashes(graded["submissions"]) == hashes
    assert graded["unrelated"].read_bytes() == unrelated
    assert not (ROOT / "evil.pth").exists()
    assert "raise SystemExit" not in (ROOT / "minigrad/course/checks/lesson1.py").read_text()
    assert not (graded["report"] / "grades.csv").is_symlink()


def test_no_secret_and_no_machine_path_in_any_report(graded):
    for name, text in graded["texts"].items():
        assert SECRET not in text, name
        assert "MINIGRAD_TAMPER_SECRET" not in text, name
    for name, text in graded["handed"].items():
        assert str(ROOT) not in text, name
        assert str(graded["base"]) not in text, name
        assert sys.prefix not in text, name


def test_the_sandbox_saw_no_network_and_no_process_outlived_it(graded):
    assert not graded["connected"], "a notebook reached the grader's machine over the network"
    assert _alive(MARKER) == []


def test_attacks_are_reported_where_seen(graded):
    grades = json.loads((graded["report"] / "grades.json").read_text())
    issues = {n["student"]: {i["kind"] for i in n["issues"]} for n in grades["notebooks"]}
    assert "patched checks" in issues["replaces_checks"]
    assert "patched engine" in issues["patches_numpy"]
    assert "processes" in issues["lingers"] or "kernel died" in issues["lingers"]


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))

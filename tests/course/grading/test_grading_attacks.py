"""The grader's second round of attacks (issue 23), each graded next to an honest full-marks
and an honest blank student with ``--jobs 2``.

One class, graded once (CI budget): forged values through a replaced serializer, an empty
finite-difference list, wrappers around the demos' reference code, probe-only answers served
by checks of one's own, a 1.2 order of a million entries (the judge's duplicate count was
quadratic), a 200 KB cell of blank lines before a NameError (the hint's regular expression
backtracked across lines), forged records with a 400-digit number, the kernel keyring, a user
namespace inside the sandbox, and writing to ``/`` and ``/dev``. Every attack scores zero,
the honest students score right, and the batch finishes with its report. Memory through
children is graded on its own (``--memory 1``, children of 0.75 GiB), and ``/`` and ``/dev``
are tried once more as an ordinary user. Without a sandbox these skip and say why; the pieces
that need none (the bounded judge, the number parser, the regular expression, the seccomp
program, Ctrl-C) are tested first.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import numpy as np
import pytest

from minigrad.course import exercise_cells, read_notebook
from minigrad.course.checks import CheckFailed
from minigrad.course.checks import lesson1 as L1
from minigrad.course.grading import runner, sandbox, seccomp
from minigrad.course.grading.bounded import bounded
from minigrad.course.grading.lessons import cell_ids
from tests.course.grading.test_grading_tamper import COMMON, _alive, grade, write_class

ROOT = Path(__file__).resolve().parents[3]
L1_STEM, L3_STEM = "01_from_scalars_to_tensors", "03_parameters_modules_optimizer"
SECRET = "minigrad-attack-key-payload-5d1c"
NO_SANDBOX = sandbox.available()
needs_sandbox = pytest.mark.skipif(NO_SANDBOX is not None, reason=f"no sandbox: {NO_SANDBOX}")


def _released(stem: str) -> nbformat.NotebookNode:
    return nbformat.read(ROOT / "minigrad" / "course" / "released" / f"{stem}.ipynb",
                         as_version=4)


def _solution_cells(stem: str) -> dict[str, str]:
    return {k: c.source for k, c in exercise_cells(read_notebook(ROOT / "solutions" /
                                                                 f"{stem}.ipynb")).items()}


def _attack(stem: str, cells: dict[str, str], extra: str | None = None
            ) -> nbformat.NotebookNode:
    """The released (blank) lesson with ``cells`` as these exercise cells; ``extra``, a code
    cell of the student's own, goes first."""
    notebook = _released(stem)
    for cell in notebook.cells:
        for exercise in cell_ids(cell, "exercise"):
            if exercise in cells:
                cell.source = cells[exercise]
    if extra is not None:
        notebook.cells.insert(1, nbformat.v4.new_code_cell(extra))
    return notebook


# --- pieces that need no sandbox --------------------------------------------------------------


def _judge_that_sleeps(probes, outputs):
    time.sleep(30)


def _judge_that_fails(probes, outputs):
    raise CheckFailed("wrong on purpose")


@pytest.mark.parametrize("judge, kind, passed", [
    (_judge_that_sleeps, "judge timeout", False),
    (_judge_that_fails, "check", False),
    (lambda probes, outputs: "all right", "passed", True),
])
def test_a_judge_runs_under_a_time_limit(judge, kind, passed):
    split = runner.Split(probe=lambda rng: {}, run=lambda probes: {}, judge=judge)
    options = runner.GradingOptions(judge_timeout=1.0)
    start = time.monotonic()
    outcome = runner._judge(split, {}, {"kind": "outputs", "outputs": {}}, options)
    assert time.monotonic() - start < 5
    assert (outcome["kind"], outcome["passed"]) == (kind, passed), outcome
    if not passed:
        assert outcome["message"]


def test_an_empty_finite_difference_list_fails_the_operation_judge():
    split = L1.binary_ops.split
    probes = split.probe(np.random.default_rng(4))
    sol: dict = {"np": np, "__name__": "__main__"}
    for source in _solution_cells(L1_STEM).values():
        exec(compile(source, "<exercise>", "exec"), sol)
    outputs = split.run(probes, sol["add"], sol["sub"], sol["mul"], sol["div"])
    assert isinstance(split.judge(probes, outputs), str)
    for name in outputs:
        for group in outputs[name]["groups"]:
            for result in group:
                result["fd"] = []
    with pytest.raises(CheckFailed, match="finite differences for 2 input"):
        split.judge(probes, outputs)


def test_the_duplicate_count_of_an_order_is_linear():
    graphs = L1._graphs(1)
    root, nodes = graphs["a single leaf x"]
    start = time.monotonic()
    with pytest.raises(CheckFailed, match="1000000 entries for 1 tensors.*appears 1000000"):
        L1._check_order("case", [root] * 1_000_000, nodes)
    assert time.monotonic() - start < 5


@pytest.mark.parametrize("value, expected", [
    (1.5, 1.5), (3, 3.0), (10**400, None), (-1, None), (float("nan"), None),
    (float("inf"), None), (True, None), ("12", None), (None, None),
])
def test_numbers_from_the_pipe_are_parsed_defensively(value, expected):
    assert runner._count(value, 1e9) == expected


def test_the_hint_search_never_crosses_lines():
    source = "\n" * 200_000 + "helper = 1\n"
    start = time.monotonic()
    assert runner._defined_in(source, "helper") and not runner._defined_in(source, "other")
    assert runner._defined_in(" " * 100_000 + "import" + " " * 100_000, "x") is False
    assert time.monotonic() - start < 2


@pytest.mark.skipif(os.uname().machine not in seccomp.SYSCALLS, reason="no filter here")
def test_the_seccomp_filter_refuses_keys_and_user_namespaces():
    code = ("import ctypes, os, subprocess\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "libc.prctl(38, 1, 0, 0, 0)\n"
            "from minigrad.course.grading import seccomp\n"
            "assert seccomp.install() == ''\n"
            "nr = seccomp.SYSCALLS[os.uname().machine][1]\n"
            "out = []\n"
            "for name, args in (('add_key', (b'user', b'k', b'v', 1, -2)), "
            "('keyctl', (0, -4, 0, 0, 0))):\n"
            "    out.append(libc.syscall(nr[name], *args) == -1 and ctypes.get_errno() == 1)\n"
            "out.append(libc.unshare(0x10000000) == -1 and ctypes.get_errno() == 1)\n"
            "out.append(subprocess.run(['true']).returncode == 0)\n"
            "print(out)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.stdout.strip() == "[True, True, True, True]", done.stderr[-2000:]


def test_grader_only_modules_are_masked_in_the_sandbox(tmp_path):
    argv, _ = sandbox.command(sandbox.SandboxSpec(workdir=tmp_path))
    demos = str((ROOT / "minigrad" / "course" / "demos.py").resolve())
    i = argv.index(demos)
    assert argv[i - 2] == "--ro-bind" and argv[i - 1].endswith("sandbox_demos.py")
    pairs = [(a, b) for a, b in zip(argv, argv[1:]) if a == "--remount-ro"]
    assert ("--remount-ro", "/dev") in pairs and ("--remount-ro", "/") in pairs
    from minigrad.course.grading import zygote
    assert "minigrad.course.demos" not in zygote.WARM
    assert not [name for name in zygote.WARM if ".judges" in name]
    judges = sorted((ROOT / "minigrad" / "course" / "checks" / "judges").glob("lesson*.py"))
    assert len(judges) == 4 and all(str(j.resolve()) in argv for j in judges)


# --- the class of attacks ---------------------------------------------------------------------

_WRONG_RULES = {
    "1.4": lambda s: s.replace("(g, g)", "(g * 0, g * 0)").replace("(g, -g)", "(g * 0, g)")
                      .replace("(g * b, g * a)", "(g, g)").replace("(g / b, -g * a / b**2)",
                                                                    "(g, g)"),
}


def _empty_fd() -> nbformat.NotebookNode:
    """Wrong rules everywhere, and the finite differences emptied (skipped every comparison)."""
    sol = _solution_cells(L1_STEM)
    patch = ("import sys, minigrad.gradcheck\n"
             "sys.modules['minigrad.gradcheck'].numerical_vjp = lambda *args, **kwargs: []\n")
    unary = sol["1.5"]
    for rule in ("g * y", "g / x", "g * (1 - y**2)", "np.where(x > 0, g, 0.0)"):
        unary = unary.replace(rule, "g * 0")
    return _attack(L1_STEM, {"1.4": patch + _WRONG_RULES["1.4"](sol["1.4"]), "1.5": unary})


def _serializer() -> nbformat.NotebookNode:
    """The driver's serializer hooked: 1.1's values replaced, on the way out, with the right
    ones made from the probes by the checks' own helper."""
    return _attack(L1_STEM, {"1.1": (
        "import gc\nimport numpy as np\n"
        "from minigrad.course.grading import protocol\n"
        "from minigrad.course.checks import lesson1 as L\n"
        "_real = protocol.dumps\n"
        "def _forge(record):\n"
        "    check = record.get('check') if isinstance(record, dict) else None\n"
        "    if isinstance(check, dict) and check.get('kind') == 'outputs':\n"
        "        job = next(o for o in gc.get_objects() if isinstance(o, dict) and 'steps' in o"
        " and 'alias' in o)\n"
        "        seed = job['steps'][record['step']]['probes']['seed']\n"
        "        check['outputs'] = {'datas': [np.asarray(d, dtype=float) for d in "
        "L._tensor_datas(seed)]}\n"
        "    return _real(record)\n"
        "protocol.dumps = _forge\n"
        "import minigrad.course.grading.driver as D\n"
        "D._DUMPS = _forge\n"
        "class Tensor:\n"
        "    def __init__(self, data, parents=(), vjp=None):\n"
        "        self.data = np.zeros(np.shape(data))\n"
        "        self.grad, self.parents, self.vjp = None, tuple(parents), vjp\n")})


def _wrappers() -> nbformat.NotebookNode:
    """Every exercise of lesson 1 a wrapper around the demos' reference code."""
    def wrap(*names: str) -> str:
        return "".join(f"{n} = reference(1, {n!r})\n" for n in names)
    return _attack(L1_STEM, {"1.1": "from minigrad.course.demos import reference\n"
                                    + wrap("Tensor"),
                             "1.2": wrap("topological_order"), "1.3": wrap("backward"),
                             "1.4": wrap("add", "sub", "mul", "div"),
                             "1.5": wrap("exp", "log", "tanh", "relu")})


def _probe_only() -> nbformat.NotebookNode:
    """Checks of one's own (first on the package's __path__) that answer 3.1 and 3.2 from the
    probes alone: the data the probe holds, the parameters its tree describes."""
    fake = (
        "import importlib.util, numpy as np\n"
        "spec = importlib.util.spec_from_file_location('real3', REAL)\n"
        "real = importlib.util.module_from_spec(spec); spec.loader.exec_module(real)\n"
        "class _Split:\n"
        "    def __init__(self, run): self.run = run\n"
        "def _walk(node, path=''):\n"
        "    (kind, value), = node.items()\n"
        "    if kind == 'param': return [(path, value)]\n"
        "    items = value.items() if kind in ('module', 'dict') else enumerate(value) "
        "if kind in ('list', 'tuple') else []\n"
        "    return [f for k, c in items for f in _walk(c, (path + '.' if path else '') + str(k))]\n"
        "def _p31(probes, *objects):\n"
        "    cases = probes.get('cases') or real._parameter_cases(probes.get('seed'))\n"
        "    return {'datas': [np.asarray(c['data']) for c in cases]}\n"
        "def _p32(probes, *objects):\n"
        "    out = []\n"
        "    for item in probes['cases']:\n"
        "        found = [{'kind': 'Parameter', 'path': p, 'shape': list(s)} for p, s in "
        "_walk(item['tree'])]\n"
        "        out.append({'found': found, 'again': found})\n"
        "    return {'cases': out}\n"
        "def parameter(*a): pass\n"
        "def parameters(*a): pass\n"
        "parameter.split, parameters.split = _Split(_p31), _Split(_p32)\n")
    real = ROOT / "minigrad" / "course" / "checks" / "lesson3.py"
    code = (
        "import os, minigrad.course\n"
        "os.makedirs('/tmp/evil/checks', exist_ok=True)\n"
        "import minigrad.course.checks as real_checks\n"
        "here = os.path.dirname(real_checks.__file__)\n"
        "for name in ('__init__.py', 'exercises.json'):\n"
        "    open(f'/tmp/evil/checks/{name}', 'w').write(open(f'{here}/{name}').read())\n"
        f"open('/tmp/evil/checks/lesson3.py', 'w').write({('REAL = ' + repr(str(real)) + chr(10) + fake)!r})\n"
        "minigrad.course.__path__.insert(0, '/tmp/evil')\n"
        "class Parameter(Tensor):\n    pass\n")
    return _attack(L3_STEM, {"3.1": code, "3.2": "class Module:\n    def parameters(self):\n"
                                                 "        return []\n"})


def _quadratic() -> nbformat.NotebookNode:
    """1.2 answered with a million entries for the first graph (a single leaf)."""
    return _attack(L1_STEM, {"1.2": (
        "def topological_order(root):\n"
        "    return [root] * (1_000_000 if not root.parents else 1)\n")})


def _blank_lines() -> nbformat.NotebookNode:
    """A 200 KB cell of blank lines (a cell of the student's own) and a NameError."""
    return _attack(L1_STEM, {"1.1": "Tensor = undefined_helper\n"},
                   extra="\n" * 200_000 + "undefined_helper = 1\n")


def _long_number() -> nbformat.NotebookNode:
    """Records of its own in the grader's channel, one with a 400-digit number of seconds."""
    return _attack(L1_STEM, {"1.1": (
        "import os\n"
        "for fd in range(3, 64):\n"
        "    try:\n"
        "        if 'pipe' not in os.readlink(f'/proc/self/fd/{fd}'):\n"
        "            continue\n"
        "        for step in range(40):\n"
        "            os.write(fd, ('{\"step\": %d, \"seconds\": %s, \"status\": \"ok\", '\n"
        "                          '\"output\": \"\", \"check\": {\"kind\": \"outputs\", '\n"
        "                          '\"outputs\": {}}}\\n' % (step, '9' * 400)).encode())\n"
        "    except OSError:\n"
        "        pass\n")})


def _keyring(read: bool) -> nbformat.NotebookNode:
    """A key left in the kernel's keyring for a later notebook (``read``: look for it)."""
    call = ("libc.syscall(nr['keyctl'], 10, -2, b'user', b'minigrad-attack', 0)" if read else
            f"libc.syscall(nr['add_key'], b'user', b'minigrad-attack', {SECRET.encode()!r}, "
            f"{len(SECRET)}, -2)")
    return _attack(L1_STEM, {"1.1": (
        "import ctypes, os\nfrom minigrad.course.grading import seccomp\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "nr = seccomp.SYSCALLS[os.uname().machine][1]\n"
        f"result = {call}\n"
        "raise RuntimeError(f'keyring: {result} {os.strerror(ctypes.get_errno())}')\n")})


def _user_namespace() -> nbformat.NotebookNode:
    return _attack(L1_STEM, {"1.1": (
        "import ctypes, os, subprocess\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "first = libc.unshare(0x10000000), os.strerror(ctypes.get_errno())\n"
        "second = subprocess.run(['unshare', '-U', '-r', 'id'], capture_output=True, "
        "text=True)\n"
        "raise RuntimeError(f'userns: {first} {second.returncode} {second.stderr.strip()} "
        "{second.stdout.strip()}')\n")})


def _root_fs() -> nbformat.NotebookNode:
    return _attack(L1_STEM, {"1.1": (
        "import os\nfound = []\n"
        "for path in ('/minigrad-attack', '/dev/minigrad-attack', '/usr/minigrad-attack'):\n"
        "    try:\n"
        "        open(path, 'w').write('x' * 1000)\n"
        "        found.append(f'{path}: written')\n"
        "    except OSError as e:\n"
        "        found.append(f'{path}: {e.strerror}')\n"
        "raise RuntimeError('rootfs: ' + '; '.join(found))\n")})


ATTACKS = {"empty_fd": _empty_fd, "serializer": _serializer, "wrappers": _wrappers,
           "probe_only": _probe_only, "quadratic": _quadratic, "blank_lines": _blank_lines,
           "long_number": _long_number, "key_writer": lambda: _keyring(False),
           "key_reader": lambda: _keyring(True), "user_namespace": _user_namespace,
           "root_fs": _root_fs}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("attacks")
    submissions, report = base / "submissions", base / "report"
    report.mkdir()
    notebooks: dict[str, dict[str, nbformat.NotebookNode]] = {
        "honest_full": {stem: nbformat.read(ROOT / "solutions" / f"{stem}.ipynb", as_version=4)
                        for stem in (L1_STEM, L3_STEM)},
        "honest_blank": {stem: _released(stem) for stem in (L1_STEM, L3_STEM)}}
    for name, make in ATTACKS.items():
        notebooks[name] = {L3_STEM if name == "probe_only" else L1_STEM: make()}
    write_class(submissions, notebooks)
    start = time.monotonic()
    rows, text, handed = grade(submissions, report, "--jobs", "2")
    seconds = time.monotonic() - start
    book = json.loads((report / "grades.json").read_text())
    issues = {n["student"]: [i["text"] for i in n["issues"]] for n in book["notebooks"]}
    kinds = {n["student"]: {i["kind"] for i in n["issues"]} for n in book["notebooks"]}
    messages = {(n["student"], e["exercise"]): e["message"] for n in book["notebooks"]
                for e in n["exercises"]}
    time.sleep(0.3)
    return {"rows": rows, "text": text, "issues": issues, "kinds": kinds,
            "messages": messages, "seconds": seconds}


def _points(*modules) -> str:
    return f"{sum(e['points'] for m in modules for e in m.EXERCISES.values()):g}"


@needs_sandbox
@pytest.mark.slow
def test_the_victims_score_right_and_the_batch_finishes(graded):
    from minigrad.course.checks import lesson3 as L3
    rows = graded["rows"]
    assert set(rows) == {"honest_full", "honest_blank", *ATTACKS}
    assert rows["honest_full"]["total"] == _points(L1, L3), rows["honest_full"]
    assert rows["honest_blank"]["total"] == "0"
    assert not graded["kinds"]["honest_full"] & {"signal", "forged", "grader"}
    assert graded["seconds"] < 300


@needs_sandbox
@pytest.mark.slow
@pytest.mark.parametrize("attack", list(ATTACKS))
def test_no_attack_scores(graded, attack):
    row = graded["rows"][attack]
    assert row["total"] == "0", (attack, row, graded["issues"][attack])
    assert "grader" not in graded["kinds"][attack], graded["issues"][attack]


@needs_sandbox
@pytest.mark.slow
@pytest.mark.parametrize("attack, exercise, pattern", [
    ("empty_fd", "1.4", "finite differences for 2 input"),
    ("serializer", "1.1", "not judged: the notebook replaced what the driver sends"),
    ("probe_only", "3.1", "not judged: the check's run came from /tmp/evil"),
    ("probe_only", "3.2", "not judged: the check's run came from /tmp/evil"),
    ("quadratic", "1.2", "1000000 entries for 1 tensors"),
    ("long_number", "1.1", "not judged: the notebook wrote records of its own"),
])
def test_each_attack_fails_for_its_reason(graded, attack, exercise, pattern):
    assert pattern in graded["messages"][(attack, exercise)], \
        graded["messages"][(attack, exercise)]


@needs_sandbox
@pytest.mark.slow
@pytest.mark.parametrize("attack, pattern", [
    ("key_writer", "keyring: -1 Operation not permitted"),
    ("key_reader", "keyring: -1 Operation not permitted"),
    ("user_namespace", "userns: (-1, 'Operation not permitted') 1"),
    ("root_fs", "/minigrad-attack: Read-only file system"),
    ("root_fs", "/dev/minigrad-attack: Read-only file system"),
    ("root_fs", "/usr/minigrad-attack: Read-only file system"),
    ("empty_fd", "minigrad.gradcheck.numerical_vjp"),          # the patch is reported too
    ("wrappers", "uses the course's own checks, demos or grader"),   # and the copying
    ("wrappers", "the grader's sandbox holds no reference implementations"),
    ("serializer", "exercise 1.1 uses the course's own checks, demos or grader"),
    ("long_number", "record(s) of its own into the grader's channel"),
])
def test_what_each_attack_tried_is_in_the_report(graded, attack, pattern):
    text = "\n".join(graded["issues"][attack]) + "\n".join(
        m for (s, _), m in graded["messages"].items() if s == attack)
    assert pattern in text, graded["issues"][attack]
    assert SECRET not in graded["text"]
    assert ": written" not in text


@needs_sandbox
@pytest.mark.slow
def test_memory_is_counted_for_the_notebook_as_a_whole(tmp_path):
    """Four children of 0.75 GiB each under --memory 1: with a cgroup (as root) at most one
    holds its memory at a time (the others are killed); the honest students score right."""
    hog = _attack(L1_STEM, {"1.1": (
        "import subprocess, sys\n"
        "code = 'import time; b = bytearray(768 * 2**20); b[::4096] = b\"x\" * len(b[::4096]);"
        " time.sleep(4)'\n"
        "children = [subprocess.Popen([sys.executable, '-c', code]) for _ in range(4)]\n"
        "codes = [c.wait() for c in children]\n"
        "raise RuntimeError(f'children: {codes}')\n")})
    submissions, report = tmp_path / "submissions", tmp_path / "report"
    report.mkdir()
    write_class(submissions, {
        "honest_full": {L1_STEM: nbformat.read(ROOT / "solutions" / f"{L1_STEM}.ipynb",
                                               as_version=4)},
        "honest_blank": {L1_STEM: _released(L1_STEM)}, "hog": {L1_STEM: hog}})
    rows, text, _ = grade(submissions, report, "--jobs", "2", "--memory", "1")
    assert rows["honest_full"]["total"] == _points(L1) and rows["honest_blank"]["total"] == "0"
    assert rows["hog"]["total"] == "0"
    book = json.loads((report / "grades.json").read_text())
    said = next(i["text"] for n in book["notebooks"] if n["student"] == "hog"
                for i in n["issues"] if "children:" in i["text"])
    codes = [int(c) for c in said.split("children: [")[1].split("]")[0].split(",")]
    probe = sandbox.Cgroup.make(2**30, 8, 1.0)
    if probe is None:
        pytest.skip("no cgroup here (not root, or no writable controller): the limits are per "
                    "process, and the process limit keeps processes x address space in bounds")
    probe.remove()
    assert len(codes) == 4 and sum(c == 0 for c in codes) <= 1, said   # the others were killed


@needs_sandbox
@pytest.mark.slow
def test_root_and_dev_are_read_only_for_an_ordinary_user(tmp_path):
    """As an ordinary user bubblewrap's root is a tmpfs of the grader's user: read-only."""
    from tests.course.grading import test_grading_zygote as zygote_tests
    from minigrad.course.grading import protocol
    folder = tmp_path / "nobody"
    folder.mkdir()
    os.chmod(tmp_path, 0o755)
    os.chmod(folder, 0o755)
    prefix = zygote_tests._as_ordinary_user(folder)
    if os.getuid() == 0:
        os.chown(folder, 65534, 65534)
    code = ("import subprocess, sys, tempfile\nfrom pathlib import Path\n"
            "from minigrad.course.grading import sandbox, protocol\n"
            "work = Path(tempfile.mkdtemp()) / 'tmp'; work.mkdir()\n"
            "argv, env = sandbox.command(sandbox.SandboxSpec(workdir=work))\n"
            "job = {'steps': [{'index': 0, 'kind': 'cell', 'exercise': None, 'source': "
            + repr("import os\nfor p in ('/x', '/dev/x'):\n    try:\n        open(p, 'w')\n"
                   "        print(p, 'written')\n    except OSError as e:\n"
                   "        print(p, e.strerror)\n") +
            "}], 'cell_timeout': 20, 'uid': None, 'package': 'minigrad.course.checks', "
            "'alias': 'checks', 'max_chars': 4000, 'limits': {}, 'cwd': '/tmp'}\n"
            "done = subprocess.run(argv, input=(protocol.dumps(job) + '\\n').encode(), "
            "capture_output=True, env=env, timeout=120)\n"
            "print(done.stdout.decode()[-2000:])\n")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(folder),
           "LANG": "C.UTF-8"}
    done = subprocess.run([*prefix, "-c", code], env=env, capture_output=True, text=True,
                          timeout=300, cwd=str(folder))
    if done.returncode != 0 and "unshare" in prefix and "Operation not permitted" in done.stderr:
        pytest.skip(f"could not make the test's mount namespace: {done.stderr[-300:]}")
    assert done.returncode == 0, done.stderr[-2000:]
    step = next(protocol.loads(line) for line in done.stdout.splitlines()
                if line.startswith('{"step":0'))
    assert "/x Read-only file system" in step["output"], step
    assert "/dev/x Read-only file system" in step["output"], step


@needs_sandbox
@pytest.mark.slow
def test_ctrl_c_stops_within_a_second_and_writes_what_finished(tmp_path):
    marker = "minigrad-attack-ctrl-c-7e1f"
    looper = _attack(L1_STEM, {"1.1": f"import subprocess\n"
                                      f"subprocess.run(['sh', '-c', 'sleep 120', '{marker}'])\n"})
    submissions, report = tmp_path / "submissions", tmp_path / "report"
    write_class(submissions, {"a_honest": {L1_STEM: _released(L1_STEM)},
                              "z_looper": {L1_STEM: looper}})
    process = subprocess.Popen(
        [sys.executable, "-m", "minigrad.course.grading", str(submissions), "--jobs", "1",
         "--out", str(report), *COMMON], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not _alive(marker) and process.poll() is None:
        time.sleep(0.2)
    start = time.monotonic()
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert time.monotonic() - start < 3, err   # (measured: 1.2-1.3 s, the report included)
    assert process.returncode == 130, err
    assert "holds the 1 notebook(s) that had finished" in err, err
    assert "a_honest" in (report / "grades.csv").read_text()
    assert "z_looper" not in (report / "grades.csv").read_text()
    time.sleep(1.0)
    assert _alive(marker) == []


def test_the_runs_need_no_judge():
    """The run halves import and run with the judges' package refused (as in the sandbox,
    where it is not there): they compute no expected value, and import nothing that does."""
    code = ("import sys, numpy as np\n"
            "sys.modules['minigrad.course.checks.judges'] = None\n"
            "sys.modules['minigrad.course.demos'] = None\n"
            "from minigrad.course import exercise_cells, read_notebook\n"
            "import importlib, inspect\nran = []\n"
            "for n, stem in ((1, '01_from_scalars_to_tensors'), "
            "(2, '02_matmul_reductions_broadcasting'), (3, '03_parameters_modules_optimizer'), "
            "(4, '04_train_and_check')):\n"
            "    module = importlib.import_module(f'minigrad.course.checks.lesson{n}')\n"
            "    ns = {'np': np, '__name__': '__main__'}\n"
            f"    nb = read_notebook('{ROOT}/solutions/' + stem + '.ipynb')\n"
            "    for cell in nb['cells']:\n"
            "        if cell['cell_type'] == 'code' and 'import' in cell['source'] and "
            "'checks' in cell['source']:\n"
            "            exec(cell['source'].replace('from minigrad.course.demos import', "
            "'yours_or_reference = reference = None #'), ns)\n"
            "            break\n"
            "    for cell in exercise_cells(nb).values():\n"
            "        exec(cell.source, ns)\n"
            "    for check in [v for v in vars(module).values() if callable(v) and "
            "getattr(v, 'exercise_id', None) and getattr(v, 'split', None)]:\n"
            "        split = check.split\n"
            "        names = list(inspect.signature(check).parameters)\n"
            "        if not all(name in ns for name in names):\n"
            "            continue\n"
            "        split.run(split.probe(np.random.default_rng(5)), *(ns[k] for k in names))\n"
            "        ran.append(check.exercise_id)\n"
            "    assert 'minigrad.course.checks.judges.lesson%d' % n not in sys.modules\n"
            "print('ran without judges', sorted(set(ran)))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, cwd=str(ROOT))
    assert "ran without judges" in done.stdout, done.stderr[-3000:]
    ran = done.stdout.split("ran without judges")[1]
    for lesson in (1, 2, 3, 4):   # every exercise of every lesson
        from minigrad.course.checks import exercises
        for exercise in exercises(lesson):
            assert repr(exercise) in ran, (exercise, ran)

"""The tamper suite for lessons 2, 3 and 4: attacks graded next to honest students.

As tests/course/grading/test_grading_tamper.py does for lesson 1: each attack is its own student, with one
notebook per lesson it attacks, graded next to an honest full-marks student and an honest
unsolved one (both with all three lessons). The class is graded with ``--jobs 2``, then one
attacker again as a ``--student`` regrade (few grader runs: CI budget). For each: no attack
scores beyond its honest score (0: it solves nothing), no other row changes, the submissions
folder and an unrelated file are unchanged, no secret of the grader's environment reaches a
report file, and no process of the run is alive afterwards.

The attacks forge what the in-notebook checks report (IPython hooks, an input transformer,
shadowed builtins), replace the checks (``sys.modules``, a package of one's own first on
``__path__``, the checks' helpers ``passed``/``fail``/``assert_close``), patch NumPy's
comparisons, write forged records into the driver's channel, return NaN wherever a number is
expected (a judge that tests ``loss > previous`` would let NaN through), and, for lesson 4,
replay the values of the notebook's own cases without computing anything: that passes the
check in the notebook (shown here) and nothing in the grader, whose inputs are secret.

Needs bubblewrap able to create namespaces; where it cannot, these tests skip and say why.
"""
from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

import minigrad
from minigrad import functional as F
from minigrad import nn, optim
from minigrad.course import exercise_cells, read_notebook
from minigrad.course.grading import sandbox
from minigrad.course.grading.lessons import cell_ids
from tests.course.grading.test_grading_tamper import _alive, _hashes, grade, write_class

ROOT = Path(__file__).resolve().parents[3]
LESSONS = {2: "02_matmul_reductions_broadcasting", 3: "03_parameters_modules_optimizer",
           4: "04_train_and_check"}
SECRET = "hunter2-minigrad-tamper-lessons-secret-1b7e"
MARKER = "minigrad-tamper-lessons-linger-3f9a"

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    sandbox.available() is not None, reason=f"no sandbox here: {sandbox.available()}")]


def _released(number: int) -> nbformat.NotebookNode:
    return nbformat.read(ROOT / "minigrad" / "course" / "released" / f"{LESSONS[number]}.ipynb",
                         as_version=4)


def _checks(number: int):
    return importlib.import_module(f"minigrad.course.checks.lesson{number}")


def _check_names(number: int) -> list[str]:
    """The names of the lesson's check functions (``checks.lessonN.<name>(...)``)."""
    module = _checks(number)
    return [name for name, value in vars(module).items()
            if callable(value) and getattr(value, "exercise_id", None)]


def _points(number: int) -> float:
    return float(sum(e["points"] for e in _checks(number).EXERCISES.values()))


def _attack(number: int, code: str, every: bool = False) -> nbformat.NotebookNode:
    """The released (unsolved) lesson with ``code`` as its first exercise cell (or all)."""
    notebook = _released(number)
    first = True
    for cell in notebook.cells:
        if cell_ids(cell, "exercise") and (first or every):
            cell.source = code
            first = False
    return notebook


# --- the attacks -------------------------------------------------------------------------------


def _forges_hooks(number: int) -> str:
    return ("import builtins\nip = get_ipython()\n"
            "ip.events.register('post_run_cell', lambda result: print('\u2713 passed'))\n"
            "ip.events.register('pre_run_cell', lambda info: None)\n"
            "ip.input_transformers_cleanup.append(lambda lines: ['print(\"\u2713\")\\n'] "
            "if any('checks.' in line for line in lines) else lines)\n"
            "ip.ast_transformers.append(type('T', (__import__('ast').NodeTransformer,), {}))\n"
            "ip.showtraceback = lambda *a, **k: print('\u2713 passed')\n"
            "ip.run_cell_magic = lambda *a, **k: None\n")


def _shadows_builtins(number: int) -> str:
    """Builtins that the grader's code inside the sandbox uses (this may stop the driver)."""
    return ("import builtins\n"
            "_real = builtins.isinstance\n"
            "builtins.isinstance = lambda obj, cls: True if 'Check' in str(cls) else "
            "_real(obj, cls)\n"
            "builtins.exec = lambda *args, **kwargs: None\n"
            "builtins.compile = lambda *args, **kwargs: compile('pass', '<x>', 'exec')\n"
            "builtins.print = lambda *a, **k: None\n")


def _replaces_checks(number: int) -> str:
    names = " ".join(_check_names(number))
    return (
        "import os, sys, types, minigrad, minigrad.course\n"
        "os.makedirs('/tmp/evil/checks', exist_ok=True)\n"
        "open('/tmp/evil/checks/__init__.py', 'w').write("
        "'class CheckFailed(Exception): pass\\ndef passed(*a, **k): return None\\n')\n"
        f"open('/tmp/evil/checks/lesson{number}.py', 'w').write('''\n"
        "EXERCISES = {}\n"
        "def _ok(*a, **k): return None\n"
        f"for _n in '{names}'.split():\n"
        "    globals()[_n] = _ok\n''')\n"
        "minigrad.course.__path__.insert(0, '/tmp/evil')\n"
        "sys.path.insert(0, '/tmp/evil')\n"
        "fake = types.ModuleType('minigrad.course.checks')\n"
        f"fake.lesson{number} = types.SimpleNamespace(**{{n: (lambda *a, **k: None) for n in "
        f"'{names}'.split()}})\n"
        "sys.modules['minigrad.course.checks'] = fake\n"
        f"sys.modules['minigrad.course.checks.lesson{number}'] = fake.lesson{number}\n"
        "minigrad.course.checks = fake\n")


def _patches_checks_and_numpy(number: int) -> str:
    return (
        "import numpy as np, numpy.testing\n"
        "from minigrad.course import checks as real\n"
        "import minigrad.course.checks as c\n"
        "for name in ('fail', 'mismatch', 'assert_close', 'require_student', 'received', "
        "'passed'):\n"
        "    setattr(c, name, lambda *a, **k: None)\n"
        "c.CheckFailed = type('Never', (Exception,), {})\n"
        f"import minigrad.course.checks.lesson{number} as mine\n"
        "for name, value in list(vars(mine).items()):\n"
        "    if callable(value) and getattr(value, 'exercise_id', None):\n"
        "        setattr(mine, name, lambda *a, **k: None)\n"
        "np.isclose = lambda *a, **k: np.True_\nnp.allclose = lambda *a, **k: True\n"
        "np.array_equal = lambda *a, **k: True\n"
        "np.testing.assert_allclose = lambda *a, **k: None\n"
        "try:\n"
        "    np.ndarray.__eq__ = lambda *a: True\n"
        "except TypeError:\n"
        "    pass\n")


def _forges_channel(number: int) -> str:
    return (
        "import os, json\n"
        "junk = {'outputs': [], 'cases': [], 'losses': [0.1] * 8, 'gradients': {}}\n"
        "for fd in range(3, 64):\n"
        "    try:\n"
        "        if 'pipe' not in os.readlink(f'/proc/self/fd/{fd}'):\n"
        "            continue\n"
        "        for step in range(120):\n"
        "            os.write(fd, (json.dumps({'step': step, 'status': 'ok', 'seconds': 0, "
        "'check': {'kind': 'self-reported', 'passed': True}}) + '\\n').encode())\n"
        "            os.write(fd, (json.dumps({'step': step, 'status': 'ok', 'check': "
        "{'kind': 'outputs', 'outputs': junk}}) + '\\n').encode())\n"
        "            os.write(fd, (json.dumps({'step': step, 'status': 'ok', 'check': "
        "{'kind': 'passed', 'passed': True, 'message': 'ok'}}) + '\\n').encode())\n"
        "    except OSError:\n"
        "        pass\n"
        "import subprocess\n"
        f"subprocess.Popen(['setsid', 'sh', '-c', 'sleep 120; echo {MARKER}'])\n"
        "raise RuntimeError(f'environment: {dict(os.environ)}')\n")


def _plants_for_the_next(number: int) -> str:
    """Leave files that would break (or run code in) whoever is graded next in this job, if
    anything of a notebook outlived it: /tmp is the driver's folder, first on sys.path."""
    return (
        "import os\n"
        "for name in ('sitecustomize', 'usercustomize', 'tracemalloc', 'weakref', 'gc_tools'):\n"
        "    open(f'/tmp/{name}.py', 'w').write('raise SystemExit(3)')\n"
        "os.makedirs('/tmp/.ipython/profile_default/startup', exist_ok=True)\n"
        "open('/tmp/.ipython/profile_default/startup/00.py', 'w').write('raise SystemExit(3)')\n"
        "os.makedirs('/tmp/.matplotlib', exist_ok=True)\n"
        "open('/tmp/.matplotlib/matplotlibrc', 'w').write('backend: no_such_backend\\n')\n"
        "open('/dev/shm/planted', 'w').write('x')\n")


NAN_2 = '''import numpy as np
from minigrad import op
nan = float("nan")

def _nan_node(shape, parents):
    return op(np.full(shape, nan), parents, lambda g, *saved: tuple(
        np.full(p.shape, nan) for p in parents), name="nan")

def matmul(a, b):
    return _nan_node((a.shape[0], b.shape[1]), (a, b))

def sum(x, axis=None, keepdims=False):
    return _nan_node(np.sum(np.zeros(x.shape), axis=axis, keepdims=keepdims).shape, (x,))

def reshape(x, shape):
    return _nan_node(np.zeros(x.shape).reshape(shape).shape, (x,))

def transpose(x, axes=None):
    return _nan_node(np.transpose(np.zeros(x.shape), axes).shape, (x,))

def unbroadcast(grad, shape):
    return np.full(shape, nan)

def cross_entropy(logits, targets):
    return _nan_node((), (logits,))
'''

NAN_4 = '''import numpy as np
nan = float("nan")

class _Nan(nn.Module):
    def __init__(self, outputs):
        super().__init__()
        self.outputs = outputs

    def forward(self, x):
        return Tensor(np.full((np.asarray(x.data).shape[0], self.outputs), nan))

def network(W1, b1, W2, b2):
    return _Nan(W2.shape[0])

def hand_gradients(x, t, W1, b1, W2, b2):
    return {"W1": np.full(W1.shape, nan), "b1": np.full(b1.shape, nan),
            "W2": np.full(W2.shape, nan), "b2": np.full(b2.shape, nan)}

def train(model, X, y, steps, lr):
    for p in model.parameters():
        p.data = np.full(p.data.shape, nan)
    return [nan] * steps
'''


def _solution_namespace() -> dict:
    """Lesson 4's reference exercise cells, run here with the names the lesson imports."""
    ns: dict = {"np": np, "nn": nn, "optim": optim, "F": F, "Tensor": minigrad.Tensor,
                "__name__": "__main__"}
    cells = exercise_cells(read_notebook(ROOT / "solutions" / f"{LESSONS[4]}.ipynb"))
    for cell in cells.values():
        exec(compile(cell.source, "<exercise>", "exec"), ns)
    return ns


def _key(x, t) -> str:
    return repr((np.round(np.asarray(x, dtype=np.float64), 9).tolist(), int(t)))


def _memorizer() -> str:
    """Lesson 4's 4.2 and 4.3 as a table of the notebook's own cases: no computing at all."""
    L4 = _checks(4)
    ns = _solution_namespace()
    table = {}

    def recording(x, t, W1, b1, W2, b2):
        got = ns["hand_gradients"](x, t, W1, b1, W2, b2)
        table[_key(x, t)] = {k: np.asarray(v).tolist() for k, v in got.items()}
        return got

    recording.__module__ = "__main__"
    L4.hand_gradients.split.run(L4.hand_gradients.split.probe(None), recording)
    probes = L4.train_loop.split.probe(None)
    trained = L4.train_loop.split.run(probes, ns["train"])
    losses = [float(v) for v in trained["losses"]]
    params = {k: np.asarray(v).tolist() for k, v in trained["parameters"].items()}
    return (
        "import numpy as np\n"
        f"TABLE = {table!r}\n"
        f"LOSSES = {losses!r}\n"
        f"PARAMS = {params!r}\n"
        "def _key(x, t):\n"
        "    return repr((np.round(np.asarray(x, dtype=np.float64), 9).tolist(), int(t)))\n"
        "def hand_gradients(x, t, W1, b1, W2, b2):\n"
        "    return {k: np.array(v) for k, v in TABLE[_key(x, t)].items()}\n"
        "def train(model, X, y, steps, lr):\n"
        "    model.load_state_dict({k: np.array(v) for k, v in PARAMS.items()})\n"
        "    return list(LOSSES)\n")


def test_the_memorizer_would_fool_a_check_run_in_the_notebook():
    """Replaying the notebook's cases passes the checks as a notebook runs them: only the
    grader's secret probes tell it from real work."""
    ns: dict = {"np": np, "nn": nn, "Tensor": minigrad.Tensor, "__name__": "__main__"}
    exec(compile(_memorizer(), "<attack>", "exec"), ns)
    L4 = _checks(4)
    L4.hand_gradients(ns["hand_gradients"])   # raises CheckFailed (MINIGRAD_CHECKS_RAISE) if not
    L4.train_loop(ns["train"])


#: Wrong but working exercises, put in front of the forging attacks: the checks' run parts
#: then get functions to call and send back values (wrong ones), so the forging is what is
#: tested, not a NameError. (Lesson 3's exercises are classes: its attacks run unsolved.)
STUBS = {2: NAN_2.replace('nan = float("nan")', "nan = 0.0"),
         4: NAN_4.replace('nan = float("nan")', "nan = 0.0")}


def _forging(number: int, code: str) -> nbformat.NotebookNode:
    return _attack(number, STUBS.get(number, "") + "\n" + code, every=number in STUBS)


ATTACKS = {
    "forges_hooks": {n: lambda n=n: _forging(n, _forges_hooks(n)) for n in LESSONS},
    "shadows_builtins": {n: lambda n=n: _forging(n, _shadows_builtins(n)) for n in LESSONS},
    "replaces_checks": {n: lambda n=n: _forging(n, _replaces_checks(n)) for n in LESSONS},
    "patches_checks": {n: lambda n=n: _forging(n, _patches_checks_and_numpy(n))
                       for n in LESSONS},
    "forges_channel": {n: lambda n=n: _forging(n, _forges_channel(n)) for n in LESSONS},
    # (named to be graded just before the honest students, sorted by name: its plants would
    # reach them if a notebook's /tmp outlived it; forges_channel, graded earlier, makes the
    # grader end its zygote, which would wash the plants away)
    "gardener": {n: lambda n=n: _attack(n, _plants_for_the_next(n)) for n in LESSONS},
    "returns_nan": {2: lambda: _attack(2, NAN_2, every=True),
                    4: lambda: _attack(4, NAN_4, every=True)},
    "memorizes": {4: lambda: _attack(4, _memorizer(), every=True)},
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The class graded with --jobs 2, then one attacker regraded with --student."""
    base = tmp_path_factory.mktemp("tamper-lessons")
    submissions, report = base / "submissions", base / "report"
    report.mkdir()
    unrelated = base / "unrelated.txt"
    unrelated.write_text("an instructor's file\n")
    notebooks: dict[str, dict[int, nbformat.NotebookNode]] = {
        "honest_full": {n: nbformat.read(ROOT / "solutions" / f"{key}.ipynb", as_version=4)
                        for n, key in LESSONS.items()},
        "honest_unsolved": {n: _released(n) for n in LESSONS},
        **{student: {n: make() for n, make in lessons.items()}
           for student, lessons in ATTACKS.items()},
    }
    write_class(submissions, {student: {LESSONS[n]: nb for n, nb in lessons.items()}
                              for student, lessons in notebooks.items()})
    before = _hashes(submissions), unrelated.read_bytes()
    os.environ["MINIGRAD_TAMPER_SECRET"] = SECRET
    runs, texts, handed = {}, {}, {}
    try:
        runs["jobs2"], texts["jobs2"], handed["jobs2"] = grade(submissions, report, "--jobs", "2")
        runs["regrade"], texts["regrade"], handed["regrade"] = grade(
            submissions, report, "--student", "forges_channel")
        grades = json.loads((report / "grades.json").read_text())
    finally:
        os.environ.pop("MINIGRAD_TAMPER_SECRET", None)
    return {"runs": runs, "texts": texts, "handed": handed, "base": base, "before": before,
            "submissions": submissions, "unrelated": unrelated, "report": report,
            "notebooks": notebooks, "grades": grades}


def _lesson_scores(graded, student: str) -> dict[int, float]:
    return {n: nb["score"] for nb in graded["grades"]["notebooks"] if nb["student"] == student
            for n, key in LESSONS.items() if nb["lesson"] == key}


def test_every_exercise_of_lessons_2_to_4_is_split_and_judged_in_the_grader(graded):
    """Strict: an unsplit check would report its own verdict, which these attacks forge."""
    for nb in graded["grades"]["notebooks"]:
        for exercise in nb["exercises"]:
            for check in exercise["checks"]:
                assert check["self_reported"] != "the whole check (it has no split)", (
                    nb["lesson"], exercise["exercise"])


def test_honest_students_get_their_scores(graded):
    assert _lesson_scores(graded, "honest_full") == {n: _points(n) for n in LESSONS}
    assert _lesson_scores(graded, "honest_unsolved") == {n: 0.0 for n in LESSONS}
    for name, rows in graded["runs"].items():
        assert float(rows["honest_full"]["total"]) == sum(_points(n) for n in LESSONS), name
        assert float(rows["honest_unsolved"]["total"]) == 0, name


@pytest.mark.parametrize("student", list(ATTACKS))
def test_no_attack_scores(graded, student):
    scores = _lesson_scores(graded, student)
    assert set(scores) == set(ATTACKS[student]), scores
    assert scores == {n: 0.0 for n in ATTACKS[student]}, (student, scores)
    for name, rows in graded["runs"].items():
        assert float(rows[student]["total"]) == 0, (name, student, rows[student])


def test_a_regrade_changes_no_other_row(graded):
    before, after = graded["runs"]["jobs2"], graded["runs"]["regrade"]
    assert set(before) == set(after) == set(graded["notebooks"])
    for student in before:
        assert before[student] == after[student] or student == "forges_channel", student


def test_nothing_outside_the_sandbox_changed(graded):
    hashes, unrelated = graded["before"]
    assert _hashes(graded["submissions"]) == hashes
    assert graded["unrelated"].read_bytes() == unrelated
    for number in LESSONS:
        source = (ROOT / "minigrad" / "course" / "checks" / f"lesson{number}.py").read_text()
        assert "_ok(*a, **k)" not in source


def test_no_secret_and_no_machine_path_in_any_report(graded):
    for name, text in graded["texts"].items():
        assert SECRET not in text and "MINIGRAD_TAMPER_SECRET" not in text, name
    for name, text in graded["handed"].items():
        assert str(ROOT) not in text and str(graded["base"]) not in text, name


def test_no_process_outlived_the_run(graded):
    assert _alive(MARKER) == []


def test_replaced_checks_are_reported(graded):
    issues = {(nb["student"], nb["lesson"]): {i["kind"] for i in nb["issues"]}
              for nb in graded["grades"]["notebooks"]}
    for number, key in LESSONS.items():
        assert "patched checks" in issues[("replaces_checks", key)], key
        assert "patched checks" in issues[("patches_checks", key)], key

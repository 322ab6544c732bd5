"""Running submissions: one fresh kernel per notebook, the released checks, time limits.

For each submission the grader

1. reads the file's bytes once (it never opens a submission for writing), and identifies the
   lesson (:mod:`.submissions`);
2. assembles the notebook to run: the released lesson with the student's exercise cells in
   place, ``demo`` cells left out, and each check cell replaced by a run of the *released* check
   (:mod:`._in_kernel`): the checks package is imported afresh right before it, so nothing a
   notebook cell did to ``minigrad.course.checks`` counts;
3. starts a fresh kernel (nbclient, in a temporary working folder, with this Python and this
   ``minigrad``) and runs the steps in order, errors allowed. Each cell or check has a time
   limit (interrupted when it passes it) and the whole notebook has one too; a kernel that does
   not answer an interrupt is killed with its whole process group. Output is counted, not kept;
4. scores each exercise from its checks with the weights in ``minigrad.course.checks.lessonN.EXERCISES``.

A notebook that raises, loops, floods its output, crashes its kernel, or is not a notebook at
all gets a grade that says what happened; the batch goes on. No kernel outlives its notebook.

The checks run where the released lesson has them, not all at the end: each sees the student's
objects as the student saw them when running the notebook top to bottom, and a later cell
that rebinds a name (``from minigrad import matmul``, say) cannot change an earlier verdict.
"""
from __future__ import annotations

import concurrent.futures
import dataclasses
import json
import logging
import math
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import nbformat
from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import DeadKernelError

from .lessons import CHECKS_ALIAS, ReleasedLesson, load_lessons
from .results import (CheckOutcome, ExerciseGrade, Gradebook, Issue, LessonSummary,
                      NotebookGrade)
from .submissions import (Assembly, Step, Submission, UnreadableNotebook, assemble,
                          find_submissions, identify, read_notebook, sha256)

__all__ = ["GradingOptions", "grade", "grade_submission", "run_assembly", "GraderError"]

_IN_KERNEL = (Path(__file__).with_name("_in_kernel.py")).read_text(encoding="utf-8")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_QUIET = logging.getLogger("minigrad.course.grading.kernel")  # nbclient's complaints: we report them
_QUIET.addHandler(logging.NullHandler())
_QUIET.propagate = False


class GraderError(RuntimeError):
    """The grader itself cannot run (no released lessons, no kernel, nothing to grade)."""


@dataclass
class GradingOptions:
    """How to run submissions.

    Parameters
    ----------
    cell_timeout : float
        Seconds one cell, or one check, may run before it is interrupted.
    notebook_timeout : float
        Seconds all of a notebook's cells and checks together may run; what comes after is
        skipped (the checks run in place, so those of earlier exercises have run by then).
    interrupt_grace : float
        Seconds a kernel gets to answer an interrupt before its process group is killed.
    startup_timeout : float
        Seconds a kernel may take to start.
    max_output : int
        Characters of printed output a notebook may produce before the grader reports it
        (printed output is counted, never stored).
    message_chars : int
        The longest check message, traceback or check output kept in the report.
    python_path : sequence of paths
        Folders put in front of the kernel's ``PYTHONPATH`` (e.g. for a test's checks package).
        This ``minigrad`` is always importable in the kernel.
    kernel_threads : int, optional
        BLAS/OpenMP threads per kernel (``OMP_NUM_THREADS`` and friends, where not set
        already). :func:`grade` sets it to the cores per job when ``jobs > 1``.
    """

    cell_timeout: float = 60.0
    notebook_timeout: float = 600.0
    interrupt_grace: float = 5.0
    startup_timeout: float = 60.0
    max_output: int = 1_000_000
    message_chars: int = 4000
    python_path: Sequence[str | os.PathLike[str]] = ()
    kernel_threads: int | None = None


# ---------------------------------------------------------------------------------------------
# The kernel: this Python, its process group, a watchdog


class _ThisPython(KernelSpecManager):
    """Kernel specs that always start ipykernel on the grader's own interpreter.

    An installed ``python3`` kernel spec may point to another environment, without this
    ``minigrad``; the grader must run the notebooks with the code it grades against.
    """

    def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
        return KernelSpec(argv=[sys.executable, "-m", "ipykernel_launcher", "-f",
                                "{connection_file}"],
                          display_name="Python 3 (minigrad grader)", language="python",
                          metadata={})


def _kill_group(pgid: int | None) -> None:
    if not pgid or pgid == os.getpgid(0):
        return  # never our own group
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class _Watchdog:
    """Kills a kernel's process group when an armed deadline passes."""

    def __init__(self, pgid: int | None) -> None:
        self.pgid = pgid
        self.fired = False
        self._deadline: float | None = None
        self._stopped = False
        self._condition = threading.Condition()
        self._thread = threading.Thread(target=self._watch, name="minigrad-grade-watchdog",
                                        daemon=True)
        self._thread.start()

    def arm(self, seconds: float) -> None:
        with self._condition:
            self._deadline = time.monotonic() + seconds
            self._condition.notify()

    def disarm(self) -> None:
        with self._condition:
            self._deadline = None
            self._condition.notify()

    def stop(self) -> None:
        with self._condition:
            self._stopped = True
            self._condition.notify()
        self._thread.join()

    def _watch(self) -> None:
        with self._condition:
            while not self._stopped:
                if self._deadline is None:
                    self._condition.wait()
                    continue
                left = self._deadline - time.monotonic()
                if left > 0:
                    self._condition.wait(left)
                    continue
                _kill_group(self.pgid)
                self.fired = True
                self._deadline = None


class _LiveKernels:
    """The process groups of running kernels, so an interrupted grader can kill them all."""

    def __init__(self) -> None:
        self._groups: set[int] = set()
        self._lock = threading.Lock()
        self.cancelled = threading.Event()

    def add(self, pgid: int | None) -> None:
        if pgid:
            with self._lock:
                self._groups.add(pgid)
            if self.cancelled.is_set():
                _kill_group(pgid)

    def discard(self, pgid: int | None) -> None:
        with self._lock:
            self._groups.discard(pgid)  # type: ignore[arg-type]

    def kill_all(self) -> None:
        self.cancelled.set()
        with self._lock:
            groups = list(self._groups)
        for pgid in groups:
            _kill_group(pgid)


_LIVE = _LiveKernels()


class _GraderClient(NotebookClient):
    """An nbclient that counts printed output instead of storing it, and keeps errors."""

    def __init__(self, nb: nbformat.NotebookNode, **kw: Any) -> None:
        super().__init__(nb, **kw)
        self.output_chars = 0
        self.errors: dict[int, dict[str, Any]] = {}

    def output(self, outs: list, msg: dict[str, Any], display_id: str | None,
               cell_index: int) -> None:
        content = msg.get("content", {})
        kind = msg.get("msg_type")
        if kind == "stream":
            self.output_chars += len(content.get("text", ""))
        elif kind == "error":
            self.errors[cell_index] = content
        elif kind in ("display_data", "execute_result"):
            self.output_chars += sum(len(str(v)) for v in content.get("data", {}).values())


def _kernel_env(options: GradingOptions) -> dict[str, str]:
    env = dict(os.environ)
    here = str(Path(__file__).resolve().parents[2])  # the folder that holds this minigrad
    inherited = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    # the kernel runs in a temporary folder: relative entries must mean what they mean here
    paths = [os.path.abspath(p) for p in [*map(str, options.python_path), here, *inherited]]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    env["MPLBACKEND"] = "Agg"                     # figures are drawn, never shown
    env["MINIGRAD_CHECKS_RAISE"] = "1"            # a failing check raises: the grader sees it
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"   # keep the debugger quiet
    env.pop("JUPYTER_PLATFORM_DIRS", None)
    if options.kernel_threads:
        for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env.setdefault(name, str(options.kernel_threads))
    return env


# ---------------------------------------------------------------------------------------------
# Running one assembled notebook


@dataclass
class StepResult:
    """What happened when one step ran."""

    status: str          # "ok", "error", "timeout", "skipped", "not run"
    error: str = ""      # "NameError: name 'x' is not defined", with the traceback's tail
    seconds: float = 0.0


@dataclass
class Execution:
    """Everything a run of an assembly produced."""

    steps: list[StepResult]
    checks: dict[int, dict[str, Any]]       # step index -> the record the check wrote
    issues: list[Issue] = field(default_factory=list)
    output_chars: int = 0
    kernel_log: str = ""


def _check_code(step: Step, index: int, lesson: ReleasedLesson, results: Path,
                options: GradingOptions) -> str:
    args = {"step": index, "check": step.exercise, "source": step.source,
            "package": lesson.checks_package, "lesson_module": lesson.checks_module,
            "alias": CHECKS_ALIAS, "results": str(results), "max_chars": options.message_chars}
    return (f"exec(compile({_IN_KERNEL!r}, '<minigrad grader>', 'exec'), "
            f"{{'__name__': '__minigrad_grader__', 'ARGS': {args!r}}})")


def _error_text(content: Mapping[str, Any], limit: int) -> str:
    head = f"{content.get('ename', 'Error')}: {content.get('evalue', '')}".rstrip(": ")
    lines = _ANSI.sub("", "\n".join(content.get("traceback", []))).strip().splitlines()
    tail = "\n".join(lines[-12:])
    return (f"{head}\n{tail}" if tail else head)[:limit]


def _first_line(source: str) -> str:
    lines = [line.strip() for line in source.splitlines() if line.strip()]
    return lines[0][:60] if lines else ""


def run_assembly(assembly: Assembly, lesson: ReleasedLesson,
                 options: GradingOptions | None = None) -> Execution:
    """Run an assembled notebook in a fresh kernel and collect what each step did.

    The steps run in order: each cell as it is, each check (in its released place) through
    :mod:`._in_kernel`, which reloads the checks first. Each step has ``cell_timeout`` and
    all of them together ``notebook_timeout``.

    Never raises for anything the notebook does; a kernel that cannot start is reported as an
    issue of kind ``"grader"``.
    """
    options = options or GradingOptions()
    steps = assembly.steps
    results: list[StepResult] = [StepResult("not run") for _ in steps]
    execution = Execution(steps=results, checks={})
    workdir = Path(tempfile.mkdtemp(prefix="minigrad-grade-"))
    checks_file = workdir / ".minigrad-checks.jsonl"
    cells = [nbformat.v4.new_code_cell(
        _check_code(step, i, lesson, checks_file, options) if step.kind == "check" else step.source)
        for i, step in enumerate(steps)]
    client = _GraderClient(nbformat.v4.new_notebook(cells=cells),
                           km=AsyncKernelManager(kernel_name="python3",
                                                 kernel_spec_manager=_ThisPython()),
                           allow_errors=True, interrupt_on_timeout=True,
                           shutdown_kernel="immediate", log=_QUIET, startup_timeout=math.ceil(
                               options.startup_timeout), iopub_timeout=10, record_timing=False)
    watchdog: _Watchdog | None = None
    pgid = None
    log = open(workdir / "kernel.log", "wb")
    try:
        try:
            with client.setup_kernel(env=_kernel_env(options), cwd=str(workdir), stdout=log,
                                     stderr=log):
                pgid = client.km.provisioner.pgid  # type: ignore[union-attr]
                _LIVE.add(pgid)
                watchdog = _Watchdog(pgid)
                _run_steps(client, steps, results, watchdog, options, execution)
        except DeadKernelError:
            pass  # reported by _run_steps
        except Exception as exc:  # the kernel could not start: the grader's problem, not theirs
            if pgid is None:
                execution.issues.append(Issue("grader", f"the grader could not start a kernel: "
                                              f"{type(exc).__name__}: {exc}"))
            else:
                execution.issues.append(Issue("grader", f"the grader lost the kernel: "
                                              f"{type(exc).__name__}: {exc}"))
    finally:
        if watchdog is not None:
            watchdog.stop()
        _kill_group(pgid)   # anything the notebook started in the kernel's group goes too
        _LIVE.discard(pgid)
        log.close()
        execution.output_chars = client.output_chars
        log_lines = (workdir / "kernel.log").read_text("utf-8", "replace").splitlines()
        execution.kernel_log = "\n".join(line for line in log_lines[-200:] if line.strip()
                                         and not line.startswith("[IPKernelApp]"))[-1000:]
        if checks_file.exists():
            for line in checks_file.read_text("utf-8", "replace").splitlines():
                try:
                    record = json.loads(line)
                    execution.checks[int(record["step"])] = record
                except (ValueError, KeyError, TypeError):
                    continue
        shutil.rmtree(workdir, ignore_errors=True)
    if execution.kernel_log and any(i.kind == "kernel died" for i in execution.issues):
        execution.issues.append(Issue("kernel died", "the kernel's last words: "
                                      + execution.kernel_log[-500:]))
    if execution.output_chars > options.max_output:
        execution.issues.append(Issue("output", f"the notebook printed "
                                      f"{execution.output_chars / 1e6:.1f} million characters; "
                                      "the grader counts output but keeps none of it"))
    return execution


def _exit_status(client: NotebookClient) -> str:
    """How the kernel process ended: its exit status, or the signal that killed it."""
    process = getattr(getattr(client.km, "provisioner", None), "process", None)
    code = process.poll() if process is not None else None
    if code is None:
        return "it crashed, or the code exited it"
    if code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def _run_steps(client: _GraderClient, steps: list[Step], results: list[StepResult],
               watchdog: _Watchdog, options: GradingOptions, execution: Execution) -> None:
    deadline = time.monotonic() + options.notebook_timeout
    for index, step in enumerate(steps):
        if _LIVE.cancelled.is_set():
            return
        left = deadline - time.monotonic()
        if left <= 0:
            execution.issues.append(Issue("timeout", f"the notebook ran past its "
                                          f"{options.notebook_timeout:g} s limit; from "
                                          f"{step.label} on, nothing ran"))
            for result in results[index:]:
                result.status = "skipped"
            return
        client.timeout = max(1, math.ceil(min(options.cell_timeout, left)))
        watchdog.arm(client.timeout + options.interrupt_grace)
        start = time.monotonic()
        try:
            client.execute_cell(client.nb.cells[index], index,
                                store_history=step.kind == "cell")
        except DeadKernelError:
            result = results[index]
            result.seconds = time.monotonic() - start
            if watchdog.fired:
                result.status = "timeout"
                result.error = (f"timed out after {client.timeout} s, did not answer the "
                                "interrupt, and its kernel was killed")
                why = (f"it did not answer an interrupt after {step.label} ran past its "
                       f"{client.timeout} s limit, so it was killed")
            else:
                result.status = "error"
                result.error = "the kernel died while it ran (did the code exit or crash?)"
                why = f"it stopped while running {step.label} ({_exit_status(client)})"
            execution.issues.append(Issue("kernel died", f"the kernel died: {why}; the "
                                          "steps after it did not run"))
            raise
        finally:
            watchdog.disarm()
        seconds = time.monotonic() - start
        result = results[index]
        result.seconds = seconds
        error = client.errors.get(index)
        if seconds >= client.timeout:  # nbclient interrupted it when the limit passed
            result.status = "timeout"
            result.error = f"timed out after {client.timeout} s and was interrupted"
            what = step.label if step.kind == "check" else \
                f"{step.label} (`{_first_line(step.source)}`)"
            execution.issues.append(Issue("timeout", f"{what} ran past {client.timeout} s "
                                          "and was interrupted"))
        elif error is not None:
            result.status = "error"
            result.error = _error_text(error, options.message_chars)
        else:
            result.status = "ok"


# ---------------------------------------------------------------------------------------------
# Grading one submission


def _check_outcome(step: Step, index: int, execution: Execution) -> CheckOutcome:
    exercise = step.exercise or ""
    record = execution.checks.get(index)
    result = execution.steps[index]
    if result.status == "timeout":
        return CheckOutcome(exercise, False, "timeout",
                            f"the check {result.error}: does your code loop forever?",
                            where=str((record or {}).get("where", "")), seconds=result.seconds)
    if record is None:
        why = {"not run": "the kernel had stopped before it",
               "skipped": "the notebook's time limit had passed"}.get(
            result.status, result.error or "it did not report")
        return CheckOutcome(exercise, False, "not run", f"the check did not run: {why}")
    return CheckOutcome(exercise, bool(record.get("passed")), str(record.get("kind", "error")),
                        str(record.get("message", "")), str(record.get("where", "")),
                        str(record.get("output", "")), float(record.get("seconds", 0.0)))


def _exercise_grades(lesson: ReleasedLesson, assembly: Assembly,
                     execution: Execution | None, unreadable: str = "") -> list[ExerciseGrade]:
    """Score each exercise of the lesson from its checks' outcomes (all 0 when unreadable)."""
    grades = []
    for exercise_id, info in lesson.exercises.items():
        checks = [] if execution is None else [
            _check_outcome(step, i, execution) for i, step in enumerate(assembly.steps)
            if step.kind == "check" and step.exercise == exercise_id]
        passed = bool(checks) and all(check.passed for check in checks)
        if unreadable:
            status, message = "not graded", f"not graded: {unreadable}"
        elif exercise_id not in assembly.attempted:
            status = "not attempted"
            message = "not attempted: the exercise cell still holds the released placeholder"
            if passed:
                message += " (its check passed anyway: tell the lesson's author)"
        elif passed:
            status = "passed"
            message = "\n".join(check.output.strip() for check in checks if check.output.strip())
        else:
            status = "failed"
            failed = [check for check in checks if not check.passed]
            message = "\n".join(
                (f"{check.message}\n({check.where})" if check.where else check.message)
                for check in failed)
        points = info["points"] if status == "passed" else 0
        grades.append(ExerciseGrade(exercise_id, info["title"], points, info["points"], status,
                                    message, checks))
    return grades


def grade_submission(submission: Submission, lessons: Mapping[int, ReleasedLesson],
                     options: GradingOptions | None = None) -> NotebookGrade:
    """Grade one notebook: read, identify, assemble, run, score. Never raises for a bad notebook."""
    options = options or GradingOptions()
    start = time.monotonic()
    try:
        data = submission.path.read_bytes()
    except OSError as exc:
        data, failure = b"", f"the file could not be read: {exc.strerror or exc}"
    else:
        failure = ""
    grade = NotebookGrade(student=submission.student, path=str(submission.path),
                          sha256=sha256(data), lesson=None, status="graded")
    try:
        if failure:
            raise UnreadableNotebook(failure)
        notebook = read_notebook(data)
    except UnreadableNotebook as exc:
        notebook = None
        grade.status = "unreadable"
        grade.issues.append(Issue("unreadable", str(exc)))
    lesson, issues = identify(notebook, submission, lessons)
    grade.issues += issues
    if lesson is None:
        grade.status = "unreadable" if notebook is None else "unidentified"
        grade.seconds = time.monotonic() - start
        return grade
    grade.lesson, grade.max_score = lesson.key, lesson.max_points
    execution = None
    if notebook is None:
        assembly = Assembly(steps=[])
    elif not notebook.get("cells") or any(i.kind == "wrong lesson" for i in grade.issues):
        assembly = Assembly(steps=[])  # nothing of this lesson in it: nothing to run
        grade.status = "not run"
        if not notebook.get("cells"):
            grade.issues.append(Issue("unreadable", "the notebook has no cells"))
    else:
        assembly = assemble(notebook, lesson)
        grade.issues += assembly.issues
        if assembly.attempted:
            execution = run_assembly(assembly, lesson, options)
            grade.issues += execution.issues
            grade.issues += _cell_errors(assembly, execution)
            grade.issues += _patches(execution)
            if any(issue.kind == "grader" for issue in execution.issues):
                grade.status = "error"
        else:
            grade.status = "not run"
    unreadable = grade.issues[0].text if notebook is None else ""
    grade.exercises = _exercise_grades(lesson, assembly, execution, unreadable)
    grade.score = float(sum(exercise.points for exercise in grade.exercises))
    grade.seconds = round(time.monotonic() - start, 3)
    return grade


def _cell_errors(assembly: Assembly, execution: Execution) -> list[Issue]:
    issues = []
    for step, result in zip(assembly.steps, execution.steps):
        if step.kind == "cell" and result.status == "error":
            where = step.label if step.exercise else \
                f"{step.label} (`{_first_line(step.source)}`)"
            issues.append(Issue("cell error", f"{where} raised {result.error}"))
    return issues


def _patches(execution: Execution) -> list[Issue]:
    replaced, suspicious = {}, {}
    for record in execution.checks.values():
        replaced.update(dict.fromkeys(record.get("replaced", [])))
        suspicious.update(dict.fromkeys(record.get("suspicious", [])))
    issues = []
    if replaced:
        issues.append(Issue("patched checks", "the notebook replaced " + ", ".join(replaced) +
                            "; the grader reloaded the checks, so this had no effect"))
    if suspicious:
        issues.append(Issue("patched engine", "the notebook replaced " + ", ".join(suspicious) +
                            " with code of its own; the grader did not undo this"))
    return issues


# ---------------------------------------------------------------------------------------------
# Grading a batch


def _grade_safely(submission: Submission, lessons: Mapping[int, ReleasedLesson],
                  options: GradingOptions) -> NotebookGrade:
    """:func:`grade_submission`, with a grader bug on one notebook becoming that notebook's row."""
    try:
        return grade_submission(submission, lessons, options)
    except Exception as exc:  # a bug of ours must not cost the rest of the batch
        return NotebookGrade(student=submission.student, path=str(submission.path), sha256="",
                             lesson=None, status="error",
                             issues=[Issue("grader", f"the grader failed on this notebook: "
                                           f"{type(exc).__name__}: {exc}")])


def _summaries(lessons: Mapping[int, ReleasedLesson]) -> list[LessonSummary]:
    return [LessonSummary(key=lesson.key, number=lesson.number, max_points=lesson.max_points,
                          digest=lesson.digest, exercises=dict(lesson.exercises))
            for lesson in sorted(lessons.values(), key=lambda lesson: lesson.number)]


def _mark_duplicates(notebooks: list[NotebookGrade]) -> None:
    by_lesson: dict[tuple[str, str], list[NotebookGrade]] = {}
    for notebook in notebooks:
        if notebook.lesson is not None:
            by_lesson.setdefault((notebook.student, notebook.lesson), []).append(notebook)
    for (student, lesson), group in by_lesson.items():
        if len(group) > 1:
            best = min(group, key=lambda n: (-n.score, n.path))
            for notebook in group:
                notebook.issues.append(Issue("duplicate", f"{student} handed in {len(group)} "
                                             f"notebooks for {lesson}; the best, "
                                             f"{Path(best.path).name}, counts"))


def grade(paths: Sequence[str | os.PathLike[str]], *, students: Sequence[str] | None = None,
          jobs: int = 1, released: str | os.PathLike[str] | None = None,
          checks_package: str | None = None, options: GradingOptions | None = None,
          progress: bool | None = False,
          on_graded: Callable[[NotebookGrade], None] | None = None) -> Gradebook:
    """Grade every notebook under ``paths`` against the released lessons.

    Parameters
    ----------
    paths : sequence of paths
        Notebooks and folders of them; see :mod:`minigrad.course.grading.submissions` for the layout.
    students : sequence of str, optional
        Grade only these students.
    jobs : int
        Notebooks graded at the same time, each in its own kernel.
    released : path, optional
        The folder of released lessons (default: the ones shipped with minigrad).
    checks_package : str, optional
        The package with the ``lessonN`` checks modules (default: ``minigrad.course.checks``).
    options : GradingOptions, optional
        Time limits and output caps.
    progress : bool or None
        Show a tqdm progress bar (None: only on a terminal).

    Returns
    -------
    Gradebook

    Raises
    ------
    GraderError
        When there is nothing to grade or no released lesson to grade against.
    """
    from .lessons import LessonError
    options = options or GradingOptions()
    try:
        lessons = load_lessons(released, checks_package)
    except LessonError as exc:
        raise GraderError(str(exc)) from exc
    try:
        submissions = find_submissions(paths, students)
    except FileNotFoundError as exc:
        raise GraderError(str(exc)) from exc
    if not submissions:
        who = f" from {', '.join(students)}" if students else ""
        raise GraderError(f"no notebooks{who} under {', '.join(map(str, paths))}")
    jobs = max(1, int(jobs))
    if options.kernel_threads is None and jobs > 1:
        options = dataclasses.replace(options,
                                      kernel_threads=max(1, (os.cpu_count() or 1) // jobs))
    from tqdm.auto import tqdm
    start = time.monotonic()
    graded: list[NotebookGrade] = []
    _LIVE.cancelled.clear()
    with tqdm(total=len(submissions), desc="grading", unit="notebook", disable=None if
              progress is None else not progress, leave=False) as bar:
        def done(result: NotebookGrade) -> None:
            graded.append(result)
            bar.set_postfix_str(f"{result.student}: {result.score:g}/{result.max_score:g}",
                                refresh=False)
            bar.update()
            if on_graded is not None:
                on_graded(result)

        if jobs == 1:
            try:
                for submission in submissions:
                    done(_grade_safely(submission, lessons, options))
            except KeyboardInterrupt:
                _LIVE.kill_all()
                raise
        else:
            pool = concurrent.futures.ThreadPoolExecutor(max_workers=jobs,
                                                         thread_name_prefix="minigrad-grade")
            try:
                futures = [pool.submit(_grade_safely, s, lessons, options)
                           for s in submissions]
                for future in concurrent.futures.as_completed(futures):
                    done(future.result())
            except BaseException:
                _LIVE.kill_all()
                pool.shutdown(wait=True, cancel_futures=True)
                raise
            pool.shutdown(wait=True)
    graded.sort(key=lambda n: (n.student, n.lesson or "~", n.path))
    _mark_duplicates(graded)
    return Gradebook(lessons=_summaries(lessons), notebooks=graded,
                     seconds=round(time.monotonic() - start, 2), jobs=jobs)

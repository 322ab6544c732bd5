"""Running submissions: one sandbox per notebook, the released checks, a judge in the grader.

For each submission the grader

1. reads the file's bytes once (it never opens a submission for writing), and identifies the
   lesson (:mod:`.submissions`);
2. assembles the notebook to run: the released lesson with the student's exercise cells in
   place, ``demo`` cells left out, and each check cell as released;
3. draws, for each check that is split into probe, run and judge
   (:class:`minigrad.course.checks.Split`), its probes from a secret seed, here;
4. runs the steps in order in a fresh sandbox (:mod:`.sandbox`, :mod:`.driver`; a fork of the
   job's warm :mod:`.zygote`, with namespaces and a ``/tmp`` of its own): each cell as
   it is, each check cell with ``checks`` bound so that the check's *run* part is applied to
   the probes. What comes back is plain data (:mod:`.protocol`). Each step has a time limit
   and the whole notebook has one too; output is counted, not kept;
5. *judges* what came back, here: the expected values never enter the student's process, and
   a submission scores only by producing correct outputs on inputs it has never seen. A check
   without a split reports its own verdict; the report marks it *self-reported*;
6. scores each exercise with the weights in ``minigrad.course.checks.lessonN.EXERCISES``.

A notebook that raises, loops, floods its output, crashes, or is not a notebook at all gets a
grade that says what happened; the batch goes on. Nothing it started outlives it.

The checks run where the released lesson has them, not all at the end: each sees the student's
objects as the student saw them when running the notebook top to bottom, and a later cell
that rebinds a name (``from minigrad import matmul``, say) cannot change an earlier verdict.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import functools
import importlib
import importlib.util
import os
import queue
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from minigrad.course.checks import CheckFailed, Split

from . import sandbox
from .lessons import CHECKS_ALIAS, ReleasedLesson, load_lessons, normalize
from .results import (CheckOutcome, ExerciseGrade, Gradebook, Issue, LessonSummary,
                      NotebookGrade)
from .bounded import bounded
from .signals import signals
from .protocol import MAX_BYTES, ProtocolError, dumps, loads
from .zygote import Run, Zygote, ZygoteError
from .submissions import (Assembly, Found, Step, Submission, UnreadableNotebook, assemble,
                          find_submissions, identify, read_notebook, sha256, stamp)

__all__ = ["GradingOptions", "grade", "grade_submission", "run_assembly", "GraderError",
           "Interrupted"]



class GraderError(RuntimeError):
    """The grader itself cannot run (no released lessons, no kernel, nothing to grade)."""


class Interrupted(KeyboardInterrupt):
    """Grading was stopped (Ctrl-C); ``gradebook`` holds the notebooks that had finished."""

    def __init__(self, gradebook: Gradebook) -> None:
        super().__init__(f"interrupted after {len(gradebook.notebooks)} notebook(s)")
        self.gradebook = gradebook


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
        Folders the notebook may import from besides this ``minigrad`` (read-only in the
        sandbox; e.g. a test's checks package).
    kernel_threads : int, optional
        BLAS/OpenMP threads per notebook. :func:`grade` sets it to the cores per job.
    sandbox : bool
        Run each notebook in its own bubblewrap sandbox (:mod:`.sandbox`). False runs it as a
        plain child process with the grader's rights: only for a machine without bubblewrap,
        and only for submissions that are trusted.
    own_user : bool
        With ``sandbox=False``, when the grader is root: run each notebook's driver as a user
        id of its own (as the sandbox does), which cannot write the grader's files or read
        what only root may (Gradescope's container without bubblewrap). Ignored otherwise.
    memory : int
        Bytes of address space a notebook may use (2 GiB).
    max_processes : int
        Processes (and threads) a notebook may run at once.
    seed : int, optional
        The seed of the probes the split checks run on. None (the default) derives it from
        ``secret`` and the (student, lesson) pair, or draws a random one per notebook when
        there is no secret; fix it only to reproduce a run.
    secret : bytes, optional
        The course's probe secret (:mod:`.secret`).
    judge_timeout : float
        Seconds one check's judge may take on what a notebook sent back (in a fork of the
        grader, :mod:`.bounded`); past it the check scores 0, with the reason.
    hint_timeout : float
        Seconds one error-hint search of the report (which cell defines a name) may take.
    due : mapping
        Due dates, ``{lesson number or None (any lesson): "YYYY-MM-DDTHH:MM[:SS]"}``: a
        submission whose LMS name dates it later (Blackboard's attempt date) is marked late.
    """

    cell_timeout: float = 60.0
    notebook_timeout: float = 600.0
    interrupt_grace: float = 5.0
    startup_timeout: float = 60.0
    max_output: int = 1_000_000
    message_chars: int = 4000
    python_path: Sequence[str | os.PathLike[str]] = ()
    kernel_threads: int | None = None
    sandbox: bool = True
    own_user: bool = False
    memory: int = 2 * 2**30
    max_processes: int = 64
    seed: int | None = None
    secret: bytes | None = None
    judge_timeout: float = 5.0
    hint_timeout: float = 2.0
    due: Mapping[int | None, str] = dataclasses.field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# The sandboxes that are running, so that an interrupted grader can end them all


class _Live:
    """The sandboxes running now (their process groups)."""

    def __init__(self) -> None:
        self._processes: set[subprocess.Popen[bytes]] = set()
        self._lock = threading.Lock()
        self.cancelled = threading.Event()

    def add(self, process: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._processes.add(process)
        if self.cancelled.is_set():
            _kill(process)

    def discard(self, process: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._processes.discard(process)

    def kill_all(self) -> None:
        self.cancelled.set()
        with self._lock:
            processes = list(self._processes)
        for process in processes:
            _kill(process)


_LIVE = _Live()
_UIDS = sandbox.UidPool()


def _kill(process: "subprocess.Popen[bytes] | Run", grace: float = 0.0) -> None:
    """End a sandbox: its whole process group (bwrap takes the PID namespace down with it).

    A notebook run in a zygote that has ended by itself leaves its zygote for the next one;
    one that has not is ended with its zygote."""
    if grace:
        try:
            process.wait(timeout=grace)   # a driver that is done exits by itself
        except subprocess.TimeoutExpired:
            pass
    if isinstance(process, Run):
        if process.poll() is None:
            process.kill()
        return
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def _end_uid(uid: int | None) -> list[int]:
    """Kill whatever still runs as the job's user id once its sandbox has gone; return the
    ids of what was found (nothing, unless something escaped the PID namespace)."""
    if uid is None:
        return []
    deadline = time.monotonic() + 3.0
    while sandbox.processes_of(uid) and time.monotonic() < deadline:
        time.sleep(0.05)   # the namespace is being torn down
    found = sandbox.processes_of(uid)
    for pid in found:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return found


def _workdir(uid: int | None) -> tuple[Path, Path]:
    """A new private folder for a sandbox's /tmp (in a parent only the grader can enter),
    with Matplotlib's font list, owned by ``uid``."""
    parent = Path(tempfile.mkdtemp(prefix="minigrad-grade-"))   # 0700: the grader's alone
    workdir = parent / "tmp"
    workdir.mkdir()
    _seed_matplotlib(workdir / ".matplotlib")
    if uid is not None:
        for path in (workdir, *workdir.rglob("*")):
            os.chown(path, uid, uid)
    return parent, workdir


class _Zygotes:
    """Warm zygotes (:mod:`.zygote`), one per job, kept between the notebooks of a batch.

    Inside :meth:`kept` (what :func:`grade` and the preflight use) a zygote that finished a
    notebook cleanly waits for the next one of its job; elsewhere each notebook gets a zygote
    of its own. Where a zygote cannot make sandboxes of its own (a kernel or container that
    forbids it), the grader remembers why and starts one sandbox per notebook instead.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[Zygote] = []
        self._depth = 0
        self.unavailable: str | None = None

    @contextlib.contextmanager
    def kept(self) -> Any:
        """Keep zygotes between notebooks until the block ends; then end them."""
        with self._lock:
            self._depth += 1
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                idle, self._idle = (self._idle, []) if self._depth == 0 else ([], self._idle)
            for zygote in idle:
                zygote.close()

    def take(self, options: GradingOptions, python_path: list[str], threads: int
             ) -> Zygote | None:
        """A live zygote for these settings (a kept one, or a new one); None when zygotes
        cannot work here."""
        key = (tuple(python_path), threads, int(options.memory))
        with self._lock:
            for zygote in list(self._idle):
                self._idle.remove(zygote)
                if zygote.key == key and zygote.alive():
                    return zygote
                zygote.close()
            if self.unavailable is not None:
                return None
        uid = _UIDS.take()
        parent, workdir = _workdir(None)   # the zygote's own /tmp; each notebook gets a new one
        # memory, processes and CPU counted for the job as a whole (one notebook at a time)
        group = sandbox.Cgroup.make(int(options.memory), options.max_processes, threads)

        def closed() -> None:
            _end_uid(uid)
            _UIDS.give_back(uid)
            if group is not None:
                group.remove()
            shutil.rmtree(parent, ignore_errors=True)

        spec = sandbox.SandboxSpec(workdir=workdir, python_path=python_path, threads=threads)
        argv, env = sandbox.command(spec, zygote={"uid": uid, "tmp_bytes": int(options.memory)})
        argv = group.wrap(argv) if group is not None else argv
        try:
            zygote = Zygote(argv, env, str(workdir), options.startup_timeout, closed, key)
        except ZygoteError as exc:
            with self._lock:
                self.unavailable = str(exc)
            return None
        zygote.uid, zygote.cgroup = uid, group
        return zygote

    def give_back(self, zygote: Zygote) -> None:
        """Keep ``zygote`` for the next notebook of its job (inside :meth:`kept`), or end it."""
        with self._lock:
            if self._depth > 0 and zygote.alive():
                self._idle.append(zygote)
                return
        zygote.close()


_ZYGOTES = _Zygotes()


# ---------------------------------------------------------------------------------------------
# Running one assembled notebook


@dataclass
class StepResult:
    """What happened when one step ran."""

    status: str          # "ok", "error", "timeout", "skipped", "not run"
    error: str = ""      # "NameError: name 'x' is not defined"
    seconds: float = 0.0
    where: str = ""      # the line of the student's code that raised, if known


@dataclass
class Execution:
    """Everything a run of an assembly produced."""

    steps: list[StepResult]
    checks: dict[int, dict[str, Any]]       # step index -> the outcome of its check
    issues: list[Issue] = field(default_factory=list)
    output_chars: int = 0
    kernel_log: str = ""
    patched: dict[str, dict[str, None]] = field(default_factory=dict)
    #: Records for another step than the one running (the driver sends them in order):
    #: written into the grader's channel by the notebook itself
    forged: int = 0


def _first_line(source: str) -> str:
    lines = [line.strip() for line in source.splitlines() if line.strip()]
    return lines[0][:60] if lines else ""


def split_of(lesson: ReleasedLesson, exercise: str | None, source: str = "") -> Split | None:
    """The :class:`~minigrad.course.checks.Split` of the check a released check cell calls
    (``checks.lessonN.name(...)`` in ``source``; else the check marked with ``exercise``)."""
    if exercise is None:
        return None
    module = importlib.import_module(lesson.checks_module)
    called = re.search(rf"\b{CHECKS_ALIAS}\.lesson{lesson.number}\.(\w+)\s*\(", source)
    if called and callable(getattr(module, called[1], None)):
        candidates = [getattr(module, called[1])]
    else:
        candidates = [v for v in vars(module).values()
                      if callable(v) and getattr(v, "exercise_id", None) == exercise]
    for value in candidates:
        split = getattr(value, "split", None)
        return split if isinstance(split, Split) else None
    return None


@functools.lru_cache(maxsize=None)
def _matplotlib_fonts() -> Path | None:
    """Matplotlib's font list, built once here (when matplotlib is installed)."""
    try:
        import matplotlib
        from matplotlib import font_manager  # noqa: F401 - builds the font list if missing
    except ImportError:
        return None
    cache = Path(matplotlib.get_cachedir())
    found = sorted(cache.glob("fontlist-*.json"))
    return found[-1] if found else None


def _seed_matplotlib(folder: Path) -> None:
    """Give the sandbox matplotlib's font list: building it takes a notebook 1-3 s."""
    fonts = _matplotlib_fonts()
    if fonts is not None:
        folder.mkdir()
        shutil.copyfile(fonts, folder / fonts.name)


def _package_home(package: str) -> list[str]:
    """The folder the checks package is imported from, when it is not part of minigrad (a
    course's own checks): the sandbox must import the same one, read-only."""
    top = package.partition(".")[0]
    if top == "minigrad":
        return []
    spec = importlib.util.find_spec(top)
    if spec is None:
        return []
    where = list(spec.submodule_search_locations or []) or [spec.origin or ""]
    return [str(Path(p).resolve().parent) for p in where if p]


def _limits(options: GradingOptions, counted: bool = False) -> dict[str, int]:
    """The driver's per-process limits. ``counted``: a cgroup counts the notebook's memory as
    a whole; without one, the process limit keeps processes x address space within bounds
    (:func:`.sandbox.fallback_processes`)."""
    processes = options.max_processes if counted else sandbox.fallback_processes(
        int(options.memory), options.max_processes)
    if os.getuid() != 0:
        # without root there is no user id per job, and the limit counts every process of
        # this user: leave room for those already running
        processes += len(sandbox.processes_of(os.getuid()))
    return {"AS": int(options.memory), "FSIZE": 64 * 2**20, "NOFILE": 256, "CORE": 0,
            "CPU": int(options.notebook_timeout + 30), "NPROC": processes}


#: What the reader puts in place of a line longer than MAX_BYTES.
_TOO_LONG = b"\x00too long"
#: The most a notebook's sandbox may send in all (a flood ends the notebook).
_MAX_TOTAL = 256 * 2**20


def _reader(stream: Any, lines: "queue.Queue[bytes | None]") -> None:
    """Read the driver's lines into ``lines`` (None at the end); an overlong line is cut.

    ``lines`` is bounded, so a flood waits in the pipe instead of the grader's memory."""
    total = 0
    try:
        while True:
            line = stream.readline(MAX_BYTES + 1)
            total += len(line)
            if not line or total > _MAX_TOTAL:
                break
            if len(line) > MAX_BYTES:
                lines.put(_TOO_LONG)    # too long: refused, and the rest of it is dropped
                while line and not line.endswith(b"\n"):
                    line = stream.readline(MAX_BYTES + 1)
                continue
            lines.put(line)
    except (OSError, ValueError):
        pass
    finally:
        lines.put(None)


def run_assembly(assembly: Assembly, lesson: ReleasedLesson,
                 options: GradingOptions | None = None) -> Execution:
    """Run an assembled notebook in its own sandbox and judge what its checks returned.

    The probes of every split check are drawn here, from a secret seed (``options.seed``
    for a reproducible run); the sandbox gets the cells and the probes, runs them in order
    (see :mod:`.driver`), and sends one record per step. Each step has ``cell_timeout``
    (the driver interrupts it; a step that does not answer is ended with its sandbox) and all
    of them together ``notebook_timeout``.

    Never raises for anything the notebook does; a sandbox that cannot start is reported as
    an issue of kind ``"grader"``.
    """
    options = options or GradingOptions()
    steps = assembly.steps
    results: list[StepResult] = [StepResult("not run") for _ in steps]
    execution = Execution(steps=results, checks={})
    rng = np.random.default_rng(options.seed if options.seed is not None
                                else secrets.randbits(128))
    job_steps, probes, splits = _job_steps(steps, lesson, rng)
    sandbox.compile_package()   # once per grader: the sandbox cannot write byte code
    launch = _Launch(options, lesson)
    job = {"steps": job_steps, "cell_timeout": options.cell_timeout, "uid": launch.uid,
           "package": lesson.checks_package, "alias": CHECKS_ALIAS,
           "max_chars": options.message_chars, "limits": _limits(options, launch.counted),
           "cwd": "/tmp" if options.sandbox else str(launch.workdir)}
    if not _run_job(launch, job, steps, results, options, execution):
        return execution
    _judge_all(execution, splits, probes, options)
    return execution


def _job_steps(steps: list[Step], lesson: ReleasedLesson, rng: np.random.Generator
               ) -> tuple[list[dict[str, Any]], dict[int, Any], dict[int, Split]]:
    """The steps as the driver gets them, with the probes of every split check drawn from
    ``rng``; also those probes and splits, by step index."""
    probes: dict[int, Any] = {}
    splits: dict[int, Split] = {}
    job_steps = []
    for i, step in enumerate(steps):
        entry: dict[str, Any] = {"index": i, "kind": step.kind, "source": step.source,
                                 "exercise": step.exercise}
        split = split_of(lesson, step.exercise, step.source) if step.kind == "check" else None
        if split is not None:
            splits[i] = split
            probes[i] = entry["probes"] = split.probe(rng)
        job_steps.append(entry)
    return job_steps, probes, splits


class _Launch:
    """Where one notebook runs: a warm zygote, or a sandbox (or plain process) of its own
    with its folder, user id and cgroup; :meth:`release` gives all of them back."""

    def __init__(self, options: GradingOptions, lesson: ReleasedLesson) -> None:
        self.python_path = [str(p) for p in options.python_path] + \
            _package_home(lesson.checks_package)
        threads = options.kernel_threads or 1
        self.zygote = _ZYGOTES.take(options, self.python_path, threads) \
            if options.sandbox else None
        self.uid = self.zygote.uid if self.zygote is not None else (
            _UIDS.take() if options.sandbox or options.own_user else None)
        self.parent: Path | None = None
        self.group: sandbox.Cgroup | None = None
        self.workdir: Path | None = None
        self.argv: list[str] = []
        self.env: dict[str, str] = {}
        if self.zygote is None:
            self.parent, self.workdir = _workdir(self.uid)
            if self.uid is not None and not options.sandbox:
                os.chmod(self.parent, 0o711)   # the driver's own user reaches its folder only
            spec = sandbox.SandboxSpec(workdir=self.workdir, python_path=self.python_path,
                                       threads=threads)
            self.argv, self.env = sandbox.command(spec, sandboxed=options.sandbox)
            self.group = sandbox.Cgroup.make(int(options.memory), options.max_processes,
                                             threads) if options.sandbox else None
            self.argv = self.group.wrap(self.argv) if self.group is not None else self.argv
        self.counted = (self.zygote.cgroup if self.zygote is not None else self.group) \
            is not None

    def start(self) -> "subprocess.Popen[bytes] | Run":
        if self.zygote is not None:
            return self.zygote.run()
        return subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, env=self.env, cwd=str(self.workdir),
                                start_new_session=True)

    def release(self, execution: Execution) -> None:
        left = _end_uid(self.uid)   # none, unless something escaped the PID namespace
        if left:
            execution.issues.append(Issue("kernel died", f"{len(left)} process(es) of the "
                                          "notebook were still running and were killed"))
        if self.zygote is not None:
            _ZYGOTES.give_back(self.zygote)
        else:
            _UIDS.give_back(self.uid)
        if self.group is not None:
            self.group.remove()
        if self.parent is not None:
            shutil.rmtree(self.parent, ignore_errors=True)


def _run_job(launch: _Launch, job: dict[str, Any], steps: list[Step], results: list[StepResult],
             options: GradingOptions, execution: Execution) -> bool:
    """Start the notebook, send it ``job``, collect its records; then end it and give its
    place back. False when it could not start (said in ``execution``)."""
    process: Any = None
    lines: "queue.Queue[bytes | None]" = queue.Queue(maxsize=16)
    try:
        try:
            process = launch.start()
        except (OSError, ZygoteError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            execution.issues.append(Issue("grader", f"the grader could not start the sandbox: "
                                          f"{type(exc).__name__}: {why}"))
            return False
        _LIVE.add(process)
        threading.Thread(target=_reader, args=(process.stdout, lines), daemon=True).start()
        try:
            assert process.stdin is not None
            process.stdin.write((dumps(job) + "\n").encode("utf-8"))
            process.stdin.close()
        except OSError:
            pass
        try:
            _collect(process, lines, steps, results, options, execution)
        except KeyboardInterrupt:
            _LIVE.kill_all()   # Ctrl-C: every sandbox ends now, with no grace to wait out
            raise
    finally:
        if process is not None:
            _kill(process, grace=2.0 if process.poll() is None and not _LIVE.cancelled.is_set()
                  else 0.0)
            _LIVE.discard(process)
            _drain(lines)
            with contextlib.suppress(OSError):
                process.stdout.close()
        launch.release(execution)
    return True


def _judge_all(execution: Execution, splits: dict[int, Split], probes: dict[int, Any],
               options: GradingOptions) -> None:
    """Judge each split check's record on its probes (none, when the notebook forged
    records), and flag output past ``max_output``."""
    if execution.forged:   # which of the step's records is the driver's cannot be told
        execution.issues.append(Issue("forged", f"the notebook wrote {execution.forged} "
                                      "record(s) of its own into the grader's channel; none of "
                                      "its checks was judged, and they score 0"))
        for i in splits:
            execution.checks[i] = {"kind": "forged", "passed": False, "forged": True,
                                   "message": "not judged: the notebook wrote records of its "
                                              "own into the grader's channel"}
    for i, split in splits.items():
        record = execution.checks.get(i)
        if record is not None:
            execution.checks[i] = _judge(split, probes[i], record, options)
    if execution.output_chars > options.max_output:
        execution.issues.append(Issue("output", f"the notebook printed "
                                      f"{execution.output_chars / 1e6:.1f} million characters; "
                                      "the grader counts output but keeps none of it"))


def _drain(lines: "queue.Queue[bytes | None]", seconds: float = 2.0) -> None:
    """Empty ``lines`` until the reader's end mark, so that its thread can finish."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if lines.get(timeout=0.1) is None:
                return
        except queue.Empty:
            continue


def _collect(process: "subprocess.Popen[bytes] | Run", lines: "queue.Queue[bytes | None]",
             steps: list[Step], results: list[StepResult], options: GradingOptions,
             execution: Execution) -> None:
    """Read one record per step, in order, within the time limits."""
    if not _started(process, lines, options, execution):
        return
    deadline = time.monotonic() + options.notebook_timeout
    index = 0
    while index < len(steps):
        if _LIVE.cancelled.is_set():
            return
        step_deadline = time.monotonic() + options.cell_timeout + options.interrupt_grace
        try:
            line = _next_line(lines, min(step_deadline, deadline))
        except _Cancelled:
            return
        except queue.Empty:
            _kill(process)
            _silent(index, steps, results, options, execution, time.monotonic() >= deadline)
            return
        if line is None:   # the driver ended before the last step
            _ended(process, index, steps, results, execution)
            return
        if line == _TOO_LONG:   # the running step's record, too large to be read
            results[index].status, results[index].error = "error", (
                f"what it sent back was more than {MAX_BYTES // 2**20} MB, too large to judge")
            if steps[index].kind == "check":
                execution.checks[index] = {"passed": False, "kind": "error",
                                           "message": results[index].error, "where": "",
                                           "output": "", "seconds": 0.0}
            index += 1
            continue
        try:
            record = loads(line)
        except ProtocolError:
            continue       # not a record of the driver's: ignored
        if not isinstance(record, dict) or record.get("step") != index:
            if isinstance(record, dict) and "step" in record:
                execution.forged += 1   # the driver sends each step once, in order
            continue
        _take(record, steps[index], index, results[index], options, execution)
        index += 1
    _done_line(lines, deadline, options, execution)


def _exit_status(process: "subprocess.Popen[bytes] | Run") -> int | None:
    """The process's exit status, waited for up to 2 s (None: still running then)."""
    try:
        return process.wait(timeout=2)
    except subprocess.TimeoutExpired:
        return None


def _started(process: "subprocess.Popen[bytes] | Run", lines: "queue.Queue[bytes | None]",
             options: GradingOptions, execution: Execution) -> bool:
    """Whether the driver said its Python and IPython are up (not a step's time) within
    ``startup_timeout``; if not, the sandbox is ended and the issue says so, with the exit
    status (waited for: right after the kill a plain process has not been reaped yet)."""
    try:
        ready = lines.get(timeout=options.startup_timeout)
    except queue.Empty:
        ready = None
    if ready is not None and ready.startswith(b'{"ready":true}'):
        return True
    _kill(process)
    execution.issues.append(Issue("grader", "the sandbox did not start within "
                                  f"{options.startup_timeout:g} s (exit status "
                                  f"{_exit_status(process)})"))
    return False


def _silent(index: int, steps: list[Step], results: list[StepResult], options: GradingOptions,
            execution: Execution, past_deadline: bool) -> None:
    """Record why the driver fell silent at step ``index``: the notebook's time limit (the
    rest is skipped), or a step that ran past its own and did not answer the interrupt."""
    if past_deadline:
        execution.issues.append(Issue("timeout", f"the notebook ran past its "
                                      f"{options.notebook_timeout:g} s limit; from "
                                      f"{steps[index].label} on, nothing ran"))
        for result in results[index:]:
            result.status = "skipped"
        return
    results[index].status = "timeout"
    results[index].error = (f"timed out after {options.cell_timeout:g} s, did not "
                            "answer the interrupt, and its sandbox was ended")
    execution.issues.append(Issue("kernel died", f"the notebook was stopped: it did "
                                  f"not answer an interrupt after "
                                  f"{steps[index].label} ran past its "
                                  f"{options.cell_timeout:g} s limit"))


def _ended(process: "subprocess.Popen[bytes] | Run", index: int, steps: list[Step],
           results: list[StepResult], execution: Execution) -> None:
    """Record that the driver's process ended while step ``index`` ran, and how."""
    code = _exit_status(process)
    how = "it exited" if code in (0, None) else (
        f"killed by signal {signal.Signals(-code).name}" if code is not None and code < 0
        and -code in signal.valid_signals() else f"exit status {code}")
    results[index].status = "error"
    results[index].error = "the notebook's process ended while this ran"
    execution.issues.append(Issue("kernel died", f"the notebook's process stopped while "
                                  f"running {steps[index].label} ({how}; did the code "
                                  "exit, crash, or run out of memory?); the steps after "
                                  "it did not run"))


def _done_line(lines: "queue.Queue[bytes | None]", deadline: float, options: GradingOptions,
               execution: Execution) -> None:
    """Read the driver's last line: the output it counted and the processes it left."""
    try:
        line = lines.get(timeout=min(5.0, max(0.1, deadline - time.monotonic())))
        done = loads(line) if line else {}
        done = done if isinstance(done, dict) else {}
        chars, left = _count(done.get("output_chars"), 1e15), _count(done.get("left"), 1e6)
        if chars is not None:
            execution.output_chars = int(chars)
        if left and options.sandbox:
            execution.issues.append(Issue("processes", f"the notebook left {int(left)} "
                                          "process(es) running; they were ended with its "
                                          "sandbox"))
    except (queue.Empty, ProtocolError):
        pass


class _Cancelled(Exception):
    """The batch was stopped (Ctrl-C) while a notebook waited for its next record."""


def _next_line(lines: "queue.Queue[bytes | None]", deadline: float) -> bytes | None:
    """The next line of the driver's, waiting until ``deadline`` in slices of a tenth of a
    second (:class:`queue.Empty` then), so that a stopped batch stops waiting at once."""
    while True:
        if _LIVE.cancelled.is_set():
            raise _Cancelled()
        left = deadline - time.monotonic()
        try:
            return lines.get(timeout=max(0.0, min(0.1, left)))
        except queue.Empty:
            if left <= 0.1:
                raise


def _text(value: Any, limit: int) -> str:
    return (value if isinstance(value, str) else "")[:limit]


def _count(value: Any, most: float) -> float | None:
    """A number read from the sandbox's pipe, within ``0 ..= most``; None for anything else
    (a bool, a string, NaN, an integer of 400 digits: ``float()`` of it raises)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, int) and not -most <= value <= most:
        return None
    number = float(value)
    return number if 0.0 <= number <= most else None


def _take(record: dict[str, Any], step: Step, index: int, result: StepResult,
          options: GradingOptions, execution: Execution) -> None:
    limit = options.message_chars
    result.seconds = _count(record.get("seconds"), 1e9) or 0.0
    status = record.get("status")
    result.status = status if status in ("ok", "error", "timeout") else "error"
    result.error = _text(record.get("error"), limit)
    result.where = _text(record.get("where"), limit)
    if result.status == "timeout":
        what = step.label if step.kind == "check" else f"{step.label} (`{_first_line(step.source)}`)"
        execution.issues.append(Issue("timeout", f"{what} ran past {options.cell_timeout:g} s "
                                      "and was interrupted"))
    if step.kind != "check":
        return
    for key in ("replaced", "suspicious"):   # what the notebook patched, for the report
        names = record.get(key)
        if isinstance(names, list):
            execution.patched.setdefault(key, {}).update(
                dict.fromkeys(_text(n, 200) for n in names[:50]))
    check = record.get("check")
    output = _text(record.get("output"), limit)
    if isinstance(check, dict):
        execution.checks[index] = {**check, "output": output, "seconds": result.seconds}
    elif result.status == "error":   # the check cell raised before reaching the check
        kind = "not implemented" if result.error.startswith("NotImplementedError") else "error"
        execution.checks[index] = {"passed": False, "kind": kind, "message": result.error,
                                   "where": result.where, "output": output,
                                   "seconds": result.seconds}


def _judge(split: Split, probes: Any, record: dict[str, Any],
           options: GradingOptions) -> dict[str, Any]:
    """Turn a split check's record into an outcome: the judge decides, never the sandbox."""
    limit = options.message_chars
    base = {"output": "", "seconds": record.get("seconds", 0.0), "where": "",
            "self_reported": split.self_reported}
    if record.get("kind") != "outputs":
        if record.get("passed") is False or record.get("kind") in ("check", "error",
                                                                    "not implemented"):
            return {**base, "passed": False, "kind": str(record.get("kind", "error")),
                    "message": _text(record.get("message"), limit),
                    "where": _text(record.get("where"), limit)}
        return {**base, "passed": False, "kind": "error",
                "message": "the check's run sent back no values to judge"}
    if record.get("forged"):   # sent after the driver's own channel had been replaced
        return {**base, "passed": False, "kind": "forged", "message": _text(
            record.get("message"), limit) or "the record was not made by the grader's driver"}
    # in a fork of the grader, under a time limit: no notebook's data can stall the batch
    outcome = bounded(split.judge, (probes, record.get("outputs")), options.judge_timeout,
                      CheckFailed, _LIVE.cancelled)
    if outcome.kind == "raised" and outcome.failed:
        return {**base, "passed": False, "kind": "check",
                "message": _text(outcome.value, limit)}
    if outcome.kind == "raised":   # malformed data is a zero with a reason
        return {**base, "passed": False, "kind": "error",
                "message": f"the values your code returned could not be judged "
                           f"({outcome.error_type}: {_text(outcome.value, 200)})"}
    if outcome.kind != "returned":
        return {**base, "passed": False, "kind": "judge " + outcome.kind,
                "message": f"the judge of this check did not finish on the values your code "
                           f"returned: {outcome.value}; the check scores 0"}
    return {**base, "passed": True, "kind": "passed", "message": "",
            "output": "\u2713 " + str(outcome.value)}


# ---------------------------------------------------------------------------------------------
# Grading one submission


#: What a check without a split reports about itself: all of it.
_WHOLE = "the whole check (it has no split)"


def _check_outcome(step: Step, index: int, execution: Execution) -> CheckOutcome:
    exercise = step.exercise or ""
    record = execution.checks.get(index)
    result = execution.steps[index]
    if result.status == "timeout":
        return CheckOutcome(exercise, False, "timeout",
                            f"the check {result.error}: does your code loop forever?",
                            where=result.where, seconds=result.seconds)
    if record is None:
        why = {"not run": "the notebook had stopped before it",
               "skipped": "the notebook's time limit had passed"}.get(
            result.status, result.error or "it did not report")
        return CheckOutcome(exercise, False, "not run", f"the check did not run: {why}")
    return CheckOutcome(exercise, record.get("passed") is True, str(record.get("kind", "error")),
                        str(record.get("message", "")), str(record.get("where", "")),
                        str(record.get("output", "")), float(record.get("seconds", 0.0) or 0.0),
                        self_reported=str(record.get("self_reported", "")) if "self_reported"
                        in record else _WHOLE)

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
    stamp(grade, submission)
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
    stamp(grade, submission, notebook, lesson, options.due)
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
            execution = _run_retrying(assembly, lesson, _seeded(options, grade))
            grade.issues += execution.issues
            grade.issues += _cell_errors(assembly, execution, notebook, options.hint_timeout)
            grade.issues += _patches(execution)
            grade.issues += [Issue("signal", text) for text in signals(
                ((s.exercise, s.source) for s in assembly.steps if s.kind == "cell"
                 and s.exercise in assembly.attempted), lesson.checks_module)]
            if any(issue.kind == "grader" for issue in execution.issues):
                grade.status = "error"
        else:
            grade.status = "not run"
    unreadable = grade.issues[0].text if notebook is None else ""
    grade.exercises = _exercise_grades(lesson, assembly, execution, unreadable)
    grade.score = float(sum(exercise.points for exercise in grade.exercises))
    grade.seconds = round(time.monotonic() - start, 3)
    return grade


def _seeded(options: GradingOptions, grade: NotebookGrade) -> GradingOptions:
    """``options`` with the probe seed of this (student, lesson) when there is a secret."""
    if options.seed is not None or options.secret is None:
        return options
    from .secret import seed_for
    return dataclasses.replace(options, seed=seed_for(options.secret, grade.student,
                                                      grade.lesson or grade.path))


def _died(execution: Execution) -> Issue | None:
    """The issue saying that the notebook's process stopped by itself mid-run, if any."""
    return next((i for i in execution.issues if i.kind == "kernel died"
                 and "process stopped while" in i.text), None)


def _run_retrying(assembly: Assembly, lesson: ReleasedLesson,
                  options: GradingOptions) -> Execution:
    """:func:`run_assembly`, run once more when the notebook's process died mid-run.

    A healthy notebook's kernel has been seen to die once in some hundreds of runs; a second
    run tells that apart from a notebook that crashes. Either way the report says so."""
    execution = run_assembly(assembly, lesson, options)
    first = _died(execution)
    if first is None or _LIVE.cancelled.is_set():
        return execution
    again = run_assembly(assembly, lesson, options)
    if _died(again) is None:
        again.issues.insert(0, Issue("retried", f"the first run failed ({first.text}); the "
                                     "notebook was run again and this grade is the second "
                                     "run's"))
        return again
    again.issues = [Issue(i.kind, i.text + " (it was run twice and stopped both times)")
                    if i.kind == "kernel died" else i for i in again.issues]
    return again


def _patches(execution: Execution) -> list[Issue]:
    replaced = execution.patched.get("replaced", {})
    suspicious = execution.patched.get("suspicious", {})
    issues = []
    if replaced:
        issues.append(Issue("patched checks", "the notebook replaced " + ", ".join(replaced) +
                            "; the checks were imported afresh and judged here, so this had no "
                            "effect"))
    if suspicious:
        issues.append(Issue("patched engine", "the notebook replaced " + ", ".join(suspicious) +
                            " with code of its own; the grader did not undo this (look at it "
                            "by hand)"))
    return issues


_NAME_ERROR = re.compile(r"NameError: name '(?P<name>[A-Za-z_]\w*)' is not defined")


def _defined_in(source: str, name: str) -> bool:
    """Whether a cell's source binds ``name`` (def, class, assignment or import).

    One line at a time, each pattern anchored at the line's start and never crossing a line
    (``[ \\t]``, not ``\\s``): linear in the cell's length, whatever the student typed.
    """
    n = re.escape(name)
    pattern = re.compile(rf"[ \t]*(?:(?:def|class)[ \t]+{n}\b|{n}[ \t]*(?::[^=\n]*)?=(?!=)|"
                         rf"(?:from[ \t]+\S+[ \t]+)?import[ \t].*\b{n}\b)")
    return any(pattern.match(line) for line in source.split("\n"))


def _defining_cells(skipped: list[tuple[int, str]], name: str) -> list[int]:
    """The numbers of the cells in ``skipped`` that define ``name``."""
    return [number for number, source in skipped if _defined_in(source, name)]


def _cell_errors(assembly: Assembly, execution: Execution,
                 notebook: Mapping[str, Any] | None = None, hint_timeout: float = 2.0
                 ) -> list[Issue]:
    """Say which cell raised and why, in words a student acts on.

    A NameError for a name that the submission defines in a cell the grader does not run (an
    extra cell of the student's) says so; one for a name an unfinished exercise was to define,
    or a NotImplementedError, says that it comes from an exercise not done yet.
    """
    issues = []
    skipped = _skipped_cells(assembly, notebook)
    exercise_errors = {step.exercise: result for step, result in zip(assembly.steps,
                                                                      execution.steps)
                       if step.kind == "cell" and step.exercise and result.status == "error"}
    explained: set[str] = set()
    for index, (step, result) in enumerate(zip(assembly.steps, execution.steps)):
        record = execution.checks.get(index) if step.kind == "check" else None
        if result.status != "error" and (record is None or record.get("passed") is True):
            continue
        texts = [result.error, str((record or {}).get("message", ""))]
        hint = ""
        for text in texts:
            match = _NAME_ERROR.search(text)
            if match and match["name"] not in explained:
                name = match["name"]
                found = bounded(_defining_cells, (skipped, name), hint_timeout)
                home = found.value if found.kind == "returned" else []
                if home:
                    explained.add(name)
                    hint = (f"`{name}` is defined in cell {home[0]} of your notebook, which the "
                            "grader does not run: it runs the released lesson with only your "
                            "exercise cells put in. Define helpers inside the exercise cell "
                            "that uses them")
                else:
                    broken = [e for e, r in exercise_errors.items() if r is not result]
                    if broken:
                        hint = (f"probably because the cell of exercise {broken[0]} raised an "
                                "error before it defined everything")
        if not hint and result.error.startswith("NotImplementedError"):
            hint = "it uses an exercise that is not done yet"
        if step.kind == "cell" and result.status == "error":
            where = step.label if step.exercise else \
                f"{step.label} (`{_first_line(step.source)}`)"
            at = f" at {result.where}" if result.where else ""
            issues.append(Issue("cell error", f"{where} raised {result.error}{at}"
                                + (f": {hint}" if hint else "")))
        elif hint:
            issues.append(Issue("cell error", f"{step.label} failed: {hint}"))
    return issues


def _skipped_cells(assembly: Assembly, notebook: Mapping[str, Any] | None
                   ) -> list[tuple[int, str]]:
    """The submission's code cells (1-based numbers, sources) that the grader did not run."""
    if notebook is None:
        return []
    ran = {normalize(step.source) for step in assembly.steps}
    cells = []
    for number, cell in enumerate(notebook.get("cells", []), 1):
        source = cell.get("source", "")
        if cell.get("cell_type") == "code" and isinstance(source, str) and \
                normalize(source) not in ran:
            cells.append((number, source))
    return cells


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
                          digest=lesson.digest, exercises=dict(lesson.exercises),
                          release=lesson.release)
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
          on_graded: Callable[[NotebookGrade], None] | None = None,
          found: Found | None = None) -> Gradebook:
    """Grade every notebook under ``paths`` against the released lessons.

    Long because its signature and docstring describe each of its options; its body, about
    40 lines, hands the notebooks to the workers and collects their grades.

    Parameters
    ----------
    paths : sequence of paths
        Notebooks and folders of them; see :mod:`minigrad.course.grading.submissions` for the layout.
    students : sequence of str, optional
        Grade only these students.
    jobs : int
        Notebooks graded at the same time, each in its own sandbox.
    released : path, optional
        The folder of released lessons (default: the ones shipped with minigrad).
    checks_package : str, optional
        The package with the ``lessonN`` checks modules (default: ``minigrad.course.checks``).
    options : GradingOptions, optional
        Time limits and output caps.
    progress : bool or None
        Show a tqdm progress bar (None: only on a terminal).
    on_graded : callable, optional
        Called with each notebook's grade as it finishes (the journal of :mod:`.batch`).
    found : Found, optional
        The submissions to grade, already found (:func:`.submissions.scan`); ``paths`` and
        ``students`` then only name them in messages.

    Returns
    -------
    Gradebook

    Raises
    ------
    GraderError
        When there is nothing to grade, no released lesson to grade against, or no sandbox
        (and ``options.sandbox`` is True).
    """
    lessons, submissions = _to_grade(paths, students, released, checks_package, found)
    options = options or GradingOptions()
    if options.sandbox:
        why = sandbox.available()
        if why is not None:
            raise GraderError(f"no sandbox: {why}. The grader will not run submissions without "
                              "one; --no-sandbox runs them with your rights (they can read and "
                              "change your files, see your environment, use the network and "
                              "leave processes behind): use it only in a throwaway container")
    jobs = max(1, int(jobs))
    if options.kernel_threads is None:
        options = dataclasses.replace(options,
                                      kernel_threads=max(1, (os.cpu_count() or 1) // jobs))
    from tqdm.auto import tqdm
    start = time.monotonic()
    graded: list[NotebookGrade] = []
    _LIVE.cancelled.clear()

    def book() -> Gradebook:
        finished = sorted(graded, key=lambda n: (n.student, n.lesson or "~", n.path))
        _mark_duplicates(finished)
        return Gradebook(lessons=_summaries(lessons), notebooks=finished,
                         seconds=round(time.monotonic() - start, 2), jobs=jobs)

    with _ZYGOTES.kept(), tqdm(total=len(submissions), desc="grading", unit="notebook",
                               disable=None if progress is None else not progress,
                               leave=False) as bar:
        def done(result: NotebookGrade) -> None:
            graded.append(result)
            bar.set_postfix_str(f"{result.student}: {result.score:g}/{result.max_score:g}",
                                refresh=False)
            bar.update()
            if on_graded is not None:
                on_graded(result)

        try:
            _grade_each(submissions, lessons, options, jobs, done)
        except KeyboardInterrupt:   # the caller gets what had finished
            raise Interrupted(book()) from None
    return book()


def _to_grade(paths: Sequence[str | os.PathLike[str]], students: Sequence[str] | None,
              released: str | os.PathLike[str] | None, checks_package: str | None,
              found: Found | None) -> tuple[dict[int, ReleasedLesson], list[Submission]]:
    """The released lessons and the submissions to grade; :class:`GraderError` when there
    are none of either."""
    from .lessons import LessonError
    try:
        lessons = load_lessons(released, checks_package)
    except LessonError as exc:
        raise GraderError(str(exc)) from exc
    try:
        submissions = find_submissions(paths, students) if found is None else found.submissions
    except FileNotFoundError as exc:
        raise GraderError(str(exc)) from exc
    if not submissions:
        who = f" from {', '.join(students)}" if students else ""
        raise GraderError(f"no notebooks{who} under {', '.join(map(str, paths))}")
    return lessons, submissions


def _grade_each(submissions: list[Submission], lessons: Mapping[int, ReleasedLesson],
                options: GradingOptions, jobs: int,
                done: Callable[[NotebookGrade], None]) -> None:
    """Grade the submissions, ``jobs`` at a time, handing each grade to ``done`` as it
    finishes. On Ctrl-C every sandbox and judge is ended at once and the notebooks that
    were running are left out (none of them finished); the KeyboardInterrupt goes on."""
    if jobs == 1:
        try:
            for submission in submissions:
                done(_grade_safely(submission, lessons, options))
        except KeyboardInterrupt:
            _LIVE.kill_all()
            raise
        return
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=jobs,
                                                 thread_name_prefix="minigrad-grade")
    try:
        futures = [pool.submit(_grade_safely, s, lessons, options) for s in submissions]
        for future in concurrent.futures.as_completed(futures):
            done(future.result())
    except KeyboardInterrupt:
        _LIVE.kill_all()
        pool.shutdown(wait=False, cancel_futures=True)   # (they end within a second)
        raise
    except BaseException:
        _LIVE.kill_all()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)

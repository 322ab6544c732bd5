"""Preflight: prove the setup on the lessons themselves, in the same sandbox, before any student.

A missing dependency (``pip install ".[grade]"`` without scikit-learn, say), a broken install
or a sandbox that cannot import the engine would otherwise give every student a low score with
status "graded". So before the first student:

* each lesson with a reference solution (``solutions/`` of a checkout, or ``--solutions DIR``)
  is graded like a submission, and must get every point *and* raise no issue at all (a cell
  error, a timeout, a dead kernel: each stops grading, with the lesson, the cell and why);
* each lesson without one has every released cell but the checks run in the sandbox as
  handed out: only the exercises' own ``NotImplementedError`` may be raised, so a missing
  import stops grading before the first student too.

A passed preflight is remembered in the user's cache folder under a key made of everything
that can change its answer: the Python (version and executable), every installed
distribution's version, the released lessons' files, the checks package's and the grader's
source, the solutions' contents, the sandbox setting and the mode. A new environment, a new
release or an edited check runs it again.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Mapping

from .lessons import ReleasedLesson
from .runner import _ZYGOTES, GradingOptions, grade_submission, run_assembly
from .submissions import Assembly, Submission, assemble

__all__ = ["Preflight", "preflight", "default_solutions_dir", "cache_file", "environment"]


@dataclass
class Preflight:
    """What the preflight found: ``status`` is "passed", "cached", "skipped" or "failed"."""

    status: str
    message: str

    @property
    def ok(self) -> bool:
        """True unless the solutions failed: grading may go on."""
        return self.status != "failed"


def default_solutions_dir() -> Path | None:
    """``solutions/`` beside the package in a checkout, if it is there."""
    folder = Path(__file__).resolve().parents[3] / "solutions"
    return folder if folder.is_dir() else None


def cache_file() -> Path:
    """Where passed preflights are remembered (``$XDG_CACHE_HOME/minigrad/preflight.json``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "minigrad" / "preflight.json"


def environment() -> list[str]:
    """The Python and every installed distribution with its version, sorted: what the cache
    key reads of the environment."""
    found = {f"{(d.metadata['Name'] or '?').lower()}=={d.version}"
             for d in metadata.distributions()}
    return [f"python {sys.version} at {sys.executable}", *sorted(found)]


def _sources(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def _fingerprint(lessons: Mapping[int, ReleasedLesson], solutions: Mapping[int, Path],
                 options: GradingOptions) -> str:
    digest = hashlib.sha256()
    digest.update(f"sandbox={options.sandbox} memory={options.memory} "
                  f"solutions={sorted(solutions)}\n".encode())
    digest.update("\n".join(environment()).encode())
    folders = {Path(__file__).resolve().parent}   # the grader itself
    for number in sorted(lessons):
        lesson = lessons[number]
        digest.update(f"\n{lesson.key}:".encode() + Path(lesson.path).read_bytes())
        path = solutions.get(number)
        digest.update(path.read_bytes() if path is not None else b"-")
        module = __import__(lesson.checks_module, fromlist=["_"])
        file = getattr(module, "__file__", None)
        if file:
            folders.add(Path(file).resolve().parent)
    for folder in sorted(folders):
        for path in _sources(folder):
            digest.update(str(path.name).encode() + path.read_bytes())
    return digest.hexdigest()


def _first(text: str, limit: int = 300) -> str:
    lines = text.strip().splitlines()
    return lines[0][:limit] if lines else ""


def _check_solution(lesson: ReleasedLesson, path: Path, options: GradingOptions) -> str | None:
    """What is wrong with grading ``lesson``'s reference solution (None: full marks, no issue)."""
    result = grade_submission(Submission(path, "reference solution"),
                              {lesson.number: lesson}, options)
    if result.score >= lesson.max_points and not result.issues and result.status == "graded":
        return None
    failed = [f"{e.exercise} ({e.status}): {_first(e.message)}" if e.message.strip()
              else f"{e.exercise} ({e.status})" for e in result.exercises if not e.passed]
    issues = [f"{i.kind}: {_first(i.text)}" for i in result.issues]
    return (f"{lesson.key}: {result.score:g}/{lesson.max_points:g} (solution {path.name}); "
            + "; ".join(failed + issues))


def _check_released(lesson: ReleasedLesson, options: GradingOptions) -> str | None:
    """Run the released lesson's cells (all but the checks) as handed out; anything raised but
    an exercise's ``NotImplementedError`` is a problem of the setup."""
    assembly = assemble(lesson.notebook, lesson)
    cells = Assembly(steps=[step for step in assembly.steps if step.kind == "cell"])
    execution = run_assembly(cells, lesson, options)
    problems = [f"{step.label} raised {result.error}" + (f" at {result.where}" if result.where
                                                         else "")
                for step, result in zip(cells.steps, execution.steps)
                if result.status in ("error", "timeout")
                and not result.error.startswith("NotImplementedError")]
    problems += [f"{i.kind}: {_first(i.text)}" for i in execution.issues]
    if not problems:
        return None
    return f"{lesson.key} (released cells, no solution at hand): " + "; ".join(
        _first(p, 400) for p in problems)


def preflight(lessons: Mapping[int, ReleasedLesson], solutions: str | os.PathLike[str] | None,
              options: GradingOptions | None = None, use_cache: bool = True) -> Preflight:
    """Check the setup on every released lesson in the sandbox before grading anyone.

    Parameters
    ----------
    lessons : mapping
        The released lessons (:func:`~minigrad.course.grading.lessons.load_lessons`).
    solutions : path or None
        The folder of solution notebooks, named as the released ones. None: the checkout's
        ``solutions/``, when there is one. A lesson without a solution there has its released
        cells run instead.
    options : GradingOptions, optional
        The options the students will be graded with (the same sandbox).
    use_cache : bool
        Skip the run when this very setup (see the module's docstring) passed before.

    Returns
    -------
    Preflight
        "passed", "cached", "failed", or "skipped" (no lesson has exercises to check).
    """
    options = options or GradingOptions()
    folder = Path(solutions) if solutions is not None else default_solutions_dir()
    graded = {n: lesson for n, lesson in lessons.items() if lesson.exercises}
    if not graded:
        return Preflight("skipped", "preflight skipped: no released lesson has exercises")
    found = {} if folder is None or not folder.is_dir() else {
        n: folder / f"{lesson.key}.ipynb" for n, lesson in graded.items()
        if (folder / f"{lesson.key}.ipynb").is_file()}
    how = (f"{len(found)} solution notebook(s) got full marks with no issue"
           + (f", and the released cells of {len(graded) - len(found)} lesson(s) without a "
              "solution ran" if len(found) < len(graded) else "")) + " in the sandbox"
    key = _fingerprint(graded, found, options)
    if use_cache and key in _passed():
        return Preflight("cached", f"preflight passed before for this very setup "
                         f"(Python, packages, release, checks): {how}")
    problems = []
    with _ZYGOTES.kept():   # the lessons run one after another in one warm zygote
        for number, lesson in sorted(graded.items()):
            problem = _check_solution(lesson, found[number], options) if number in found \
                else _check_released(lesson, options)
            if problem:
                problems.append(problem)
    if problems:
        return Preflight("failed", "preflight failed: the lessons do not run cleanly in the "
                         "sandbox, so students would lose points for the setup, not their "
                         "work. Fix this first (a missing dependency? pip install "
                         "'minigrad-course[grade]'):\n  " + "\n  ".join(problems))
    _remember(key)
    return Preflight("passed", f"preflight passed: {how}")


def _passed() -> list[str]:
    """The setups whose preflight passed (their keys, in the cache file; [] when unreadable)."""
    try:
        known = json.loads(cache_file().read_text(encoding="utf-8")).get("passed", [])
    except (OSError, ValueError, AttributeError):
        return []
    return [str(k) for k in known] if isinstance(known, list) else []


def _remember(key: str) -> None:
    """Add ``key`` to the cache of passed setups (the last 21 kept), atomically; a cache
    that cannot be written is left alone."""
    cache = cache_file()
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"passed": [*_passed()[-20:], key]}), encoding="utf-8")
        os.replace(tmp, cache)
    except OSError:
        pass

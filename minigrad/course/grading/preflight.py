"""Preflight: grade the reference solutions once, in the same sandbox, before any student.

A missing dependency (``pip install ".[grade]"`` without matplotlib, say), a broken install or
a sandbox that cannot import the engine would otherwise give every student a low score with
status "graded". The solutions must get full marks; when they do not, grading stops with a
message that names the lesson, the exercise and what failed.

The solutions live in ``solutions/`` of a checkout (the wheel does not ship them) or in the
folder given as ``--solutions``; without them the preflight is skipped, and says so. A passed
preflight is remembered per installed version (the minigrad version, the released lessons,
the checks' and the solutions' contents, the sandbox setting), in the user's cache folder.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Mapping

from .lessons import ReleasedLesson
from .runner import _ZYGOTES, GradingOptions, grade_submission
from .submissions import Submission

__all__ = ["Preflight", "preflight", "default_solutions_dir", "cache_file"]


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


def _version() -> str:
    try:
        return metadata.version("minigrad-course")
    except metadata.PackageNotFoundError:
        return "unknown"


def _fingerprint(lessons: Mapping[int, ReleasedLesson], solutions: Mapping[int, Path],
                 options: GradingOptions) -> str:
    digest = hashlib.sha256()
    digest.update(f"{_version()} sandbox={options.sandbox}".encode())
    checks_files: set[Path] = set()
    for number in sorted(lessons):
        lesson = lessons[number]
        digest.update(f"{lesson.key}:{lesson.digest}".encode())
        path = solutions.get(number)
        digest.update(path.read_bytes() if path is not None else b"-")
        module = __import__(lesson.checks_module, fromlist=["_"])
        file = getattr(module, "__file__", None)
        if file:
            checks_files.add(Path(file))
            checks_files.add(Path(file).with_name("__init__.py"))
    for path in sorted(checks_files):
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def preflight(lessons: Mapping[int, ReleasedLesson], solutions: str | os.PathLike[str] | None,
              options: GradingOptions | None = None, use_cache: bool = True) -> Preflight:
    """Grade each lesson's reference solution in the sandbox; all must get full marks.

    Parameters
    ----------
    lessons : mapping
        The released lessons (:func:`~minigrad.course.grading.lessons.load_lessons`).
    solutions : path or None
        The folder of solution notebooks, named as the released ones. None: the checkout's
        ``solutions/``, when there is one.
    options : GradingOptions, optional
        The options the students will be graded with (the same sandbox).
    use_cache : bool
        Skip the run when this very setup passed before.
    """
    options = options or GradingOptions()
    folder = Path(solutions) if solutions is not None else default_solutions_dir()
    graded = {n: lesson for n, lesson in lessons.items() if lesson.exercises}
    if folder is None or not folder.is_dir():
        return Preflight("skipped", "preflight skipped: no solutions to check the setup with "
                         "(the wheel does not ship them; pass --solutions DIR)")
    found = {n: folder / f"{lesson.key}.ipynb" for n, lesson in graded.items()
             if (folder / f"{lesson.key}.ipynb").is_file()}
    if not found:
        return Preflight("skipped", f"preflight skipped: no solution notebook named as a "
                         f"released lesson in {folder}")
    key = _fingerprint(graded, found, options)
    cache = cache_file()
    if use_cache:
        try:
            if key in json.loads(cache.read_text(encoding="utf-8")).get("passed", []):
                return Preflight("cached", f"preflight passed before for this installation "
                                 f"({len(found)} solution notebook(s))")
        except (OSError, ValueError, AttributeError):
            pass
    problems = []
    with _ZYGOTES.kept():   # the solutions run one after another in one warm zygote
        for number, path in sorted(found.items()):
            lesson = graded[number]
            result = grade_submission(Submission(path, "reference solution"), {number: lesson},
                                      options)
            if result.score < lesson.max_points:
                failed = [f"{e.exercise} ({e.status}): {e.message.strip().splitlines()[0][:300]}"
                          if e.message.strip() else f"{e.exercise} ({e.status})"
                          for e in result.exercises if not e.passed]
                issues = [f"{i.kind}: {i.text.splitlines()[0][:300]}" for i in result.issues]
                problems.append(f"{lesson.key}: {result.score:g}/{lesson.max_points:g}; "
                                + "; ".join(failed + issues))
    if problems:
        return Preflight("failed", "preflight failed: the reference solutions do not get full "
                         "marks in the sandbox, so students would lose points for the setup, "
                         "not their work. Fix this first (a missing dependency? pip install "
                         "'minigrad-course[grade]'):\n  " + "\n  ".join(problems))
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        try:
            known = json.loads(cache.read_text(encoding="utf-8")).get("passed", [])
        except (OSError, ValueError, AttributeError):
            known = []
        tmp = cache.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"passed": [*known[-20:], key]}), encoding="utf-8")
        os.replace(tmp, cache)
    except OSError:
        pass
    return Preflight("passed", f"preflight passed: {len(found)} solution notebook(s) got full "
                     "marks in the sandbox")

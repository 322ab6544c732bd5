"""A Gradescope autograder: ``minigrad-grade gradescope-autograder --out autograder.zip``.

Gradescope's programming assignments run an autograder zip in a fresh container per
submission: ``setup.sh`` once, as root, while the image is built; then ``run_autograder`` for
each submission, which finds the student's files in ``/autograder/submission/``, who they are
in ``/autograder/submission_metadata.json``, and writes ``/autograder/results/results.json``.

The zip made here:

* ``setup.sh`` installs Python, bubblewrap (where the image allows) and this package with its
  ``grade`` extra into ``/opt/minigrad``, then runs ``python -m
  minigrad.course.grading.gradescope setup``: the preflight, once, so a broken install fails
  the image build instead of every student;
* ``run_autograder`` runs ``python -m minigrad.course.grading.gradescope run``: it grades the
  one submission and writes ``results.json`` with one test per exercise (``name``, ``number``,
  ``score``, ``max_score``, ``status``, ``output`` = the check's message under the feedback
  policy, ``visibility``), the total ``score`` and an ``output`` that says how it was isolated.

Isolation is probed on every run: bubblewrap when it may make namespaces in the container;
where it may not and the autograder is root (Gradescope's case), each notebook runs as a user
id of its own, which cannot write ``results.json`` (the results folder is root's, 0755) nor
read the autograder's files (``/autograder/source`` is made 0700); otherwise only a zip built
with ``--no-sandbox`` grades, and says so loudly in the output. Gradescope's container is per
submission, so nothing a student does outlives their own run.

``MINIGRAD_GRADESCOPE_ROOT`` moves ``/autograder`` (the tests use a temporary tree).
"""
from __future__ import annotations

import argparse
import json
import os
import stat
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any, Sequence

from .feedback import POLICIES, shown_message

__all__ = ["VISIBILITIES", "autograder_root", "build_autograder", "isolation", "run",
           "results_for", "main"]

#: Gradescope's visibility settings of a test (and of the whole result).
VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")
_ROOT_ENV = "MINIGRAD_GRADESCOPE_ROOT"

_SETUP = """\
#!/usr/bin/env bash
# minigrad's Gradescope autograder: set up once, as root, while Gradescope builds the image.
set -euo pipefail
if command -v apt-get >/dev/null; then
    apt-get update
    apt-get install -y --no-install-recommends python3 python3-venv python3-pip
    apt-get install -y --no-install-recommends bubblewrap \\
        || echo "minigrad: bubblewrap could not be installed; notebooks will run as a user of their own"
fi
python3 -m venv /opt/minigrad
/opt/minigrad/bin/python -m pip install --upgrade pip
/opt/minigrad/bin/python -m pip install {requirement}
/opt/minigrad/bin/python -m minigrad.course.grading.gradescope setup {flags}
"""

_RUN = """\
#!/usr/bin/env bash
# minigrad's Gradescope autograder: grade the one submission in /autograder/submission/.
exec "${{MINIGRAD_PYTHON:-/opt/minigrad/bin/python}}" -m minigrad.course.grading.gradescope run {flags}
"""


def autograder_root() -> Path:
    """``/autograder``, or the folder ``MINIGRAD_GRADESCOPE_ROOT`` names."""
    return Path(os.environ.get(_ROOT_ENV) or "/autograder")


def _default_requirement() -> str:
    from importlib import metadata
    try:
        return f"'minigrad-course[grade]=={metadata.version('minigrad-course')}'"
    except metadata.PackageNotFoundError:
        return "'minigrad-course[grade]'"


def build_autograder(out: str | os.PathLike[str], *, visibility: str = "after_published",
                     feedback: str = "cases", no_sandbox: bool = False,
                     requirement: str | None = None) -> Path:
    """Write the autograder zip ``out`` (``setup.sh``, ``run_autograder``); returns its path.

    ``visibility``: each test's Gradescope visibility; ``feedback``: the policy of the tests'
    output (:mod:`.feedback`); ``no_sandbox``: grade even where neither bubblewrap nor a user
    of its own can isolate the notebook; ``requirement``: what ``setup.sh`` installs with pip
    (default: this version of ``minigrad-course[grade]``; a wheel put into the zip's folder,
    say, as ``/autograder/source/minigrad_course-...whl[grade]``).
    """
    if visibility not in VISIBILITIES:
        raise ValueError(f"visibility must be one of {', '.join(VISIBILITIES)}; got "
                         f"{visibility!r}")
    if feedback not in POLICIES:
        raise ValueError(f"feedback must be one of {', '.join(POLICIES)}; got {feedback!r}")
    flags = f"--visibility {visibility} --feedback {feedback}" + (" --no-sandbox" * no_sandbox)
    files = {"setup.sh": _SETUP.format(requirement=requirement or _default_requirement(),
                                       flags="--no-sandbox" * no_sandbox),
             "run_autograder": _RUN.format(flags=flags)}
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in files.items():
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = (stat.S_IFREG | 0o755) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, text)
    return out


def isolation(no_sandbox: bool = False) -> tuple[str, str]:
    """How notebooks can be isolated here: ``(mode, note)``, mode ``"bubblewrap"``,
    ``"own user"`` or ``"none"``; raises RuntimeError when none is allowed."""
    from .sandbox import available

    why = available()
    if why is None:
        return "bubblewrap", "each notebook ran in a bubblewrap sandbox"
    if os.getuid() == 0:
        unreadable = _unreadable_python()
        if unreadable:
            raise RuntimeError(f"bubblewrap is unavailable here ({why}), and a user id of its "
                               f"own cannot run this Python ({unreadable}); install it where "
                               "every user may read it (setup.sh uses /opt/minigrad)")
        return "own user", (f"bubblewrap is unavailable here ({why}); each notebook ran as a "
                            "user id of its own, which cannot write the results or read the "
                            "autograder's files, in this submission's own container")
    if no_sandbox:
        return "none", (f"WARNING: NO SANDBOX: bubblewrap is unavailable ({why}) and the "
                        "autograder is not root; the notebook ran with the autograder's own "
                        "rights (built with --no-sandbox)")
    raise RuntimeError(f"cannot isolate the notebook: bubblewrap is unavailable ({why}) and "
                       "the autograder is not root; rebuild the zip with --no-sandbox to grade "
                       "without isolation")


def _unreadable_python(uid: int = 61000) -> str:
    """Why a process of ``uid`` cannot import this Python's standard library and minigrad
    ("" when it can): tried in a fork that drops to ``uid``."""
    import minigrad

    places = [os.path.dirname(os.__file__), os.path.dirname(os.path.dirname(minigrad.__file__))]
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:   # pragma: no cover -- the child
        os.close(read)
        message = b""
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            for place in places:
                os.listdir(place)
        except OSError as exc:
            message = str(exc).encode()[:500]
        os.write(write, message)
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as f:
        answer = f.read().decode(errors="replace")
    os.waitpid(pid, 0)
    return answer


def _options(mode: str):  # type: ignore[no-untyped-def]
    from .runner import GradingOptions
    return GradingOptions(sandbox=mode == "bubblewrap", own_user=mode == "own user")


def _student(root: Path) -> str:
    try:
        data = json.loads((root / "submission_metadata.json").read_text(encoding="utf-8"))
        users = data.get("users") or []
        names = [str(u.get("email") or u.get("name") or u.get("id") or "") for u in users
                 if isinstance(u, dict)]
        return ", ".join(n for n in names if n) or "submission"
    except (OSError, ValueError, AttributeError):
        return "submission"


def results_for(book, student: str, visibility: str, feedback: str,  # type: ignore[no-untyped-def]
                note: str) -> dict[str, Any]:
    """Gradescope's ``results.json`` for the one student of ``book``."""
    tests, lines, total = [], [f"Graded as {student}: {note}."], 0.0
    mine = book.notebooks      # all of them are this student's, whatever their file names say
    for key in book.lesson_keys():
        best = min((n for n in mine if n.lesson == key), key=lambda n: (-n.score, n.path),
                   default=None)
        if best is None:
            continue
        total += best.score
        lines.append(f"{key}: {best.score:g} / {best.max_score:g} points "
                     f"({Path(best.path).name})")
        for e in best.exercises:
            shown = shown_message(e.message, feedback) if e.status == "failed" else ""
            tests.append({"name": f"{e.exercise} {e.title}", "number": e.exercise,
                          "score": e.points, "max_score": e.max_points,
                          "status": "passed" if e.passed else "failed",
                          "output": shown or e.status, "visibility": visibility})
        lines += [f"  {i.kind}: {i.text.splitlines()[0] if i.text else ''}" for i in best.issues]
    for n in mine:
        if n.lesson is None:
            lines.append(f"{Path(n.path).name}: {n.status}; "
                         + "; ".join(i.text.splitlines()[0] for i in n.issues if i.text))
    for lost in book.unattributed:
        lines.append(f"{Path(lost['path']).name}: not graded ({lost['why']})")
    if not mine and not book.unattributed:
        lines.append("no notebook (.ipynb) was found in the submission")
    return {"score": total, "output": "\n".join(lines), "visibility": visibility,
            "stdout_visibility": "hidden", "tests": tests}


def _write_results(root: Path, results: dict[str, Any]) -> Path:
    folder = root / "results"
    folder.mkdir(parents=True, exist_ok=True)
    if os.getuid() == 0:
        os.chown(folder, 0, 0)
    os.chmod(folder, 0o755)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".results.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(results, f, indent=1)
    os.chmod(tmp, 0o644)
    target = folder / "results.json"
    os.replace(tmp, target)
    return target


def _lock_down(root: Path) -> None:
    """The autograder's files and the results only root may touch (the notebooks run as other
    users): ``source/`` 0700, ``results/`` root's and 0755."""
    if os.getuid() != 0:
        return
    for folder, mode in ((root / "source", 0o700), (root / "results", 0o755)):
        if folder.is_dir():
            os.chown(folder, 0, 0)
            os.chmod(folder, mode)


def run(root: str | os.PathLike[str] | None = None, *, visibility: str = "after_published",
        feedback: str = "cases", no_sandbox: bool = False) -> dict[str, Any]:
    """Grade ``root/submission/`` and write ``root/results/results.json``; returns the results.

    A setup that cannot grade (no isolation, no released lessons) still writes a result: score
    0 and the reason, so the student and the instructor see why instead of a blank.
    """
    from .runner import grade

    root = Path(root) if root is not None else autograder_root()
    student = _student(root)
    try:
        mode, note = isolation(no_sandbox)
        _lock_down(root)
        submission = root / "submission"
        if not any(submission.rglob("*.ipynb")):
            from .results import Gradebook
            book = Gradebook(lessons=[], notebooks=[])
        else:   # every notebook is this student's, whatever its file name says
            import dataclasses

            from .submissions import Found, Submission, scan
            found = scan([submission])
            book = grade([submission], options=_options(mode), found=Found(
                [dataclasses.replace(s, student=student) for s in found.submissions]
                + [Submission(u.path, student) for u in found.unattributed]))
        results = results_for(book, student, visibility, feedback, note)
    except Exception as exc:   # noqa: BLE001 -- shown to the instructor, never a blank result
        results = {"score": 0, "output": f"The autograder could not grade this submission: "
                   f"{type(exc).__name__}: {exc}", "visibility": "visible", "tests": []}
    _write_results(root, results)
    return results


def setup(no_sandbox: bool = False) -> int:
    """Run the preflight once (while the image is built); 0 when it passed."""
    from .lessons import load_lessons
    from .preflight import preflight
    from .runner import _ZYGOTES

    mode, note = isolation(no_sandbox)
    print(f"minigrad: isolation here: {mode} ({note})")
    with _ZYGOTES.kept():
        checked = preflight(load_lessons(), None, _options(mode))
    print(f"minigrad: {checked.message}")
    _lock_down(autograder_root())
    return 0 if checked.ok else 1


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m minigrad.course.grading.gradescope setup|run`` (what the zip's scripts run)."""
    p = argparse.ArgumentParser(prog="python -m minigrad.course.grading.gradescope")
    p.add_argument("command", choices=("setup", "run"))
    p.add_argument("--visibility", choices=VISIBILITIES, default="after_published")
    p.add_argument("--feedback", choices=POLICIES, default="cases")
    p.add_argument("--no-sandbox", action="store_true")
    args = p.parse_args(argv)
    # (as cli.main: nbformat's validator does without rfc3987_syntax's slow import)
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]
    if args.command == "setup":
        return setup(args.no_sandbox)
    results = run(visibility=args.visibility, feedback=args.feedback, no_sandbox=args.no_sandbox)
    print(f"minigrad: score {results['score']:g}, {len(results['tests'])} test(s)")
    return 0


def cli(argv: Sequence[str]) -> int:
    """``minigrad-grade gradescope-autograder --out autograder.zip [...]``."""
    p = argparse.ArgumentParser(prog="minigrad-grade gradescope-autograder",
                                description="Build a Gradescope autograder zip (setup.sh, "
                                            "run_autograder) that grades one submission with "
                                            "minigrad-grade and writes results.json.")
    p.add_argument("--out", default="autograder.zip", metavar="ZIP",
                   help="the zip to write (default: %(default)s)")
    p.add_argument("--visibility", choices=VISIBILITIES, default="after_published",
                   help="when students see each test (default: %(default)s)")
    p.add_argument("--feedback", choices=POLICIES, default="cases",
                   help="what a test's output shows (default: %(default)s)")
    p.add_argument("--requirement", metavar="PIP_SPEC",
                   help="what setup.sh installs with pip (default: this version of "
                        "minigrad-course[grade])")
    p.add_argument("--no-sandbox", action="store_true",
                   help="grade even where the notebook cannot be isolated (it then runs with "
                        "the autograder's rights; results say so)")
    args = p.parse_args(argv)
    path = build_autograder(args.out, visibility=args.visibility, feedback=args.feedback,
                            no_sandbox=args.no_sandbox, requirement=args.requirement)
    print(f"gradescope: wrote {path} (upload it as the assignment's autograder)")
    if args.no_sandbox:
        print("gradescope: warning: --no-sandbox: where bubblewrap is refused and the "
              "autograder is not root, notebooks run with the autograder's rights",
              file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

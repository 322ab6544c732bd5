"""The ``minigrad-grade`` command (also ``python -m minigrad.course.grading``).

Exit status: 0 when grading finished, whatever the scores; 2 when the grader could not run
(bad arguments, no released lessons, no notebooks found, no sandbox, a failed preflight); 130
when interrupted.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

__all__ = ["main", "parser"]

_EPILOG = """\
layout: submissions/<student>/<NN>_<anything>.ipynb (one folder per student), or
submissions/<student>_<NN>_<anything>.ipynb (a flat export); a notebook given directly is
its folder's student's.

examples:
  minigrad-grade submissions/ --jobs 4           grade everyone into grading-report/
  minigrad-grade submissions/ --student alice    regrade alice; merge into the report
  minigrad-grade --list-lessons                  what was released, with the points

Each notebook runs in a bubblewrap sandbox (apt-get install bubblewrap); before the students,
the reference solutions are graded once in it (the preflight) and must get full marks.
"""


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="minigrad-grade", epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Grade minigrad lesson notebooks: run each in its own sandbox with the "
                    "released lesson's cells, judge the checks' results here, and write a "
                    "report.")
    p.add_argument("paths", nargs="*", metavar="PATH", help="notebooks or folders of them")
    p.add_argument("-o", "--out", default="grading-report", metavar="DIR",
                   help="folder for grades.csv, exercises.csv, grades.json and feedback/ "
                        "(default: %(default)s)")
    p.add_argument("-j", "--jobs", type=int, default=1, metavar="N",
                   help="notebooks to grade at once, each in its own sandbox (default: 1)")
    p.add_argument("--student", action="append", metavar="NAME",
                   help="grade only this student (repeatable); their rows replace the old ones "
                        "in an existing report in --out")
    p.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS",
                   help="time limit of one cell or check (default: %(default)g)")
    p.add_argument("--notebook-timeout", type=float, default=600.0, metavar="SECONDS",
                   help="time limit of all of a notebook's cells and checks together "
                        "(default: %(default)g)")
    p.add_argument("--released", metavar="DIR",
                   help="folder of released lessons (default: those shipped with minigrad)")
    p.add_argument("--checks-package", metavar="NAME",
                   help="package with the lessonN checks modules (default: minigrad.course.checks)")
    p.add_argument("--memory", type=float, default=2.0, metavar="GIB",
                   help="memory (address space) one notebook may use, in GiB (default: "
                        "%(default)g)")
    p.add_argument("--no-sandbox", action="store_true",
                   help="run notebooks without bubblewrap, with your rights (they can read and "
                        "change your files, see your environment, use the network): only in a "
                        "throwaway container")
    p.add_argument("--solutions", metavar="DIR",
                   help="reference solution notebooks for the preflight (default: solutions/ "
                        "of the checkout, if any)")
    p.add_argument("--no-preflight", action="store_true",
                   help="do not grade the reference solutions first")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("-q", "--quiet", action="store_true", help="no summary on the terminal")
    p.add_argument("--list-lessons", action="store_true",
                   help="list the released lessons and their exercises' points, then exit")
    return p


def _list_lessons(released: str | None, checks_package: str | None) -> int:
    from .lessons import load_lessons
    lessons = load_lessons(released, checks_package)
    for lesson in sorted(lessons.values(), key=lambda lesson: lesson.number):
        print(f"{lesson.key} ({lesson.max_points:g} points, release {lesson.digest})")
        for exercise_id, info in lesson.exercises.items():
            print(f"  {exercise_id:6} {info['points']:>4g}  {info['title']}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the grader from the command line; returns the exit status."""
    p = parser()
    args = p.parse_args(argv)
    if args.jobs < 1:
        p.error(f"--jobs must be at least 1; got {args.jobs}")
    if args.timeout <= 0 or args.notebook_timeout <= 0:
        p.error("time limits must be positive")
    # nbformat validates with jsonschema, which imports rfc3987_syntax when it is installed;
    # that builds some forty grammars on import (3 s of CPU, a tenth of grading a class), for
    # IRI formats that the notebook schema never uses. The grader does without it.
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]
    try:
        from .lessons import LessonError
        from .report import summary
        from .runner import _ZYGOTES, GraderError, GradingOptions, grade
    except ModuleNotFoundError as exc:
        from . import MISSING
        print(f"minigrad-grade: error: {MISSING.format(exc.name)}", file=sys.stderr)
        return 2
    try:
        if args.list_lessons:
            return _list_lessons(args.released, args.checks_package)
        if not args.paths:
            p.error("give at least one notebook or folder of submissions")
        options = GradingOptions(cell_timeout=args.timeout, notebook_timeout=args.notebook_timeout,
                                 sandbox=not args.no_sandbox, memory=int(args.memory * 2**30))
        if args.no_sandbox:
            print("minigrad-grade: warning: --no-sandbox: the notebooks run with your rights; "
                  "a submission can read and change your files, see your environment, use the "
                  "network and leave processes behind", file=sys.stderr)
        with _ZYGOTES.kept():   # the preflight's warm zygote serves the students too
            if not args.no_preflight:
                from .lessons import load_lessons
                from .preflight import preflight
                from .sandbox import available
                if options.sandbox and available() is not None:
                    raise GraderError(f"no sandbox: {available()}; --no-sandbox runs the "
                                      "notebooks with your rights: use it only in a throwaway "
                                      "container")
                checked = preflight(load_lessons(args.released, args.checks_package),
                                    args.solutions, options)
                if not checked.ok:
                    raise GraderError(checked.message)
                if not args.quiet:
                    print(checked.message, file=sys.stderr)
            book = grade(args.paths, students=args.student, jobs=args.jobs,
                         released=args.released, checks_package=args.checks_package,
                         options=options, progress=False if args.no_progress else None)
    except (GraderError, LessonError) as exc:
        print(f"minigrad-grade: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        book = getattr(exc, "gradebook", None)   # runner.Interrupted: what had finished
        if book is None or not book.notebooks:
            print("minigrad-grade: interrupted; no report written", file=sys.stderr)
            return 130
        _write(book, Path(args.out), args.student)
        print(f"minigrad-grade: interrupted; the report in {args.out} holds the "
              f"{len(book.notebooks)} notebook(s) that had finished", file=sys.stderr)
        return 130
    out = Path(args.out)
    book = _write(book, out, args.student)
    if not args.quiet:
        print(summary(book, out))
    return 0


def _write(book: object, out: Path, students: Sequence[str] | None) -> object:
    """Write the report (a ``--student`` regrade merged into the one in ``out``)."""
    from .report import read_gradebook, write_report
    if students:
        previous = read_gradebook(out)
        if previous is not None:
            book = previous.merged(book, students)
    write_report(book, out)
    return book


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

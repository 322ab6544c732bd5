"""The ``minigrad-grade`` command (also ``python -m minigrad.course.grading``).

Exit status: 0 when grading finished, whatever the scores; 2 when the grader could not run
(bad arguments, no released lessons, no notebooks found, no sandbox, a failed preflight); 130
when interrupted.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from .results import Gradebook
    from .runner import GradingOptions

__all__ = ["main", "parser"]

_EPILOG = """\
layout: submissions/<student>/<anything>.ipynb (a folder per student), or a flat LMS
export: Canvas lastfirst_[LATE_]ID_FILEID_name, Blackboard Assignment_user_attempt_date_name,
Moodle Full Name_NNN_assignsubmission_file_name, or <student>_<NN>_name. The lesson is the
NN_ prefix after the student part, else the notebook's own cells. A file that names no
student is listed in unattributed.csv, never graded as anyone's.

examples:
  minigrad-grade submissions/ --jobs 4           grade everyone into grading-report/
  minigrad-grade submissions/ --student alice    regrade alice; merge into the report
  minigrad-grade lesson2/ --merge                add lesson 2 to the report, keep the rest
  minigrad-grade submissions/ --resume           continue an interrupted run (journal.jsonl)
  minigrad-grade submissions/ --roster gradebook.csv   name students as the roster does
  minigrad-grade submissions/ --shard 0/4 --secret course.key --out part0
  minigrad-grade merge part0 part1 part2 part3 --out grading-report
  minigrad-grade gradescope-autograder --out autograder.zip   Gradescope's autograder zip
  minigrad-grade submissions/ --roster canvas-export.csv --format canvas
  minigrad-grade export grading-report --format moodle --moodle-worksheet 1=worksheet.csv
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
    _report_options(p)
    _sandbox_options(p)
    _format_options(p, run=True)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("-q", "--quiet", action="store_true", help="no summary on the terminal")
    p.add_argument("--list-lessons", action="store_true",
                   help="list the released lessons and their exercises' points, then exit")
    return p


def _report_options(p: argparse.ArgumentParser) -> None:
    """Where the report goes, and which part of the class this run grades into it."""
    p.add_argument("-o", "--out", default="grading-report", metavar="DIR",
                   help="folder for grades.csv, exercises.csv, grades.json and feedback/ "
                        "(default: %(default)s)")
    p.add_argument("-j", "--jobs", type=int, default=1, metavar="N",
                   help="notebooks to grade at once, each in its own sandbox (default: 1)")
    p.add_argument("--student", action="append", metavar="NAME",
                   help="grade only this student (repeatable); their rows replace the old ones "
                        "in an existing report in --out")
    p.add_argument("--merge", action="store_true",
                   help="merge into the report in --out: the (student, lesson) rows this run "
                        "grades replace the old ones, the others stay (without it, a run that "
                        "would drop rows of an existing report refuses)")
    p.add_argument("--resume", action="store_true",
                   help="continue the interrupted run whose journal is in --out, without "
                        "grading again what it finished")
    p.add_argument("--roster", metavar="CSV",
                   help="the class list: login, name, SIS id, section (or a Canvas gradebook "
                        "export as it is); names students and flags logins it lacks and "
                        "students with nothing handed in")
    p.add_argument("--due", action="append", default=[], metavar="[LESSON=]DATE",
                   help="the due date of a lesson (repeatable; LESSON= left out: every lesson), "
                        "as YYYY-MM-DDTHH:MM[:SS] in the time of Blackboard's file names: a "
                        "Blackboard attempt dated after it is marked late (Canvas names late "
                        "files itself)")
    p.add_argument("--shard", metavar="I/N",
                   help="grade only shard I (0 to N-1) of N, by student; join the shards' "
                        "reports with `minigrad-grade merge`")
    p.add_argument("--secret", metavar="FILE",
                   help="the course's probe secret (made when missing; default: .secret in "
                        "--out); give every shard the same file")


def _sandbox_options(p: argparse.ArgumentParser) -> None:
    """Time limits, the released lessons, the sandbox and the preflight."""
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
                   help="do not check the setup first (without it, a preflight that cannot "
                        "run stops the grader)")


def _format_options(p: argparse.ArgumentParser, run: bool) -> None:
    """--feedback and the gradebook files (``run``: of a grading run; else of a merge, which
    also takes the Canvas export, as a run takes it with --roster)."""
    p.add_argument("--feedback", choices=("full", "cases", "score"), default="full",
                   help="what the students' feedback pages show: full (each failed check's "
                        "message with the usual cause of the mistake), cases (the failing case "
                        "and expected vs got, no cause) or score (points only); default "
                        "%(default)s; exercises.csv always has the whole message")
    p.add_argument("--format", action="append", metavar="FORMAT",
                   help="gradebook files to write besides the report, repeatable or "
                        "comma-separated: csv (grades.csv, always written), canvas (canvas.csv, "
                        "Canvas's gradebook import; needs --roster to be the Canvas export), "
                        "moodle (moodle-NN.csv, the grading worksheet filled in; needs "
                        "--moodle-worksheet), nbgrader (nbgrader.csv, nbgrader export's "
                        "columns)")
    if not run:
        p.add_argument("--roster", metavar="CSV",
                       help="the Canvas gradebook export (for --format canvas)")
    p.add_argument("--canvas-assignment", action="append", default=[], metavar="LESSON=ID",
                   help="the Canvas assignment id of a lesson, when the export's columns do "
                        "not say it (repeatable), e.g. 1=1234")
    p.add_argument("--moodle-worksheet", action="append", default=[], metavar="[LESSON=]CSV",
                   help="the grading worksheet downloaded from the Moodle assignment of a "
                        "lesson (repeatable; LESSON= may be left out when one lesson is graded)")


def parse_due(given: Sequence[str]) -> dict[int | None, str]:
    """``["1=2026-09-01T12:00", "2026-10-01T09:30"]`` as ``{1: ..., None: ...}`` (None: every
    lesson without one of its own).

    Raises
    ------
    ValueError
        Naming the item that is not ``[LESSON=]YYYY-MM-DDTHH:MM[:SS]``.
    """
    import datetime
    due: dict[int | None, str] = {}
    for item in given:
        lesson, sep, when = item.rpartition("=")
        try:
            number = int(lesson) if sep else None
            datetime.datetime.fromisoformat(when)
        except ValueError:
            raise ValueError(f"--due expects [LESSON=]YYYY-MM-DDTHH:MM[:SS] (such as "
                             f"1=2026-09-01T12:00); got {item!r}") from None
        due[number] = when
    return due


def _list_lessons(released: str | None, checks_package: str | None) -> int:
    from .lessons import load_lessons
    lessons = load_lessons(released, checks_package)
    for lesson in sorted(lessons.values(), key=lambda lesson: lesson.number):
        print(f"{lesson.key} ({lesson.max_points:g} points, release {lesson.release})")
        for exercise_id, info in lesson.exercises.items():
            print(f"  {exercise_id:6} {info['points']:>4g}  {info['title']}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the grader from the command line; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["merge"]:
        return _merge(argv[1:])
    if argv[:1] == ["export"]:
        return _export(argv[1:])
    if argv[:1] == ["gradescope-autograder"]:
        from .gradescope import cli
        return cli(argv[1:])
    p = parser()
    args = p.parse_args(argv)
    shard, wanted = _checked(p, args)
    # nbformat validates with jsonschema, which imports rfc3987_syntax when it is installed;
    # that builds some forty grammars on import (3 s of CPU, a tenth of grading a class), for
    # IRI formats that the notebook schema never uses. The grader does without it.
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]
    try:
        from . import batch, report  # noqa: F401  (what grading needs, imported here to say
        from .lessons import LessonError   # what is missing instead of a traceback)
        from .runner import GraderError
    except ModuleNotFoundError as exc:
        from . import MISSING
        print(f"minigrad-grade: error: {MISSING.format(exc.name)}", file=sys.stderr)
        return 2
    try:
        if args.list_lessons:
            return _list_lessons(args.released, args.checks_package)
        if not args.paths:
            p.error("give at least one notebook or folder of submissions")
        book = _grade(args, shard)
        if _write_gradebooks(book, args.out, wanted, args.roster, args.feedback, args.quiet,
                             again=f"minigrad-grade export {args.out} --format ..."):
            return 2
    except (GraderError, LessonError) as exc:
        print(f"minigrad-grade: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        return _interrupted(exc, args.out)
    if not args.quiet:
        from .report import summary
        print(summary(book, Path(args.out)))
    return 0


class _Wanted:
    """The gradebook files asked for: ``--format`` and what they need, checked."""

    def __init__(self, args: argparse.Namespace, formats: list[str] | None, roster: str | None
                 ) -> None:
        from .formats import parse_lesson_ids
        self.formats = [f.strip() for given in (formats or ["csv"]) for f in given.split(",")
                        if f.strip()]
        self.canvas_ids = parse_lesson_ids(args.canvas_assignment, "--canvas-assignment")
        self.worksheets: list[tuple[int | None, str]] = [
            (int(w.partition("=")[0]), w.partition("=")[2]) if re.match(r"^\d+=", w)
            else (None, w) for w in args.moodle_worksheet]
        _formats_ready(self.formats, roster, self.worksheets)


def _checked(p: argparse.ArgumentParser, args: argparse.Namespace
             ) -> tuple[tuple[int, int] | None, _Wanted]:
    """The shard and the gradebook files of a run's arguments; ``p.error`` where they do
    not fit."""
    shard = None
    if args.shard is not None:
        from .batch import parse_shard
        try:
            shard = parse_shard(args.shard)
        except ValueError as exc:
            p.error(str(exc))
    if args.merge and args.student:
        p.error("--merge and --student both merge; give one")
    if args.jobs < 1:
        p.error(f"--jobs must be at least 1; got {args.jobs}")
    if args.timeout <= 0 or args.notebook_timeout <= 0:
        p.error("time limits must be positive")
    try:
        args.due = parse_due(args.due)
    except ValueError as exc:
        p.error(str(exc))
    from .formats import FormatError
    try:
        return shard, _Wanted(args, args.format, args.roster)
    except FormatError as exc:
        p.error(str(exc))


def _grade(args: argparse.Namespace, shard: tuple[int, int] | None) -> Gradebook:
    """The preflight (unless --no-preflight), then the class graded into --out."""
    from .batch import grade_class
    from .runner import _ZYGOTES, GradingOptions
    options = GradingOptions(cell_timeout=args.timeout, notebook_timeout=args.notebook_timeout,
                             sandbox=not args.no_sandbox, memory=int(args.memory * 2**30),
                             due=args.due)
    if args.no_sandbox:
        print("minigrad-grade: warning: --no-sandbox: the notebooks run with your rights; "
              "a submission can read and change your files, see your environment, use the "
              "network and leave processes behind", file=sys.stderr)
    with _ZYGOTES.kept():   # the preflight's warm zygote serves the students too
        if not args.no_preflight:
            _preflight(args, options)
        return grade_class(args.paths, args.out, students=args.student, merge=args.merge,
                           resume=args.resume, roster=args.roster, shard=shard,
                           secret=args.secret, jobs=args.jobs, released=args.released,
                           checks_package=args.checks_package, options=options,
                           progress=False if args.no_progress else None,
                           feedback=args.feedback)


def _preflight(args: argparse.Namespace, options: GradingOptions) -> None:
    """Grade the reference solutions first; a :class:`.runner.GraderError` when they do not
    pass, or the preflight cannot run."""
    from .lessons import load_lessons
    from .preflight import preflight
    from .runner import GraderError
    from .sandbox import available
    if options.sandbox and available() is not None:
        raise GraderError(f"no sandbox: {available()}; --no-sandbox runs the "
                          "notebooks with your rights: use it only in a throwaway "
                          "container")
    checked = preflight(load_lessons(args.released, args.checks_package),
                        args.solutions, options)
    if not checked.ok:
        raise GraderError(checked.message)
    if checked.status == "skipped":
        raise GraderError(checked.message + "; --no-preflight grades without it")
    if not args.quiet:
        print(checked.message, file=sys.stderr)


def _write_gradebooks(book: Gradebook, out: str, wanted: _Wanted, roster: str | None,
                      policy: str, quiet: bool, again: str) -> bool:
    """Write the gradebook files of ``wanted`` beside the report; True when one could not
    be made (said on stderr, with ``again``: the command that makes it later)."""
    if wanted.formats == ["csv"]:
        return False
    from .formats import FormatError, write_formats
    try:
        for line in write_formats(book, out, wanted.formats, roster=roster,
                                  canvas_assignments=wanted.canvas_ids,
                                  moodle_worksheets=wanted.worksheets, policy=policy):
            if not quiet:
                print(line, file=sys.stderr)
    except FormatError as exc:
        print(f"minigrad-grade: error: {exc} (the report in {out} is written; make the file "
              f"from it, without grading again, with: {again})", file=sys.stderr)
        return True
    return False


def _interrupted(exc: KeyboardInterrupt, out: str) -> int:
    book = getattr(exc, "gradebook", None)   # runner.Interrupted: what had finished
    if book is None or not book.notebooks:
        print("minigrad-grade: interrupted; no report written", file=sys.stderr)
        return 130
    print(f"minigrad-grade: interrupted; the report in {out} holds the "
          f"{len(book.notebooks)} notebook(s) that had finished (merged into the old "
          "one); --resume continues the run", file=sys.stderr)
    return 130


def _formats_ready(formats: list[str], roster: str | None,
                   worksheets: list[tuple[int | None, str]]) -> None:
    """Raise :class:`.formats.FormatError` before grading when ``formats`` cannot be written."""
    from .formats import FORMATS, FormatError
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise FormatError(f"--format must be among {', '.join(FORMATS)}; got {unknown}")
    if "canvas" in formats and roster is None:
        raise FormatError("--format canvas needs --roster: the gradebook export of the Canvas "
                          "course (Grades > Export > Export Entire Gradebook)")
    if "moodle" in formats and not worksheets:
        raise FormatError("--format moodle needs --moodle-worksheet [LESSON=]FILE: the worksheet "
                          "downloaded from the Moodle assignment")
    if worksheets and "moodle" not in formats:
        raise FormatError("--moodle-worksheet is given but --format lacks moodle")
    for _, path in worksheets:
        if not os.path.isfile(path):
            raise FormatError(f"--moodle-worksheet {path}: no such file")
    if "canvas" in formats and roster is not None:   # its columns, before anything is graded
        from .formats import canvas_rows
        from .results import Gradebook
        canvas_rows(Gradebook(lessons=[], notebooks=[]), roster)


def _export(argv: Sequence[str]) -> int:
    """``minigrad-grade export REPORT --format ...``: the gradebook files of a written report."""
    p = argparse.ArgumentParser(prog="minigrad-grade export",
                                description="Write the gradebook files of --format from a "
                                            "report minigrad-grade wrote, without grading.")
    p.add_argument("report", metavar="REPORT", help="the report folder (its grades.json)")
    p.add_argument("--format", action="append", required=True, metavar="FORMAT",
                   help="canvas, moodle, nbgrader (repeatable or comma-separated)")
    p.add_argument("--roster", metavar="CSV", help="the Canvas gradebook export (canvas)")
    p.add_argument("--canvas-assignment", action="append", default=[], metavar="LESSON=ID")
    p.add_argument("--moodle-worksheet", action="append", default=[], metavar="[LESSON=]CSV")
    p.add_argument("--feedback", choices=("full", "cases", "score"), default="full",
                   help="what Moodle's feedback comments show (default: %(default)s)")
    args = p.parse_args(argv)
    from .formats import FormatError, write_formats
    from .report import read_gradebook
    try:
        wanted = _Wanted(args, args.format, args.roster)
        book = read_gradebook(args.report)
        if book is None:
            raise FormatError(f"{args.report}: no grades.json (not a minigrad-grade report)")
        for line in write_formats(book, args.report, wanted.formats, roster=args.roster,
                                  canvas_assignments=wanted.canvas_ids,
                                  moodle_worksheets=wanted.worksheets, policy=args.feedback):
            print(line)
    except FormatError as exc:
        print(f"minigrad-grade export: error: {exc}", file=sys.stderr)
        return 2
    return 0


def _merge(argv: Sequence[str]) -> int:
    """``minigrad-grade merge REPORT... --out DIR``: join shard reports into one, with the
    feedback pages and gradebook files a grading run writes (``--feedback``, ``--format``)."""
    p = argparse.ArgumentParser(prog="minigrad-grade merge",
                                description="Join the reports of `minigrad-grade --shard I/N` "
                                            "runs into the report of the whole class.")
    p.add_argument("reports", nargs="+", metavar="REPORT", help="report folders of the shards")
    p.add_argument("-o", "--out", default="grading-report", metavar="DIR",
                   help="folder for the joined report (default: %(default)s)")
    _format_options(p, run=False)
    p.add_argument("-q", "--quiet", action="store_true", help="no summary on the terminal")
    args = p.parse_args(argv)
    from .batch import merge_reports
    from .formats import FormatError
    from .report import summary
    from .runner import GraderError
    try:
        wanted = _Wanted(args, args.format, args.roster)
    except FormatError as exc:
        p.error(str(exc))
    try:
        book = merge_reports(args.reports, args.out, feedback=args.feedback)
    except GraderError as exc:
        print(f"minigrad-grade: error: {exc}", file=sys.stderr)
        return 2
    if _write_gradebooks(book, args.out, wanted, args.roster, args.feedback, args.quiet,
                         again=f"minigrad-grade export {args.out} --format ..."):
        return 2
    if not args.quiet:
        print(summary(book, args.out))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""``python -m minigrad.course start|progress|reset`` (students) and ``build|release|check``
(maintainers): see :mod:`minigrad.course` and :mod:`minigrad.course.student`."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .notebooks import release, repo_root, stale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m minigrad.course",
        description="Students: start a working folder, see your progress, reset an exercise. "
                    "Maintainers: build the solution notebooks, release the lessons, check both.")
    parser.add_argument("--root", type=Path, default=None,
                        help="the repository root (default: the current directory if it has "
                             "solutions/, else the checkout minigrad was imported from)")
    sub = parser.add_subparsers(dest="command", required=True)
    st = sub.add_parser("start", help="copy the four lessons into a working folder")
    st.add_argument("folder", type=Path, help="where to put them (made if missing)")
    pr = sub.add_parser("progress", help="run your notebooks and list each exercise: done or not")
    pr.add_argument("folder", type=Path, help="one of your NN_name.ipynb notebooks, or the "
                                              "folder holding them")
    pr.add_argument("--timeout", type=int, default=300, help="seconds per cell (default 300)")
    rs = sub.add_parser("reset", help="put one exercise cell back as released")
    rs.add_argument("notebook", type=Path, help="your notebook, e.g. work/01_from_scalars_to_tensors.ipynb")
    rs.add_argument("exercise", help="the exercise id, e.g. 1.3")
    b = sub.add_parser("build", help="make solutions/NN_*.ipynb from solutions/NN_*.py, "
                                     "executed, then release")
    b.add_argument("lessons", nargs="*", help="lesson numbers or names (default: all)")
    b.add_argument("--no-execute", action="store_true", help="convert only, do not run")
    b.add_argument("--no-release", action="store_true", help="do not release afterwards")
    b.add_argument("--timeout", type=int, default=300, help="seconds per cell (default 300)")
    rl = sub.add_parser("release", help="write lessons/ and minigrad/course/released/ from "
                                        "solutions/")
    rl.add_argument("--nbgrader", type=Path, metavar="DIR",
                    help="also write an nbgrader course's source/ tree into DIR (the solutions "
                         "with nbgrader's cell metadata; nbgrader generate_assignment releases "
                         "them)")
    sub.add_parser("check", help="exit 1 when lessons/, released/ or a solution notebook is stale")
    si = sub.add_parser("site", help="build the course and the documentation as a static website")
    si.add_argument("--out", type=Path, required=True, help="the folder to write (opens from disk)")
    args = parser.parse_args(argv)
    if args.command in ("start", "progress", "reset"):
        return _student(args)
    if args.command in ("build", "check"):
        from .build import MissingPackage
        try:
            return _maintainer(args)
        except MissingPackage as error:
            print(error, file=sys.stderr)
            return 1
    return _maintainer(args)


def _maintainer(args: argparse.Namespace) -> int:
    root = args.root or repo_root()

    if args.command == "build":
        from .build import build
        build(root, args.lessons or None, run=not args.no_execute, timeout=args.timeout)
        if not args.no_release:
            _report_release(release(root), root)
        return 0
    if args.command == "site":
        from .site import build_site
        try:
            index = build_site(args.out, root)
        except (RuntimeError, FileNotFoundError) as error:
            print(error, file=sys.stderr)
            return 1
        print(f"site: wrote {index}")
        return 0
    if args.command == "release":
        _report_release(release(root), root)
        if args.nbgrader is not None:
            from .nbgrader import write_source
            written = write_source(args.nbgrader, root)
            for path in written:
                print(f"release: wrote {path}")
            print(f"release: nbgrader source/ in {args.nbgrader} "
                  + ("up to date" if not written else f"({len(written)} notebook(s) written)")
                  + f"; then, there: nbgrader generate_assignment <lesson>")
        return 0
    from .build import twin_mismatches
    problems = twin_mismatches(root) + stale(root)
    if problems:
        print("stale:\n  " + "\n  ".join(problems), file=sys.stderr)
        print("fix: python -m minigrad.course build (after editing a .py twin) or "
              "python -m minigrad.course release", file=sys.stderr)
        return 1
    print("lessons/ and minigrad/course/released/ are up to date with solutions/")
    return 0


def _student(args: argparse.Namespace) -> int:
    from . import student

    if args.command == "start":
        copied = student.start(args.folder)
        for path in copied:
            print(f"start: wrote {path}")
        print(f"start: {len(copied)} lesson(s) copied into {args.folder}"
              + ("" if copied else " (the notebooks there already were left as they are)"))
        print(f"open them with: python -m jupyter lab {args.folder}")
        return 0
    if args.command == "progress":
        try:
            rows = student.progress(args.folder, timeout=args.timeout)
        except (FileNotFoundError, ValueError) as error:
            print(error, file=sys.stderr)
            return 1
        print(student.format_progress(rows))
        return 0
    try:
        done = student.reset(args.notebook, args.exercise)
    except (KeyError, FileNotFoundError, ValueError) as error:
        print(error.args[-1] if error.args else error, file=sys.stderr)
        return 1
    if done.kept is None:
        print(f"reset: exercise {args.exercise} in {args.notebook} was already as released")
        return 0
    print(f"reset: exercise {args.exercise} in {args.notebook} is back as released; your code "
          f"is kept in {done.kept}")
    print(done.diff, end="")
    return 0


def _report_release(changed: list[Path], root: Path) -> None:
    if not changed:
        print("release: lessons/ and minigrad/course/released/ already up to date")
    for p in changed:
        try:
            shown = p.relative_to(root)
        except ValueError:
            shown = p
        print(f"release: {'removed' if not p.exists() else 'wrote'} {shown}")


if __name__ == "__main__":
    sys.exit(main())

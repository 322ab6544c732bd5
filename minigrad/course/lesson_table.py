"""The README's table of lessons, counted from the solution notebooks, so that it cannot go stale.

::

    python -m minigrad.course.lesson_table          # print the table
    python -m minigrad.course.lesson_table --write  # put it into README.md, between its markers
    python -m minigrad.course.lesson_table --check  # exit 1 when README.md's table is stale

For each lesson: the words of prose on its **main path** (the markdown a student reads, fenced
code and folded ``<details>`` blocks left out), the words **folded** (hints and "Going
further"), its exercises, their points (``exercises.json``, the grader's weights) and the
minutes its first cell states. The table sits in README.md between ``<!-- lesson-table -->``
and ``<!-- /lesson-table -->``.
"""
from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from .notebooks import exercise_id, lesson_number, read_notebook, repo_root, solution_paths

__all__ = ["LessonCount", "count", "counts", "table", "readme_with_table", "main",
           "BEGIN_MARK", "END_MARK"]

BEGIN_MARK, END_MARK = "<!-- lesson-table -->", "<!-- /lesson-table -->"
_FENCED = re.compile(r"```.*?```", re.DOTALL)
_DETAILS = re.compile(r"<details>.*?</details>", re.DOTALL)
_TIME = re.compile(r"\*\*Time:\*\*\s*about\s+(\d+)\s+minutes", re.IGNORECASE)


@dataclass(frozen=True)
class LessonCount:
    """What the table says of one lesson."""

    lesson: int
    main_words: int
    folded_words: int
    exercises: int
    points: float
    minutes: int | None


def _words(text: str) -> int:
    return len(text.split())


def count(path: str | Path) -> LessonCount:
    """Count one solution notebook (see the module docstring for what is counted)."""
    from .checks import exercises as exercise_table

    nb = read_notebook(path)
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    prose = _FENCED.sub("", markdown)
    folded = sum(_words(block) for block in _DETAILS.findall(prose))
    ids = [exercise_id(c) for c in nb.cells if exercise_id(c)]
    number = lesson_number(path)
    table = exercise_table(number)
    points = float(sum(table[i]["points"] for i in ids if i in table))
    first = nb.cells[0].source if nb.cells else ""
    stated = _TIME.search(first)
    return LessonCount(number, _words(_DETAILS.sub("", prose)), folded, len(ids), points,
                       int(stated.group(1)) if stated else None)


def counts(root: str | Path | None = None) -> list[LessonCount]:
    """:func:`count` of every solution notebook, in lesson order."""
    return [count(p) for p in solution_paths(root)]


def table(rows: list[LessonCount]) -> str:
    """The markdown table (with a total row) of ``rows``."""
    lines = ["| lesson | words, main path | words, folded | exercises | points | minutes |",
             "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r.lesson} | {r.main_words:,} | {r.folded_words:,} | {r.exercises} | "
                     f"{r.points:g} | {r.minutes if r.minutes is not None else '?'} |")
    total_minutes = sum(r.minutes or 0 for r in rows)
    lines.append(f"| all | {sum(r.main_words for r in rows):,} | "
                 f"{sum(r.folded_words for r in rows):,} | {sum(r.exercises for r in rows)} | "
                 f"**{sum(r.points for r in rows):g}** | {total_minutes} |")
    return "\n".join(lines)


def readme_with_table(readme: str, rows: list[LessonCount]) -> str:
    """``readme`` with the text between the markers replaced by :func:`table` of ``rows``.

    Raises ``ValueError`` when the markers are missing.
    """
    start, end = readme.find(BEGIN_MARK), readme.find(END_MARK)
    if start < 0 or end < start:
        raise ValueError(f"README.md has no {BEGIN_MARK} ... {END_MARK} block for the table")
    return readme[:start + len(BEGIN_MARK)] + "\n" + table(rows) + "\n" + readme[end:]


def main(argv: list[str] | None = None) -> int:
    """The command line; see the module docstring."""
    parser = argparse.ArgumentParser(prog="python -m minigrad.course.lesson_table",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=None, help="the repository root")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write", action="store_true", help="update README.md's table")
    group.add_argument("--check", action="store_true", help="exit 1 when it is stale")
    args = parser.parse_args(argv)
    root = Path(args.root or repo_root())
    rows = counts(root)
    if not (args.write or args.check):
        print(table(rows))
        return 0
    readme_path = root / "README.md"
    readme = readme_path.read_text(encoding="utf-8")
    wanted = readme_with_table(readme, rows)
    if args.check:
        if wanted != readme:
            print("README.md's lesson table is stale: run python -m minigrad.course.lesson_table "
                  "--write", file=sys.stderr)
            return 1
        print("README.md's lesson table is up to date")
        return 0
    if wanted != readme:
        readme_path.write_text(wanted, encoding="utf-8")
        print("README.md: lesson table written")
    else:
        print("README.md: lesson table already up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What a lesson asks of a student's time and attention (issues 14 and 25): on the main path
(every cell outside a folded <details> block) at most 1,200 words of prose and 5 exercises;
at most 400 words folded (hints and "Going further"); the time stated in the first cell; hints
folded under <details> in two levels, the idea before any code; the student's names never
rebound by a demo; no test tool's marker in a cell a student reads."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from minigrad.course import exercise_id, read_notebook, solution_paths
from minigrad.course.lesson_table import count

ROOT = Path(__file__).resolve().parents[3]
SOLUTIONS = solution_paths(ROOT)
DETAILS = re.compile(r"<details><summary>(.*?)</summary>(.*?)</details>", re.DOTALL)


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name[:2])
def test_a_lesson_fits_its_budget_and_states_its_time(path):
    row = count(path)           # what the README's table reports (minigrad.course.lesson_table)
    assert row.main_words <= 1200, f"{path.name}: {row.main_words} words on the main path"
    assert row.folded_words <= 400, f"{path.name}: {row.folded_words} words folded"
    assert 1 <= row.exercises <= 5
    assert row.minutes is not None and 20 <= row.minutes <= 45, \
        f"{path.name}: the first cell should say '**Time:** about N minutes'"


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name[:2])
def test_students_see_no_test_tool_markers(path):
    """nbval's markers are cell tags (nbval reads them), never comments in the code."""
    for cell in read_notebook(path).cells:
        assert "NBVAL" not in cell.source, f"{path.name}: {cell.source[:60]!r}"


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name[:2])
def test_hints_are_folded_in_two_levels_and_never_start_with_code(path):
    nb = read_notebook(path)
    markdown_before: list[str] = []
    shared: list = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            outside = DETAILS.sub("", cell.source)
            assert not re.search(r"\*?hint\s*\d*\s*[:·*]", outside, re.IGNORECASE), \
                f"{path.name}: a hint outside <details>: {cell.source[:80]!r}"
            markdown_before.append(cell.source)
            continue
        if exercise_id(cell):
            hints = [h for h in DETAILS.findall("\n".join(markdown_before))
                     if h[0].startswith("Hint")] or shared
            shared = hints          # an exercise in two cells shares one set of hints
            assert [summary.split(" ·")[0] for summary, _ in hints] == ["Hint 1", "Hint 2"], \
                f"{path.name}: exercise {exercise_id(cell)} needs Hint 1 then Hint 2: {hints}"
            first = hints[0][1]
            assert "```" not in first and "np." not in first and "return " not in first, \
                f"{path.name}: exercise {exercise_id(cell)}'s first hint gives code: {first}"
        if exercise_id(cell) or "check:" in str(cell.metadata.get("tags", [])):
            markdown_before = []


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name[:2])
def test_demos_read_the_reference_under_their_own_name(path):
    """A fallback is bound to a demo's own name, never to a name an exercise defines."""
    nb = read_notebook(path)
    defined = set()
    for cell in nb.cells:
        if exercise_id(cell):
            defined |= set(re.findall(r"^(?:class|def) (\w+)", cell.source, re.MULTILINE))
            defined |= set(re.findall(r"^(\w+(?:, \w+)*) = ", cell.source, re.MULTILINE))
    for cell in nb.cells:
        for target in re.findall(r"^(\w+) = yours_or_reference\(", cell.source, re.MULTILINE):
            assert target not in defined, f"{path.name}: a demo rebinds the student's {target}"


def test_the_readme_lesson_table_is_current():
    """README.md's table of lessons is what minigrad.course.lesson_table counts now."""
    from minigrad.course.lesson_table import counts, readme_with_table

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme_with_table(readme, counts(ROOT)) == readme, \
        "README.md's lesson table is stale: run python -m minigrad.course.lesson_table --write"

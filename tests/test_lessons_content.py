"""What a lesson asks of a student's time and attention (issue 14): at most 1,600 words of
prose and 8 exercises; hints folded under <details> in two levels, the idea before any code;
the student's names never rebound by a demo."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from minigrad.course import exercise_id, read_notebook, solution_paths

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = solution_paths(ROOT)
DETAILS = re.compile(r"<details><summary>(.*?)</summary>(.*?)</details>", re.DOTALL)


def prose_words(nb) -> int:
    """Words in the markdown cells, fenced code blocks left out (what the README reports)."""
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    return len(re.sub(r"```.*?```", "", text, flags=re.DOTALL).split())


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name[:2])
def test_a_lesson_has_at_most_1600_words_and_8_exercises(path):
    nb = read_notebook(path)
    assert prose_words(nb) <= 1600, f"{path.name}: {prose_words(nb)} words of prose"
    exercises = [c for c in nb.cells if exercise_id(c)]
    assert 1 <= len(exercises) <= 8


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
            hints = DETAILS.findall("\n".join(markdown_before)) or shared
            shared = hints          # exercises 2.3 and 2.4 share one explanation and its hints
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

"""interactives/after_the_course.ipynb runs from top to bottom and shows what its text says."""
from __future__ import annotations

from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parents[3] / "interactives" / "after_the_course.ipynb"


@pytest.mark.slow
def test_notebook_runs_and_recovers_the_answers():
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("nbclient")
    from minigrad.course.build import execute  # needs nbformat and nbclient

    nb = execute(nbformat.read(NOTEBOOK, as_version=4), NOTEBOOK.parent, timeout=600)
    text = "\n".join(o.get("text", "") for c in nb.cells if c.cell_type == "code"
                     for o in c.outputs if o.output_type == "stream")
    assert "found angle 35.0 degrees and speed 30.0 m/s" in text
    autodiff = text.split("autodiff:")[1].split("\n")[0].strip()
    finite = text.split("finite differences:")[1].split("\n")[0].strip()
    assert autodiff == finite  # equal to the 4 decimals shown
    start, end = (float(v) for v in text.split("loss: ")[1].split(" at the start, ")[0:1]
                  + [text.split(" at the start, ")[1].split(" at the end")[0]])
    assert end < start - 1.0
    # attention from the student's operations is the library's fused one, values and gradients
    gaps = text.split("attention: output differs by at most ")[1].split("\n")[0]
    out_gap, grad_gap = (float(g) for g in gaps.split(", gradients by at most "))
    assert out_gap < 1e-12 and grad_gap < 1e-12
    gpt_start, gpt_end = (float(v) for v in text.split("GPT loss: ")[1].split(" at the end")[0]
                          .split(" at the start, "))
    assert gpt_end < gpt_start - 1.0  # the tiny GPT learns (about 3.96 -> 2.3)
    replayed, steps = text.split("at the end (")[-1].split(" steps replayed")[0].split(" of ")
    assert int(replayed) >= int(steps) - 3  # the compiled step replays
    images = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if "image/png" in o.get("data", {})]
    assert len(images) == 3  # the trajectories, the loss curve, the attention heat map

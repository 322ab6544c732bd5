"""interactives/after_the_course.ipynb runs from top to bottom and shows what its text says."""
from __future__ import annotations

from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parent.parent / "interactives" / "after_the_course.ipynb"


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
    images = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if "image/png" in o.get("data", {})]
    assert len(images) == 2  # the trajectories and the loss curve

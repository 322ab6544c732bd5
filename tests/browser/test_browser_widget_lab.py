"""The broadcast widget in JupyterLab: it renders at full size, links cells, and times its redraws.

JupyterLab is started as the README says (see test_browser_lab.py for the server fixture); the
test opens the interactive notebook, runs the widget's cell, and checks in Debian's Chromium what
the Voilà test cannot: that Lab's output area neither shrinks the picture nor its text, and that
the browser-side linking works there too. Skipped, with the reason, without Chromium.
"""
from __future__ import annotations

from tests.browser.test_browser_lab import lab_url  # noqa: F401  (the JupyterLab server fixture)
from tests.browser.test_browser_widget import (
    BROWSER_TEST,
    cell,
    draw_median,
    lit,
    measure_op_changes,
    measure_shape_changes,
    open_browser,
    run_lab_cell,
    smallest_font_px,
)

NOTEBOOK = "interactives/broadcast_and_backward.ipynb"

pytestmark = BROWSER_TEST  # starts JupyterLab, a kernel and a browser: about 20 s


def test_the_widget_in_jupyterlab(lab_url, playwright, tmp_path):  # noqa: F811
    context = open_browser(playwright, tmp_path)
    try:
        page = context.new_page()
        page.goto(lab_url + "lab/tree/" + NOTEBOOK, wait_until="domcontentloaded",
                  timeout=120_000)
        page.wait_for_selector("h1:has-text('Broadcast and backward')", timeout=120_000)
        page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']",
                               timeout=120_000)
        run_lab_cell(page, page.locator(".jp-Notebook .jp-CodeCell").nth(0))
        page.wait_for_selector(".mg-bb .mg-cell", timeout=120_000)

        # Full size: every grid is drawn at its own width, and no text is under 12 px.
        shrunk = page.evaluate("""() => [...document.querySelectorAll('.mg-bb svg.mg-svg')]
            .filter(s => Math.abs(s.getBoundingClientRect().width - s.width.baseVal.value) > 0.5)
            .length""")
        assert shrunk == 0
        assert smallest_font_px(page) >= 12

        # Linking needs no kernel: hover, and the cells read light up.
        cell(page, "C", 6).hover()
        assert page.locator(".mg-bb .mg-info").inner_text().startswith("C[1, 2] = A[1, 0] + B[0, 2]")
        assert {"A/1", "B/2"} <= set(lit(page))
        # Keyboard: each grid has one cell in the tab order; the text alternative is there.
        assert page.locator(".mg-bb .mg-cell[tabindex='0']").count() == 5  # A, B, A→, B→, C
        assert "A (3, 1) + B (1, 4) → (3, 4)." in page.locator(".mg-bb .mg-alt").text_content()

        ops, shapes = measure_op_changes(page), measure_shape_changes(page)
        print(f"\nJupyterLab: median redraw after an operator change {ops:.1f} ms, after a "
              f"shape change {shapes:.1f} ms (kernel round trip included); target < 100 ms; "
              f"drawing alone {draw_median(page):.1f} ms")
    finally:
        context.close()

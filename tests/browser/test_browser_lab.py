"""The README's course command works: JupyterLab opens lesson 1 and runs its first cells.

Starts ``python -m jupyter lab`` on a free loopback port (as the quickstart does, without a
browser or token), opens the first lesson in Debian's Chromium, waits for its title to render,
runs the set-up cell and the scalar recap with the kernel, and checks the printed result.
JupyterLab's process group is stopped at the end. Skipped, with the reason, without Chromium.
"""
from __future__ import annotations

import os

import pytest
from tests.browser.test_browser_widget import (BROWSER_TEST, ROOT, jupyter_server, open_browser,
                                              run_lab_cell)

LESSON = "lessons/01_from_scalars_to_tensors.ipynb"

pytestmark = BROWSER_TEST  # starts JupyterLab, a kernel and a browser: about 15 s


@pytest.fixture
def lab_url(tmp_path):
    with jupyter_server(tmp_path, [
            "jupyter", "lab", "--no-browser", "--ServerApp.ip=127.0.0.1",
            "--IdentityProvider.token=", "--ServerApp.password=", f"--ServerApp.root_dir={ROOT}",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.news_url=None", *(["--allow-root"] if os.geteuid() == 0 else [])],
            ready="api/status", timeout=60) as url:
        yield url


def test_jupyterlab_opens_lesson_one_and_runs_it(lab_url, playwright, tmp_path):
    context = open_browser(playwright, tmp_path)
    try:
        page = context.new_page()
        page.goto(lab_url + "lab/tree/" + LESSON, wait_until="domcontentloaded", timeout=60_000)
        page.wait_for_selector("h1:has-text('Lesson 1')", timeout=60_000)
        # The kernel is idle once it has started; then run the first cells one by one.
        page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']",
                               timeout=60_000)
        # JupyterLab renders only the cells in view (how many depends on the fonts and the
        # window), so wait for the two code cells this test runs rather than count cells.
        code = page.locator(".jp-Notebook .jp-CodeCell")
        code.nth(1).wait_for(state="attached", timeout=30_000)
        run_lab_cell(page, code.nth(0))  # the set-up cell: imports minigrad
        run_lab_cell(page, code.nth(1))  # the scalar recap: prints c, dc/da and dc/db
        output = code.nth(1).locator(".jp-OutputArea-output")
        output.first.wait_for(timeout=30_000)
        text = output.first.inner_text()
        assert "c = -5.0360" in text and "dc/db" in text, text
        assert "Error" not in code.nth(0).inner_text()
    finally:
        context.close()

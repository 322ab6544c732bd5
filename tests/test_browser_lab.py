"""The README's course command works: JupyterLab opens lesson 1 and runs its first cells.

Starts ``python -m jupyter lab`` on a free loopback port (as the quickstart does, without a
browser or token), opens the first lesson in Debian's Chromium, waits for its title to render,
runs the set-up cell and the scalar recap with the kernel, and checks the printed result.
JupyterLab's process group is stopped at the end. Skipped, with the reason, without Chromium.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from test_browser_widget import CHROMIUM, CHROMIUM_FLAGS, ROOT, _children, answers, free_port

LESSON = "lessons/01_from_scalars_to_tensors.ipynb"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,  # starts JupyterLab, a kernel and a browser: about 15 s
    pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK),
                       reason=f"no Chromium at {CHROMIUM}: install it with "
                              "`apt-get install -y chromium` to run the browser test"),
]


@pytest.fixture
def lab_url(tmp_path):
    port = free_port()
    env = dict(os.environ)
    for var, sub in [("JUPYTER_RUNTIME_DIR", "runtime"), ("JUPYTER_DATA_DIR", "data"),
                     ("JUPYTER_CONFIG_DIR", "config"), ("IPYTHONDIR", "ipython")]:
        env[var] = str(tmp_path / sub)  # nothing read from or written to the user's home
    log = open(tmp_path / "lab.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}",
         "--ServerApp.ip=127.0.0.1", "--IdentityProvider.token=", "--ServerApp.password=",
         f"--ServerApp.root_dir={ROOT}",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
         "--LabApp.news_url=None"] + (["--allow-root"] if os.geteuid() == 0 else []),
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 60
        while not answers(url + "api/status"):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("JupyterLab did not start:\n" + (tmp_path / "lab.log").read_text())
            time.sleep(0.3)
        yield url
    finally:
        kernels = _children(proc.pid)
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=15)
        except ProcessLookupError:  # it had already stopped (the log above says why)
            pass
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        for pid in kernels:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        log.close()


def test_jupyterlab_opens_lesson_one_and_runs_it(lab_url, playwright, tmp_path):
    context = playwright.chromium.launch_persistent_context(
        str(tmp_path / "chromium-profile"), executable_path=CHROMIUM, headless=True,
        args=CHROMIUM_FLAGS, viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        page.goto(lab_url + "lab/tree/" + LESSON, wait_until="domcontentloaded", timeout=60_000)
        page.wait_for_selector("h1:has-text('Lesson 1')", timeout=60_000)
        # The kernel is idle once it has started; then run the first cells one by one.
        page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']",
                               timeout=60_000)
        cells = page.locator(".jp-Notebook .jp-Cell")
        assert cells.count() >= 5  # JupyterLab renders only the cells in view
        code = page.locator(".jp-Notebook .jp-CodeCell")
        code.nth(0).click()
        page.keyboard.press("Shift+Enter")  # the set-up cell: imports minigrad
        code.nth(1).locator(".jp-InputArea").click()
        page.keyboard.press("Shift+Enter")  # the scalar recap: prints c, dc/da and dc/db
        output = code.nth(1).locator(".jp-OutputArea-output")
        output.first.wait_for(timeout=30_000)
        text = output.first.inner_text()
        assert "c = -5.0360" in text and "dc/db" in text, text
        assert "Error" not in code.nth(0).inner_text()
    finally:
        context.close()

"""The widget in a real browser: Voilà serves the interactive notebook, Chromium drives it.

The test starts Voilà on a free loopback port in a process group of its own, waits until it
answers, opens the page in Debian's Chromium (through Playwright), types a new shape and waits
-- on the DOM, not on pixels -- until the message and the picture change. Voilà's process group
is stopped at the end whatever happens. Skipped, with the reason, where Chromium is missing.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
NOTEBOOK = "interactives/broadcast_and_backward.ipynb"
ROOT = Path(__file__).resolve().parent.parent
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync"]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,  # starts Voilà, a kernel and a browser: about 10 s
    pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK),
                       reason=f"no Chromium at {CHROMIUM}: install it with "
                              "`apt-get install -y chromium` to run the browser test"),
]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers(url: str) -> bool:
    """True once the server sends any HTTP reply (a 404 counts: it is listening and serving)."""
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except urllib.error.HTTPError:
        return True
    except OSError:
        return False


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Voilà's kernels run in sessions of their own)."""
    found = []
    for entry in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = entry.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(entry.parent.name))
    return found


@pytest.fixture
def voila_url(tmp_path):
    port = free_port()
    env = dict(os.environ)
    for var, sub in [("JUPYTER_RUNTIME_DIR", "runtime"), ("JUPYTER_DATA_DIR", "data"),
                     ("JUPYTER_CONFIG_DIR", "config"), ("IPYTHONDIR", "ipython")]:
        env[var] = str(tmp_path / sub)  # nothing read from or written to the user's home
    log = open(tmp_path / "voila.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "voila", NOTEBOOK, "--no-browser", f"--port={port}",
         "--Voila.ip=127.0.0.1", "--Voila.log_level=WARN", "--show_tracebacks=True",
         "--theme=light"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 30
        while not answers(url + "voila/static/"):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("Voilà did not start:\n" + (tmp_path / "voila.log").read_text())
            time.sleep(0.2)
        yield url
    finally:
        kernels = _children(proc.pid) if Path("/proc").is_dir() else []
        os.killpg(proc.pid, signal.SIGTERM)  # Voilà shuts its kernels down on SIGTERM
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        for pid in kernels:  # in case one outlived Voilà
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        log.close()


def test_changing_a_shape_in_the_browser_updates_message_and_picture(voila_url, playwright,
                                                                      tmp_path):
    context = playwright.chromium.launch_persistent_context(
        str(tmp_path / "chromium-profile"), executable_path=CHROMIUM, headless=True,
        args=CHROMIUM_FLAGS)
    page_errors: list[str] = []
    try:
        page = context.new_page()
        page.on("pageerror", lambda err: page_errors.append(str(err)))
        page.goto(voila_url, wait_until="domcontentloaded", timeout=30_000)

        # The notebook runs in a fresh kernel; the widget appears with its first picture.
        page.wait_for_selector("img.mg-image[src^='blob:']", timeout=40_000)
        message = page.locator(".mg-message")
        assert "result (3, 4)" in message.inner_text()
        first_src = page.get_attribute("img.mg-image", "src")

        # Type a new shape for A and press Enter: the kernel redraws, the page follows.
        box = page.locator(".mg-shape-a input")
        box.fill("(2, 3, 1)")
        box.press("Enter")
        page.wait_for_function(
            """(old) => {
                const img = document.querySelector('img.mg-image');
                const msg = document.querySelector('.mg-message');
                return img && img.src !== old && msg && msg.innerText.includes('result (2, 3, 4)');
            }""", arg=first_src, timeout=20_000)
        assert "B (1, 4) gets new leading axis 0" in message.inner_text()

        # Send back ones: the backward picture, and its message.
        second_src = page.get_attribute("img.mg-image", "src")
        page.locator(".mg-backward").click()
        page.wait_for_function(
            """(old) => document.querySelector('img.mg-image').src !== old &&
                        document.querySelector('.mg-message').innerText.includes('A.grad')""",
            arg=second_src, timeout=20_000)

        # A shape that is not a shape: a message, not a traceback.
        box.fill("3,x")
        box.press("Enter")
        page.wait_for_function(
            "() => document.querySelector('.mg-message').innerText.includes('not a whole number')",
            timeout=20_000)
        assert "Traceback" not in page.content()
        assert not page_errors, page_errors
    finally:
        context.close()

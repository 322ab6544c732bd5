"""The website: ``python -m minigrad.course site --out DIR``, built once for this file's tests.

The build is strict (any Sphinx warning fails it). The tests read what it wrote: the lesson
pages (the executed solutions with the exercises blanked, their figures, a download link for
each student notebook), an API entry for every name in every public module's ``__all__``, no
reference to another host, and the pages' doctested examples. A browser test opens the site
from disk in Chromium and uses it as a reader would, recording every request it makes.
"""
from __future__ import annotations

import contextlib
import doctest
import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from minigrad.course import site as site_module
from minigrad.course.notebooks import BEGIN, END, lesson_paths, solution_paths

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync"]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """The site, built by the command a maintainer runs (about a minute).

    ``MINIGRAD_TEST_SITE=DIR`` reuses a site built before (while working on these tests).
    """
    reuse = os.environ.get("MINIGRAD_TEST_SITE")
    if reuse:
        return Path(reuse)
    out = tmp_path_factory.mktemp("site") / "html"
    result = subprocess.run([sys.executable, "-m", "minigrad.course", "site", "--out", str(out)],
                            cwd=ROOT, capture_output=True, text=True, timeout=540, check=False)
    assert result.returncode == 0, (result.stdout + result.stderr)[-6000:]
    assert (out / "index.html").is_file()
    return out


def _text(page: Path) -> str:
    """A page's visible text, roughly: tags removed, entities decoded."""
    body = page.read_text(encoding="utf-8")
    body = re.sub(r"<(script|style)\b.*?</\1>", " ", body, flags=re.DOTALL)
    return html.unescape(re.sub(r"<[^>]+>", "", body))


# --- the build ---------------------------------------------------------------------------------


def test_the_build_is_strict(monkeypatch, tmp_path):
    """build_site runs Sphinx with warnings as errors, and a failed build is an error."""
    seen = {}
    monkeypatch.setattr(site_module, "stage", lambda root, where: Path(where) / "src")

    def fake_build_main(args):
        seen["args"] = args
        return 1

    import sphinx.cmd.build

    monkeypatch.setattr(sphinx.cmd.build, "build_main", fake_build_main)
    with pytest.raises(RuntimeError, match="Sphinx failed"):
        site_module.build_site(tmp_path / "out")
    assert "-W" in seen["args"] and "--keep-going" in seen["args"]


def test_nothing_is_loaded_from_another_host(built):
    """No script, style, font or image comes from a URL: the site works with no network."""
    remote = re.compile(r"""(?:<(?:script|link|img|iframe|source)\b[^>]*\b(?:src|href)\s*=\s*["']"""
                        r"""(?:https?:)?//)|(?:url\(\s*["']?(?:https?:)?//)|(?:@import\s+["']"""
                        r"""?(?:https?:)?//)""", re.IGNORECASE)
    offenders = []
    for path in built.rglob("*"):
        if path.suffix in (".html", ".css") and remote.search(path.read_text("utf-8", "replace")):
            offenders.append(str(path.relative_to(built)))
    assert not offenders, f"pages that load from another host: {offenders[:10]}"
    mathjax = built / "_static" / "mathjax" / "tex-svg-full.js"
    assert mathjax.stat().st_size > 1_000_000
    assert 'src="../_static/mathjax/tex-svg-full.js' in \
        (built / "lessons" / "02_matmul_reductions_broadcasting.html").read_text("utf-8")


def test_every_public_name_has_an_api_entry(built):
    """Each name in each public module's __all__: documented, or listed with a link to the
    entry where it is defined (a re-export). Sphinx itself would not notice one missing."""
    from sphinx.util.inventory import InventoryFile

    with open(built / "objects.inv", "rb") as f:
        inventory = InventoryFile.load(f, "", lambda base, uri: uri)
    entries = {name: item.uri for kind, items in inventory.items() if kind.startswith("py:")
               for name, item in items.items()}
    anchors = {uri.split("#")[-1] for uri in entries.values()}
    missing = []
    modules = site_module.public_modules()
    assert len(modules) > 40 and "minigrad.tensor" in modules and "minigrad.nn" in modules
    for m in modules:
        if not (built / "api" / f"{m}.html").is_file():
            missing.append(f"{m} (no page)")
            continue
        page = (built / "api" / f"{m}.html").read_text("utf-8")
        for name in __import__(m, fromlist=["_"]).__all__:
            if f"{m}.{name}" in entries:
                continue
            alias = re.search(re.escape(f'<span class="pre">{m}.{name}</span></code>: ')
                              + r'<a class="reference internal" href="[^"#]*#([^"]+)"', page)
            if not (alias and alias.group(1) in anchors):
                missing.append(f"{m}.{name}")
    assert not missing, f"no API entry for {len(missing)} names: {missing[:20]}"
    assert "minigrad.tensor.Tensor.backward" in entries
    assert "minigrad.Tensor" not in entries  # documented once, where it is defined
    assert 'id="minigrad.tensor.Tensor.backward"' in \
        (built / "api" / "minigrad.tensor.html").read_text("utf-8")


# --- the course on the site --------------------------------------------------------------------


def _regions(source: str) -> list[str]:
    """The lines inside the solution regions of a cell's source."""
    lines, inside = [], False
    for line in source.splitlines():
        if line.strip() == BEGIN:
            inside = True
        elif line.strip() == END:
            inside = False
        elif inside:
            lines.append(line.strip())
    return lines


@pytest.mark.parametrize("solution", solution_paths(ROOT), ids=lambda p: p.name[:2])
def test_each_lesson_page_shows_the_solved_lesson_with_its_exercises_blanked(built, solution):
    page = built / "lessons" / solution.with_suffix(".html").name
    body = page.read_text("utf-8")
    text = _text(page)
    nb = nbformat.read(solution, as_version=4)
    title = nb.cells[0].source.splitlines()[0].lstrip("# ").strip()
    assert title in text
    # the exercises are blanked as in the released lesson, and no solution line shows
    assert BEGIN not in text and "raise NotImplementedError" in text
    outside = "\n".join(line.strip() for c in nb.cells for line in
                        nbformat.v4.new_code_cell(c.source).source.splitlines()
                        if line.strip() not in set(_regions(c.source)))
    leaked = [line for c in nb.cells if c.cell_type == "code" for line in _regions(c.source)
              if len(line) > 20 and line not in outside and line in text]
    assert not leaked, f"solution lines on {page.name}: {leaked[:3]}"
    # the figures of the executed solution are there, each image file too
    figures = sum(1 for c in nb.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})
                  and not any(k for k in c.source.splitlines() if "BroadcastBackward(" in k))
    images = re.findall(r'<img[^>]+src="([^"]+)"', body)
    assert len([i for i in images if "_images/" in i]) >= figures > 0
    for src in images:
        assert (page.parent / src).resolve().is_file(), src
    # a download link for the student notebook, byte for byte the released one
    (student,) = [p for p in lesson_paths(ROOT) if p.name == solution.name]
    link = re.search(r'href="([^"]*_downloads/[^"]*' + re.escape(solution.name) + ')"', body)
    assert link, f"no download link for {solution.name}"
    assert (page.parent / link.group(1)).resolve().read_bytes() == student.read_bytes()


def test_the_home_page_is_the_course_page(built):
    text = _text(built / "index.html")
    minutes = site_module.lesson_minutes(ROOT)
    for words in ("1 · From scalars to tensors", "2 · Matrix products, reductions and broadcasting",
                  "3 · Parameters, modules and an optimizer",
                  "4 · Train with your engine and check it", "What you need first",
                  "Broadcast and backward", "python -m minigrad.course start work/",
                  f"about {minutes['minutes_all']} minutes"):
        assert words in text, words
    for n in range(1, 5):  # each lesson with the time its notebook states
        assert re.search(rf"{n} · [^(]+\({minutes[f'minutes_{n}']} min\)", text), n
    body = (built / "index.html").read_text("utf-8")
    assert len(re.findall(r'_downloads/[^"]+\.ipynb"', body)) == 4


def test_lesson_2_and_its_own_page_carry_the_static_widget(built):
    for page in ("lessons/02_matmul_reductions_broadcasting.html", "interactive.html"):
        body = (built / page).read_text("utf-8")
        assert 'class="mg-static-widget" data-shape-a="3,1" data-shape-b="1,4"' in body, page
        for script in site_module.WIDGET_SCRIPTS:
            assert f"_static/widget/{script}" in body, (page, script)


def test_the_readme_sections_moved_to_pages(built):
    """Every guide page the README links to was built (the cut keeps them reachable)."""
    readme = (ROOT / "README.md").read_text("utf-8")
    linked = re.findall(r"\(docs/([\w/-]+)\.md\)", readme)
    for name in linked:
        assert (built / f"{name}.html").is_file(), name
    for name in ("guide/library", "guide/convolutions", "guide/rnn", "guide/attention",
                 "guide/simulators",
                 "guide/onnx", "guide/c-code", "guide/compile", "guide/gpu",
                 "guide/performance", "guide/grading", "guide/maintaining", "guide/layout",
                 "design", "add-an-operation", "changelog", "api/index"):
        assert (built / f"{name}.html").is_file(), name


# --- the pages' examples -----------------------------------------------------------------------


def test_the_examples_on_the_pages_run():
    """Every ``>>>`` example on a hand-written page runs and prints what the page says."""
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    examples = 0
    for page in sorted((ROOT / "docs").rglob("*.md")):
        test = parser.get_doctest(page.read_text("utf-8"), {}, page.name, str(page), 0)
        examples += len(test.examples)
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} examples on the pages failed (printed above)"
    assert examples >= 20, f"only {examples} doctested examples on the pages"


# --- in a browser --------------------------------------------------------------------------------


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK),
                    reason=f"no Chromium at {CHROMIUM}: `apt-get install -y chromium`")
def test_the_site_works_from_disk_in_a_browser(built, tmp_path, playwright):
    # pytest-playwright's session-wide Playwright (the other browser tests use it too: a
    # second sync_playwright() inside its running event loop is refused)
    requests, failed, errors = [], [], []
    with contextlib.nullcontext(playwright) as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"), executable_path=CHROMIUM, headless=True,
            args=CHROMIUM_FLAGS, viewport={"width": 1400, "height": 1000})
        context.on("request", lambda r: requests.append(r.url))
        context.on("requestfailed", lambda r: failed.append(r.url))
        page = context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        base = built.resolve().as_uri()

        # the home page lists the lessons
        page.goto(f"{base}/index.html")
        titles = page.eval_on_selector_all("table.mg-lessons td:first-child a",
                                           "els => els.map(e => e.textContent)")
        assert [t[:4] for t in titles] == ["1 · ", "2 · ", "3 · ", "4 · "], titles
        downloads = page.eval_on_selector_all("table.mg-lessons a.download",
                                              "els => els.map(e => e.href)")
        assert len(downloads) == 4 and all(d.endswith(".ipynb") for d in downloads), downloads

        # lesson 2: its figures, its mathematics, and the widget with no kernel
        page.goto(f"{base}/lessons/02_matmul_reductions_broadcasting.html")
        page.wait_for_selector(".mg-static-widget[data-ready='1'] .mg-bb svg")
        sizes = page.eval_on_selector_all("img", "els => els.map(e => e.naturalWidth)")
        assert sizes and min(sizes) > 0, sizes
        page.wait_for_selector("mjx-container", timeout=30_000)
        widget = page.locator(".mg-static-widget .mg-bb")
        message = widget.locator(".mg-message")
        assert "(3, 1)" in message.inner_text()

        box = widget.locator("input.mg-shape-a")
        box.fill("2,3,1")
        box.press("Enter")
        page.wait_for_function("() => document.querySelector('.mg-static-widget .mg-message')"
                               ".innerText.includes('A (2, 3, 1) + B (1, 4) → result (2, 3, 4)')")
        assert widget.locator(".mg-grid[data-grid='C'] .mg-cell").count() == 24

        widget.locator("button.mg-backward").click()
        grad = widget.locator(".mg-cell[data-grid='B.grad'][data-k='1']")
        grad.hover()
        lit = page.eval_on_selector_all(".mg-static-widget .mg-cell.mg-lit",
                                        "els => els.map(e => e.dataset.grid + '/' + e.dataset.k)")
        assert len([c for c in lit if c.startswith("to B/")]) == 6, lit  # its 6 copies
        assert widget.locator(".mg-info").inner_text().startswith("B.grad[0, 1] = 1 + 1 + 1")

        box.fill("2,3")
        box.press("Enter")
        widget.locator(".mg-shape-b").fill("3,4")
        widget.locator(".mg-shape-b").press("Enter")
        # (2, 3) and (3, 4) do not broadcast: the widget says so; @ then shows its rule
        page.wait_for_selector(".mg-static-widget .mg-problem")
        assert "do not broadcast" in widget.locator(".mg-problem").inner_text()
        widget.locator("button.mg-op[data-op='@']").click()  # still in the backward view
        page.wait_for_function("() => document.querySelector('.mg-static-widget .mg-message')"
                               ".innerText.includes('dC @ B.T is (2, 4) @ (4, 3) → (2, 3)')")
        widget.locator("button.mg-backward").click()
        page.wait_for_function("() => document.querySelector('.mg-static-widget .mg-message')"
                               ".innerText.includes('meet and vanish')")
        widget.locator("button.mg-backward").click()
        widget.locator(".mg-cell[data-grid='A.grad'][data-k='0']").focus()
        assert "row 0 of dC · column 0 of B.T" in widget.locator(".mg-info").inner_text()
        page.keyboard.press("ArrowRight")  # the keyboard moves to the next cell
        assert widget.locator(".mg-info").inner_text().startswith("A.grad[0, 1]")

        # a broken shape: the widget's own message, the picture greyed out
        box.fill("2,(3")
        box.press("Enter")
        page.wait_for_selector(".mg-static-widget .mg-problem")
        assert "brackets that do not pair up" in widget.locator(".mg-problem").inner_text()

        # the interactive's own page
        page.goto(f"{base}/interactive.html")
        page.wait_for_selector(".mg-static-widget[data-ready='1'] .mg-bb svg")
        page.locator(".mg-cell[data-grid='C'][data-k='5']").hover()
        assert page.locator(".mg-info").inner_text() == "C[1, 1] = A[1, 0] + B[0, 1] = " + \
            page.locator(".mg-info").inner_text().split("= ", 2)[-1]

        # the search finds unbroadcast; the API page of Tensor.backward is there
        page.goto(f"{base}/search.html?q=unbroadcast")
        page.wait_for_function("() => document.querySelectorAll('#search-results li').length > 0",
                               timeout=30_000)
        found = page.eval_on_selector_all("#search-results li a", "els => els.map(e => e.href)")
        assert any("unbroadcast" in href for href in found), found
        page.goto(f"{base}/api/minigrad.tensor.html#minigrad.tensor.Tensor.backward")
        assert "backward" in page.locator("[id='minigrad.tensor.Tensor.backward']").inner_text()
        context.close()

    outside = [u for u in requests if not u.startswith(("file://", "data:", "about:", "blob:"))]
    assert not outside, f"requests that left the machine: {outside[:10]}"
    assert not failed, f"requests that failed: {failed[:10]}"
    assert not errors, errors
    assert len(requests) > 20  # the recorder saw the pages' files

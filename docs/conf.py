"""Sphinx configuration of the minigrad website.

Build it with ``python -m minigrad.course site --out DIR`` (minigrad/course/site.py): that
command stages this folder together with the lesson pages, the student notebooks, the API
pages and the widget's and MathJax's files, then runs Sphinx strictly. Running sphinx-build on
this folder alone misses those generated pages.

Nothing may be loaded from another host: no web fonts, no CDN scripts. MathJax is the copy in
``_static/mathjax/`` (from the ``mathjax`` package on PyPI).
"""
project = "minigrad"
author = "The minigrad developers"
copyright = "the minigrad developers; code MIT, course text CC BY 4.0"

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
]

# --- pages ----------------------------------------------------------------------------------
root_doc = "index"
exclude_patterns = ["_build", "**/download/**", "**.ipynb_checkpoints"]
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist", "substitution"]
# Each lesson's minutes, as its first cell states them (site.py counts them at build time).
import json as _json
from pathlib import Path as _Path

myst_substitutions = _json.loads((_Path(__file__).parent / "_lesson_minutes.json").read_text())
myst_heading_anchors = 3
nb_execution_mode = "off"          # the lesson pages show the executed solutions as they are
nb_merge_streams = True
suppress_warnings = ["myst.header"]  # the notebooks' first heading levels are the course's

# --- the API reference ------------------------------------------------------------------------
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autosummary_generate = False        # minigrad/course/site.py writes the pages itself
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_ivar = True            # Attributes sections as fields, not duplicate entries
napoleon_use_rtype = False

# --- HTML -----------------------------------------------------------------------------------
html_theme = "furo"
html_title = "minigrad: build an autodiff engine from scratch"
html_static_path = ["_static"]
html_css_files = ["widget/broadcast_backward.css", "site.css"]
html_js_files = ["widget/bb_text.js", "widget/static_mode.js",
                 "widget/broadcast_backward_classic.js", "widget/static_page.js"]
html_show_sourcelink = False
html_show_search_summary = False   # summaries fetch each page, which a page opened from disk may not
html_copy_source = False
html_last_updated_fmt = None
mathjax_path = "mathjax/tex-svg-full.js"   # shipped with the site, never a CDN
mathjax3_config = {"options": {"enableMenu": False}}

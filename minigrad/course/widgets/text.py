"""The widget's sentences, kept once: ``messages.json``, read here and by the browser.

The Python side (plan, shapes, picture, widget) writes every sentence with :func:`say`; the
static page of the website embeds the same file, and ``static_mode.js`` fills the same
templates, so both modes say the same thing (``tests/course/widgets/test_site_widget.py``
compares them).
A template's ``{name}`` is a field; words that depend on a count are chosen by the caller.
"""
from __future__ import annotations

import functools
import json
import sys
import unicodedata
from pathlib import Path
from typing import Any

__all__ = ["TEXT", "say", "digit_names"]

#: Every template, by key (``messages.json``).
TEXT: dict[str, str] = json.loads(
    (Path(__file__).resolve().parent / "messages.json").read_text(encoding="utf-8"))


def say(key: str, **fields: Any) -> str:
    """Fill in the template ``key``; a missing field is a ``KeyError``, never a blank.

    >>> say("describe_move", axis=1, size=4)
    'axis 1 (1 → 4)'
    """
    return TEXT[key].format(**fields)


@functools.lru_cache(maxsize=1)
def digit_names() -> dict[str, str]:
    """Every character Python reads as a digit other than 0-9, with its Unicode name.

    The browser has no table of Unicode names, so the static page embeds this one (for the
    message about a digit that is not 0-9).
    """
    names = {}
    for code in range(128, sys.maxunicode + 1):
        ch = chr(code)
        if ch.isdigit():
            names[ch] = unicodedata.name(ch, TEXT["shape_bad_digit_unnamed"]).lower()
    return names

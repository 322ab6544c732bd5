"""Cheap plagiarism signals: exercise cells that reach for the course's own answers.

The sandbox holds the engine (the lessons build on it) and the checks' run halves, so a
notebook *can* call the engine's implementation of the very rule an exercise asks for, or the
checks' private helpers. Neither is prevented; both are worth an instructor's look. The grader
reads each exercise cell's source (never running anything) and reports, per exercise:

* a private name of the lesson's checks module (``_r_matmul``, ``_OPS``, ``ReferenceTensor``)
  or an import of the course's grading, checks, demos or hand-written layers;
* for exercises whose answer the engine already has: lesson 1's topological order from
  ``minigrad._utils`` or the scalar ``Var`` inside a tensor exercise; lesson 2's operations
  through the engine's own (``minigrad.matmul``, ``F.cross_entropy``, ``unbroadcast``, ``@`` on
  tensors inside a VJP is not seen: only names are); lesson 3's modules as ``minigrad.nn`` or
  ``minigrad.optim`` ones; lesson 4's hand gradients by ``backward()`` or the hand-written
  layers.

A signal is a line in the report (kind ``"signal"``), never a change of score: the instructor
judges it. Matching is one regular expression per line, never across lines.
"""
from __future__ import annotations

import importlib
import re
from typing import Iterable

__all__ = ["signals", "ENGINE_ANSWERS"]

_COURSE = re.compile(r"\bminigrad\.course\.(checks|demos|grading|byhand)\b|"
                     r"from[ \t]+minigrad\.course[ \t]+import[ \t].*\b(checks|demos|byhand)\b|"
                     r"\bchecks\.lesson\d\.")

#: Per exercise (or lesson, "2"), what in its cell is the engine's own answer to it.
ENGINE_ANSWERS: dict[str, tuple[str, str]] = {
    "1.2": (r"\bminigrad\._utils\b|\b_utils\.topological_order\b",
            "the engine's own topological order (minigrad._utils)"),
    "1.3": (r"\bminigrad\._utils\b|\.backward\(", "the engine's own backward"),
    "1.4": (r"\bVar\(|\bminigrad\.Tensor\b|\bmg\.Tensor\b", "the scalar Var or minigrad's Tensor"),
    "1.5": (r"\bVar\(|\bminigrad\.Tensor\b|\bmg\.Tensor\b", "the scalar Var or minigrad's Tensor"),
    "2": (r"\b(?:minigrad|mg|F|functional)\.(?:matmul|sum|reshape|transpose|cross_entropy|"
          r"unbroadcast|softmax|log_softmax)\b|\bbroadcast\.unbroadcast\b|"
          r"from[ \t]+minigrad(?:\.\w+)*[ \t]+import[ \t].*\b(?:matmul|unbroadcast|"
          r"cross_entropy|functional)\b",
          "the engine's own operation"),
    "3": (r"\b(?:minigrad\.)?(?:nn|optim)\.(?:Parameter|Module|Linear|ReLU|Sequential|SGD)\b|"
          r"from[ \t]+minigrad(?:\.nn|\.optim)?[ \t]+import[ \t].*\b(?:Parameter|Module|Linear|"
          r"ReLU|Sequential|SGD|nn|optim)\b",
          "minigrad.nn's or minigrad.optim's own class"),
    "4.2": (r"\.backward\(|\bbyhand\.|\bminigrad\.grad\b",
            "the engine's backward or the hand-written layers"),
}


def _private_names(checks_module: str) -> set[str]:
    try:
        module = importlib.import_module(checks_module)
    except ImportError:
        return set()
    names = set(vars(module)) | set(getattr(module, "_JUDGED", ()))   # the judges' too
    return {name for name in names if name.startswith("_") and not name.startswith("__")
            and len(name) > 3} | {name for name in ("ReferenceTensor",) if hasattr(module, name)}


def signals(cells: Iterable[tuple[str, str]], checks_module: str) -> list[str]:
    """The signals of each ``(exercise id, exercise cell source)``, as sentences.

    >>> signals([("2.1", "def matmul(a, b):\\n    return minigrad.matmul(a, b)")],
    ...         "minigrad.course.checks.lesson2")   # doctest: +NORMALIZE_WHITESPACE
    ["exercise 2.1 uses the engine's own operation (line 2: `return minigrad.matmul(a, b)`)"]
    """
    private = _private_names(checks_module)
    names = re.compile(r"\b(" + "|".join(map(re.escape, sorted(private))) + r")\b") \
        if private else None
    found: list[str] = []
    for exercise, source in cells:
        rule = ENGINE_ANSWERS.get(exercise) or ENGINE_ANSWERS.get(exercise.split(".")[0])
        engine = re.compile(rule[0]) if rule else None
        for number, line in enumerate(source.split("\n"), 1):
            code = line.split("#", 1)[0]
            what = ""
            if _COURSE.search(code):
                what = "the course's own checks, demos or grader"
            elif names is not None and (hit := names.search(code)):
                what = f"a private name of the checks ({hit[1]})"
            elif engine is not None and rule is not None and engine.search(code):
                what = rule[1]
            if what:
                found.append(f"exercise {exercise} uses {what} (line {number}: "
                             f"`{line.strip()[:80]}`)")
                break
    return found

"""The checks that the lessons' check cells call, and the helpers they share.

A check takes the *student's* objects (their functions and classes, passed in), runs them on
small cases, and prints what it verified when all is well (a ✓ line). When something is wrong
it prints a ✗ line with a message that names the case, the expected and the actual values, and
what usually causes that mistake, and the notebook goes on (Run All does not stop at the first
mistake). With ``MINIGRAD_CHECKS_RAISE=1`` in the environment (the tests, nbval over the
solutions, the grader) a failing check raises :class:`CheckFailed` instead.

Every check records its verdict in this kernel, per exercise: :func:`done` tells whether an
exercise's check has passed (lesson demos use it to fall back to the reference), and
:func:`results` gives all of them. One module per lesson (``lesson1`` ...); each has
``EXERCISES = {"1.1": {"title": ..., "points": ...}, ...}``, its rows of the course's one table
of exercises and points (``exercises.json``, read by :func:`exercises`; the grader's weights),
and marks each check with :func:`exercise`.

A check split for the grader (:class:`Split`) sends plain data across the sandbox's edge with
:func:`sent` and reads it back with :func:`received` or :func:`value_at`, refusing anything
malformed; one made of cases runs them with :func:`run_cases` and judges them in order with
:func:`judged_cases`, so that the first mistake is the one reported.

>>> from minigrad.course import checks
>>> checks.lesson1.mul(mul)          # doctest: +SKIP
✓ mul: forward values and both gradients agree with the scalar engine and finite differences (4 cases)

Imports: the engine, ``minigrad.course.scalar`` and ``byhand`` (the references the checks
compare with), NumPy. Never the grader: the grader imports these checks, not the reverse.
"""
from __future__ import annotations

import contextlib
import functools
import importlib
import json
import os
import sys
import traceback
import types
from dataclasses import dataclass
from typing import Any, Callable, Iterator, NoReturn, Sequence

import numpy as np

from minigrad.gradcheck import numerical_gradient, numerical_vjp  # the one home of finite differences

__all__ = [
    "CheckFailed", "require_student", "passed", "fail", "show", "assert_close",
    "numerical_gradient", "numerical_vjp", "student_code", "with_globals",
    "exercise", "done", "results", "raising", "RAISE_VARIABLE", "Split", "mismatch",
    "sent", "received", "described", "received_or_type", "type_sent", "malformed",
    "run_cases", "judged_cases", "value_at", "place", "exercises", "judged", "judges_names",
]

_LESSONS = ("lesson1", "lesson2", "lesson3", "lesson4")


class CheckFailed(AssertionError):
    """A check found a mistake; the message says which case, expected vs got, and why.

    In Jupyter it shows as its message alone, followed, when the student's code raised an
    error, by the lines of the student's code that led to it (not the check's own frames).
    """

    def _render_traceback_(self) -> list[str]:  # called by IPython instead of a traceback
        red, reset = "\x1b[31m", "\x1b[0m"
        return [f"{red}CheckFailed{reset}: {self}"] + _student_frames(self, red, reset)


def _student_frames(error: BaseException, red: str = "", reset: str = "") -> list[str]:
    """The lines of the student's code that led to ``error``'s cause (not the check's own)."""
    cause = error.__cause__
    if cause is None or isinstance(cause, NotImplementedError):
        return []
    frames = [f for f in traceback.extract_tb(cause.__traceback__)
              if not f.filename.startswith(_CHECKS_DIR)]
    if not frames:
        return []
    lines = ["", "The error came from here:"]
    lines += [line.rstrip("\n") for line in traceback.format_list(frames)]
    lines.append(f"{red}{type(cause).__name__}{reset}: {cause}")
    return lines


_CHECKS_DIR = os.path.dirname(os.path.abspath(__file__))


def __getattr__(name: str) -> Any:
    """``checks.lesson1`` etc. (and ``checks.table``, the table API) are imported on first use."""
    if name in _LESSONS or name == "table":
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(list(globals()) + list(_LESSONS) + ["table"])


# ---------------------------------------------------------------------------------------------
# Two modes: print and record (in a notebook), or raise (tests, nbval, the grader)

#: The environment variable that makes a failing check raise :class:`CheckFailed`.
RAISE_VARIABLE = "MINIGRAD_CHECKS_RAISE"

_RESULTS: dict[str, bool] = {}   # exercise id -> did its latest check pass (in this kernel)


def exercises(lesson: int) -> dict[str, dict[str, Any]]:
    """Lesson ``lesson``'s rows of the course's table of exercises (``exercises.json``).

    >>> exercises(4)["4.3"]
    {'title': 'The training loop', 'points': 3}
    """
    with open(os.path.join(os.path.dirname(__file__), "exercises.json"), encoding="utf-8") as f:
        table = json.load(f)["exercises"]
    rows = {key: dict(row) for key, row in table.items() if key.split(".")[0] == str(lesson)}
    if not rows:
        raise ValueError(f"exercises.json has no exercise of lesson {lesson}; it has lessons "
                         f"{sorted({key.split('.')[0] for key in table})}")
    return rows


def raising() -> bool:
    """True when a failing check raises (``MINIGRAD_CHECKS_RAISE=1``), False when it prints."""
    return os.environ.get(RAISE_VARIABLE, "").strip() not in ("", "0")


def done(exercise_id: str) -> bool:
    """True once the check of exercise ``exercise_id`` (e.g. ``"1.6"``) has passed here.

    A later failing run of the same check makes it False again. Lesson demos use this to decide
    whether to run on the student's code or fall back to the reference implementation.
    """
    return _RESULTS.get(str(exercise_id), False)


def results() -> dict[str, bool]:
    """Every exercise checked in this kernel so far: ``{"1.1": True, "1.2": False, ...}``."""
    return dict(_RESULTS)


@dataclass(frozen=True)
class Split:
    """A check in three parts that share one definition, so a grader can keep the verdict.

    Parameters
    ----------
    probe : callable
        ``probe(rng)`` makes the inputs the student's code is run on, as plain data (numbers,
        strings, NumPy arrays, in lists and dicts). ``rng`` is ``None`` in a notebook (the
        lesson's fixed cases, so messages are reproducible) and a generator seeded from a
        per-run secret in the grader (cases the submission has never seen).
    run : callable
        ``run(probes, *student_objects)`` applies the student's code to the probes and returns
        what came out, as plain data. It holds no expected value. What can only be seen inside
        the student's process (the output's parents, a reference cycle, an input changed in
        place) it checks itself, raising :class:`CheckFailed`; such conditions are listed in
        ``self_reported``.
    judge : callable
        ``judge(probes, outputs)`` computes the expected values, compares, and raises
        :class:`CheckFailed` with the cause-pointing message; when all is right it returns the
        ✓ line's text. The grader runs it in its own process, on data it received.
    self_reported : str
        What ``run`` verifies on its own (empty when nothing), for the grader's report.
    """

    probe: Callable[[np.random.Generator | None], Any]
    run: Callable[..., Any]
    judge: Callable[[Any, Any], str]
    self_reported: str = ""


def judged(lesson: str, name: str) -> Callable[..., Any]:
    """The function ``name`` of ``judges/<lesson>.py`` (a judge, or a reference computation),
    imported when it is first called.

    A check's :class:`Split` names its judge this way, and a table's row its reference (see
    :mod:`minigrad.course.checks.table`), so that the run halves import without the judges:
    the grader's sandbox does not hold them (they compute the expected values).

    >>> judge = judged("lesson1", "_tensor_judge")
    >>> judge.__name__
    '_tensor_judge'
    """
    def judge(*args: Any) -> Any:
        module = importlib.import_module(f"{__name__}.judges.{lesson}")
        return getattr(module, name)(*args)

    judge.__name__ = judge.__qualname__ = name
    judge.__doc__ = f"The judge {name} of {__name__}.judges.{lesson} (imported when called)."
    return judge


def judges_names(module: str, names: frozenset[str]) -> Callable[[str], Any]:
    """A lesson module's ``__getattr__``: each of ``names`` (helpers that moved to
    ``judges/<lesson>.py``) found there, so that a notebook still reaches them; in the grader's
    sandbox, which does not hold the judges, asking for one raises ImportError."""
    judges = module.replace(".checks.", ".checks.judges.")

    def __getattr__(name: str) -> Any:
        if name in names:
            return getattr(importlib.import_module(judges), name)
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    return __getattr__


def exercise(exercise_id: str, split: Split | None = None
             ) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Mark a function as the check of exercise ``exercise_id``.

    The decorated check records its verdict (see :func:`done`). When it finds a mistake it
    raises :class:`CheckFailed` if :func:`raising`, and otherwise prints a ✗ line with the
    message (and the lines of the student's code that raised, if any) and returns, so that
    the rest of the notebook still runs. An error of any other kind that escapes a check is
    reported the same way.

    With a ``split``, the function's body is not used: the check is ``split.judge`` of
    ``split.run`` on the notebook's probes, and ``split.judge``'s text is the ✓ line. The
    grader finds the split as the check's ``.split`` attribute.
    """
    def decorate(check: Callable[..., None]) -> Callable[..., None]:
        def body(*args: Any, **kwargs: Any) -> None:
            if split is None:
                check(*args, **kwargs)
                return
            probes = split.probe(None)
            passed(split.judge(probes, split.run(probes, *args, **kwargs)))

        @functools.wraps(check)
        def run(*args: Any, **kwargs: Any) -> None:
            _RESULTS[exercise_id] = False
            try:
                body(*args, **kwargs)
            except Exception as error:  # noqa: BLE001 - any error is reported like a failure
                if raising():
                    raise
                if isinstance(error, CheckFailed):
                    _print_failure(exercise_id, str(error), _student_frames(error))
                else:
                    _print_failure(exercise_id, f"the check stopped with "
                                                f"{type(error).__name__}: {error}", [])
                return
            _RESULTS[exercise_id] = True

        run.exercise_id = exercise_id  # type: ignore[attr-defined]
        run.split = split  # type: ignore[attr-defined]
        return run
    return decorate


def _print_failure(exercise_id: str, message: str, frames: list[str]) -> None:
    sys.stdout.flush()
    print("\n".join([f"\u2717 exercise {exercise_id}: {message}", *frames]))


# ---------------------------------------------------------------------------------------------
# Reporting


def passed(message: str) -> None:
    """Print the line a check prints when everything it verified is right."""
    print(f"\u2713 {message}")


def fail(case: str, problem: str, cause: str | None = None) -> NoReturn:
    """Raise :class:`CheckFailed`: ``case`` says what was run, ``problem`` what is wrong,
    ``cause`` what usually leads to it."""
    msg = f"{case}: {problem}"
    if cause:
        msg += f"\n  usual cause: {cause}"
    raise CheckFailed(msg)


def mismatch(check: str, case: str, expected: Any, got: Any, cause: str) -> CheckFailed:
    """The :class:`CheckFailed` to raise when ``case`` of ``check`` gave ``got`` instead of
    ``expected``: its message has four lines, the case, expected, got, and the usual cause."""
    return CheckFailed(f"{check}, case '{case}':\n"
                       f"  expected: {expected}\n"
                       f"  got:      {got}\n"
                       f"  usual cause: {cause}")


def show(x: Any, width: int = 120) -> str:
    """A short, one-line picture of a value (arrays rounded, long ones elided)."""
    if isinstance(x, np.ndarray) or np.isscalar(x):
        text = np.array2string(np.asarray(x), precision=4, separator=", ", threshold=12,
                               edgeitems=3, max_line_width=10_000)  # precision: floats only
        text = " ".join(text.split())
    else:
        text = repr(x)
    return text if len(text) <= width else text[: width - 3] + "..."


def _kind(x: Any) -> str:
    return f"a {type(x).__module__}.{type(x).__qualname__}"


def require_student(obj: Any, name: str) -> None:
    """Refuse an object that comes from minigrad (or is missing), asking for the student's own.

    The checks test what the student wrote. ``minigrad.Tensor`` would pass them all, so it is
    refused with a message (NumPy's own functions too), as is ``None``.
    """
    if obj is None:
        raise CheckFailed(f"{name} is None: pass your own {name} (run the exercise cell that "
                          "defines it first)")
    if isinstance(obj, types.MethodType):
        module = getattr(obj.__func__, "__module__", None)
    elif isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType)):
        module = getattr(obj, "__module__", None)
    else:  # an instance (a student's module, say) or a callable object such as a ufunc
        module = type(obj).__module__
    if module == "builtins" and getattr(obj, "__name__", None) == name:
        raise CheckFailed(f"run the exercise cell above first; it has not defined `{name}` yet "
                          f"(`{name}` is still Python's built-in {name})")
    if isinstance(module, str) and module.split(".")[0] in ("minigrad", "numpy"):
        raise CheckFailed(
            f"{name} comes from {module}, not from your notebook. This check tests the {name} "
            f"you wrote: pass your own (the one defined in your exercise cell).")


# ---------------------------------------------------------------------------------------------
# Comparing values


def assert_close(got: Any, expected: Any, case: str, what: str, cause: str | None = None,
                 rtol: float = 1e-6, atol: float = 1e-8) -> None:
    """Fail unless ``got`` equals ``expected`` (same shape, values within tolerance).

    The message names the ``case`` and ``what`` was compared, shows both values and the first
    element that differs, and adds the usual ``cause``.
    """
    if got is None:
        fail(case, f"{what} is None; expected {show(expected)}", cause)
    try:
        got_arr = np.asarray(got, dtype=np.float64)
    except (TypeError, ValueError):
        fail(case, f"{what} should be a number or an array; got {_kind(got)}: {show(got)}",
             cause)
    exp_arr = np.asarray(expected, dtype=np.float64)
    if got_arr.shape != exp_arr.shape:
        fail(case, f"{what} has shape {got_arr.shape} but should have shape {exp_arr.shape}\n"
                   f"  expected: {show(exp_arr)}\n  got:      {show(got_arr)}", cause)
    ok = np.isclose(got_arr, exp_arr, rtol=rtol, atol=atol, equal_nan=False)
    if not ok.all():
        bad = tuple(int(i) for i in np.argwhere(~ok)[0])
        where = f" at index {bad}" if bad else ""
        fail(case, f"{what} is wrong{where}: expected {exp_arr[bad]:.6g}, got {got_arr[bad]:.6g}"
                   f"\n  expected: {show(exp_arr)}\n  got:      {show(got_arr)}", cause)


# ---------------------------------------------------------------------------------------------
# Values that cross the sandbox's edge (a split check's run sends, its judge receives)
#
# In the grader the judge reads what came from the student's process, so it trusts nothing
# about its form: whatever is not what ``run`` sends (zeros, wrong shapes, strings, {}, a key
# missing) becomes a CheckFailed with the reason, never a crash of the grader.


def described(x: Any) -> dict[str, str]:
    """How a ``run`` sends a value that is not an array of numbers: the name of its type and a
    short picture of it, ``{"type": "builtins.str", "value": "'abc'"}``."""
    return {"type": f"{type(x).__module__}.{type(x).__qualname__}", "value": show(x)}


def sent(x: Any) -> Any:
    """What a ``run`` sends back for a value the student's code returned, as plain data: None,
    a float64 array, or, when it is neither, what :func:`described` says of it."""
    if x is None:
        return None
    try:
        return np.array(x, dtype=np.float64)
    except (TypeError, ValueError):
        return described(x)


def _is_described(got: Any) -> bool:
    return isinstance(got, dict) and set(got) == {"type", "value"} and \
        all(isinstance(text, str) for text in got.values())


def _numbers(got: Any) -> np.ndarray | None:
    """``got`` as a float64 array when it is a number or an array of numbers, else None."""
    if got is None or isinstance(got, (dict, str)):
        return None
    try:
        array = np.asarray(got)
    except (TypeError, ValueError):   # lists of uneven lengths
        return None
    return array.astype(np.float64) if array.dtype.kind in "biuf" else None


def received(got: Any, case: str, what: str, cause: str | None = None) -> np.ndarray:
    """A value a ``run`` sent (see :func:`sent`) as a float64 array, for a ``judge``; a
    :class:`CheckFailed` naming what came instead (None, not an array, malformed data)."""
    if got is None:
        fail(case, f"{what} is None", cause)
    array = _numbers(got)
    if array is None:
        came = f"{got['type']}: {got['value']}" if _is_described(got) else show(got)
        fail(case, f"{what} should be a number or an array; got {came}", cause)
    return array


def type_sent(got: Any) -> str:
    """The name of the type of a value a ``run`` sent: ``"str"`` for what :func:`described`
    says of a string, ``"NoneType"`` for None; ``"malformed data (...)"`` for anything else."""
    if got is None:
        return "NoneType"
    if _is_described(got):
        return got["type"].rsplit(".", 1)[-1]
    return f"malformed data ({show(got, 60)})"


def received_or_type(got: Any) -> tuple[np.ndarray | None, str]:
    """A value a ``run`` sent (see :func:`sent`) as ``(float64 array, "")``, or as
    ``(None, the name of its type)`` (see :func:`type_sent`) when it is not an array of numbers:
    for a judge that writes its own message."""
    array = _numbers(got)
    return (array, "") if array is not None else (None, type_sent(got))


def malformed(check: str, where: str, expected: str, got: Any) -> NoReturn:
    """Refuse data sent back for judging that is not what ``run`` sends: ``where`` names the
    place (``"the values['cases'][2]"``), ``expected`` what belongs there."""
    raise CheckFailed(f"{check}: the values sent back for judging are malformed: {where} "
                      f"should be {expected}; got {show(got, 80)}")


# ---------------------------------------------------------------------------------------------
# Checks made of cases: run them in the student's process, judge them in the grader's
#
# A check of several cases runs them in order and stops at the first one where the student's
# code fails: it raises, or shows a mistake that only its own process can see (a node without
# parents, an input changed in place). The judge goes through the same cases in order and
# reports that failure when it reaches it, after judging every value that came before it, the
# failing case's own too. So the first mistake is the one reported, as in a check made of one
# piece: a value wrong in case 2 is told before an error in case 3, and a wrong forward value
# before the error its backward pass raised.
#
#   outputs = run_cases(cases, run_one)    # in the run, in the student's process
#   for case, result in judged_cases(check, cases, outputs):   # in the judge
#       ... value_at(result, check, "forward") ...


class _Stopped(dict[str, Any]):
    """The values of the case where a run stopped: plain data (what the case had made, and
    ``"stopped"``: the failure's message) that also carries the :class:`CheckFailed` itself as
    ``.error``. In a notebook the judge raises that very error, so the student still sees the
    lines of their code that raised. The attribute never crosses the sandbox's edge: the grader
    receives the dict alone, and the message in it."""

    error: CheckFailed | None = None


def run_cases(cases: Sequence[Any],
              run_one: Callable[[int, Any, dict[str, Any]], None]) -> dict[str, Any]:
    """Run the student's code on each case, in order: ``run_one(k, case, result)`` fills the
    dict ``result`` with what came out of case ``k`` (counted from 0), as plain data.

    Returns ``{"cases": [result, ...]}``. The first :class:`CheckFailed` stops the run: the
    case's result keeps what it had made so far and gets the failure's message as its
    ``"stopped"``, and the cases after it are not run.

    >>> def one(k, case, result):
    ...     result["inverse"] = 1 / case if case else fail(f"case {k + 1}", "divides by 0")
    >>> run_cases([2, 4], one)
    {'cases': [{'inverse': 0.5}, {'inverse': 0.25}]}
    >>> run_cases([2, 0, 4], one)
    {'cases': [{'inverse': 0.5}, {'stopped': 'case 2: divides by 0'}]}
    """
    results: list[dict[str, Any]] = []
    for k, case in enumerate(cases):
        result: dict[str, Any] = {}
        results.append(result)
        try:
            run_one(k, case, result)
        except CheckFailed as error:
            stopped = results[-1] = _Stopped(result, stopped=str(error))
            stopped.error = error
            break
    return {"cases": results}


def judged_cases(check: str, cases: Sequence[Any], outputs: Any
                 ) -> Iterator[tuple[Any, dict[str, Any]]]:
    """The pairs ``(case, what the run sent back for it)`` for a judge to compare, in order
    (see :func:`run_cases`). Where the run stopped, the case is given too, with what it made
    before it stopped (read its values with :func:`value_at`), and then the failure that stopped
    the run is raised; when it had made nothing, the failure is raised at once.

    What came back is checked first: anything that :func:`run_cases` does not make is refused
    with a :class:`CheckFailed` that names ``check``.
    """
    results = outputs.get("cases") if isinstance(outputs, dict) else None
    if not isinstance(results, list):
        malformed(check, "the values", f"{{'cases': [...]}}, the values of {len(cases)} cases",
                  outputs)
    for k, result in enumerate(results):
        if not isinstance(result, dict):
            malformed(check, f"the values['cases'][{k}]", "a dict of values", result)
    stops = [k for k, result in enumerate(results) if "stopped" in result]
    if stops:
        if stops != [len(results) - 1] or len(results) > len(cases):
            malformed(check, "the values['cases']", f"the values of at most {len(cases)} cases, "
                      "where only the last one may say that the run stopped", results)
        if not isinstance(results[-1]["stopped"], str):
            malformed(check, f"the values['cases'][{len(results) - 1}]['stopped']",
                      "the message that stopped the run", results[-1]["stopped"])
    elif len(results) != len(cases):
        malformed(check, "the length of the values['cases']", f"{len(cases)}", len(results))
    for case, result in zip(cases, results):
        if set(result) == {"stopped"}:
            break
        yield case, result
    if stops:
        raise _stop(results[-1])


def place(path: Sequence[str | int]) -> str:
    """Where ``path`` leads in what a run sent back: ``the values['cases'][2]['found']``."""
    return "the values" + "".join(f"[{key!r}]" for key in path)


def value_at(values: Any, check: str, *path: str | int) -> Any:
    """``values[path[0]][path[1]]...`` in what a run sent back, each step checked (a dict's key,
    a list's index) and refused as malformed when it is not there. Where the run stopped at a
    case before it made the value, the failure that stopped it is raised instead."""
    found = values
    for depth, key in enumerate(path):
        if isinstance(key, int):
            if not isinstance(found, (list, tuple)) or not 0 <= key < len(found):
                malformed(check, place(path[:depth]), f"a list with an item {key}", found)
        elif not isinstance(found, dict) or key not in found:
            if isinstance(found, dict) and "stopped" in found:
                raise _stop(found)
            malformed(check, place(path[:depth]), f"a dict with the key {key!r}", found)
        found = found[key]
    return found


def _stop(result: dict[str, Any]) -> CheckFailed:
    """The failure that stopped a run at the case whose values are ``result``: the error
    itself in the process that ran it, a new one with its message elsewhere."""
    error = getattr(result, "error", None)
    return error if isinstance(error, CheckFailed) else CheckFailed(result["stopped"])


# ---------------------------------------------------------------------------------------------
# Running the student's code


@contextlib.contextmanager
def student_code(case: str, name: str = "your code") -> Iterator[None]:
    """Run the student's code, turning any error it raises into a :class:`CheckFailed` that
    names the case (the original error stays attached, with its traceback)."""
    try:
        yield
    except CheckFailed:
        raise
    except NotImplementedError as e:
        raise CheckFailed(f"{case}: {name} raised NotImplementedError: the exercise is not "
                          "done yet. Replace `raise NotImplementedError` with your code and "
                          "run the exercise cell again.") from e
    except RecursionError as e:
        raise CheckFailed(f"{case}: {name} hit Python's recursion limit (RecursionError). "
                          "Deep graphs need a loop with an explicit stack, not recursion.") from e
    except Exception as e:  # noqa: BLE001 - any error in student code is reported, not raised
        raise CheckFailed(f"{case}: {name} raised {type(e).__name__}: {e}") from e


def with_globals(fn: Callable[..., Any], **names: Any) -> Callable[..., Any]:
    """A copy of the function ``fn`` whose global names ``names`` are replaced.

    This is how a check puts the student's piece into a reference scaffold: the student's
    ``mul`` builds *reference* tensors when its global ``Tensor`` is swapped, so a mistake
    elsewhere in the notebook cannot make the ``mul`` check fail.
    """
    if isinstance(fn, types.MethodType):
        fn = fn.__func__
    if not isinstance(fn, types.FunctionType):
        raise CheckFailed(f"expected a function defined with def; got {_kind(fn)}")
    env = dict(fn.__globals__)
    env.update(names)
    copy = types.FunctionType(fn.__code__, env, fn.__name__, fn.__defaults__, fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__dict__.update(fn.__dict__)
    copy.__qualname__ = fn.__qualname__
    copy.__module__ = fn.__module__
    return copy


def _install_kernel_help() -> None:
    """In an IPython kernel, a check cell whose exercise cell never ran says so
    (:mod:`minigrad.course.kernel`) instead of showing a bare NameError."""
    from minigrad.course.kernel import install

    install()


_install_kernel_help()

"""The course checks' one mechanism for checks made of cases (``checks.run_cases``,
``judged_cases``, ``value_at``) and their one encoding of values that cross the sandbox's edge
(``sent``, ``described``, ``received``, ``received_or_type``, ``type_sent``).

A run goes through the cases in the student's process and stops at the first failure; the
judge goes through them in order and reports that failure when it reaches it, after the values
before it, the failing case's own included. Whatever else comes back is refused with a
CheckFailed that names the check, never a crash.
"""
from __future__ import annotations

import re

import numpy as np
import pytest
from tests.support.solutions_helper import solution_namespace

from minigrad import Tensor, op
from minigrad.course.checks import (CheckFailed, described, judged_cases, lesson2, lesson4,
                                    place, received, received_or_type, run_cases, sent,
                                    type_sent, value_at)
from minigrad.course.grading.protocol import dumps, loads


def crossed(x):
    """``x`` after the trip through the grader's protocol (JSON, arrays as .npy)."""
    return loads(dumps(x))


def _run_three(fail_at: int | None, made_before_failing: bool = True) -> dict:
    """run_cases over cases 10, 20, 30: each makes "half" then "double"; case ``fail_at``
    (counted from 0) raises after making "half" (or before, with ``made_before_failing``
    False)."""
    ran = []

    def one(k, case, result):
        ran.append(case)
        if k == fail_at and not made_before_failing:
            raise CheckFailed(f"case {k + 1}: stopped before any value") from KeyError("why")
        result["half"] = case / 2
        if k == fail_at:
            raise CheckFailed(f"case {k + 1}: stopped after half") from ValueError("why")
        result["double"] = case * 2

    outputs = run_cases([10, 20, 30], one)
    outputs["ran"] = ran
    return outputs


# --- run_cases -------------------------------------------------------------------------------


def test_a_run_without_failure_sends_every_case():
    outputs = _run_three(fail_at=None)
    assert outputs["cases"] == [{"half": 5.0, "double": 20}, {"half": 10.0, "double": 40},
                                {"half": 15.0, "double": 60}]
    assert outputs["ran"] == [10, 20, 30]


def test_a_run_stops_at_the_first_failure_keeping_what_that_case_made():
    outputs = _run_three(fail_at=1)
    assert outputs["ran"] == [10, 20]                       # case 3 never ran
    assert outputs["cases"] == [{"half": 5.0, "double": 20},
                                {"half": 10.0, "stopped": "case 2: stopped after half"}]
    assert isinstance(outputs["cases"][1].error, CheckFailed)   # in this process only
    back = crossed({"cases": outputs["cases"]})
    assert type(back["cases"][1]) is dict and not hasattr(back["cases"][1], "error")
    assert back["cases"][1] == {"half": 10.0, "stopped": "case 2: stopped after half"}


def test_only_a_check_failure_stops_a_run():
    def one(k, case, result):
        raise ZeroDivisionError("not a check's verdict")

    with pytest.raises(ZeroDivisionError):
        run_cases([1], one)


# --- judged_cases ----------------------------------------------------------------------------


def _judged(outputs: dict, cases=(10, 20, 30)) -> list:
    """What a judge sees: each (case, half) it read, in order, and then what it raised."""
    seen = []
    try:
        for case, result in judged_cases("the check", list(cases), outputs):
            seen.append((case, value_at(result, "the check", "half")))
            seen.append((case, value_at(result, "the check", "double")))
    except CheckFailed as error:
        seen.append(str(error))
    return seen


def test_the_judge_sees_every_case_in_order():
    assert _judged(_run_three(fail_at=None)) == [
        (10, 5.0), (10, 20), (20, 10.0), (20, 40), (30, 15.0), (30, 60)]


@pytest.mark.parametrize("across", [False, True], ids=["notebook", "grader"])
def test_the_judge_reads_the_stopped_case_up_to_where_it_stopped(across):
    outputs = _run_three(fail_at=1)
    outputs = crossed(outputs) if across else outputs
    assert _judged(outputs) == [(10, 5.0), (10, 20), (20, 10.0), "case 2: stopped after half"]


@pytest.mark.parametrize("across", [False, True], ids=["notebook", "grader"])
def test_a_case_stopped_before_any_value_is_raised_at_once(across):
    outputs = _run_three(fail_at=2, made_before_failing=False)
    outputs = crossed(outputs) if across else outputs
    seen = []
    with pytest.raises(CheckFailed, match="case 3: stopped before any value"):
        for case, _ in judged_cases("the check", [10, 20, 30], outputs):
            seen.append(case)
    assert seen == [10, 20]


def test_a_stop_the_judge_never_read_is_raised_once_the_case_is_judged():
    outputs = _run_three(fail_at=0)
    seen = []
    with pytest.raises(CheckFailed, match="case 1: stopped after half"):
        for case, result in judged_cases("the check", [10, 20, 30], outputs):
            seen.append(value_at(result, "the check", "half"))    # "double" is never asked for
    assert seen == [5.0]


def test_in_the_notebook_the_judge_raises_the_runs_own_error():
    """So the student still sees the lines of their code that raised (its __cause__)."""
    outputs = _run_three(fail_at=1)
    with pytest.raises(CheckFailed) as info:
        _ = [value_at(r, "c", "double") for _, r in judged_cases("c", [10, 20, 30], outputs)]
    assert info.value is outputs["cases"][1].error
    assert isinstance(info.value.__cause__, ValueError)
    with pytest.raises(CheckFailed) as info:
        list(judged_cases("c", [10, 20, 30], crossed(outputs)))
    assert info.value.__cause__ is None and str(info.value) == "case 2: stopped after half"


GOOD = {"cases": [{"half": 5.0}, {"half": 10.0}, {"half": 15.0}]}

#: What a forger (or a broken sandbox) could send instead of run_cases' outputs, and the place
#: the refusal names.
FORGED = {
    "None": (None, "the values should be"),
    "a string": ("all correct", "the values should be"),
    "empty": ({}, "the values should be"),
    "cases not a list": ({"cases": "x"}, "the values should be"),
    "a case not a dict": ({"cases": [{"half": 5.0}, 1, {"half": 15.0}]},
                          r"the values\['cases'\]\[1\] should be a dict of values"),
    "too few cases": ({"cases": GOOD["cases"][:2]},
                      r"the length of the values\['cases'\] should be 3; got 2"),
    "too many cases": ({"cases": GOOD["cases"] * 2},
                       r"the length of the values\['cases'\] should be 3; got 6"),
    "a stop before the last case": (
        {"cases": [{"stopped": "x"}, {"half": 10.0}]}, "only the last one may say"),
    "a stop past the cases": ({"cases": GOOD["cases"] + [{"stopped": "x"}]},
                              "at most 3 cases"),
    "a stop that is not a message": ({"cases": [{"half": 5.0, "stopped": 3}]},
                                     r"\['stopped'\] should be the message"),
    "a value missing": ({"cases": [{"half": 5.0}, {}, {"half": 15.0}]},
                        "the values should be a dict with the key 'half'; got {}"),
}


@pytest.mark.parametrize("forge", list(FORGED))
def test_what_run_cases_does_not_make_is_refused_naming_the_check(forge):
    forged, where = FORGED[forge]
    with pytest.raises(CheckFailed) as info:
        for _, result in judged_cases("the check", [10, 20, 30], crossed(forged)):
            value_at(result, "the check", "half")
    message = str(info.value)
    assert message.startswith("the check: the values sent back for judging are malformed: ")
    assert re.search(where, message)


# --- value_at --------------------------------------------------------------------------------


def test_value_at_reads_a_path_and_names_the_place_it_is_missing():
    values = {"cases": [{"found": [1, 2]}, {"found": None}]}
    assert value_at(values, "c", "cases", 0, "found", 1) == 2
    assert value_at(values, "c") is values
    assert place(("cases", 2, "found")) == "the values['cases'][2]['found']"
    for path, message in [
            (("cases", 2), r"the values\['cases'\] should be a list with an item 2"),
            (("cases", 1, "found", 0), r"\['found'\] should be a list with an item 0; got None"),
            (("cases", 0, "lost"), r"\[0\] should be a dict with the key 'lost'"),
            (("cases", "0"), r"the values\['cases'\] should be a dict with the key '0'")]:
        with pytest.raises(CheckFailed, match=f"^c: the values sent back for judging are "
                                              f"malformed: .*{message}"):
            value_at(values, "c", *path)


# --- one encoding of the values that cross the sandbox's edge --------------------------------


def test_sent_keeps_numbers_and_describes_the_rest():
    assert sent(None) is None
    np.testing.assert_array_equal(sent([[1, 2]]), np.array([[1.0, 2.0]]))
    assert sent(np.float32(1.5)).dtype == np.float64
    assert sent("abc") == described("abc") == {"type": "builtins.str", "value": "'abc'"}
    tensor = sent(Tensor([1.0, 2.0]))            # a Tensor is not taken for its numbers
    assert tensor["type"] == "minigrad.tensor.Tensor" and tensor["value"].startswith("tensor(")
    assert sent([np.zeros(2), np.zeros(3)])["type"] == "builtins.list"   # uneven: described


@pytest.mark.parametrize("got, message", [
    (None, "case 1: the gradient is None"),
    ("abc", "case 1: the gradient should be a number or an array; got builtins.str: 'abc'"),
    ({"type": "x"}, "case 1: the gradient should be a number or an array; got {'type': 'x'}"),
    (["1.0"], r"case 1: the gradient should be a number or an array; got \['1.0'\]"),
])
def test_received_refuses_what_is_not_numbers_saying_what_came(got, message):
    with pytest.raises(CheckFailed, match=f"^{message}"):
        received(crossed(sent(got) if got in (None, "abc") else got), "case 1", "the gradient")


def test_received_or_type_gives_the_array_or_the_name_of_the_type():
    array, instead = received_or_type(crossed(sent(np.arange(3))))
    np.testing.assert_array_equal(array, [0.0, 1.0, 2.0])
    assert instead == "" and array.dtype == np.float64
    assert received_or_type(crossed(sent(None))) == (None, "NoneType")
    assert received_or_type(crossed(sent((1, "x")))) == (None, "tuple")
    assert received_or_type(crossed(described(Tensor(1.0)))) == (None, "Tensor")
    assert received_or_type({"type": 3, "value": "x"}) == (None, "malformed data ({'type': 3, "
                                                                 "'value': 'x'})")
    assert type_sent(crossed(described({}))) == "dict"


# --- the checks that use it -----------------------------------------------------------------

#: A matmul whose forward value is wrong and whose VJP is not written yet: case 1 stops in the
#: VJP, after its forward value was sent. The wrong value is the first mistake, and is told.
WRONG_FORWARD_VJP_TODO = """
def matmul(a, b):
    def vjp(g, x, w):
        raise NotImplementedError
    return op(2 * a.data @ b.data, (a, b), vjp, saved=(a.data, b.data))
"""


@pytest.mark.parametrize("seed", [None, 4], ids=["notebook", "grader"])
def test_lesson2_judges_the_values_a_case_made_before_it_stopped(seed):
    ns = {"np": np, "op": op, "__name__": "__main__"}
    exec(WRONG_FORWARD_VJP_TODO, ns)
    split = lesson2.matmul.split
    probes = split.probe(None if seed is None else np.random.default_rng(seed))
    outputs = split.run(crossed(probes), ns["matmul"])
    assert list(outputs["cases"][0]) == ["forward", "stopped"]
    assert "NotImplementedError" in outputs["cases"][0]["stopped"]
    with pytest.raises(CheckFailed, match=r"case 1 of 4.*the forward value is wrong"):
        split.judge(probes, crossed(outputs))


def test_lesson4_a_gradient_that_is_none_is_named():
    """hand_gradients right but for one gradient, None: the message says what came (before the
    shared encoding, None was read as nan and the message said 'shape ()')."""
    right = solution_namespace("04_train_and_check")["hand_gradients"]

    def none_for_b1(*args):
        return {**right(*args), "b1": None}

    split = lesson4.hand_gradients.split
    for probes in (split.probe(None), split.probe(np.random.default_rng(4))):
        with pytest.raises(CheckFailed, match=r"(?s)2-2-2 network, dL/db1'.*expected: an array "
                                              r"of shape \(2,\).*got:\s+NoneType.*return NumPy"):
            split.judge(probes, crossed(split.run(crossed(probes), none_for_b1)))

"""The table API (minigrad.course.checks.table): a check made from rows of operations.

A table of two rows written here (sin and cos, their references plain functions of this file):
the check passes right operations, names the case, expected and got and the row's cause for a
wrong one, draws the lesson's cases from the rows' seeds and fresh ones from the grader's, runs
without computing any expected value, and refuses whatever the run does not send.
"""
from __future__ import annotations

import inspect

import numpy as np
import pytest

from minigrad.course.checks import CheckFailed, Split, lesson1, table
from minigrad.course.grading.protocol import dumps, loads
from tests.support.split_helpers import is_plain, junk_forgeries

REFERENCE_CALLS = []


def sin_reference(a):
    REFERENCE_CALLS.append("sin")
    return np.sin(a), [np.cos(a)]


def cos_reference(a):
    REFERENCE_CALLS.append("cos")
    return np.cos(a), [-np.sin(a)]


ROWS = {
    "sin": table.Operation("np.sin(a.data)", sin_reference, ("g * np.cos(a.data)",),
                           (table.normal,), seed=20, against="NumPy"),
    "cos": table.Operation("np.cos(a.data)", cos_reference, ("-g * np.sin(a.data), mind the sign",),
                           (table.normal,), seed=21, against="NumPy"),
}
check = table.operations("1.9", ROWS, ("sin", "cos"), lesson1._op_run)
T = lesson1.ReferenceTensor


def sin(a):
    return T(np.sin(a.data), (a,), lambda g: (g * np.cos(a.data),))


def cos(a):
    return T(np.cos(a.data), (a,), lambda g: (-g * np.sin(a.data),))


def cos_without_the_sign(a):
    return T(np.cos(a.data), (a,), lambda g: (g * np.sin(a.data),))


def test_a_table_makes_a_split_check_named_after_its_operations(capsys):
    assert isinstance(check.split, Split) and check.exercise_id == "1.9"
    assert list(inspect.signature(check).parameters) == ["sin", "cos"]
    check(sin, cos)
    assert capsys.readouterr().out.startswith(
        "\u2713 sin, cos: forward values and the gradient of every input agree with NumPy")


def test_a_wrong_rule_is_told_with_the_case_expected_got_and_the_rows_cause():
    with pytest.raises(CheckFailed) as info:
        check(sin, cos_without_the_sign)
    message = str(info.value)
    assert message.startswith("cos, case 1 of 3: cos(a) with inputs of shape (3,): the gradient "
                              "for a (vs NumPy, for the output gradient g = ")
    assert "expected:" in message and "usual cause: -g * np.sin(a.data), mind the sign" in message


def test_the_lessons_cases_come_from_the_seeds_and_the_graders_are_fresh():
    split = check.split
    notebook = split.probe(None)
    assert dumps(notebook) == dumps(split.probe(None))
    assert [np.shape(c["inputs"][0]) for c in notebook["sin"]["groups"][0]["cases"]] == \
        list(table.SHAPES)
    np.testing.assert_array_equal(notebook["sin"]["groups"][0]["cases"][0]["inputs"][0],
                                  np.random.default_rng(20).normal(size=3))
    assert dumps(split.probe(np.random.default_rng(1))) != dumps(notebook)


@pytest.mark.parametrize("seed", [None, 3])
def test_the_run_computes_no_expected_value_and_sends_plain_data(seed):
    split = check.split
    probes = split.probe(None if seed is None else np.random.default_rng(seed))
    REFERENCE_CALLS.clear()
    outputs = split.run(loads(dumps(probes)), sin, cos)
    assert REFERENCE_CALLS == [] and is_plain(outputs)
    assert split.judge(probes, loads(dumps(outputs))).startswith("sin, cos:")
    assert REFERENCE_CALLS


def test_what_the_run_did_not_send_is_refused_with_a_check_failure():
    split = check.split
    probes = split.probe(np.random.default_rng(5))
    real = loads(dumps(split.run(probes, sin, cos)))
    tried = 0
    for _, forged in junk_forgeries(real):
        tried += 1
        with pytest.raises(CheckFailed):
            split.judge(probes, forged)
    assert tried > 100
    for forged in (None, {}, [1], {"sin": real["sin"]}):
        with pytest.raises(CheckFailed):
            split.judge(probes, forged)


def test_params_and_a_kink_at_zero_are_rows_of_the_same_table():
    power, relu = lesson1.OPERATIONS["power"], lesson1.OPERATIONS["relu"]
    assert power.formula((2,)) == "a.data ** 2"
    groups = power.probe("power", None)["groups"]
    assert [g["extra"] for g in groups] == [[2], [3], [0.5], [-1.5]]
    cases = relu.probe("relu", np.random.default_rng(0))["groups"][0]["cases"]
    assert np.any(np.asarray(cases[-1]["inputs"][0]) == 0)

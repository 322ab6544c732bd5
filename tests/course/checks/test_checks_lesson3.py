"""The lesson 3 checks pass the reference solutions and catch broken ones with a useful message.

The reference classes are the notebook's own solutions, loaded from it. Each broken variant is a
mistake a student makes; the test asserts the check fails with ``CheckFailed`` and that the message
points at the cause.
"""
from __future__ import annotations

import numpy as np
import pytest
from tests.support.checking import fails
from tests.support.solutions_helper import ROOT, solution_namespace
from tests.support.split_helpers import is_plain, junk_forgeries, places, replaced, reshaped, zeros

import minigrad
from minigrad import Tensor, no_grad
from minigrad.course import exercise_cells, read_notebook
from minigrad.course.checks import CheckFailed, Split, lesson3
from minigrad.course.grading.protocol import dumps, loads

# --- the reference solutions: the notebook's own exercise cells -------------------------------

_SOLUTION = solution_namespace("03_parameters_modules_optimizer")
SOLUTION_PATH = ROOT / "solutions" / "03_parameters_modules_optimizer.ipynb"
Parameter, Module, Linear, ReLU, Sequential, SGD = (
    _SOLUTION[name] for name in ["Parameter", "Module", "Linear", "ReLU", "Sequential", "SGD"])


class Todo(Tensor):
    """A Parameter whose exercise is not done yet."""

    def __init__(self, data, dtype=None):
        raise NotImplementedError


def planted(exercise_id: str, name: str, *changes: tuple[str, str], **names) -> type:
    """A planted mistake: the solution's exercise cell with each ``(old, new)`` of ``changes``
    applied, run in a copy of the solution's namespace (plus ``names``); the class ``name`` it
    defines."""
    source = exercise_cells(read_notebook(SOLUTION_PATH))[exercise_id].source
    for old, new in changes:
        assert old in source, f"the planted mistake {old!r} no longer applies to {exercise_id}"
        source = source.replace(old, new)
    namespace = {**_SOLUTION, **names}
    exec(compile(source, f"<planted {exercise_id}>", "exec"), namespace)
    return namespace[name]


# --- the reference passes ------------------------------------------------------------------


def test_reference_solutions_pass_every_check(capsys):
    lesson3.parameter(Parameter)
    lesson3.parameters(Module, Parameter)
    lesson3.linear(Linear, Parameter)
    lesson3.relu_and_sequential(ReLU, Sequential)
    lesson3.sgd(SGD, Parameter)
    out = capsys.readouterr().out
    for n in range(1, 6):
        assert f"check 3.{n}" in out
    assert out.count("\u2713") == 5


def test_exercises_have_points_for_every_check():
    assert set(lesson3.EXERCISES) == {"3.1", "3.2", "3.3", "3.4", "3.5"}
    assert all(e["points"] > 0 and e["title"] for e in lesson3.EXERCISES.values())


# --- minigrad's own classes are refused ------------------------------------------------------


def test_minigrad_classes_are_refused():
    fails(lesson3.parameter, Tensor, match=r"minigrad.*your own")
    fails(lesson3.parameters, Module, Tensor, match=r"minigrad.*your own")
    fails(lesson3.sgd, SGD, Tensor, match=r"minigrad")


def test_minigrad_nn_and_optim_are_refused():
    nn = pytest.importorskip("minigrad.nn")
    fails(lesson3.linear, nn.Linear, Parameter, match=r"minigrad.*your own")
    fails(lesson3.relu_and_sequential, nn.ReLU, Sequential, match=r"minigrad.*your own")
    fails(lesson3.parameters, nn.Module, Parameter, match=r"minigrad.*your own")
    optim = pytest.importorskip("minigrad.optim")
    fails(lesson3.sgd, optim.SGD, Parameter, match=r"minigrad.*your own")


# --- 3.1 Parameter -------------------------------------------------------------------------


def test_parameter_not_done_yet_says_so():
    fails(lesson3.parameter, Todo, match=r"NotImplementedError.*not done yet")


# --- 3.2 Module.parameters -----------------------------------------------------------------


class FlatOnly(Module):
    """Misses nested modules: looks only at Parameters stored directly on the module."""

    def parameters(self):
        return [v for v in vars(self).values() if isinstance(v, Parameter)]


class NoContainers(Module):
    """Recurses into modules but not into lists, tuples or dicts."""

    def parameters(self):
        found = []
        for v in vars(self).values():
            if isinstance(v, Parameter):
                found.append(v)
            elif isinstance(v, Module):
                found += [p for p in v.parameters() if not any(p is q for q in found)]
        return found


#: Finds everything but returns a shared parameter several times (the solution without its
#: identity test).
NoDedupe = planted("3.2", "Module", ("if not any(value is p for p in found):", "if True:"))


class AllTensors(Module):
    """Collects every tensor, constants included."""

    def parameters(self):
        return [v for v in vars(self).values() if isinstance(v, Tensor)]


class ForgetsReturn(Module):
    def parameters(self):
        [v for v in vars(self).values() if isinstance(v, Parameter)]


class RecursesOnSelf(Module):
    def parameters(self):
        found = []
        for v in vars(self).values():
            if isinstance(v, Module):
                found += self.parameters()
            elif isinstance(v, Parameter):
                found.append(v)
        return found


class ClassLevelList(Module):
    """Keeps one list on the class: every call appends again."""

    found: list = []

    def parameters(self):
        for value in vars(self).values():
            if isinstance(value, Parameter) and not any(value is p for p in self.found):
                self.found.append(value)
        return self.found


def test_module_missing_nested_parameters_is_caught():
    msg = fails(lesson3.parameters, FlatOnly, Parameter,
                match=r"case 'nested.*missing first\.w \(4, 3\).*second\.w.*usual cause:.*Module")
    assert "recursion" in msg


def test_module_keeping_a_list_between_calls_is_caught():
    ClassLevelList.found = []
    fails(lesson3.parameters, ClassLevelList, Parameter, match=r"found")


def test_module_check_scaffolds_a_missing_parameter():
    """A Parameter that does not work costs exercise 3.1 only: parameters() is still tested,
    with a reference Parameter in place of the student's."""
    lesson3.parameters(Module, Todo)
    fails(lesson3.parameters, FlatOnly, Todo, match=r"case 'nested.*missing first\.w")


# --- 3.3 Linear ----------------------------------------------------------------------------


#: Stores W as (in, out) and computes x @ W + b: right numbers, wrong layout.
TransposedLinear = planted("3.3", "Linear",
                           ("size=(out_features, in_features)", "size=(in_features, out_features)"),
                           ("x @ self.weight.T", "x @ self.weight"))


class BiasOutsideGraph(Linear):
    """Adds the bias's array: the forward is right, the bias never gets a gradient."""

    def forward(self, x):
        return x @ self.weight.T + self.bias.data


class WeightOutsideGraph(Linear):
    def forward(self, x):
        return x @ Tensor(self.weight.data.T) + self.bias


class InputDetached(Linear):
    def forward(self, x):
        return Tensor(x.data) @ self.weight.T + self.bias


class NoBias(Linear):
    def forward(self, x):
        return x @ self.weight.T


class NoTranspose(Linear):
    def forward(self, x):
        return x @ self.weight + self.bias


class GlobalRandom(Linear):
    def __init__(self, in_features, out_features, rng=None):
        k = 1.0 / np.sqrt(in_features)
        self.weight = Parameter(np.random.uniform(-k, k, size=(out_features, in_features)))
        self.bias = Parameter(np.random.uniform(-k, k, size=(out_features,)))


class NormalInit(Linear):
    def __init__(self, in_features, out_features, rng=None):
        rng = np.random.default_rng(rng)
        self.weight = Parameter(rng.normal(size=(out_features, in_features)))
        self.bias = Parameter(np.zeros(out_features))


class ZeroInit(Linear):
    def __init__(self, in_features, out_features, rng=None):
        self.weight = Parameter(np.zeros((out_features, in_features)))
        self.bias = Parameter(np.zeros(out_features))


class PlainTensors(Linear):
    def __init__(self, in_features, out_features, rng=None):
        rng = np.random.default_rng(rng)
        k = 1.0 / np.sqrt(in_features)
        self.weight = Tensor(rng.uniform(-k, k, size=(out_features, in_features)),
                             requires_grad=True)
        self.bias = Tensor(rng.uniform(-k, k, size=(out_features,)), requires_grad=True)


def test_linear_check_scaffolds_a_missing_parameter():
    """A broken Parameter costs exercise 3.1 only: the Linear check still passes."""
    # the reference Linear, but built on the broken Parameter
    TodoLinear = planted("3.3", "Linear", ("Parameter(", "Todo("), Todo=Todo)

    # Its __init__ refers to Todo, not to a global named Parameter, so it is not scaffolded:
    fails(lesson3.linear, TodoLinear, Todo, match=r"not done yet")
    # The real notebook's Linear refers to the global `Parameter`, which the check replaces.
    global Parameter
    saved = Parameter
    try:
        Parameter = Todo
        lesson3.linear(Linear, Todo)
    finally:
        Parameter = saved


# --- 3.4 ReLU and Sequential ---------------------------------------------------------------


class NumpyReLU(Module):
    def forward(self, x):
        return np.maximum(x.data, 0)


class DetachedReLU(Module):
    def forward(self, x):
        return Tensor(np.maximum(x.data, 0))


class AbsReLU(Module):
    def forward(self, x):
        return x.abs()


class ReversedSequential(Sequential):
    def forward(self, x):
        for layer in reversed(self.layers):
            x = layer(x)
        return x


class HiddenSequential(Module):
    """Keeps the layers in a closure, where parameters() cannot see them."""

    def __init__(self, *layers):
        def run(x):
            for layer in layers:
                x = layer(x)
            return x
        self.run = run

    def forward(self, x):
        return self.run(x)


class FirstLayerOnly(Sequential):
    def forward(self, x):
        return self.layers[0](x)


# --- 3.5 SGD -------------------------------------------------------------------------------


class SGDInGraph(SGD):
    """The update as Tensor maths without no_grad: the numbers are right, but it records."""

    def step(self):
        for p in self.params:
            if p.grad is not None:
                p.data = (p - self.lr * Tensor(p.grad)).data


class SGDInGraphThroughAFamilyOp(SGD):
    """Records through an operation of minigrad.elementwise (clamp), not of the core."""

    def step(self):
        for p in self.params:
            if p.grad is not None:
                p.data = (p - self.lr * Tensor(p.grad)).clamp(-1e9, 1e9).data


class SGDReplacing(SGD):
    """Replaces each parameter by a new tensor: the model never sees the update."""

    def step(self):
        with no_grad():
            for i, p in enumerate(self.params):
                if p.grad is not None:
                    self.params[i] = p - self.lr * p.grad


class SGDNoLr(SGD):
    @no_grad()
    def step(self):
        for p in self.params:
            if p.grad is not None:
                p.data = p.data - p.grad


class SGDWrongSign(SGD):
    @no_grad()
    def step(self):
        for p in self.params:
            if p.grad is not None:
                p.data = p.data + self.lr * p.grad


class SGDRebinds(SGD):
    @no_grad()
    def step(self):
        for p in self.params:
            if p.grad is not None:
                p = p - self.lr * p.grad


class SGDKeepsGenerator(SGD):
    def __init__(self, params, lr):
        self.params = params
        self.lr = lr


class SGDNoSkip(SGD):
    @no_grad()
    def step(self):
        for p in self.params:
            p.data = p.data - self.lr * p.grad


class SGDFirstOnly(SGD):
    @no_grad()
    def step(self):
        p = self.params[0]
        p.data = p.data - self.lr * p.grad


class SGDTensorData(SGD):
    @no_grad()
    def step(self):
        for p in self.params:
            if p.grad is not None:
                p.data = p - self.lr * p.grad


class SGDNoZero(SGD):
    def zero_grad(self):
        pass


def test_sgd_check_works_without_a_working_parameter():
    lesson3.sgd(SGD, Todo)


# --- the checks leave the engine as they found it ------------------------------------------


def test_the_recording_spy_is_removed_even_when_a_check_fails():
    import importlib
    engine = importlib.import_module("minigrad.tensor")
    original = engine.op
    fails(lesson3.sgd, SGDInGraph, Parameter, match=r"recorded")
    assert engine.op is original
    import minigrad.elementwise
    assert minigrad.elementwise.op is original


def test_an_update_recorded_by_an_operation_outside_the_core_is_caught():
    """The spy sees every module that calls op(), the core's and the families' (clamp lives
    in minigrad.elementwise)."""
    fails(lesson3.sgd, SGDInGraphThroughAFamilyOp, Parameter, match=r"recorded.*clamp")
    x = minigrad.tensor([1.0], requires_grad=True)
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0]


# --- more mistakes, as the student would write them ----------------------------------------


class NoGrad(Tensor):
    def __init__(self, data, dtype=None):
        super().__init__(data, dtype=dtype)


class Box:
    def __init__(self, data, dtype=None):
        self.data = np.asarray(data)
        self.requires_grad = True


class Cast(Tensor):
    def __init__(self, data, dtype=None):
        super().__init__(data, requires_grad=True, dtype="float64")


# --- each mistake and what its message must say --------------------------------------------

MISTAKES = [
    pytest.param(lesson3.linear, (Linear(2, 2), Parameter),
                 r"the class Linear itself",
                 id='an_instance_instead_of_the_class_is_refused'),
    pytest.param(lesson3.parameter, (NoGrad,),
                 r"requires_grad=True.*got:\s+requires_grad=False",
                 id='parameter_without_requires_grad'),
    pytest.param(lesson3.parameter, (Box,),
                 r"subclass of minigrad.Tensor",
                 id='parameter_not_a_tensor'),
    pytest.param(lesson3.parameter, (Cast,),
                 r"float32",
                 id='parameter_that_casts_to_float64'),
    pytest.param(lesson3.parameters, (NoContainers, Parameter),
                 r"case 'a list of Modules'.*missing layers\.0\.w.*lists, tuples or dicts",
                 id='module_not_looking_into_lists'),
    pytest.param(lesson3.parameters, (NoDedupe, Parameter),
                 r"case 'shared.*encoder\.w \(2, 3\) more than once.*twice per step",
                 id='module_returning_a_shared_parameter_twice'),
    pytest.param(lesson3.parameters, (AllTensors, Parameter),
                 r"only Parameters.*not a Parameter: mask",
                 id='module_collecting_constant_tensors'),
    pytest.param(lesson3.parameters, (ForgetsReturn, Parameter),
                 r"got:\s+None.*return",
                 id='module_forgetting_to_return'),
    pytest.param(lesson3.parameters, (RecursesOnSelf, Parameter),
                 r"RecursionError.*not self",
                 id='module_recursing_on_itself'),
    pytest.param(lesson3.linear, (TransposedLinear, Parameter),
                 r"expected: shape \(3, 4\).*got:\s+shape \(4, 3\).*transposed.*x @ W\.T \+ b",
                 id='linear_with_transposed_weight'),
    pytest.param(lesson3.linear, (BiasOutsideGraph, Parameter),
                 r"gradient of bias.*None.*self\.bias, not self\.bias\.data",
                 id='linear_missing_bias_gradient'),
    pytest.param(lesson3.linear, (WeightOutsideGraph, Parameter),
                 r"gradient of weight.*None",
                 id='linear_with_weight_outside_the_graph'),
    pytest.param(lesson3.linear, (InputDetached, Parameter),
                 r"gradient of input x.*None.*layers below",
                 id='linear_that_detaches_its_input'),
    pytest.param(lesson3.linear, (NoBias, Parameter),
                 r"forward with W.*expected:.*0\.61.*bias is not added",
                 id='linear_without_bias_is_caught_by_the_forward_values'),
    pytest.param(lesson3.linear, (NoTranspose, Parameter),
                 r"matmul.*do not align",
                 id='linear_without_transpose'),
    pytest.param(lesson3.linear, (GlobalRandom, Parameter),
                 r"the rng you are given",
                 id='linear_ignoring_the_rng'),
    pytest.param(lesson3.linear, (NormalInit, Parameter),
                 r"1/sqrt\(in_features\)",
                 id='linear_with_normal_init'),
    pytest.param(lesson3.linear, (ZeroInit, Parameter),
                 r"all equal.*learn the same",
                 id='linear_with_equal_weights'),
    pytest.param(lesson3.linear, (PlainTensors, Parameter),
                 r"a Parameter.*got:\s+Tensor",
                 id='linear_with_plain_tensors'),
    pytest.param(lesson3.relu_and_sequential, (NumpyReLU, Sequential),
                 r"a Tensor.*x\.relu\(\)",
                 id='relu_returning_an_array'),
    pytest.param(lesson3.relu_and_sequential, (DetachedReLU, Sequential),
                 r"ReLU gradient.*None",
                 id='relu_outside_the_graph'),
    pytest.param(lesson3.relu_and_sequential, (AbsReLU, Sequential),
                 r"expected: \[\[0\..*got:\s+\[\[2\.",
                 id='wrong_relu'),
    pytest.param(lesson3.relu_and_sequential, (ReLU, ReversedSequential),
                 r"add 1, then double.*expected: \[\[ 4\., -4\.\]\].*in the order given",
                 id='sequential_in_the_wrong_order'),
    pytest.param(lesson3.relu_and_sequential, (ReLU, HiddenSequential),
                 r"where Sequential keeps its layers.*list attribute",
                 id='sequential_hiding_its_layers'),
    pytest.param(lesson3.relu_and_sequential, (ReLU, FirstLayerOnly),
                 r"one after another",
                 id='sequential_running_one_layer'),
    pytest.param(lesson3.sgd, (SGDInGraph, Parameter),
                 r"no operation recorded.*recorded 2 operation\(s\): (mul|sub), (mul|sub).*no_grad",
                 id='sgd_that_updates_inside_the_graph'),
    pytest.param(lesson3.sgd, (SGDReplacing, Parameter),
                 r"very Parameters.*in place",
                 id='sgd_replacing_parameters'),
    pytest.param(lesson3.sgd, (SGDNoLr, Parameter),
                 r"learning rate is missing",
                 id='sgd_forgetting_lr'),
    pytest.param(lesson3.sgd, (SGDWrongSign, Parameter),
                 r"wrong sign.*uphill",
                 id='sgd_with_wrong_sign'),
    pytest.param(lesson3.sgd, (SGDRebinds, Parameter),
                 r"did not change.*p\.data",
                 id='sgd_rebinding_the_loop_variable'),
    pytest.param(lesson3.sgd, (SGDKeepsGenerator, Parameter),
                 r"generator.*list\(params\)",
                 id='sgd_keeping_a_generator'),
    pytest.param(lesson3.sgd, (SGDNoSkip, Parameter),
                 r"grad is None.*skip",
                 id='sgd_not_skipping_missing_gradients'),
    pytest.param(lesson3.sgd, (SGDFirstOnly, Parameter),
                 r"every parameter",
                 id='sgd_updating_only_the_first_parameter'),
    pytest.param(lesson3.sgd, (SGDTensorData, Parameter),
                 r"p\.data an array",
                 id='sgd_assigning_a_tensor_to_data'),
    pytest.param(lesson3.sgd, (SGDNoZero, Parameter),
                 r"zero_grad.*p\.grad = None",
                 id='sgd_whose_zero_grad_does_nothing'),
]


@pytest.mark.parametrize("check, args, match", MISTAKES)
def test_the_mistake_is_caught_with_its_message(check, args, match):
    fails(check, *args, match=match)


# --- the split: probe, run, judge (issue 11) ------------------------------------------------
#
# The grader draws the probes from a secret seed, runs ``run`` in the student's sandbox, and
# judges what comes back (through JSON and .npy) in its own process. These tests play both
# sides: the reference passes on cases it has never seen, and forged or malformed data does not.

SPLITS = [pytest.param(lesson3.parameter, (Parameter,), id="3.1"),
          pytest.param(lesson3.parameters, (Module, Parameter), id="3.2"),
          pytest.param(lesson3.linear, (Linear, Parameter), id="3.3"),
          pytest.param(lesson3.relu_and_sequential, (ReLU, Sequential), id="3.4"),
          pytest.param(lesson3.sgd, (SGD, Parameter), id="3.5")]
SEEDS = (0, 1, 2, 3, 12345)


def crossed(x):
    """``x`` as it arrives on the other side of the sandbox's edge."""
    return loads(dumps(x))


def test_every_exercise_of_lesson_3_is_split():
    checks = {p.values[0].exercise_id: p.values[0] for p in SPLITS}
    assert set(checks) == set(lesson3.EXERCISES)
    assert all(isinstance(check.split, Split) for check in checks.values())


@pytest.mark.parametrize("check, args", SPLITS)
def test_the_reference_passes_the_judge_on_grader_probes(check, args):
    split = check.split
    notebook = dumps(split.probe(None))
    for seed in SEEDS:
        probes = split.probe(np.random.default_rng(seed))
        assert is_plain(probes) and dumps(probes) != notebook  # not the lesson's own cases
        probes = crossed(probes)                                # as the sandbox receives them
        outputs = split.run(probes, *args)
        assert is_plain(outputs), f"seed {seed}: run sent back something that is not plain data"
        assert split.judge(probes, crossed(outputs)).startswith(f"check {check.exercise_id}")


@pytest.mark.parametrize("check, args", SPLITS)
def test_probes_are_fresh_for_every_seed(check, args):
    drawn = {dumps(check.split.probe(np.random.default_rng(seed))) for seed in SEEDS}
    assert len(drawn) == len(SEEDS)
    assert dumps(check.split.probe(np.random.default_rng(5))) == \
        dumps(check.split.probe(np.random.default_rng(5)))      # the same seed, the same cases


@pytest.mark.parametrize("check, args", SPLITS)
def test_run_never_reads_an_expected_value(check, args, monkeypatch):
    """The judge's own pieces (the expected parameters of a tree, a Linear's expected shapes,
    the reading of what was sent back) are never used in the student's process."""
    def forbidden(*args, **kwargs):
        raise AssertionError("the judge's code ran in the student's process")

    for name in ("_tree_parameters", "_linear_shapes", "value_at", "_numbers", "malformed"):
        monkeypatch.setattr(lesson3, name, forbidden)
    check.split.run(crossed(check.split.probe(np.random.default_rng(3))), *args)


@pytest.mark.parametrize("check, args", SPLITS)
def test_outputs_made_for_the_lessons_cases_fail_on_the_graders(check, args):
    """A submission that sends back what passed in the notebook scores nothing."""
    split = check.split
    replayed = crossed(split.run(split.probe(None), *args))
    for seed in SEEDS:
        with pytest.raises(CheckFailed):
            split.judge(crossed(split.probe(np.random.default_rng(seed))), replayed)


def shortened(x):
    """``x`` with every list one item shorter."""
    if isinstance(x, dict):
        return {k: shortened(v) for k, v in x.items()}
    if isinstance(x, list):
        return [shortened(v) for v in x[:-1]]
    return x


FORGERIES = {
    "arrays of zeros": zeros,
    "arrays of another shape": reshaped,
    "lists one item short": shortened,
    "a string": lambda real: "all correct",
    "an empty dict": lambda real: {},
    "None": lambda real: None,
    "a list of numbers": lambda real: [1, 2, 3],
    "every value a string": lambda real: {k: "x" for k in real},
}


@pytest.mark.parametrize("forgery", list(FORGERIES))
@pytest.mark.parametrize("check, args", SPLITS)
def test_forged_outputs_are_refused_by_the_judge(check, args, forgery):
    split = check.split
    probes = crossed(split.probe(np.random.default_rng(7)))
    real = crossed(split.run(probes, *args))
    forged = FORGERIES[forgery](real)
    if dumps(forged) == dumps(real):   # 3.2 sends paths, no arrays: nothing to zero or reshape
        assert check.exercise_id == "3.2" and "arrays" in forgery
        return
    with pytest.raises(CheckFailed):
        split.judge(probes, crossed(forged))


def removed(x, path):
    """A copy of ``x`` without the value at ``path`` (a key or an item gone)."""
    parent = x
    for key in path[:-1]:
        parent = parent[key]
    copy = dict(parent) if isinstance(parent, dict) else list(parent)
    del copy[path[-1]]
    return replaced(x, path[:-1], copy)


@pytest.mark.parametrize("check, args", SPLITS)
def test_malformed_data_anywhere_is_a_check_failure_never_a_crash(check, args):
    """Each value sent back, replaced by junk or removed: the judge passes (where that value
    does not matter, e.g. a gradient None after zero_grad) or fails with CheckFailed, never
    anything else."""
    split = check.split
    probes = crossed(split.probe(np.random.default_rng(11)))
    real = crossed(split.run(probes, *args))
    forgeries = [forged for _, forged in junk_forgeries(real)]
    forgeries += [removed(real, path) for path, _ in places(real) if path]
    refused = 0
    for forged in forgeries:
        try:
            split.judge(probes, forged)
        except CheckFailed:
            refused += 1
    assert refused > 0.9 * len(forgeries) > 50

"""The lesson 3 checks pass the reference solutions and catch broken ones with a useful message.

The reference classes are the notebook's own solutions, loaded from it. Each broken variant is a mistake a
student makes; the test asserts the check fails with ``CheckFailed`` and that the message
points at the cause.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import minigrad
from minigrad import Tensor, no_grad
from minigrad.course.checks import CheckFailed, lesson3

from solutions_helper import solution_namespace


# --- the reference solutions: the notebook's own exercise cells -------------------------------

_SOLUTION = solution_namespace("03_parameters_modules_optimizer")
Parameter, Module, Linear, ReLU, Sequential, SGD = (
    _SOLUTION[name] for name in ["Parameter", "Module", "Linear", "ReLU", "Sequential", "SGD"])


def fails(check, *args, match: str) -> str:
    """Run the check, assert it raises CheckFailed whose message matches ``match``."""
    with pytest.raises(CheckFailed) as info:
        check(*args)
    message = str(info.value)
    assert re.search(match, message, flags=re.S | re.I), message
    return message


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


def test_an_instance_instead_of_the_class_is_refused():
    fails(lesson3.linear, Linear(2, 2), Parameter, match=r"the class Linear itself")


# --- 3.1 Parameter -------------------------------------------------------------------------


def test_parameter_without_requires_grad_is_caught():
    class NoGrad(Tensor):
        def __init__(self, data, dtype=None):
            super().__init__(data, dtype=dtype)

    fails(lesson3.parameter, NoGrad, match=r"requires_grad=True.*got:\s+requires_grad=False")


def test_parameter_not_a_tensor_is_caught():
    class Box:
        def __init__(self, data, dtype=None):
            self.data = np.asarray(data)
            self.requires_grad = True

    fails(lesson3.parameter, Box, match=r"subclass of minigrad.Tensor")


def test_parameter_not_done_yet_says_so():
    class Todo(Tensor):
        def __init__(self, data, dtype=None):
            raise NotImplementedError

    fails(lesson3.parameter, Todo, match=r"NotImplementedError.*not done yet")


def test_parameter_that_casts_to_float64_is_caught():
    class Cast(Tensor):
        def __init__(self, data, dtype=None):
            super().__init__(data, requires_grad=True, dtype="float64")

    fails(lesson3.parameter, Cast, match=r"float32")


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


class NoDedupe(Module):
    """Finds everything but returns a shared parameter several times."""

    def parameters(self):
        found = []

        def collect(value):
            if isinstance(value, Parameter):
                found.append(value)
            elif isinstance(value, Module):
                found.extend(value.parameters())
            elif isinstance(value, (list, tuple)):
                for item in value:
                    collect(item)
            elif isinstance(value, dict):
                for item in value.values():
                    collect(item)

        for value in vars(self).values():
            collect(value)
        return found


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


def test_module_not_looking_into_lists_is_caught():
    fails(lesson3.parameters, NoContainers, Parameter,
          match=r"case 'a list of Modules'.*missing layers\.0\.w.*lists, tuples or dicts")


def test_module_returning_a_shared_parameter_twice_is_caught():
    fails(lesson3.parameters, NoDedupe, Parameter,
          match=r"case 'shared.*encoder\.w \(2, 3\) more than once.*twice per step")


def test_module_collecting_constant_tensors_is_caught():
    fails(lesson3.parameters, AllTensors, Parameter,
          match=r"only Parameters.*not a Parameter: mask")


def test_module_forgetting_to_return_is_caught():
    fails(lesson3.parameters, ForgetsReturn, Parameter, match=r"got:\s+None.*return")


def test_module_recursing_on_itself_is_caught():
    fails(lesson3.parameters, RecursesOnSelf, Parameter, match=r"RecursionError.*not self")


def test_module_keeping_a_list_between_calls_is_caught():
    ClassLevelList.found = []
    fails(lesson3.parameters, ClassLevelList, Parameter, match=r"found")


def test_module_check_scaffolds_a_missing_parameter():
    """A Parameter that does not work costs exercise 3.1 only: parameters() is still tested,
    with a reference Parameter in place of the student's."""
    class Todo(Tensor):
        def __init__(self, data, dtype=None):
            raise NotImplementedError

    lesson3.parameters(Module, Todo)
    fails(lesson3.parameters, FlatOnly, Todo, match=r"case 'nested.*missing first\.w")


# --- 3.3 Linear ----------------------------------------------------------------------------


class TransposedLinear(Module):
    """Stores W as (in, out) and computes x @ W + b: right numbers, wrong layout."""

    def __init__(self, in_features, out_features, rng=None):
        rng = np.random.default_rng(rng)
        k = 1.0 / np.sqrt(in_features)
        self.weight = Parameter(rng.uniform(-k, k, size=(in_features, out_features)))
        self.bias = Parameter(rng.uniform(-k, k, size=(out_features,)))

    def forward(self, x):
        return x @ self.weight + self.bias


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


def test_linear_with_transposed_weight_is_caught():
    fails(lesson3.linear, TransposedLinear, Parameter,
          match=r"expected: shape \(3, 4\).*got:\s+shape \(4, 3\).*transposed.*x @ W\.T \+ b")


def test_linear_missing_bias_gradient_is_caught():
    fails(lesson3.linear, BiasOutsideGraph, Parameter,
          match=r"gradient of bias.*None.*self\.bias, not self\.bias\.data")


def test_linear_with_weight_outside_the_graph_is_caught():
    fails(lesson3.linear, WeightOutsideGraph, Parameter, match=r"gradient of weight.*None")


def test_linear_that_detaches_its_input_is_caught():
    fails(lesson3.linear, InputDetached, Parameter,
          match=r"gradient of input x.*None.*layers below")


def test_linear_without_bias_is_caught_by_the_forward_values():
    fails(lesson3.linear, NoBias, Parameter,
          match=r"forward with W.*expected:.*0\.61.*bias is not added")


def test_linear_without_transpose_is_caught():
    fails(lesson3.linear, NoTranspose, Parameter, match=r"matmul.*do not align")


def test_linear_ignoring_the_rng_is_caught():
    fails(lesson3.linear, GlobalRandom, Parameter, match=r"the rng you are given")


def test_linear_with_normal_init_is_caught():
    fails(lesson3.linear, NormalInit, Parameter, match=r"1/sqrt\(in_features\)")


def test_linear_with_equal_weights_is_caught():
    fails(lesson3.linear, ZeroInit, Parameter, match=r"all equal.*learn the same")


def test_linear_with_plain_tensors_is_caught():
    fails(lesson3.linear, PlainTensors, Parameter, match=r"a Parameter.*got:\s+Tensor")


def test_linear_check_scaffolds_a_missing_parameter():
    """A broken Parameter costs exercise 3.1 only: the Linear check still passes."""
    class Todo(Tensor):
        def __init__(self, data, dtype=None):
            raise NotImplementedError

    class TodoLinear(Module):  # the reference Linear, but built on the broken Parameter
        def __init__(self, in_features, out_features, rng=None):
            rng = np.random.default_rng(rng)
            k = 1.0 / np.sqrt(in_features)
            self.weight = Todo(rng.uniform(-k, k, size=(out_features, in_features)))
            self.bias = Todo(rng.uniform(-k, k, size=(out_features,)))

        def forward(self, x):
            return x @ self.weight.T + self.bias

    # Its __init__ refers to Todo, not to a global named Parameter, so it is not scaffolded:
    fails(lesson3.linear, TodoLinear, Todo, match=r"not done yet")
    # The real notebook's Linear refers to the global `Parameter`, which the check replaces.
    global Parameter
    saved = Parameter
    try:
        Parameter = Todo  # noqa: F811 - as if exercise 3.1 were not done
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


def test_relu_returning_an_array_is_caught():
    fails(lesson3.relu_and_sequential, NumpyReLU, Sequential, match=r"a Tensor.*x\.relu\(\)")


def test_relu_outside_the_graph_is_caught():
    fails(lesson3.relu_and_sequential, DetachedReLU, Sequential,
          match=r"ReLU gradient.*None")


def test_wrong_relu_is_caught():
    fails(lesson3.relu_and_sequential, AbsReLU, Sequential,
          match=r"expected: \[\[0\..*got:\s+\[\[2\.")


def test_sequential_in_the_wrong_order_is_caught():
    fails(lesson3.relu_and_sequential, ReLU, ReversedSequential,
          match=r"add 1, then double.*expected: \[\[ 4\., -4\.\]\].*in the order given")


def test_sequential_hiding_its_layers_is_caught():
    fails(lesson3.relu_and_sequential, ReLU, HiddenSequential,
          match=r"where Sequential keeps its layers.*list attribute")


def test_sequential_running_one_layer_is_caught():
    fails(lesson3.relu_and_sequential, ReLU, FirstLayerOnly, match=r"one after another")


# --- 3.5 SGD -------------------------------------------------------------------------------


class SGDInGraph(SGD):
    """The update as Tensor maths without no_grad: the numbers are right, but it records."""

    def step(self):
        for p in self.params:
            if p.grad is not None:
                p.data = (p - self.lr * Tensor(p.grad)).data


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
                p = p - self.lr * p.grad  # noqa: PLW2901 - the mistake under test


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


def test_sgd_that_updates_inside_the_graph_is_caught():
    fails(lesson3.sgd, SGDInGraph, Parameter,
          match=r"no operation recorded.*recorded 2 operation\(s\): (mul|sub), (mul|sub).*no_grad")


def test_sgd_replacing_parameters_is_caught():
    fails(lesson3.sgd, SGDReplacing, Parameter, match=r"very Parameters.*in place")


def test_sgd_forgetting_lr_is_caught():
    fails(lesson3.sgd, SGDNoLr, Parameter, match=r"learning rate is missing")


def test_sgd_with_wrong_sign_is_caught():
    fails(lesson3.sgd, SGDWrongSign, Parameter, match=r"wrong sign.*uphill")


def test_sgd_rebinding_the_loop_variable_is_caught():
    fails(lesson3.sgd, SGDRebinds, Parameter, match=r"did not change.*p\.data")


def test_sgd_keeping_a_generator_is_caught():
    fails(lesson3.sgd, SGDKeepsGenerator, Parameter, match=r"generator.*list\(params\)")


def test_sgd_not_skipping_missing_gradients_is_caught():
    fails(lesson3.sgd, SGDNoSkip, Parameter, match=r"grad is None.*skip")


def test_sgd_updating_only_the_first_parameter_is_caught():
    fails(lesson3.sgd, SGDFirstOnly, Parameter, match=r"every parameter")


def test_sgd_assigning_a_tensor_to_data_is_caught():
    fails(lesson3.sgd, SGDTensorData, Parameter, match=r"p\.data an array")


def test_sgd_whose_zero_grad_does_nothing_is_caught():
    fails(lesson3.sgd, SGDNoZero, Parameter, match=r"zero_grad.*p\.grad = None")


def test_sgd_check_works_without_a_working_parameter():
    class Todo(Tensor):
        def __init__(self, data, dtype=None):
            raise NotImplementedError

    lesson3.sgd(SGD, Todo)


# --- the checks leave the engine as they found it ------------------------------------------


def test_the_recording_spy_is_removed_even_when_a_check_fails():
    import importlib
    engine = importlib.import_module("minigrad.tensor")
    original = engine.op
    fails(lesson3.sgd, SGDInGraph, Parameter, match=r"recorded")
    assert engine.op is original
    x = minigrad.tensor([1.0], requires_grad=True)
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0]

"""minigrad.course.scalar.Var against hand-derived derivatives and central differences."""
import math
import sys

import pytest

from minigrad.course.scalar import Var


def numeric(f, *values, eps=1e-6):
    """Central differences of the Python function ``f`` at ``values``, one per argument."""
    grads = []
    for i in range(len(values)):
        up = list(values)
        down = list(values)
        up[i] += eps
        down[i] -= eps
        grads.append((f(*up) - f(*down)) / (2 * eps))
    return grads


def test_hand_derived_example():
    # f = x*y + exp(x): df/dx = y + exp(x), df/dy = x
    x, y = Var(2.0), Var(3.0)
    f = x * y + x.exp()
    f.backward()
    assert f.data == 6.0 + math.exp(2.0)
    assert x.grad == 3.0 + math.exp(2.0)
    assert y.grad == 2.0


def test_micrograd_style_expression():
    # a neuron: tanh(w1 x1 + w2 x2 + b), derivatives by hand
    x1, x2, w1, w2, b = Var(2.0), Var(0.0), Var(-3.0), Var(1.0), Var(6.8813735870195432)
    o = (x1 * w1 + x2 * w2 + b).tanh()
    o.backward()
    t = math.tanh(2.0 * -3.0 + 6.8813735870195432)
    assert o.data == pytest.approx(t, abs=1e-15)
    dn = 1 - t * t
    assert w1.grad == pytest.approx(dn * 2.0, abs=1e-15)
    assert x1.grad == pytest.approx(dn * -3.0, abs=1e-15)
    assert w2.grad == 0.0
    assert x2.grad == pytest.approx(dn * 1.0, abs=1e-15)
    assert b.grad == pytest.approx(dn, abs=1e-15)


@pytest.mark.parametrize("name, f, args", [
    ("add", lambda a, b: a + b, (1.5, -2.0)),
    ("sub", lambda a, b: a - b, (1.5, -2.0)),
    ("mul", lambda a, b: a * b, (1.5, -2.0)),
    ("div", lambda a, b: a / b, (1.5, -2.0)),
    ("pow const", lambda a, b: a ** 3 + b ** -2, (1.5, -2.0)),
    ("pow var", lambda a, b: a ** b, (1.5, -2.0)),
    ("rpow", lambda a, b: 2.0 ** a * b, (1.5, -2.0)),
    ("reversed", lambda a, b: 1 - a + 2 * b + 3 / a - (4 + b), (1.5, -2.0)),
    ("neg", lambda a, b: -a * b, (1.5, -2.0)),
    ("exp log", lambda a, b: (a * b * b).log() + (a - b).exp(), (1.5, -2.0)),
    ("tanh", lambda a, b: (a * b).tanh(), (0.3, -0.7)),
    ("sigmoid", lambda a, b: (a * b).sigmoid(), (0.3, -0.7)),
    ("relu", lambda a, b: (a * b).relu() + (a + b).relu(), (0.3, -0.7)),
])
def test_against_central_differences(name, f, args):
    def value(*xs):
        return f(*(Var(x) for x in xs)).data

    vs = [Var(x) for x in args]
    f(*vs).backward()
    for v, expected in zip(vs, numeric(value, *args)):
        assert v.grad == pytest.approx(expected, rel=1e-7, abs=1e-8), name


def test_reused_node_gets_sum_of_gradients():
    # r = p + 2p: the path through a and the direct path both reach p
    p = Var(1.0)
    a = p * 2
    r = p + a
    r.backward()
    assert p.grad == 3.0
    q = Var(1.0)
    (q * 2 + q).backward()  # parents in the other order
    assert q.grad == 3.0
    x = Var(3.0)
    (x * x).backward()  # the same Var twice in one op
    assert x.grad == 6.0


def test_diamond_graph():
    x = Var(0.5)
    h = x.exp()
    y = h * h.tanh() + h  # h is used three times
    y.backward()
    e = math.exp(0.5)
    dy_dh = math.tanh(e) + e * (1 - math.tanh(e) ** 2) + 1
    assert x.grad == pytest.approx(dy_dh * e, rel=1e-14)


def test_gradients_accumulate_across_backward_calls():
    x = Var(2.0)
    y = x * x
    y.backward()
    y.backward()
    assert x.grad == 8.0  # 4 + 4: not zeroed in between
    x.grad = 0.0
    z = x * 3
    z.backward()
    assert x.grad == 3.0


def test_intermediate_grads_do_not_leak_into_a_second_backward():
    # a second backward through the same graph must not re-send the first pass's gradients
    x = Var(2.0)
    h = x * 3
    y = h * h
    y.backward()
    y.backward()
    assert x.grad == 2 * (2 * 6.0 * 3)
    assert h.grad == 2 * (2 * 6.0)


def test_relu_at_zero_and_negative():
    x = Var(-1.0)
    y = x.relu()
    y.backward()
    assert y.data == 0.0 and x.grad == 0.0
    z = Var(0.0)
    z.relu().backward()
    assert z.grad == 0.0


def test_pow_var_exponent_at_zero_base():
    x, e = Var(0.0), Var(2.0)
    (x ** e).backward()
    assert x.grad == 0.0 and e.grad == 0.0


def test_deep_chain_without_recursion():
    x = Var(1.0)
    y = x
    for _ in range(10_000):
        y = y * 1.0001
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)
    try:
        y.backward()
    finally:
        sys.setrecursionlimit(limit)
    assert x.grad == pytest.approx(1.0001 ** 10_000, rel=1e-9)


def test_errors_and_repr():
    with pytest.raises(ValueError, match="log: needs a positive value"):
        Var(-1.0).log()
    with pytest.raises(TypeError, match="cannot combine a Var with str"):
        Var(1.0) + "a"
    with pytest.raises(TypeError, match="must be a number"):
        Var(Var(1.0))
    assert repr(Var(2)) == "Var(data=2.0, grad=0.0)"
    v = Var(1.0) * 2
    assert v.op == "*" and len(v.parents) == 2


def test_no_reference_cycles():
    import gc
    import weakref

    gc.disable()
    try:
        x = Var(1.0)
        y = (x * 2).tanh() + x
        ref = weakref.ref(y.parents[0])
        y.backward()
        del y
        assert ref() is None  # freed by reference counting alone
    finally:
        gc.enable()

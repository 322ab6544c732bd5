"""How backward() behaves: ordering, accumulation, freeing, memory, dtypes and errors."""
from __future__ import annotations

import ast
import gc
import pathlib
import tracemalloc
import weakref

import numpy as np
import pytest
from tests.support.engine_helpers import NAMESPACES, host, make, mlp_sgd_step, namespace

import minigrad as mg
import minigrad.functional as F
from minigrad import graph

ROOT = pathlib.Path(__file__).resolve().parents[2]


# --- backward: order, sums, accumulation -----------------------------------------------------


def test_node_used_many_times_gets_the_sum_of_its_gradients():
    x = mg.tensor(3.0, requires_grad=True)
    y = x * x + x * 2.0 + x  # dy/dx = 2x + 3
    y.backward()
    assert x.grad == pytest.approx(9.0)
    a = mg.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2.0
    c = b + b * b  # diamond through b
    c.sum().backward()
    np.testing.assert_allclose(a.grad, 2.0 * (1 + 2 * (2 * a.data)))


def test_deep_chain_without_recursion():
    x = mg.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(10_000):
        y = y * 1.0001
    y.backward()
    assert x.grad == pytest.approx(1.0001 ** 10_000)


def test_gradients_accumulate_until_zeroed():
    w = mg.tensor([1.0, -2.0], requires_grad=True)
    for step in range(3):
        (w * w).sum().backward()
        np.testing.assert_allclose(w.grad, (step + 1) * 2 * w.data)
    w.grad = None
    (w * w).sum().backward()
    np.testing.assert_allclose(w.grad, 2 * w.data)


def test_only_leaves_keep_grad_unless_retained():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3.0
    kept = (x * 2.0).retain_grad()
    (h * kept).sum().backward()
    assert h.grad is None
    np.testing.assert_allclose(kept.grad, h.data)
    assert x.is_leaf and not h.is_leaf


def test_second_backward_through_freed_graph_raises():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="already freed.*retain_graph=True"):
        y.backward()


def test_retain_graph_allows_a_second_backward():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    first = x.grad.copy()
    y.backward()
    np.testing.assert_allclose(x.grad, 2 * first)


def test_non_scalar_backward_needs_a_grad():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2.0
    with pytest.raises(RuntimeError, match=r"shape \(2,\).*backward\(grad\)"):
        y.backward()
    y.backward(np.array([1.0, 10.0]))
    np.testing.assert_allclose(x.grad, [2.0, 20.0])
    with pytest.raises(ValueError, match=r"grad has shape \(3,\) but the output has shape \(2,\)"):
        (x * 2.0).backward(np.ones(3))


def test_backward_on_a_tensor_without_grad_says_why():
    with pytest.raises(RuntimeError, match="does not require grad"):
        (mg.tensor([1.0]) * 2.0).sum().backward()


def test_custom_op_with_wrong_gradient_shape_is_named():
    a = mg.tensor(np.ones((2, 3)), requires_grad=True)
    b = mg.tensor(np.ones((3,)), requires_grad=True)
    bad = mg.op(a.data + b.data, (a, b), lambda g: (g, g), name="my_add")  # forgot unbroadcast
    with pytest.raises(ValueError, match=r"my_add backward.*shape \(3,\).*\(2, 3\).*unbroadcast"):
        bad.sum().backward()


def test_op_with_saved_arrays_and_single_gradient():
    a = mg.tensor([1.0, 2.0], requires_grad=True)
    cube = mg.op(a.data ** 3, (a,), lambda g, x: 3 * x * x * g, saved=(a.data,), name="cube")
    cube.sum().backward()
    np.testing.assert_allclose(a.grad, [3.0, 12.0])


# --- no_grad, detach and friends ------------------------------------------------------------


def test_no_grad_records_nothing_and_restores_state():
    w = mg.tensor([1.0], requires_grad=True)
    with mg.no_grad():
        y = w * 2.0
        assert not mg.is_grad_enabled()
    assert mg.is_grad_enabled()
    assert not y.requires_grad and y.is_leaf and y._parents == ()

    @mg.no_grad()
    def update():
        return w * 3.0

    assert not update().requires_grad
    assert (w.detach() * 2.0).requires_grad is False


def test_small_conveniences():
    t = mg.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    assert t.shape == (1, 3) and t.ndim == 2 and t.dtype == np.float64 and len(t) == 1
    assert isinstance(t.numpy(), np.ndarray)
    assert mg.tensor(2.5).item() == 2.5
    assert "requires_grad=True" in repr(t)
    assert "grad_fn=mul" in repr(t * 2.0)
    with pytest.raises(ValueError, match="3 elements"):
        t.item()


def test_reversed_operators_and_ndarray_on_the_left():
    t = mg.tensor([1.0, 2.0], requires_grad=True)
    np.testing.assert_allclose((2 * t).data, [2, 4])
    np.testing.assert_allclose((1 - t).data, [0, -1])
    np.testing.assert_allclose((1 / t).data, [1, 0.5])
    np.testing.assert_allclose((2 ** t).data, [2, 4])
    left = np.array([3.0, 4.0]) * t
    assert isinstance(left, mg.Tensor) and left.requires_grad
    assert isinstance(np.ones((2, 2)) @ t, mg.Tensor)
    assert isinstance(np.array([1.0, 5.0]) - t, mg.Tensor)


def test_comparisons_give_boolean_tensors_without_grad():
    t = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    mask = t > 1.5
    assert mask.dtype == np.bool_ and not mask.requires_grad
    np.testing.assert_array_equal((t == 2.0).data, [False, True, False])
    assert (t <= t).data.all() and not (t != t).data.any()


# --- dtypes ---------------------------------------------------------------------------------


def test_dtype_follows_the_data_and_scalars_never_upcast():
    assert mg.tensor([1.0, 2.0]).dtype == np.float64
    assert mg.tensor([1, 2]).dtype == np.int64
    f32 = mg.tensor([1.0, 2.0], dtype="float32", requires_grad=True)
    assert f32.dtype == np.float32
    for out in (f32 * 2.5, 2.5 * f32, f32 + 1, f32 / 3.0, f32 ** 2, 1.0 - f32, f32.exp()):
        assert out.dtype == np.float32
    (f32 * 2.5).sum().backward()
    assert f32.grad.dtype == np.float32
    mixed = f32 + mg.tensor([1.0, 1.0])
    assert mixed.dtype == np.float64  # float32 + float64 promotes, as in NumPy


def test_integer_tensors_cannot_require_grad():
    with pytest.raises(TypeError, match="only floating-point tensors can require grad.*int64"):
        mg.tensor([1, 2], requires_grad=True)


# --- error messages -------------------------------------------------------------------------


def test_matmul_error_names_the_shapes():
    with pytest.raises(ValueError, match=r"matmul: shapes \(3, 4\) and \(5, 2\) do not align \(4 != 5\)"):
        mg.tensor(np.ones((3, 4))) @ mg.tensor(np.ones((5, 2)))


def test_broadcast_error_names_the_axes():
    with pytest.raises(ValueError, match=r"mul: shapes \(3, 4\) and \(2, 4\) do not broadcast: axis -2"):
        mg.tensor(np.ones((3, 4))) * mg.tensor(np.ones((2, 4)))


def test_reshape_and_loss_errors():
    with pytest.raises(ValueError, match=r"reshape: cannot reshape shape \(2, 3\)"):
        mg.tensor(np.ones((2, 3))).reshape(4, 2)
    with pytest.raises(ValueError, match=r"cross_entropy: expected targets of shape \(2,\)"):
        F.cross_entropy(mg.tensor(np.ones((2, 3))), np.array([0, 1, 2]))
    with pytest.raises(TypeError, match="integer class indices"):
        F.cross_entropy(mg.tensor(np.ones((2, 3))), np.array([0.0, 1.0]))


# --- memory: no cycles, saved arrays freed ---------------------------------------------------


def test_graph_is_freed_by_reference_counting_alone():
    rng = np.random.default_rng(0)
    x = mg.tensor(rng.normal(size=(8, 2)))
    w = mg.tensor(rng.normal(size=(2, 4)), requires_grad=True)
    h = (x @ w).tanh()
    probe = weakref.ref(h)
    loss = (h * h).sum()
    del h
    gc.disable()
    try:
        assert probe() is not None  # the graph keeps h alive through loss
        del loss
        assert probe() is None  # no cycle: gone without the garbage collector
    finally:
        gc.enable()


@pytest.mark.slow
def test_memory_stays_flat_over_1000_steps_with_gc_disabled():
    rng = np.random.default_rng(1)
    x = mg.tensor(rng.normal(size=(32, 2)))
    y = rng.integers(0, 2, size=32)
    params = [mg.tensor(rng.normal(size=s) * 0.5, requires_grad=True)
              for s in [(2, 16), (16,), (16, 2), (2,)]]
    gc.collect()
    gc.disable()
    tracemalloc.start()
    try:
        for _ in range(50):
            mlp_sgd_step(params, x, y)
        baseline = tracemalloc.take_snapshot()
        for _ in range(1000):
            mlp_sgd_step(params, x, y)
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
        gc.enable()
    # Count only what the engine and this test allocated: other threads of the test session
    # (a notebook kernel's client, say) allocate too, and are not ours to measure.
    ours = [tracemalloc.Filter(True, str(ROOT / "minigrad" / "*")), tracemalloc.Filter(True, __file__)]
    growth = sum(stat.size_diff for stat in
                 after.filter_traces(ours).compare_to(baseline.filter_traces(ours), "filename"))
    one_graph = 32 * 16 * 8 * 4  # a leaked step would hold at least its activations
    assert growth < one_graph * 10, f"memory grew by {growth} bytes over 1000 steps"


def test_saved_arrays_are_released_after_backward():
    rng = np.random.default_rng(2)
    x = mg.tensor(rng.normal(size=(64, 8)))
    w = mg.tensor(rng.normal(size=(8, 8)), requires_grad=True)
    loss = ((x @ w).tanh() * (x @ w).sigmoid()).sum()
    held = graph.saved_bytes(loss)
    assert held >= 3 * 64 * 8 * 8  # tanh, sigmoid outputs and the x of each matmul
    loss.backward(retain_graph=True)
    assert graph.saved_bytes(loss) == held
    loss.backward()
    assert graph.saved_bytes(loss) == 0
    assert graph.count_ops(loss)["matmul"] == 2
    assert "digraph" in graph.to_dot(loss)


def test_graph_nodes_come_after_all_their_parents():
    x = mg.tensor([0.5, -1.0], requires_grad=True)
    a = x * 2.0
    b = a.tanh()
    z = a * b  # a is a parent of z directly and through b
    order = graph.nodes(z)
    position = {id(t): i for i, t in enumerate(order)}
    assert len(order) == 4 and order[-1] is z
    for t in order:
        for p in t._parents:
            assert position[id(p)] < position[id(t)]


def _diamond_var():
    from minigrad.course.scalar import Var
    x = Var(0.5)
    a = x * 2.0
    return a * a.tanh()  # a reaches the root directly and through tanh


def _diamond_lesson_one():
    from minigrad.course.checks.lesson1 import ReferenceTensor as T
    x = T(0.5)
    a = T(2 * x.data, (x,))
    b = T(np.tanh(a.data), (a,))
    return T(a.data * b.data, (a, b))


def _deep_chain_var():
    from minigrad.course.scalar import Var
    y = Var(0.1)
    for _ in range(5000):  # deeper than the recursion limit
        y = y * 1.0
    return y


@pytest.mark.parametrize("make, size", [
    (_diamond_var, 5),           # the scalar engine's Var (x, 2.0, a, tanh a, root)
    (_diamond_lesson_one, 4),    # lesson 1's Tensor, as the checks build it
    (_deep_chain_var, 10_001),   # 5,000 products: an input and a constant each, and x
], ids=["scalar Var", "lesson 1 Tensor", "a chain of 5,000"])
def test_the_one_topological_order_puts_each_node_once_after_its_parents(make, size):
    """graph.topological_order is the one order of the repository: Var, lesson 1's Tensor and
    minigrad's graph (graph.nodes, above) are all walked by it."""
    root = make()
    order = graph.topological_order(root)
    position = {id(n): i for i, n in enumerate(order)}
    assert len(order) == len(position) == size and order[-1] is root
    for node in order:
        for parent in node.parents:
            assert position[id(parent)] < position[id(node)]


# --- gradcheck reports where it disagrees ----------------------------------------------------


def test_gradcheck_names_input_and_element():
    def wrong(a, b):  # the gradient for b is wrong on purpose: its VJP drops a factor 2
        return mg.op(a.data * 2 * b.data, (a, b),
                     lambda g, x, y: (g * 2 * y, g * x), saved=(a.data, b.data), name="bad")

    a = mg.tensor(np.array([1.0, 2.0]))
    b = mg.tensor(np.array([3.0, 4.0]))
    result = mg.gradcheck(wrong, a, b)
    assert not result and result.input == 1 and result.index in {(0,), (1,)}
    assert "input 1" in result.message and "finite differences" in result.message
    assert mg.gradcheck(lambda a, b: a * b, a, b)


# --- device-agnostic code: only backend.py imports NumPy --------------------------------------

# Every engine module but backend.py (the one home of NumPy and CuPy), npz.py (NumPy's file
# format), data.py (scikit-learn's data sets, as NumPy arrays) and compile.py with its passes
# (records NumPy calls through an ndarray subclass: NumPy only, by design; other arrays run
# eagerly).
ENGINE_MODULES = sorted(str(p.relative_to(ROOT / "minigrad"))
                        for folder in ("", "nn", "optim")
                        for p in (ROOT / "minigrad" / folder).glob("*.py")
                        if p.name not in {"backend.py", "npz.py", "data.py", "compile.py",
                                          "compile_passes.py"})


def test_the_engine_module_list_is_not_empty():
    assert {"tensor.py", "functional.py", "optim/__init__.py", "nn/modules.py"} \
        <= set(ENGINE_MODULES)


@pytest.mark.parametrize("name", ENGINE_MODULES)
def test_engine_modules_do_not_import_numpy(name):
    tree = ast.parse((ROOT / "minigrad" / name).read_text())
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        for n in names:
            assert n.split(".")[0] not in {"numpy", "cupy"}, f"{name} imports {n}"


@pytest.mark.parametrize("ns", NAMESPACES)
def test_training_step_runs_in_namespace(ns):
    """A whole MLP step on array-api-strict, with conversion to NumPy forbidden."""
    with namespace(ns) as xp:
        rng = np.random.default_rng(3)
        x = make(xp, rng.normal(size=(16, 2)), requires_grad=False)
        y = xp.asarray(rng.integers(0, 2, size=16)) if ns != "numpy" else rng.integers(0, 2, 16)
        params = [make(xp, rng.normal(size=s) * 0.5) for s in [(2, 8), (8,), (8, 2), (2,)]]
        losses = [float(mlp_sgd_step(params, x, y).data) for _ in range(20)]
        assert losses[-1] < losses[0]
        assert type(params[0].data) is type(x.data)
        reference = host(xp, params[0].data)
        assert np.all(np.isfinite(reference))


TRANSPOSE_2D = [  # call, the result's values for m = [[0, 1, 2], [3, 4, 5]] (PyTorch and NumPy)
    (lambda m: m.transpose(0, 1), [[0, 3], [1, 4], [2, 5]]),      # torch.transpose: a swap
    (lambda m: m.transpose(-2, -1), [[0, 3], [1, 4], [2, 5]]),    # the same swap
    (lambda m: m.transpose(1, 0), [[0, 3], [1, 4], [2, 5]]),
    (lambda m: m.transpose(0, 0), [[0, 1, 2], [3, 4, 5]]),        # swapping an axis with itself
    (lambda m: m.transpose(), [[0, 3], [1, 4], [2, 5]]),          # NumPy: reverse the axes
    (lambda m: m.transpose((0, 1)), [[0, 1, 2], [3, 4, 5]]),      # NumPy: a permutation tuple
    (lambda m: m.transpose((1, 0)), [[0, 3], [1, 4], [2, 5]]),
    (lambda m: m.T, [[0, 3], [1, 4], [2, 5]]),
]


@pytest.mark.parametrize("k", range(len(TRANSPOSE_2D)))
def test_transpose_of_a_matrix_reads_two_ints_as_pytorch_does(k):
    # two separate ints swap two axes (torch.transpose), also on a matrix: m.transpose(0, 1)
    # used to be read as NumPy's identity permutation and returned m unchanged
    call, want = TRANSPOSE_2D[k]
    m = mg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    out = call(m)
    assert out.numpy().tolist() == want
    (out * mg.tensor(np.arange(out.size, dtype=float).reshape(out.shape))).sum().backward()
    assert m.grad.shape == (2, 3)


def test_row_major_copies_only_what_is_not_row_major():
    from minigrad import backend
    w = np.arange(12.0).reshape(3, 4)
    assert backend.row_major(w) is w                  # already row by row: the array itself
    t = backend.row_major(w.T)
    assert t.flags.c_contiguous and not np.shares_memory(t, w)
    assert np.array_equal(t, w.T)
    strict = pytest.importorskip("array_api_strict")
    s = strict.asarray([[1.0, 2.0], [3.0, 4.0]])
    assert backend.row_major(s) is s                  # no memory order in the standard

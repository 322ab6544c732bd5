"""minigrad.export.c: the generated C compiles cleanly and trains exactly as the engine does.

Each program is built with the system C compiler into a shared library in tmp_path and called
through ctypes (``codegen.load``); the same model is trained by the engine (nn + optim.SGD)
from the same weights on the same minibatches, and the two are compared after every step.
"""
from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn, optim
from minigrad.export import c as codegen
from minigrad.export.c import (
    STRICT_FLAGS,
    UnsupportedModuleError,
    compile_executable,
    compile_training_step,
    load,
)
from minigrad.data import batches, digits, moons

CC = codegen.find_c_compiler()
needs_cc = pytest.mark.skipif(
    CC is None, reason="no C compiler found ($CC, cc, gcc or clang): install gcc to build "
    "and run the generated C")

# Largest relative difference allowed between the C program and the engine (per parameter
# array: max |c - engine| / max |engine|). float64 agrees to rounding (~1e-15 measured);
# float32 sums in another order than BLAS (~5e-7 measured after 50 steps).
TOLERANCE = {"float64": 1e-12, "float32": 1e-5}
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "export_c.py"


def moons_net(dtype: str = "float64", seed: int = 0) -> nn.Sequential:
    """2-16-16-2 with a nested Sequential and two kinds of activation."""
    rng = np.random.default_rng(seed)
    return nn.Sequential(nn.Linear(2, 16, rng=rng, dtype=dtype), nn.ReLU(),
                         nn.Sequential(nn.Linear(16, 16, rng=rng, dtype=dtype), nn.Tanh()),
                         nn.Linear(16, 2, rng=rng, dtype=dtype))


def every_layer_net(dtype: str = "float64", seed: int = 1) -> nn.Sequential:
    """Every supported layer: activations first and last, a LeakyReLU right after a Linear
    (not computed in place), two activations in a row, a Linear without bias."""
    rng = np.random.default_rng(seed)
    return nn.Sequential(
        nn.Tanh(),
        nn.Linear(2, 8, rng=rng, dtype=dtype), nn.LeakyReLU(0.2),
        nn.Sequential(nn.Linear(8, 8, bias=False, rng=rng, dtype=dtype), nn.Sigmoid(),
                      nn.ReLU()),
        nn.Linear(8, 3, rng=rng, dtype=dtype), nn.Tanh())


def relative_error(got: np.ndarray, expected: np.ndarray) -> float:
    return float(np.abs(got - expected).max() / max(np.abs(expected).max(), 1e-30))


def train_side_by_side(model: nn.Module, net: codegen.NativeProgram, loss: str,
                       momentum: float, weight_decay: float, dtype: str,
                       data: tuple[np.ndarray, np.ndarray] | None = None, steps: int = 50,
                       batch_size: int = 32) -> dict[str, float]:
    """Train the engine and the C program on one minibatch stream; the worst errors.

    ``data`` defaults to 200 moons (in batches of 32: six full batches and one of 8 per epoch).
    """
    X, y = moons(200, noise=0.1, seed=0, dtype=dtype) if data is None else data
    n_out = net.program.n_out
    optimizer = optim.SGD(model.parameters(), lr=0.1, momentum=momentum,
                          weight_decay=weight_decay)
    loss_fn = nn.CrossEntropyLoss() if loss == "cross_entropy" else nn.MSELoss()
    rng = np.random.default_rng(1)
    worst = {"loss": 0.0, "param": 0.0, "grad": 0.0}
    step = 0
    while step < steps:
        for Xb, yb in batches(X, y, batch_size=batch_size, seed=rng):
            target = yb if loss == "cross_entropy" else np.eye(n_out, dtype=dtype)[yb]
            engine_loss = loss_fn(model(mg.tensor(Xb)), target)
            optimizer.zero_grad()
            engine_loss.backward()
            optimizer.step()
            c_loss = net.train_step(Xb, target)

            worst["loss"] = max(worst["loss"], abs(c_loss - engine_loss.item())
                                / abs(engine_loss.item()))
            c_params, c_grads = net.state_dict(), net.grads()
            for name, p in model.named_parameters():
                worst["param"] = max(worst["param"], relative_error(c_params[name], p.data))
                worst["grad"] = max(worst["grad"], relative_error(c_grads[name], p.grad))
            step += 1
            if step == steps:
                break
    return worst


# --- the C program matches the engine ------------------------------------------------------


@needs_cc
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("make", [moons_net, every_layer_net])
def test_forward_matches_engine(tmp_path, make, dtype):
    model = make(dtype)
    program = compile_training_step(model, batch_size=16, lr=0.1)
    assert program.dtype == dtype  # taken from the model
    net = load(program, tmp_path)
    net.init()
    x = np.random.default_rng(2).normal(size=(40, 2)).astype(dtype)
    for rows in (x[:1], x[:5], x[:16], x):  # 1 row, a partial batch, a full one, 40 in chunks
        expected = model(mg.tensor(rows)).numpy()
        got = net.forward(rows)
        assert got.dtype == np.dtype(dtype) and got.shape == expected.shape
        assert relative_error(got, expected) <= TOLERANCE[dtype]


@needs_cc
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("momentum", [0.0, 0.9])
@pytest.mark.parametrize("loss", ["cross_entropy", "mse"])
def test_fifty_training_steps_match_engine(tmp_path, loss, momentum, dtype):
    model = moons_net(dtype)
    program = compile_training_step(model, loss=loss, batch_size=32, lr=0.1,
                                    momentum=momentum)
    net = load(program, tmp_path)
    net.init()
    worst = train_side_by_side(model, net, loss, momentum, 0.0, dtype)
    assert worst["loss"] <= TOLERANCE[dtype], worst
    assert worst["grad"] <= 10 * TOLERANCE[dtype], worst  # tiny gradients: relatively noisier
    assert worst["param"] <= TOLERANCE[dtype], worst


@needs_cc
@pytest.mark.parametrize("loss,momentum", [("cross_entropy", 0.5), ("mse", 0.0)])
def test_every_layer_and_weight_decay_match_engine(tmp_path, loss, momentum):
    model = every_layer_net()
    program = compile_training_step(model, loss=loss, batch_size=32, lr=0.1, momentum=momentum,
                                    weight_decay=0.01)
    net = load(program, tmp_path)
    net.init()
    worst = train_side_by_side(model, net, loss, momentum, 0.01, "float64", steps=20)
    assert max(worst.values()) <= TOLERANCE["float64"], worst


@needs_cc
def test_a_single_linear_model_and_a_float32_program_from_a_float64_model(tmp_path):
    model = nn.Linear(2, 3, seed=0)  # not in a Sequential
    program = compile_training_step(model, loss="mse", batch_size=4, lr=0.1, dtype="float32")
    assert program.param_names == ["weight", "bias"] and "act/output" in program.layout
    net = load(program, tmp_path)
    net.init()
    x = np.arange(8.0).reshape(4, 2) / 8
    expected = model(mg.tensor(x)).numpy()
    assert relative_error(net.forward(x), expected) <= TOLERANCE["float32"]


# --- convolutional networks ---------------------------------------------------------------


def conv_net(dtype: str = "float64", seed: int = 0) -> nn.Sequential:
    """For 8x8 digits: padding, a stride that differs by axis, pooling with and without
    overlapping windows, activations in place after a convolution and after a pooling."""
    rng = np.random.default_rng(seed)
    return nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1, rng=rng, dtype=dtype), nn.ReLU(), nn.MaxPool2d(2),
        nn.Sequential(nn.Conv2d(4, 6, 3, stride=(1, 2), padding=1, rng=rng, dtype=dtype),
                      nn.MaxPool2d(2, stride=1), nn.Tanh()),  # (6, 4, 2) -> (6, 3, 1)
        nn.Flatten(), nn.Linear(18, 10, rng=rng, dtype=dtype))


@needs_cc
@pytest.mark.parametrize("dtype,loss,momentum", [("float64", "cross_entropy", 0.9),
                                                 ("float64", "mse", 0.0),
                                                 ("float32", "cross_entropy", 0.9)])
def test_conv_net_matches_engine(tmp_path, dtype, loss, momentum):
    (X, y), _ = digits(8, dtype=dtype)
    X, y = X[:100], y[:100]  # 6 batches of 16 and one of 4 per epoch
    model = conv_net(dtype)
    program = compile_training_step(model, loss=loss, batch_size=16, lr=0.1,
                                    momentum=momentum, input_shape=(1, 8, 8))
    assert program.input_shape == (1, 8, 8) and program.n_in == 64
    assert "act/4" not in program.layout  # Flatten: the same memory as the pooling before it
    net = load(program, tmp_path)
    net.init()
    expected = model(mg.tensor(X[:20])).numpy()
    assert relative_error(net.forward(X[:20]), expected) <= TOLERANCE[dtype]
    worst = train_side_by_side(model, net, loss, momentum, 0.0, dtype, (X, y), steps=20,
                              batch_size=16)
    assert worst["loss"] <= TOLERANCE[dtype], worst
    assert worst["grad"] <= 10 * TOLERANCE[dtype], worst
    assert worst["param"] <= TOLERANCE[dtype], worst


@needs_cc
def test_max_pool_gradient_goes_to_the_first_of_tied_maxima(tmp_path):
    # Integer images and kernels make equal values in most windows; overlapping windows
    # (stride 1) send several gradients to one position.
    rng = np.random.default_rng(5)
    model = nn.Sequential(nn.Conv2d(1, 2, 2, seed=0), nn.MaxPool2d(2, stride=1),
                          nn.Flatten(), nn.Linear(2 * 3 * 3, 3, seed=1))
    model[0].weight.data[...] = rng.integers(-1, 2, size=(2, 1, 2, 2))
    model[0].bias.data[...] = 0.0
    X = rng.integers(0, 2, size=(12, 1, 5, 5)).astype("float64")
    y = rng.integers(0, 3, size=12)
    program = compile_training_step(model, batch_size=12, lr=0.1, input_shape=(1, 5, 5))
    net = load(program, tmp_path)
    net.init()
    loss = nn.CrossEntropyLoss()(model(mg.tensor(X)), y)
    loss.backward()
    net.train_step(X, y)
    grads = net.grads()
    assert np.abs(grads["0.weight"]).max() > 0
    for name, p in model.named_parameters():
        assert np.allclose(grads[name], p.grad, rtol=1e-12, atol=1e-15), name
    # the check has teeth: sending each window's gradient to EVERY tied maximum differs
    wrong = program.source.replace("left -= d;", "")
    bad = load(dataclasses.replace(program, source=wrong), tmp_path)
    bad.init()
    bad.train_step(X, y)
    assert not np.allclose(bad.grads()["0.weight"], model[0].weight.grad)


@needs_cc
def test_conv_net_main_harness_trains_digits(tmp_path):
    (X, y), _ = digits(8)
    program = compile_training_step(conv_net(), batch_size=32, lr=0.1, momentum=0.9,
                                    input_shape=(1, 8, 8), train_data=(X[:300], y[:300]),
                                    epochs=30)
    result = subprocess.run([str(compile_executable(program, tmp_path))], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    accuracy = float(re.search(r"^train accuracy (\S+)$", result.stdout, re.M).group(1))
    assert accuracy > 0.8, result.stdout


# --- the buffer ----------------------------------------------------------------------------


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_layout_tiles_the_buffer(momentum):
    model = every_layer_net()
    program = compile_training_step(model, batch_size=8, lr=0.1, momentum=momentum)
    regions = sorted(program.layout.values())
    assert program.buffer_size.elements == sum(r.size for r in regions)
    assert program.buffer_size.bytes == 8 * program.buffer_size.elements
    assert regions[0].offset == 0
    for before, after in zip(regions, regions[1:]):  # end to end: no gap, no overlap
        assert after.offset == before.offset + before.size
    # the parameters come first, as named_parameters() has them, then their gradients
    names = [name for name, _ in model.named_parameters()]
    assert list(program.layout)[:len(names)] == names == program.param_names
    for name, p in model.named_parameters():
        assert program.layout[name].shape == p.shape
        assert program.layout[f"grad/{name}"].shape == p.shape
        assert (f"momentum/{name}" in program.layout) == (momentum > 0)
    assert f"#define NET_BUF_SIZE {program.buffer_size.elements} " in program.header
    assert "static double buf[NET_BUF_SIZE];" in program.source
    # every region of the layout is in the memory map of the C file
    assert all(name in program.memory_map() for name in program.layout)


def test_activations_after_a_linear_reuse_its_output():
    program = compile_training_step(moons_net(), batch_size=32, lr=0.1)
    acts = [name for name in program.layout if name.startswith("act/")]
    assert acts == ["act/0", "act/2.0", "act/3"]  # ReLU '1' and Tanh '2.1' work in place
    assert program.buffer_size.elements == (
        2 * 354  # parameters and gradients
        + 32 * (16 + 16 + 2)  # three activations
        + 2 * 32 * 16)  # two gradient arrays of the widest layer


def test_source_is_self_contained_without_heap():
    X, y = moons(20)
    for loss, data in (("cross_entropy", (X, y)), ("mse", None)):
        program = compile_training_step(moons_net(), loss=loss, batch_size=4, lr=0.1,
                                        train_data=data)
        code = re.sub(r"/\*.*?\*/", "", program.source, flags=re.S)
        assert not re.search(r"\b(malloc|calloc|realloc|free|alloca)\b", code)
        includes = set(re.findall(r"#include\s+(\S+)", code))
        assert includes == {'"net.h"', "<math.h>", "<string.h>", "<stdio.h>"}
        # outside the demo main(), buf is the only array that is not constant
        library = code.split("#ifdef MINIGRAD_MAIN")[0]
        arrays = re.findall(r"^\s*(static\s+(?:const\s+)?\w+\s+\w+\[)", library, flags=re.M)
        assert [a for a in arrays if "const" not in a] == ["static double buf["]


# --- compiling and running -----------------------------------------------------------------


@needs_cc
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("loss", ["cross_entropy", "mse"])
@pytest.mark.parametrize("make,input_shape", [(every_layer_net, None), (conv_net, (1, 8, 8))])
def test_compiles_with_strict_flags_as_library_and_as_program(tmp_path, make, input_shape,
                                                              loss, dtype):
    program = compile_training_step(make(dtype), loss=loss, batch_size=8, lr=0.1,
                                    momentum=0.9, weight_decay=1e-4, input_shape=input_shape)
    program.write(tmp_path)
    # and float stays float: no silent promotion to double, no narrowing conversions
    extra_warnings = ["-Wdouble-promotion", "-Wconversion", "-Wshadow"]
    for extra in ([], ["-DMINIGRAD_MAIN"]):
        result = subprocess.run([CC, *STRICT_FLAGS, *extra_warnings, "-O1", *extra, "-c",
                                 "net.c", "-o", "net.o"],
                                cwd=tmp_path, capture_output=True, text=True)
        assert result.returncode == 0 and result.stderr == "", result.stderr


@needs_cc
def test_main_harness_trains_moons(tmp_path):
    X, y = moons(200, noise=0.1, seed=0)
    program = compile_training_step(moons_net(), batch_size=32, lr=0.1, momentum=0.9,
                                    name="moons", train_data=(X, y), epochs=60)
    executable = compile_executable(program, tmp_path)
    result = subprocess.run([str(executable)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    losses = [float(v) for v in re.findall(r"^epoch \d+ loss (\S+)$", result.stdout, re.M)]
    assert len(losses) == 60
    assert losses[-1] < 0.1 < losses[0]
    accuracy = float(re.search(r"^train accuracy (\S+)$", result.stdout, re.M).group(1))
    assert accuracy > 0.95


@needs_cc
def test_main_harness_reads_stdin(tmp_path):
    X, y = moons(100, noise=0.1, seed=3)
    targets = np.eye(2)[y]
    program = compile_training_step(moons_net(), loss="mse", batch_size=16, lr=0.1,
                                    momentum=0.9, epochs=40)
    executable = compile_executable(program, tmp_path)
    rows = "\n".join(" ".join(repr(float(v)) for v in row) for row in np.hstack([X, targets]))
    result = subprocess.run([str(executable)], input=rows, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    losses = [float(v) for v in re.findall(r"^epoch \d+ loss (\S+)$", result.stdout, re.M)]
    mse = float(re.search(r"^train mse (\S+)$", result.stdout, re.M).group(1))
    assert len(losses) == 40 and mse < 0.05 < losses[0]

    bad = subprocess.run([str(executable)], input="0.5 0.25 1 oops\n", capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == 1 and "malformed" in bad.stderr


@needs_cc
def test_bad_calls_change_nothing(tmp_path):
    program = compile_training_step(moons_net(), batch_size=4, lr=0.1, momentum=0.9)
    net = load(program, tmp_path)
    net.init()
    before = net.buffer.copy()
    x = np.zeros((4, 2))
    p_x = x.ctypes.data_as(net._train_step.argtypes[0])
    for labels, n in (([0, 1, 2, 0], 4), ([0, -1, 0, 0], 4), ([0, 1, 0, 1], 0),
                      ([0, 1, 0, 1], 5)):
        y = np.array(labels, dtype=np.intc)
        assert np.isnan(net._train_step(p_x, y.ctypes.data_as(net._train_step.argtypes[1]), n))
    out = np.zeros((5, 2))
    assert net._forward(p_x, out.ctypes.data_as(net._forward.argtypes[1]), 5) == -1
    assert np.array_equal(net.buffer, before)
    with pytest.raises(ValueError, match="1 to 4 rows"):
        net.train_step(np.zeros((5, 2)), np.zeros(5, dtype=int))


@needs_cc
def test_init_restores_the_generated_weights_and_params_round_trip(tmp_path):
    model = moons_net()
    initial = {k: v.copy() for k, v in model.state_dict().items()}
    program = compile_training_step(model, batch_size=8, lr=0.5, momentum=0.9)
    net = load(program, tmp_path)
    net.init()
    X, y = moons(8, seed=4)
    for _ in range(3):
        net.train_step(X, y)
    assert not np.allclose(net.state_dict()["0.weight"], initial["0.weight"])
    net.init()
    assert all(np.array_equal(net.state_dict()[k], v) for k, v in initial.items())
    assert not net.region("momentum/0.weight").any()
    net.load_state_dict({k: v * 2 for k, v in initial.items()})
    assert np.array_equal(net.region("2.0.bias"), 2 * initial["2.0.bias"])
    # <name>_get_params / _set_params: one flat array, in named_parameters() order
    flat = np.concatenate([v.ravel() for v in initial.values()])
    assert np.array_equal(net.get_params(), 2 * flat)
    net.set_params(flat)
    assert all(np.array_equal(net.state_dict()[k], v) for k, v in initial.items())


@needs_cc
def test_export_example_builds_and_trains(tmp_path):
    sys.path.insert(0, str(EXAMPLE.parent))
    try:
        import export_c
    finally:
        sys.path.remove(str(EXAMPLE.parent))
    output = export_c.main(["--out", str(tmp_path), "--epochs", "60", "--run"])
    assert (tmp_path / "moons_train.c").exists() and (tmp_path / "moons_train.h").exists()
    accuracy = float(re.search(r"^train accuracy (\S+)$", output, re.M).group(1))
    assert accuracy > 0.95


# --- NaN and inf travel as in the engine ----------------------------------------------------


def assert_same_with_nan(got, expected, err_msg=""):
    """Equal to rounding, with NaN in exactly the same places."""
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected), err_msg=err_msg)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14, equal_nan=True,
                               err_msg=err_msg)


@needs_cc
def test_relu_forward_on_special_values(tmp_path):
    model = nn.Sequential(nn.ReLU(), nn.Linear(6, 2, seed=0))  # act/0: the ReLU's output
    net = load(compile_training_step(model, batch_size=2, lr=0.1), tmp_path)
    net.init()
    x = np.array([[np.nan, -0.0, 0.0, np.inf, -np.inf, -1.0],
                  [2.0, -np.nan, 1e-300, -1e-300, 5e-324, 1.0]])
    net.forward(x)
    got, expected = net.region("act/0").reshape(2, 6), mg.tensor(x).relu().numpy()
    # torch.relu(torch.tensor([nan, -0., 0., inf, -inf, -1.])) = [nan, -0., 0., inf, 0., 0.]:
    # NaN kept, as here. (The sign of -0.0: PyTorch keeps it; the engine, numpy.maximum(x, 0),
    # gives +0.0, and the C does what the engine does.)
    np.testing.assert_array_equal(got, expected)  # NaN where the engine has NaN
    assert np.isnan(got[0, 0]) and np.array_equal(np.signbit(got), np.signbit(expected))


@needs_cc
@pytest.mark.filterwarnings("ignore:invalid value encountered")  # NumPy's, on the NaN row
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_a_nan_input_trains_as_the_engine_does(tmp_path, dtype):
    # The issue: the generated C's ReLU hid a NaN input; the engine's loss was NaN.
    model = moons_net(dtype)
    net = load(compile_training_step(model, batch_size=4, lr=0.1), tmp_path)
    net.init()
    X = np.array([[0.5, -0.2], [np.nan, 1.0], [np.inf, 0.3], [-1.0, 2.0]], dtype=dtype)
    y = np.array([0, 1, 1, 0])
    engine_loss = nn.CrossEntropyLoss()(model(mg.tensor(X)), y)
    engine_loss.backward()
    optim.SGD(model.parameters(), lr=0.1).step()
    c_loss = net.train_step(X, y)
    assert np.isnan(engine_loss.item()) and np.isnan(c_loss)  # PyTorch: nan as well
    grads, params = net.grads(), net.state_dict()
    for name, p in model.named_parameters():
        assert_same_with_nan(grads[name], p.grad, err_msg=f"grad of {name}")
        assert_same_with_nan(params[name], p.data, err_msg=name)


@needs_cc
def test_max_pool_with_nan_outputs_nan_and_sends_the_gradient_where_the_engine_does(tmp_path):
    # The engine's pooling takes numpy.maximum over each window: a NaN in a window makes its
    # output NaN (as PyTorch's max_pool2d), and its gradient goes to the window's last NaN (as
    # PyTorch's). The C does the same: the gradient of the pooling's input, left in DELTA_A
    # by the backward pass, matches the engine's.
    rng = np.random.default_rng(3)
    model = nn.Sequential(nn.Conv2d(1, 1, 1, bias=False, seed=0), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(4, 3, seed=1))
    model[0].weight.data[...] = 1.0  # a 1x1 kernel of 1: the pooling sees the images as given
    X = rng.integers(0, 3, size=(3, 1, 4, 4)).astype("float64")  # ties in most windows
    X[1, 0, 0, 1] = np.nan   # one NaN window in sample 1, not at its last position
    X[2, 0, 3, 3] = np.nan   # and one at the last position of sample 2's last window
    # Its output is NaN, so is the loss of samples 1 and 2, so their gradients are NaN: the
    # engine's product left * (x == m) then makes NaN in every position of their windows.
    y = np.array([0, 1, 2])
    program = compile_training_step(model, batch_size=3, lr=0.1, input_shape=(1, 4, 4))
    net = load(program, tmp_path)
    net.init()
    pool_input = mg.tensor(X, requires_grad=True)  # = the convolution's output here
    out = model[1:](pool_input)
    c_out = net.forward(X)
    assert_same_with_nan(c_out, out.numpy())
    assert np.isnan(c_out[1:]).all() and not np.isnan(c_out[0]).any()
    nn.CrossEntropyLoss()(out, y).backward()
    net.train_step(X, y)
    got = net.region("delta/a").ravel()[:X.size].reshape(X.shape)
    assert_same_with_nan(got, pool_input.grad)
    assert not np.isnan(got[0]).any() and np.isnan(got[1:]).all()


# --- refusals ------------------------------------------------------------------------------


@needs_cc
def test_labels_that_are_not_class_indices_are_refused(tmp_path):
    net = load(compile_training_step(moons_net(), batch_size=4, lr=0.1), tmp_path)
    net.init()
    before = net.buffer.copy()
    x = np.zeros((4, 2))
    # torch.nn.functional.cross_entropy(logits, torch.tensor([0., 1., 0., 1.])) raises
    # "expected target dtype to be Long or Byte, but got Float"; a label of 2 for 2 classes
    # raises "Target 2 is out of bounds"; the C alone would return NaN or truncate 1.5 to 1.
    cases = [
        (np.array([0.0, 1.0, 0.0, 1.0]), r"labels must be integers \(class indices 0\.\.1\); "
                                        r"got dtype float64 \(they are whole numbers: pass "
                                        r"labels\.astype\(int\)\)"),
        (np.array([0, 1.5, 0, 1]), r"labels must be integers .*got dtype float64$"),
        (np.array([True, False, True, False]), r"labels must be integers .*got dtype bool"),
        (np.array([0, 1, 2, 0]), r"label 2 \(row 2\) is out of range: labels are class "
                                 r"indices 0\.\.1 \(1 of 4 out of range\)"),
        (np.array([-1, 1, 0, 7]), r"label -1 \(row 0\) is out of range.*\(2 of 4"),
        (np.array([2 ** 32, 0, 0, 0]), r"label 4294967296 \(row 0\) is out of range"),
        (np.array([0, 1, 0]), r"expected 4 labels, shape \(4,\); got shape \(3,\)"),
    ]
    for labels, message in cases:
        with pytest.raises(ValueError, match=message):
            net.train_step(x, labels)
    assert np.array_equal(net.buffer, before)


def test_a_program_too_large_to_link_is_refused():
    # 10**8 rows of a 2-16-16-2 network: about 53 GB of activations in one static array,
    # which no linker places with the usual code model. Refused before any C is written.
    with pytest.raises(ValueError, match=r"the program would hold [\d,]+ bytes of static data "
                                         r"\(the buffer [\d,]+, the initial parameters 2,832\), "
                                         r"more than the 2,147,483,647 .*relocation truncated.*"
                                         r"batch_size=100000000"):
        compile_training_step(moons_net(), batch_size=10 ** 8, lr=0.1)
    # the limit is 2**31 - 1 bytes: 2**28 - 1 doubles fit, 2**28 do not
    codegen.program.check_linkable(2 ** 28 - 1 - 354, 354, 8, 1)
    with pytest.raises(ValueError, match="2,147,483,648 bytes of static data"):
        codegen.program.check_linkable(2 ** 28 - 354, 354, 8, 1)


@needs_cc
def test_native_load_refuses_a_program_too_large_to_link(tmp_path):
    program = compile_training_step(moons_net(), batch_size=4, lr=0.1)
    huge = dataclasses.replace(program, buffer_size=codegen.BufferSize(2 ** 30, 2 ** 33))
    with pytest.raises(ValueError, match="static data.*relocation truncated"):
        load(huge, tmp_path)
    assert list(tmp_path.iterdir()) == []  # refused before writing or compiling anything


@needs_cc
def test_native_load_state_dict_is_all_or_nothing(tmp_path):
    model = moons_net()
    net = load(compile_training_step(model, batch_size=4, lr=0.1), tmp_path)
    net.init()
    before = net.buffer.copy()
    state = {k: v + 1 for k, v in model.state_dict().items()}
    with pytest.raises(ValueError, match=r"'3\.bias' has shape \(3,\); expected \(2,\)"):
        net.load_state_dict({**state, "3.bias": np.zeros(3)})
    with pytest.raises(KeyError, match=r"lacks \['3\.bias'\]"):
        net.load_state_dict({k: v for k, v in state.items() if k != "3.bias"})
    assert np.array_equal(net.buffer, before)
    net.load_state_dict(state)
    assert np.array_equal(net.region("3.bias"), state["3.bias"])


# --- errors --------------------------------------------------------------------------------


def test_unsupported_module_is_named_with_its_path():
    model = nn.Sequential(nn.Linear(2, 4), nn.Sequential(nn.ReLU(), nn.Dropout(0.5)),
                          nn.Linear(4, 2))
    with pytest.raises(UnsupportedModuleError, match=r"Dropout at '1\.1'.*supports Linear"):
        compile_training_step(model, batch_size=4, lr=0.1)

    class Doubled(nn.Linear):
        def forward(self, x):
            return super().forward(x) * 2

    with pytest.raises(UnsupportedModuleError, match="Doubled at '0'.*own forward"):
        compile_training_step(nn.Sequential(Doubled(2, 2)), batch_size=4, lr=0.1)

    class Scale(nn.Module):
        def forward(self, x):
            return x * 2

    with pytest.raises(UnsupportedModuleError, match=r"Scale at '1\.0'.*remove the Scale"):
        compile_training_step(nn.Sequential(nn.Linear(2, 2), nn.Sequential(Scale())),
                              batch_size=4, lr=0.1)

    partial = nn.Sequential(nn.Conv2d(1, 2, 3), nn.Flatten(start_dim=2))
    with pytest.raises(UnsupportedModuleError, match="Flatten at '1' flattens axes 2 to -1"):
        compile_training_step(partial, batch_size=4, lr=0.1, input_shape=(1, 5, 5))

    shared = nn.Linear(2, 2)
    with pytest.raises(UnsupportedModuleError, match="used twice, at '0' and at '2'"):
        compile_training_step(nn.Sequential(shared, nn.ReLU(), shared), batch_size=4, lr=0.1)


def test_bad_settings_say_what_was_expected():
    model = moons_net()
    with pytest.raises(ValueError, match="takes 3 features, but the layer before it gives 2"):
        compile_training_step(nn.Sequential(nn.Linear(2, 2), nn.Linear(3, 1)), batch_size=4,
                              lr=0.1)
    cases = [({"loss": "hinge"}, "loss must be one of"),
             ({"batch_size": 0}, "batch_size must be a positive int"),
             ({"lr": -1.0}, "lr must be a number >= 0"),
             ({"dtype": "float16"}, "dtype must be 'float64' or 'float32'"),
             ({"name": "2net"}, "name must be a C identifier"),
             ({"name": "double"}, "name must be a C identifier"),
             ({"train_data": (np.zeros((3, 5)), np.zeros(3, int))}, r"shape \(N, 2\)"),
             ({"train_data": (np.zeros((3, 2)), np.array([0, 1, 2]))}, "labels must be in 0..1")]
    for settings, message in cases:
        kwargs = {"batch_size": 4, "lr": 0.1, **settings}
        with pytest.raises(ValueError, match=message):
            compile_training_step(model, **kwargs)
    with pytest.raises(ValueError, match="no Linear or Conv2d layer"):
        compile_training_step(nn.Sequential(nn.ReLU()), batch_size=4, lr=0.1)
    conv = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Linear(18, 2))
    with pytest.raises(ValueError, match="pass input_shape"):
        compile_training_step(conv, batch_size=4, lr=0.1)
    with pytest.raises(ValueError, match=r"Linear at '2' needs samples of shape \(features,\)"
                       r".*gives shape \(2, 3, 3\); add nn.Flatten"):
        compile_training_step(conv, batch_size=4, lr=0.1, input_shape=(1, 5, 5))
    with pytest.raises(ValueError, match="Conv2d at '0' takes 1 channels, but the layer before "
                       "it gives 3"):
        compile_training_step(conv, batch_size=4, lr=0.1, input_shape=(3, 5, 5))
    with pytest.raises(ValueError, match="ends with shape \\(2, 3, 3\\)"):
        compile_training_step(conv[:2], batch_size=4, lr=0.1, input_shape=(1, 5, 5))
    with pytest.raises(ValueError, match="at least 2 outputs"):
        compile_training_step(nn.Linear(2, 1), batch_size=4, lr=0.1)


def test_write_saves_source_and_header(tmp_path):
    program = compile_training_step(moons_net(), batch_size=4, lr=0.1, name="tiny")
    c_path, h_path = program.write(tmp_path / "out")
    assert c_path.read_text() == program.source and h_path.read_text() == program.header
    assert c_path.name == "tiny.c" and '#include "tiny.h"' in program.source
    for prototype in ("void tiny_init(void);", "int tiny_forward(const double *x, double *out, "
                      "int n);", "double tiny_train_step(const double *x, const int *y, int n);",
                      "void tiny_get_params(double *dst);", "double *tiny_buffer(void);"):
        assert prototype in program.header

"""minigrad.export.onnx.export: the files pass the ONNX checker and run in ONNX Runtime as minigrad does.

Each exported model is run in ONNX Runtime (CPU) on a batch of another size than the example
it was exported with, and compared with minigrad's own forward pass. float64 is compared too,
except where ONNX Runtime's CPU provider has no float64 kernel (Conv): there the float64 graph
is run by the onnx package's reference evaluator instead.
"""
from __future__ import annotations

import io
import re
import subprocess
import sys

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from minigrad.data import moons
from minigrad.export.onnx import SUPPORTED_MODULES, export
from tests.support.examples import load_example

try:
    import onnx
    import onnxruntime as ort
except ImportError:
    HAVE_ONNX = False
else:
    HAVE_ONNX = True
needs_onnx = pytest.mark.skipif(
    not HAVE_ONNX, reason='onnx and onnxruntime are not installed (pip install '
                          '"minigrad-course[onnx]")')

# Agreement with minigrad's forward: float32 to 1e-5 (relative to the output's scale: BLAS and
# ONNX Runtime sum in different orders), float64 to 1e-12.
TOLERANCE = {"float32": 1e-5, "float64": 1e-12}


def mlp(dtype: str, seed: int = 0) -> nn.Sequential:
    """The moons network: 2-16-16-2 with ReLUs."""
    rng = np.random.default_rng(seed)
    return nn.Sequential(nn.Linear(2, 16, rng=rng, dtype=dtype), nn.ReLU(),
                         nn.Linear(16, 16, rng=rng, dtype=dtype), nn.ReLU(),
                         nn.Linear(16, 2, rng=rng, dtype=dtype))


def lenet5(dtype: str, seed: int = 0) -> nn.Sequential:
    """LeNet-5 for 1x32x32 images, with a padded and a strided convolution for coverage."""
    rng = np.random.default_rng(seed)
    return nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=(2, 1), rng=rng, dtype=dtype), nn.ReLU(),  # 6x32x30
        nn.MaxPool2d(2),                                                      # 6x16x15
        nn.Conv2d(6, 16, 5, stride=(1, 2), rng=rng, dtype=dtype), nn.ReLU(),  # 16x12x6
        nn.MaxPool2d((2, 2), stride=(2, 1)),                              # 16x6x5
        nn.Flatten(),                                                     # 480
        nn.Linear(480, 120, rng=rng, dtype=dtype), nn.ReLU(),
        nn.Linear(120, 84, rng=rng, dtype=dtype), nn.ReLU(),
        nn.Linear(84, 10, rng=rng, dtype=dtype))


def avg_pool_net(dtype: str, seed: int = 0) -> nn.Sequential:
    """A convolution and average pooling with padding and an uneven stride."""
    rng = np.random.default_rng(seed)
    return nn.Sequential(
        nn.Conv2d(1, 4, 3, rng=rng, dtype=dtype), nn.ReLU(),                  # 4x10x10
        nn.AvgPool2d(3, stride=(2, 1), padding=1),                            # 4x5x10
        nn.AvgPool2d(2),                                                      # 4x2x5
        nn.Flatten(), nn.Linear(40, 3, rng=rng, dtype=dtype))


def activations(dtype: str, slope: float = 0.2, seed: int = 0) -> nn.Sequential:
    """LeakyReLU, Sigmoid, Tanh and Dropout, in a nested Sequential."""
    rng = np.random.default_rng(seed)
    return nn.Sequential(
        nn.Linear(3, 8, rng=rng, dtype=dtype), nn.LeakyReLU(slope), nn.Dropout(0.5, seed=1),
        nn.Sequential(nn.Linear(8, 8, rng=rng, dtype=dtype), nn.Sigmoid(),
                      nn.Sequential(nn.Linear(8, 8, rng=rng, dtype=dtype), nn.Tanh())),
        nn.Dropout(0.3, seed=2), nn.Linear(8, 4, rng=rng, dtype=dtype))


def minigrad_forward(model: nn.Module, x: np.ndarray) -> np.ndarray:
    with mg.no_grad():
        return model(mg.tensor(x)).numpy()


def run_onnxruntime(path, x: np.ndarray, input_name: str = "input") -> np.ndarray:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (y,) = session.run(None, {input_name: x})
    return y


def assert_matches(got: np.ndarray, expected: np.ndarray, dtype: str,
                   tolerance: float | None = None) -> None:
    assert got.dtype == expected.dtype == np.dtype(dtype)
    assert got.shape == expected.shape
    tolerance = TOLERANCE[dtype] if tolerance is None else tolerance
    scale = max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(got, expected, rtol=tolerance, atol=tolerance * scale)


def assert_runs_as_in_minigrad(path, model: nn.Module, batch: np.ndarray, dtype: str,
                               tolerance: float | None = None) -> None:
    """ONNX Runtime on the file at ``path`` gives what ``model`` gives, on ``batch``."""
    assert_matches(run_onnxruntime(path, batch), minigrad_forward(model, batch), dtype, tolerance)


def normal(shape: tuple[int, ...], seed: int, dtype: str = "float64") -> np.ndarray:
    """A standard normal batch of ``shape`` from ``seed``."""
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def check_file(path) -> onnx.ModelProto:
    """The written file passes the full ONNX checker (with strict shape inference)."""
    onnx.checker.check_model(str(path), full_check=True)
    return onnx.load(str(path))


def export_checked(model: nn.Module, x: np.ndarray, path) -> onnx.ModelProto:
    """Export ``model`` for inputs like ``x`` to ``path``; the file, checked and read back."""
    export(model, x, path)
    return check_file(path)


def int_attributes(node: onnx.NodeProto) -> dict[str, list[int]]:
    """A node's list-of-ints attributes (kernel_shape, strides, pads) by name."""
    return {a.name: list(a.ints) for a in node.attribute}


# ---------------------------------------------------------------------------------------------
# The three models of the brief, in ONNX Runtime


@needs_onnx
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_moons_mlp_runs_in_onnxruntime_with_another_batch_size(tmp_path, dtype):
    model = mlp(dtype)
    X, _ = moons(200, noise=0.1, seed=0, dtype=dtype)
    path = tmp_path / "moons.onnx"
    proto = export_checked(model, X[:8], path)
    assert [n.op_type for n in proto.graph.node] == ["Gemm", "Relu", "Gemm", "Relu", "Gemm"]
    assert all(n.attribute[0].name == "transB" and n.attribute[0].i == 1
               for n in proto.graph.node if n.op_type == "Gemm")
    for batch in (X, X[:1], X[:37]):  # the example had 8 rows
        assert_runs_as_in_minigrad(path, model, batch, dtype)


@needs_onnx
def test_lenet5_float32_runs_in_onnxruntime(tmp_path):
    model = lenet5("float32")
    path = tmp_path / "lenet.onnx"
    proto = export_checked(model, normal((2, 1, 32, 32), 1, "float32"), path)
    assert [n.op_type for n in proto.graph.node] == [
        "Conv", "Relu", "MaxPool", "Conv", "Relu", "MaxPool", "Flatten",
        "Gemm", "Relu", "Gemm", "Relu", "Gemm"]
    conv1, conv2 = (n for n in proto.graph.node if n.op_type == "Conv")
    assert int_attributes(conv2) == {"kernel_shape": [5, 5], "strides": [1, 2],
                                     "pads": [0, 0, 0, 0]}
    assert int_attributes(conv1)["pads"] == [2, 1, 2, 1]
    pool2 = [n for n in proto.graph.node if n.op_type == "MaxPool"][1]
    assert int_attributes(pool2) == {"kernel_shape": [2, 2], "strides": [2, 1]}
    batch = normal((5, 1, 32, 32), 2, "float32")
    assert_runs_as_in_minigrad(path, model, batch, "float32")


@needs_onnx
def test_average_pooling_with_padding_runs_in_onnxruntime(tmp_path):
    model = avg_pool_net("float32")
    path = tmp_path / "avg.onnx"
    proto = export_checked(model, normal((2, 1, 12, 12), 1, "float32"), path)
    pools = [n for n in proto.graph.node if n.op_type == "AveragePool"]
    assert [{a.name: (list(a.ints) or a.i) for a in p.attribute} for p in pools] == [
        {"kernel_shape": [3, 3], "strides": [2, 1], "pads": [1, 1, 1, 1], "count_include_pad": 1},
        {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [0, 0, 0, 0], "count_include_pad": 1}]
    batch = normal((3, 1, 12, 12), 2, "float32")
    assert_runs_as_in_minigrad(path, model, batch, "float32")


@needs_onnx
def test_lenet5_float64_graph_is_right(tmp_path):
    """ONNX Runtime's CPU provider has no float64 Conv, so the onnx reference evaluator runs it."""
    from onnx.reference import ReferenceEvaluator

    model = lenet5("float64")
    x = normal((2, 1, 32, 32), 1)
    path = tmp_path / "lenet64.onnx"
    proto = export(model, x, path)
    check_file(path)
    assert proto.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.DOUBLE
    assert all(t.data_type == onnx.TensorProto.DOUBLE for t in proto.graph.initializer)
    batch = normal((3, 1, 32, 32), 2)
    (got,) = ReferenceEvaluator(proto).run(None, {"input": batch})
    assert_matches(got, minigrad_forward(model, batch), "float64")
    from onnxruntime.capi.onnxruntime_pybind11_state import NotImplemented as NotInRuntime

    try:  # documents the limitation, and uses the kernel if a newer ONNX Runtime has one
        got = run_onnxruntime(path, batch)
    except NotInRuntime as exc:
        assert "Could not find an implementation for Conv" in str(exc)
    else:
        assert_matches(got, minigrad_forward(model, batch), "float64")


@needs_onnx
@pytest.mark.parametrize("dtype, slope, tolerance", [
    ("float32", 0.2, 1e-5),
    ("float64", 0.25, 1e-12),
    # ONNX attributes are float32: LeakyRelu's alpha is float32(0.2) = 0.2 * (1 + 1.5e-8)
    ("float64", 0.2, 1e-7),
])
def test_activations_and_dropout_export_as_in_eval(tmp_path, dtype, slope, tolerance):
    model = activations(dtype, slope)
    assert model.training
    x = normal((4, 3), 3, dtype)
    path = tmp_path / "act.onnx"
    export(model, x, path)
    assert model.training and all(m.training for m in model.modules())  # mode restored
    proto = check_file(path)
    assert [n.op_type for n in proto.graph.node] == [
        "Gemm", "LeakyRelu", "Gemm", "Sigmoid", "Gemm", "Tanh", "Gemm"]  # no Dropout
    assert [n.name for n in proto.graph.node] == [
        "/0/Gemm", "/1/LeakyRelu", "/3/0/Gemm", "/3/1/Sigmoid", "/3/2/0/Gemm", "/3/2/1/Tanh",
        "/5/Gemm"]
    (alpha,) = proto.graph.node[1].attribute
    assert alpha.name == "alpha" and alpha.f == np.float32(slope)
    model.eval()
    batch = normal((9, 3), 4, dtype)
    assert_runs_as_in_minigrad(path, model, batch, dtype, tolerance)


# ---------------------------------------------------------------------------------------------
# What the file holds


@needs_onnx
def test_initializers_are_the_state_dict(tmp_path):
    model = lenet5("float32")
    proto = export(model, np.zeros((1, 1, 32, 32), "float32"), tmp_path / "m.onnx")
    stored = {t.name: onnx.numpy_helper.to_array(t) for t in proto.graph.initializer}
    state = model.state_dict()
    assert list(stored) == list(state)
    for name, array in state.items():
        assert stored[name].dtype == array.dtype and np.array_equal(stored[name], array), name
    assert proto.producer_name == "minigrad" and proto.producer_version == mg.__version__
    assert proto.opset_import[0].version == 17


@needs_onnx
def test_shapes_are_inferred_and_batch_is_named(tmp_path):
    proto = export(lenet5("float32"), np.zeros((2, 1, 32, 32), "float32"), tmp_path / "m.onnx")

    def dims(value_info):
        return [d.dim_param or d.dim_value for d in value_info.type.tensor_type.shape.dim]

    assert dims(proto.graph.input[0]) == ["batch", 1, 32, 32]
    assert dims(proto.graph.output[0]) == ["batch", 10]
    inferred = {v.name: dims(v) for v in proto.graph.value_info}
    assert inferred["/2/MaxPool_output_0"] == ["batch", 6, 16, 15]
    assert inferred["/6/Flatten_output_0"] == ["batch", 480]


@needs_onnx
def test_fixed_batch(tmp_path):
    model = mlp("float32")
    x = np.ones((4, 2), "float32")
    path = tmp_path / "fixed.onnx"
    proto = export(model, x, path, dynamic_batch=False)
    assert [d.dim_value for d in proto.graph.input[0].type.tensor_type.shape.dim] == [4, 2]
    assert_matches(run_onnxruntime(path, x), minigrad_forward(model, x), "float32")
    with pytest.raises(Exception, match="(?i)dimension|shape"):
        run_onnxruntime(path, np.ones((5, 2), "float32"))


@needs_onnx
@pytest.mark.parametrize("opset", [11, 13, 17])
def test_names_opset_and_file_objects(opset):
    model = mlp("float32")
    buffer = io.BytesIO()
    export(model, np.zeros((1, 2), "float32"), buffer, input_name="points",
           output_name="logits", opset=opset)
    proto = onnx.load_from_string(buffer.getvalue())
    onnx.checker.check_model(proto, full_check=True)
    assert proto.opset_import[0].version == opset
    assert [proto.graph.input[0].name, proto.graph.output[0].name] == ["points", "logits"]
    x = normal((6, 2), 5, "float32")
    session = ort.InferenceSession(buffer.getvalue(), providers=["CPUExecutionProvider"])
    (got,) = session.run(["logits"], {"points": x})
    assert_matches(got, minigrad_forward(model, x), "float32")


# ---------------------------------------------------------------------------------------------
# Less common layouts


@needs_onnx
@pytest.mark.parametrize("start_dim, end_dim, batch_kept", [
    (2, -1, True), (1, 2, True), (-3, -2, True), (0, -1, False), (0, 1, False)])
def test_flatten_other_axes_become_reshape(tmp_path, start_dim, end_dim, batch_kept):
    model = nn.Sequential(nn.Conv2d(2, 3, 3, seed=0, dtype="float32"),
                          nn.Flatten(start_dim, end_dim), nn.Tanh())
    x = normal((2, 2, 5, 6), 6, "float32")
    path = tmp_path / "flat.onnx"
    proto = export(model, x, path)
    check_file(path)
    assert "Reshape" in [n.op_type for n in proto.graph.node]
    out_dim0 = proto.graph.output[0].type.tensor_type.shape.dim[0]
    assert (out_dim0.dim_param == "batch") == batch_kept
    batch = normal((3, 2, 5, 6), 7, "float32")
    assert_runs_as_in_minigrad(path, model, batch, "float32")


@needs_onnx
def test_linear_on_three_axes_and_without_bias(tmp_path):
    rng = np.random.default_rng(8)
    model = nn.Sequential(nn.Linear(5, 4, rng=rng, dtype="float32"), nn.ReLU(),
                          nn.Linear(4, 3, bias=False, rng=rng, dtype="float32"))
    x = rng.standard_normal((2, 7, 5)).astype("float32")  # (batch, time, features)
    path = tmp_path / "seq.onnx"
    proto = export(model, x, path)
    check_file(path)
    assert [n.op_type for n in proto.graph.node] == [
        "Transpose", "MatMul", "Add", "Relu", "Transpose", "MatMul"]
    batch = rng.standard_normal((4, 7, 5)).astype("float32")
    assert_runs_as_in_minigrad(path, model, batch, "float32")

    flat = nn.Sequential(nn.Linear(5, 3, bias=False, seed=0, dtype="float32"))
    proto = export(flat, x[0], tmp_path / "nobias.onnx")
    (gemm,) = proto.graph.node
    assert gemm.op_type == "Gemm" and len(gemm.input) == 2


@needs_onnx
def test_shared_layer_is_one_initializer(tmp_path):
    shared = nn.Linear(4, 4, seed=0, dtype="float32")
    model = nn.Sequential(shared, nn.Tanh(), shared)
    proto = export(model, np.ones((2, 4), "float32"), tmp_path / "shared.onnx")
    assert [t.name for t in proto.graph.initializer] == ["0.weight", "0.bias"]
    gemms = [n for n in proto.graph.node if n.op_type == "Gemm"]
    assert [list(n.input[1:]) for n in gemms] == [["0.weight", "0.bias"]] * 2
    x = normal((3, 4), 9, "float32")
    assert_matches(run_onnxruntime(tmp_path / "shared.onnx", x), minigrad_forward(model, x),
                   "float32")


@needs_onnx
def test_single_layer_and_identity(tmp_path):
    layer = nn.Linear(3, 2, seed=0, dtype="float32")
    proto = export(layer, np.ones((1, 3), "float32"), tmp_path / "one.onnx")
    assert [n.op_type for n in proto.graph.node] == ["Gemm"]

    path = tmp_path / "identity.onnx"
    proto = export(nn.Sequential(nn.Dropout(0.5)), np.ones((2, 3), "float32"), path)
    assert [n.op_type for n in proto.graph.node] == ["Identity"]
    x = np.arange(12, dtype="float32").reshape(4, 3)
    assert np.array_equal(run_onnxruntime(path, x), x)


# ---------------------------------------------------------------------------------------------
# Errors


class MyBlock(nn.Module):
    def forward(self, x):
        return x * 2.0


class DoubledReLU(nn.ReLU):
    def forward(self, x):
        return x.relu() * 2.0


@needs_onnx
def test_unsupported_module_is_named_with_its_path(tmp_path):
    model = nn.Sequential(nn.Linear(2, 4, seed=0), nn.ReLU(), nn.Linear(4, 4, seed=1), MyBlock())
    with pytest.raises(TypeError) as info:
        export(model, np.ones((1, 2)), tmp_path / "m.onnx")
    message = str(info.value)
    assert message.startswith("export: no ONNX translation for module '3' (MyBlock); supported: "
                              "Sequential, Linear, ")
    assert all(name in message for name in SUPPORTED_MODULES)
    assert not (tmp_path / "m.onnx").exists()

    nested = nn.Sequential(nn.Linear(2, 4, seed=0), nn.Sequential(nn.ReLU(), DoubledReLU()))
    with pytest.raises(TypeError, match=r"module '1\.1' \(DoubledReLU\): it subclasses ReLU "
                                        r"but has its own forward\(\)"):
        export(nested, np.ones((1, 2)), tmp_path / "m.onnx")

    with pytest.raises(TypeError, match=r"the model itself \(MyBlock\)"):
        export(MyBlock(), np.ones((1, 2)), tmp_path / "m.onnx")


class ScaledOnCall(nn.Sequential):
    def __call__(self, x):  # the layers' forward is untouched, but the model does more
        return super().__call__(x) * 2.0


@needs_onnx
def test_a_model_that_does_more_than_its_layers_is_refused(tmp_path):
    model = ScaledOnCall(nn.Linear(2, 2, seed=0), nn.ReLU())
    with pytest.raises(RuntimeError, match=r"does not give what model\(example_input\) gives"):
        export(model, np.ones((3, 2)), tmp_path / "m.onnx")


@needs_onnx
def test_argument_errors(tmp_path):
    model = mlp("float32")
    x = np.ones((2, 2), "float32")
    with pytest.raises(TypeError, match=r"example input has dtype float64 but parameter "
                                        r"'0\.weight' has dtype float32.*model\.to\("):
        export(model, x.astype("float64"), tmp_path / "m.onnx")
    with pytest.raises(TypeError, match="must be float32 or float64; got dtype int64"):
        export(model, np.ones((2, 2), "int64"), tmp_path / "m.onnx")
    with pytest.raises(ValueError, match=r"shape \(2,\): one sample, no batch axis"):
        export(model, x[0], tmp_path / "m.onnx")
    with pytest.raises(ValueError, match="opset must be an int from 11"):
        export(model, x, tmp_path / "m.onnx", opset=9)
    with pytest.raises(ValueError, match="input_name and output_name must differ"):
        export(model, x, tmp_path / "m.onnx", input_name="x", output_name="x")
    with pytest.raises(ValueError, match="matmul|shape|align"):  # minigrad's own message
        export(model, np.ones((2, 3), "float32"), tmp_path / "m.onnx")
    # one sample without a batch axis is fine with a fixed shape
    proto = export(model, x[0], tmp_path / "m.onnx", dynamic_batch=False)
    assert [n.op_type for n in proto.graph.node] == ["Transpose", "MatMul", "Add", "Relu",
                                                     "Transpose", "MatMul", "Add", "Relu",
                                                     "Transpose", "MatMul", "Add"]
    assert_matches(run_onnxruntime(tmp_path / "m.onnx", x[1]), minigrad_forward(model, x[1]),
                   "float32")


@needs_onnx
@pytest.mark.parametrize("make, names, clash", [
    # The issue: input_name="weight" on a single Linear wrote a graph whose input and weight
    # initializer share a name; ONNX Runtime then fed the input to Gemm as the weight too.
    (lambda: nn.Linear(2, 3, seed=0, dtype="float32"), {"input_name": "weight"},
     r"input_name 'weight' is also the name of the parameter 'weight'.*Choose another "
     r"input_name \(the parameters are named \['bias', 'weight'\]\)"),
    (lambda: mlp("float32"), {"output_name": "4.bias"},
     r"output_name '4\.bias' is also the name of the parameter '4\.bias'"),
])
def test_names_that_clash_with_a_parameter_are_refused(tmp_path, make, names, clash):
    path = tmp_path / "clash.onnx"
    with pytest.raises(ValueError, match=clash):
        export(make(), np.ones((2, 2), "float32"), path, **names)
    assert not path.exists()


@needs_onnx
def test_names_made_up_by_export_avoid_the_users_names(tmp_path):
    # Node outputs ("/0/Gemm_output_0") and Reshape's shape constant ("1.shape") are named by
    # export; a user's input or output of the same name makes them take another name.
    model = mlp("float32")
    path = tmp_path / "mlp.onnx"
    proto = export(model, np.ones((2, 2), "float32"), path, input_name="/0/Gemm_output_0",
                   output_name="/2/Gemm_output_0")
    check_file(path)
    values = [out for node in proto.graph.node for out in node.output]
    assert len(values) == len(set(values)) and values[-1] == "/2/Gemm_output_0"
    x = normal((5, 2), 10, "float32")
    assert_matches(run_onnxruntime(path, x, "/0/Gemm_output_0"), minigrad_forward(model, x),
                   "float32")

    model = nn.Sequential(nn.Conv2d(2, 3, 3, seed=0, dtype="float32"), nn.Flatten(2, -1))
    path = tmp_path / "flat.onnx"
    proto = export(model, np.ones((2, 2, 5, 6), "float32"), path, input_name="1.shape")
    check_file(path)
    assert [t.name for t in proto.graph.initializer] == ["0.weight", "0.bias", "1.shape_1"]
    x = normal((3, 2, 5, 6), 11, "float32")
    assert_matches(run_onnxruntime(path, x, "1.shape"), minigrad_forward(model, x), "float32")


def test_missing_onnx_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)  # "import onnx" now raises ImportError
    with pytest.raises(ImportError, match=r'pip install "minigrad-course\[onnx\]"'):
        export(mlp("float32"), np.ones((1, 2), "float32"), tmp_path / "m.onnx")
    assert not (tmp_path / "m.onnx").exists()


def test_importing_minigrad_does_not_import_onnx():
    code = ("import sys, minigrad, minigrad.export.onnx, minigrad.nn; "
            "print('onnx' in sys.modules, 'onnxruntime' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "False"]


# ---------------------------------------------------------------------------------------------
# examples/export_onnx.py


def load_onnx_example():
    return load_example("export_onnx", "export_onnx_example")


@needs_onnx
def test_example_trains_exports_and_verifies(tmp_path, capsys):
    example = load_onnx_example()
    out = tmp_path / "moons.onnx"
    difference = example.main(["--out", str(out), "--epochs", "3"])
    printed = capsys.readouterr().out
    assert "trained 3 epochs" in printed and f"exported to {out}" in printed
    reported = float(re.search(r"^max difference onnxruntime vs minigrad over 1000 points: "
                               r"(\S+)$", printed, re.MULTILINE).group(1))
    assert reported == pytest.approx(difference, rel=1e-2, abs=1e-12) and difference < 1e-4
    check_file(out)


@needs_onnx
def test_example_exports_a_saved_state_dict(tmp_path, capsys):
    example = load_onnx_example()
    trained = example.build_model([8], seed=3, dtype="float64")  # as train_moons.py saves
    mg.save(trained.state_dict(), tmp_path / "moons.npz")
    out = tmp_path / "loaded.onnx"
    example.main(["--load", str(tmp_path / "moons.npz"), "--hidden", "8", "--out", str(out)])
    assert f"loaded {tmp_path / 'moons.npz'}" in capsys.readouterr().out
    stored = {t.name: onnx.numpy_helper.to_array(t) for t in onnx.load(str(out)).graph.initializer}
    for name, array in trained.state_dict().items():
        assert stored[name].dtype == np.float32  # --dtype float32 by default
        np.testing.assert_array_equal(stored[name], array.astype(np.float32))

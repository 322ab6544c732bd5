"""Exporting the attention layers and the char-GPT example to ONNX (run in ONNX Runtime with the
same outputs as minigrad), and the C exporter refusing them with a clear message."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tests.export.test_onnx_export import HAVE_ONNX, run_onnxruntime

import minigrad as mg
from minigrad import nn
from minigrad.export.c import UnsupportedModuleError, compile_training_step
from tests.support.examples import load_example

pytestmark_onnx = pytest.mark.skipif(not HAVE_ONNX, reason="onnx and onnxruntime are not "
                                     "installed (pip install 'minigrad-course[onnx]')")
SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "char_gpt.py"


def load_char_gpt():
    return load_example("char_gpt")


def reference(model: nn.Module, x: np.ndarray) -> np.ndarray:
    model.eval()
    with mg.no_grad():
        if isinstance(model, nn.MultiheadAttention):
            t = mg.tensor(x)
            return model(t, t, t, need_weights=False)[0].numpy()
        return model(x if x.dtype.kind == "i" else mg.tensor(x)).numpy()


def normal(shape, seed, dtype="float32"):
    return np.random.default_rng(seed).normal(size=shape).astype(dtype)


LAYERS = {
    "encoder-post-norm-relu": (lambda dt: nn.TransformerEncoderLayer(8, 2, 16, dtype=dt, seed=0),
                               (5, 3, 8), (7, 3, 8)),
    "encoder-pre-norm-gelu-batch-first": (
        lambda dt: nn.TransformerEncoderLayer(8, 4, 12, activation="gelu", norm_first=True,
                                              batch_first=True, layer_norm_eps=1e-3, dtype=dt,
                                              seed=1), (3, 5, 8), (2, 5, 8)),
    "encoder-stack-in-sequential": (
        lambda dt: nn.Sequential(
            nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, dtype=dt, seed=2),
            nn.TransformerEncoderLayer(8, 2, 16, activation=nn.GELU("tanh"), batch_first=True,
                                       norm_first=True, dtype=dt, seed=3),
            nn.LayerNorm(8, dtype=dt), nn.Linear(8, 3, dtype=dt, seed=4)),
        (2, 5, 8), (4, 5, 8)),
    "mha-self-attention": (lambda dt: nn.MultiheadAttention(8, 2, dtype=dt, seed=0),
                           (5, 3, 8), (6, 3, 8)),
    "mha-batch-first": (lambda dt: nn.MultiheadAttention(8, 4, batch_first=True, dtype=dt,
                                                         seed=1), (3, 5, 8), (2, 5, 8)),
}


@pytestmark_onnx
@pytest.mark.parametrize("name", list(LAYERS))
def test_attention_layers_run_in_onnxruntime_as_in_minigrad(tmp_path, name):
    from minigrad.export.onnx import export
    build, shape, other = LAYERS[name]
    model = build("float32")
    path = tmp_path / "model.onnx"
    export(model, normal(shape, 0), path)
    for x in (normal(shape, 1), normal(other, 2)):  # the example's shape, another axis 0
        np.testing.assert_allclose(run_onnxruntime(path, x), reference(model, x), atol=2e-5,
                                   rtol=1e-5, err_msg=name)


@pytestmark_onnx
@pytest.mark.parametrize("tie", [False, True], ids=["untied", "tied"])
def test_the_char_gpt_runs_in_onnxruntime_as_in_minigrad(tmp_path, tie):
    import onnx

    from minigrad.export.onnx import export
    char_gpt = load_char_gpt()
    model = char_gpt.GPT(30, 8, 16, 4, 2, tie=tie, seed=0)
    ids = np.random.default_rng(0).integers(0, 30, (2, 8))
    path = tmp_path / "gpt.onnx"
    proto = export(model, ids, path)
    assert proto.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.INT64
    names = sorted(i.name for i in proto.graph.initializer if "." in i.name and
                   not i.name.split(".")[-1] in ("scalar", "axes", "index", "heads", "join",
                                                 "causal_mask", "starts", "ends"))
    expected = sorted(k for k in model.state_dict() if not (tie and k == "head.weight"))
    assert [n for n in names if not n.endswith(tuple(f"_{i}" for i in range(200)))] == expected
    for batch in (ids, np.random.default_rng(1).integers(0, 30, (5, 8))):
        np.testing.assert_allclose(run_onnxruntime(path, batch), reference(model, batch),
                                   atol=2e-5, rtol=1e-5)


@pytestmark_onnx
def test_the_example_exports_its_trained_model(tmp_path):
    char_gpt = load_char_gpt()
    path = tmp_path / "gpt.onnx"
    result = char_gpt.main(["--smoke", "--steps", "4", "--eval-every", "4", "--onnx",
                            str(path)])
    window = np.arange(32).reshape(1, 32) % result["vocab"]
    np.testing.assert_allclose(run_onnxruntime(path, window, input_name="ids"),
                               reference(result["model"], window), atol=2e-5, rtol=1e-5)


@pytestmark_onnx
def test_what_one_graph_cannot_say_is_refused(tmp_path):
    from minigrad.export.onnx import export
    # attention to other inputs than its own: the example run already fails, in minigrad's words
    with pytest.raises(ValueError, match="expected key with last axis 4"):
        export(nn.MultiheadAttention(8, 2, kdim=4, vdim=4, seed=0), np.ones((3, 2, 8)),
               tmp_path / "m.onnx")
    with pytest.raises(TypeError, match="activation"):
        export(nn.TransformerEncoderLayer(8, 2, 16, activation=lambda x: x.tanh(), seed=0),
               np.ones((3, 2, 8)), tmp_path / "m.onnx")
    char_gpt = load_char_gpt()
    with pytest.raises(TypeError, match="integer token ids"):
        export(char_gpt.GPT(30, 8, 16, 4, 1, seed=0, dtype="float64"), np.ones((2, 8)),
               tmp_path / "m.onnx")


@pytest.mark.parametrize("make", [
    lambda ex: nn.Sequential(nn.TransformerEncoderLayer(8, 2, 16, seed=0), nn.Linear(8, 2)),
    lambda ex: nn.MultiheadAttention(8, 2, seed=0),
    lambda ex: ex.GPT(30, 8, 16, 4, 1, seed=0),
], ids=["encoder-layer", "multihead-attention", "char-gpt"])
def test_the_c_exporter_refuses_attention_and_says_to_use_onnx(make):
    with pytest.raises(UnsupportedModuleError, match="no C translation.*ONNX"):
        compile_training_step(make(load_char_gpt()), batch_size=4, lr=0.1)
